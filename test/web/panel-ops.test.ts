/**
 * The Control Panel in chromium, part 2: set the crawler's start URL in the crawler editor,
 * start a crawl of a local test site and watch its live progress until it finishes; the
 * indexed-content table with filters, status explanations and paging; the analytics page's
 * chart, top and no-result queries and selection rate with data; the search preview with the
 * widget (not logged) and its "why this rank" view.
 */
import t from 'tap';
import { launchBrowser, startPages, waitFor } from '../helpers/browser.js';
import { api, startTestServer } from '../helpers/server.js';
import { seedShop } from './fixture.js';

function site(title: string, links: string[], body = ''): string {
  return `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body || title + ' page of the orchard site.'}</p>${links
    .map((l) => `<a href="${l}">${l}</a>`)
    .join(' ')}</main></body></html>`;
}

t.test('crawl progress, content table, analytics, preview', async (t) => {
  const srv = await startTestServer({ t, env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0', SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' } });
  const shop = await startPages({}, t);
  await seedShop(srv, shop.url);
  const crawlSite = await startPages(
    {
      '/': site('Orchard home', ['/trees', '/harvest', '/visit', '/private/ledger']),
      '/trees': site('Our trees', ['/trees/quince', '/']),
      '/trees/quince': site('Quince trees', ['/trees'], 'Quince trees flower late in spring.'),
      '/harvest': site('Harvest calendar', ['/']),
      '/visit': site('Visit the orchard', ['/']),
      '/private/ledger': site('Ledger', []),
    },
    t,
  );
  crawlSite.pages.set('/sitemap.xml', {
    type: 'application/xml',
    body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${crawlSite.url}/harvest</loc></url><url><loc>${crawlSite.url}/visit</loc></url></urlset>`,
  });
  // Each page answers after 700 ms: the crawl (three levels deep) takes seconds, long enough
  // for the panel's once-a-second progress to show it running.
  for (const entry of crawlSite.pages.values()) entry.delayMs = 700;
  // Enough extra pages to page through the content table.
  const extra = Array.from({ length: 30 }, (_, i) => ({
    url: `${shop.url}/notes/${String(i).padStart(2, '0')}`,
    title: `Orchard note ${i}`,
    content: `Note number ${i} about pruning.`,
    appendPageContent: false,
    contentGroup: 'Notes',
    imageUrl: '',
  }));
  t.equal((await api(srv.url, '/sites/pagesJson?refresh=true', { method: 'POST', token: srv.token, json: extra })).status, 200);
  // Searches for the reports: logged searches, one without results, one selected result.
  for (const q of ['apple', 'apple', 'apple', 'pear', 'zebra']) await api(srv.url, `/sites?site=default&query=${q}`);
  await api(srv.url, '/sites/queries/log', { method: 'POST', json: { site: 'default', query: 'apple', action: 'select', link: `${shop.url}/recipes/apple-pie`, position: 1 } });
  srv.services.analytics.flush();
  srv.services.analytics.rollupAll();

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text());
  });
  await page.goto(srv.url + '/panel');
  await page.getByLabel('Master key or project API key').fill(srv.masterKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'default' }).click();

  t.test('crawler rules, then a crawl watched to the end', async (t) => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Start URLs').fill(crawlSite.url + '/');
    await page.getByLabel('Sitemap URLs').fill(crawlSite.url + '/sitemap.xml');
    await page.getByLabel('Blacklist (never fetch)').fill('/private/');
    await page.getByLabel('Delay between requests (ms)').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved/).waitFor();

    await page.getByRole('link', { name: 'Crawl & index' }).click();
    const start = page.getByRole('button', { name: 'Crawl the site' });
    await waitFor(async () => await start.isEnabled(), 'the crawl button (start URLs known)');
    await start.click();
    await page.getByText(/The site crawl started/).waitFor();
    const done = page.locator('.count-done dd');
    const seen: number[] = [];
    const states = new Set<string>();
    const run = page.locator('.run');
    await waitFor(
      async () => {
        const n = Number(((await done.textContent()) ?? '0').replace(/\D/g, '') || 0);
        if (seen[seen.length - 1] !== n) seen.push(n);
        const state = await run.getAttribute('data-run-state', { timeout: 1000 }).catch(() => null);
        if (state) states.add(state);
        return (await run.getAttribute('data-run-state').catch(() => null)) === 'done' && n >= 5;
      },
      'the crawl finished in the panel',
      60_000,
    );
    t.ok(seen.every((n, i) => i === 0 || n >= seen[i - 1]!), `the done count only grew: ${seen.join(' → ')}`);
    t.ok(seen[seen.length - 1]! >= 5, 'all pages done');
    t.ok(states.has('running') || states.has('queued'), `the panel showed the crawl under way: ${[...states].join(', ')}`);
    t.ok(seen.length >= 2, 'and its done count moving');
    t.match(await run.textContent(), /Site crawl.*done/);
    t.equal(await page.locator('.count-queued dd').textContent(), '0');
    t.equal(await page.locator('.count-running dd').textContent(), '0');
    const progress = page.locator('.run progress');
    t.equal(await progress.getAttribute('value'), await progress.getAttribute('max'), 'the progress bar is full');
    const rows = page.locator('table.tasks tbody tr');
    t.ok((await rows.count()) >= 6, 'the task list shows the pages and the run');
    t.ok(await page.locator('table.tasks td.url', { hasText: crawlSite.url + '/trees/quince' }).count(), 'a crawled page in the task list');
    await page.getByLabel('State', { exact: true }).selectOption('failed');
    await waitFor(async () => (await page.locator('table.tasks tbody').textContent())?.includes('No tasks in state failed') ?? false, 'state filter');
    t.pass('the task list filters by state');
    // A sitemap import and a URL push show up the same way.
    await page.getByLabel('State', { exact: true }).selectOption('');
    await page.getByRole('button', { name: 'Import sitemaps' }).click();
    await page.getByText(/The sitemap import started \(task t_[0-9a-f]+\): 2 URLs in the sitemaps/).waitFor();
    await waitFor(async () => /Sitemap import/.test((await run.textContent()) ?? '') && (await run.getAttribute('data-run-state')) === 'done', 'the sitemap import done', 60_000);
    t.pass('the sitemap import is the latest run, done');
    await page.getByLabel('Fetch one URL').fill(crawlSite.url + '/trees');
    await page.getByRole('button', { name: 'Push URL' }).click();
    await page.getByText(/The URL was queued/).waitFor();
    const pushRow = page.locator('table.tasks tbody tr', { hasText: 'URL push' });
    await waitFor(async () => /done/.test((await pushRow.first().textContent()) ?? ''), 'the pushed URL done', 60_000);
    t.match(await pushRow.first().textContent(), new RegExp(`${crawlSite.url}/trees.*done.*200`), 'the push in the task list with its index status');
    await page.getByLabel('Fetch one URL').fill('ftp://nope');
    await page.getByRole('button', { name: 'Push URL' }).click();
    await page.locator('[data-field="url"] .field-error').waitFor();
    t.pass('a bad URL is refused at the field');
    // The index status tiles follow.
    await page.reload();
    await waitFor(async () => Number(((await page.locator('.tile-n').first().textContent()) ?? '0').replace(/\D/g, '')) >= 45, 'pages tile');
    t.pass('the searchable-pages tile counts the crawled pages');
  });

  t.test('indexed content: filters, status explanations, paging', async (t) => {
    await page.getByRole('link', { name: 'Indexed content' }).click();
    const summary = page.locator('p.hint[aria-live]');
    await waitFor(async () => /^Pages 1–\d+ of \d+$/.test((await summary.textContent()) ?? ''), 'first page');
    const total = Number(/of (\d+)/.exec((await summary.textContent())!)![1]);
    t.ok(total >= 45, `${total} entries`);
    await page.getByLabel('Per page').selectOption('25');
    await waitFor(async () => (await summary.textContent()) === `Pages 1–25 of ${total}`, 'per page');
    t.equal(await page.locator('table.content tbody tr').count(), 25);
    await page.getByRole('button', { name: 'Next →' }).click();
    await waitFor(async () => (await summary.textContent()) === `Pages 26–${Math.min(50, total)} of ${total}`, 'second page');
    t.equal(await page.getByRole('button', { name: '← Previous' }).isEnabled(), true, 'paging back is possible');

    await page.getByLabel('URL contains').fill('/trees');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitFor(async () => (await summary.textContent()) === 'Pages 1–2 of 2', 'url filter');
    t.same((await page.locator('table.content .page-title').allTextContents()).sort(), ['Our trees', 'Quince trees'], 'URL filter');
    t.match(await page.locator('table.content tbody tr').first().textContent(), /200\s*Indexed and searchable/, 'status explained');

    await page.getByLabel('URL contains').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByLabel('Index status').selectOption('8XX');
    await waitFor(async () => (await summary.textContent()) === 'Pages 1–1 of 1', 'skipped pages');
    t.match(await page.locator('table.content tbody tr').first().textContent(), /private\/ledger.*801/s, 'the blacklisted URL with its status');
    t.match(await page.locator('table.content .status-text').first().textContent(), /blacklist/i, 'and what it means');
    await page.getByLabel('Index status').selectOption('');
    await page.getByLabel('Content type').selectOption('PDF');
    await waitFor(async () => (await summary.textContent()) === 'No pages match.', 'type filter');
    t.pass('content type filter');
    await page.getByText('What the index statuses mean').click();
    t.ok(await page.locator('.legend dt', { hasText: '804' }).count(), 'the legend explains the codes');
  });

  t.test('analytics with data', async (t) => {
    await page.getByRole('link', { name: 'Analytics' }).click();
    const total = page.getByTestId('total-searches');
    await waitFor(async () => (await total.textContent()) === '5', 'five searches');
    const chart = page.locator('.chart');
    t.equal(await chart.getAttribute('data-total'), '5');
    t.ok(await chart.locator('canvas').count(), 'uPlot drew a canvas');
    const box = await chart.locator('canvas').boundingBox();
    t.ok(box && box.width > 300 && box.height > 100, 'of a useful size');
    const painted = await chart.locator('canvas').evaluate((c) => {
      const canvas = c as HTMLCanvasElement;
      const d = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let blue = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 2]! > 150 && d[i]! < 80 && d[i + 3]! > 0) blue++;
      return blue;
    });
    t.ok(painted > 50, `the searches series is drawn (${painted} blue pixels)`);
    await page.getByText('Show the numbers as a table').click();
    const counts = (await page.locator('.chart-table tbody td:nth-child(2)').allTextContents()).map(Number);
    t.equal(counts.reduce((a, b) => a + b, 0), 5, "the chart's numbers as a table");
    const top = page.getByRole('table', { name: 'Most frequent queries' });
    t.match(await top.locator('tbody tr').first().textContent(), /apple\s*3\s*[\d.]+\s*33\.3 %/, 'top query with its selection rate');
    t.match(await page.getByRole('table', { name: 'Queries that found nothing' }).textContent(), /zebra/, 'no-result queries');
    t.equal(await page.getByTestId('selection-rate').textContent(), '20.0 %', 'overall selection rate');
  });

  t.test('search preview and why this rank', async (t) => {
    await page.getByRole('link', { name: 'Search preview' }).click();
    const input = page.getByRole('combobox', { name: 'Search this site' });
    await input.fill('apple');
    await input.press('Enter');
    await page.locator('.ss-result').first().waitFor();
    const why = page.locator('ol.why > li');
    await why.first().waitFor();
    t.ok((await why.count()) >= 8, 'an explanation per result');
    t.match(await why.first().textContent(), /Title matches apple/, 'the title match is named');
    t.match(await page.locator('ol.why').textContent(), /content weight 1/, 'with the field weights');
    const before = srv.services.analytics.topQueries('default', { start: 0, end: Math.floor(Date.now() / 1000) + 60 }, 10);
    await page.locator('.ss-result .ss-title').first().click();
    t.match(page.url(), /\/panel#\/p\/default\/preview$/, 'selecting a result in the preview stays in the panel');
    srv.services.analytics.flush();
    const after = srv.services.analytics.topQueries('default', { start: 0, end: Math.floor(Date.now() / 1000) + 60 }, 10);
    t.same(after, before, 'preview searches and selects are not logged');
  });

  t.test('no errors', async (t) => {
    t.same(problems, [], 'no script or CSP errors on any page');
  });
});
