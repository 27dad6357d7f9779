/**
 * The widget's results layer in chromium: custom results from a result mapping, filters from
 * the owner's `results.filters` client configuration (a click narrows results and counts),
 * a range filter, sorting, "more results" paging, content-group tabs, the no-results message
 * with query suggestions, a `redirect` mapping followed; and the events: a selected result is
 * sent to `POST /sites/queries/log` and counted by the reports, an abandoned search is sent too.
 */
import t from 'tap';
import { hostPage, launchBrowser, startPages, waitFor } from '../helpers/browser.js';
import { api, startTestServer } from '../helpers/server.js';
import { seedShop, TART_SVG } from './fixture.js';

const CLIENT_FILTERS = [
  { key: 'fid#1', name: 'Colour', values: [{ name: 'Red', value: 'red' }, { name: 'Green', value: 'green' }, { name: 'Yellow', value: 'yellow' }] },
  { key: 'fid#2', name: 'Price', min: 0, max: 20 },
];

t.test('results layer: custom results, filters, sorting, paging, tabs, no results, redirect, events', async (t) => {
  const srv = await startTestServer({ t, env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0' } });
  const host = await startPages({}, t);
  const options = JSON.stringify({ results: { limit: 3, filters: CLIENT_FILTERS } }).replace(/"/g, '&quot;');
  host.pages.set('/', { body: hostPage(srv.url, 'default', { attrs: `data-options="${options}"` }) });
  host.pages.set('/img/tart.svg', { type: 'image/svg+xml', body: TART_SVG });
  for (const p of ['/recipes/apple-tart', '/contact', '/promo']) host.pages.set(p, { body: `<!doctype html><title>${p}</title><h1>${p}</h1>` });
  await seedShop(srv, host.url);
  const mappings = await api(srv.url, '/admin/projects/default/settings', {
    method: 'PATCH',
    token: srv.masterKey,
    json: {
      search: {
        resultMappings: [
          { trigger: { type: 'contains', value: 'apple' }, action: { type: 'custom', html: `<a class="promo" href="${host.url}/promo">Apple season: <b>20% off</b></a>`, position: 1, contentGroup: 'Recipes' } },
          { trigger: { type: 'equals', value: 'contact us' }, action: { type: 'redirect', url: `${host.url}/contact` } },
        ],
      },
    },
  });
  t.equal(mappings.status, 200, mappings.text);
  // Two earlier searches for "apple" make it a query suggestion.
  for (let i = 0; i < 2; i++) await api(srv.url, '/sites?site=default&query=apple');
  srv.services.analytics.flush();

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const beacons: Array<Record<string, unknown>> = [];
  browser.context.on('request', (r) => {
    if (r.url().startsWith(srv.url + '/sites/queries/log') && r.method() === 'POST') beacons.push(JSON.parse(r.postData() ?? '{}'));
  });
  await page.goto(host.url + '/');
  const input = page.getByRole('combobox', { name: 'Search this site' });
  const status = page.getByRole('status');
  const statusIs = (re: RegExp, what: string) => waitFor(async () => re.test((await status.textContent()) ?? ''), what);
  const storedEvents = () => {
    srv.services.analytics.flush();
    return srv.services.analytics.site('default').db.prepare("SELECT query, action FROM events WHERE action IN ('select','abandon') ORDER BY id").all() as Array<{ query: string; action: string }>;
  };
  const titles = () => page.locator('.ss-result:not(.ss-result-custom) .ss-title').allTextContents();

  await input.fill('apple');
  await input.press('Enter');
  await statusIs(/^9 results for “apple”$/, '9 results (the custom result counts)');
  t.equal(await page.locator('.ss-result-custom a.promo').textContent(), 'Apple season: 20% off', 'custom result rendered from its html');
  t.equal(await page.locator('.ss-result-custom b').count(), 1, "the owner's markup is markup");
  t.equal((await titles()).length + (await page.locator('.ss-result-custom').count()), 3, 'a page of results.limit results, the custom one included');

  // Filters from the client configuration: its names and values, the server's counts.
  const colour = page.getByRole('group', { name: 'Colour' });
  t.same(
    (await colour.locator('label').allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim()),
    ['Red3', 'Green2', 'Yellow2'],
    'client-configured names with counts',
  );
  await colour.getByLabel('Red').check();
  await statusIs(/^3 results/, 'red only');
  const tabTexts = async () => (await page.getByRole('tab').allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim());
  await waitFor(async () => (await tabTexts()).includes('Recipes 2'), 'narrowed tab counts');
  t.same(await tabTexts(), ['All 3', 'Recipes 2', 'Blog 1'], 'a filter click narrows the tab counts');
  t.same((await titles()).sort(), ['Apple crumble', 'Apple tart', 'The apple harvest'], 'and the results');
  t.same(
    (await colour.locator('label').allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim()),
    ['Red3', 'Green2', 'Yellow2'],
    "a filter's own counts stay disjunctive",
  );
  // Range filter: price from 6.
  const price = page.getByRole('group', { name: 'Price' });
  await price.getByLabel('From').fill('6');
  await price.getByLabel('From').press('Enter');
  await statusIs(/^1 result for/, 'red from 6');
  t.same(await titles(), ['Apple tart'], 'range and choice filters combine');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await statusIs(/^9 results/, 'filters cleared');

  // Sorting by the server's sorting options.
  await page.getByRole('combobox', { name: 'Sort by' }).selectOption({ label: 'price (descending)' });
  await waitFor(async () => (await titles())[0] === 'Apple cake', 'sorted');
  t.same(await titles(), ['Apple cake', 'Apple tart'], 'sorted by price, descending (after the custom result)');
  const image = page.locator('.ss-result img.ss-image');
  await waitFor(async () => (await image.count()) === 1 && (await image.evaluate((i) => (i as HTMLImageElement).naturalWidth)) > 0, 'the result image loaded');
  t.equal(await image.getAttribute('src'), host.url + '/img/tart.svg', "a result's image is shown");

  // More results: the next pages are appended until all are shown.
  const more = page.getByRole('button', { name: 'More results' });
  await more.click();
  await waitFor(async () => (await titles()).length === 5, 'second page');
  await more.click();
  await waitFor(async () => (await titles()).length === 8, 'third page');
  t.equal(await more.count(), 0, 'no more button after the last page');
  t.same((await titles()).slice(0, 5), ['Apple cake', 'Apple tart', 'Apple pie', 'Apple crumble', 'Apple sauce'], 'pages continue the order');
  t.equal(await page.locator('.ss-result-custom').count(), 1, 'the custom result is shown once');

  // Tabs: one content group.
  await page.getByRole('tab', { name: /^Blog/ }).click();
  await waitFor(async () => (await titles()).length === 2, 'blog tab');
  t.same((await titles()).sort(), ['Apple varieties we grow', 'The apple harvest']);
  t.equal(await page.getByRole('tab', { name: /^Blog/ }).getAttribute('aria-selected'), 'true');
  t.same(await tabTexts(), ['All 9', 'Recipes 6', 'Blog 2', 'Other 1'], 'tab counts stay those of all results');

  // A selected result: a select event, then counted by the reports.
  await page.getByRole('tab', { name: /^All/ }).click();
  await waitFor(async () => (await titles()).includes('Apple tart'), 'all again');
  await Promise.all([page.waitForURL(host.url + '/recipes/apple-tart'), page.getByRole('link', { name: 'Apple tart' }).click()]);
  await waitFor(() => beacons.some((b) => b.action === 'select'), 'select event');
  const sel = beacons.find((b) => b.action === 'select')!;
  t.match(sel, { site: 'default', query: 'apple', action: 'select', link: `${host.url}/recipes/apple-tart`, position: 3 });
  t.type(sel.timeToAction, 'number');
  t.notOk(beacons.some((b) => b.action === 'abandon'), 'a search that ended in a select is not abandoned');
  const appleTop = async () => {
    srv.services.analytics.flush();
    const top = await api(srv.url, `/sites/queries/top?token=${srv.token}`);
    return top.body.queries.find((q: { query: string }) => q.query === 'apple');
  };
  await waitFor(async () => (await appleTop())?.selectRate > 0, 'the select in the reports');
  t.ok((await appleTop()).selectRate > 0, `the reports count the select: ${JSON.stringify(await appleTop())}`);

  // No results: the message and query suggestions to try instead.
  await page.goto(host.url + '/');
  await input.fill('apricot');
  await input.press('Enter');
  await statusIs(/^No results for “apricot”\.$/, 'no results');
  const instead = page.getByRole('button', { name: 'apple' });
  await instead.waitFor();
  await instead.click();
  await statusIs(/^9 results for “apple”$/, 'suggestion searched');

  // Leaving a search without selecting anything: an abandon event.
  beacons.length = 0;
  await input.fill('pear');
  await input.press('Enter');
  await statusIs(/results? for “pear”/, 'pear results');
  await page.getByRole('button', { name: 'Clear search' }).click();
  await waitFor(() => beacons.some((b) => b.action === 'abandon'), 'abandon event');
  t.match(beacons.find((b) => b.action === 'abandon'), { site: 'default', query: 'pear', action: 'abandon' });
  beacons.length = 0;
  await input.fill('cake');
  await input.press('Enter');
  await statusIs(/results? for “cake”/, 'cake results');
  await page.goto(host.url + '/contact');
  await waitFor(() => storedEvents().some((e) => e.action === 'abandon' && e.query === 'cake'), 'abandon on leaving the page');

  // A redirect mapping is followed.
  await page.goto(host.url + '/');
  await input.fill('contact us');
  await Promise.all([page.waitForURL(host.url + '/contact'), input.press('Enter')]);
  t.pass('redirected to the mapped URL');

  await new Promise((r) => setTimeout(r, 500));
  t.same(storedEvents(), [
    { query: 'apple', action: 'select' },
    { query: 'pear', action: 'abandon' },
    { query: 'cake', action: 'abandon' },
  ], 'the server stored every event once');
});
