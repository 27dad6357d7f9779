/**
 * The widget under adverse conditions, in chromium: answers that arrive out of order (delayed
 * on purpose) never replace newer ones; a host page with hostile CSS does not break it; page
 * text is inserted as text; theming through CSS custom properties; a phone-width screen; an
 * axe-core check with no serious violations; and the demo page at `/` under the server's
 * strict Content-Security-Policy.
 */
import t from 'tap';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { hostPage, launchBrowser, startPages, waitFor } from '../helpers/browser.js';
import { api, startTestServer } from '../helpers/server.js';
import { seedShop } from './fixture.js';

const AXE = path.resolve('node_modules/axe-core/axe.min.js');

const HOSTILE_CSS = `<style>
  * { all: unset !important; font: 40px/3 serif !important; color: red !important; position: static !important; }
  html, body, main, h1 { display: block !important; }
  div { display: none !important; width: 10px !important; }
  input, button { display: none !important; visibility: hidden !important; }
  [role=listbox], [role=option], ul, ol, li, mark, section { display: none !important; }
  :root { --sitesift-accent: rgb(200, 0, 100); }
</style>`;

/** Records, from now on, whether `text` ever appears in the widget's shadow root. */
async function watchFor(page: Page, text: string): Promise<() => Promise<boolean>> {
  await page.evaluate((needle) => {
    const root = document.querySelector('[data-sitesift]')!.shadowRoot!;
    const w = window as unknown as { __seen: boolean };
    w.__seen = false;
    new MutationObserver(() => {
      if ((root.textContent ?? '').includes(needle)) w.__seen = true;
    }).observe(root, { subtree: true, childList: true, characterData: true });
  }, text);
  return () => page.evaluate(() => (window as unknown as { __seen: boolean }).__seen);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('stale answers, hostile CSS, text safety, theming, phone, axe, demo page', async (t) => {
  const srv = await startTestServer({ t, env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0' } });
  const host = await startPages({}, t);
  host.pages.set('/', { body: hostPage(srv.url, 'default') });
  host.pages.set('/hostile', { body: hostPage(srv.url, 'default', { extraHead: HOSTILE_CSS }) });
  await seedShop(srv, host.url);
  const xss = await api(srv.url, '/sites/pageJson?refresh=true', {
    method: 'POST',
    token: srv.token,
    json: {
      url: host.url + '/zanzibar',
      title: 'Zanzibar <img src=x onerror="window.__xss=1"> & <b>spice</b>',
      content: 'Zanzibar cloves <script>window.__xss=2</script> &amp; nutmeg',
      appendPageContent: false,
      contentGroup: 'Tips & <Tricks>',
      imageUrl: '',
      dataPoints: [{ key: 'note', value: '5 < 6 & "x"', show: true }],
    },
  });
  t.equal(xss.status, 200, xss.text);
  const browser = await launchBrowser(t);

  t.test('a late answer never replaces a newer one', async (t) => {
    const page = await browser.newPage();
    // The suggest answer for "ap" and the search answer for "apple" are held back 1.5 s and
    // then delivered with a marker; the newer requests go through at once.
    await page.route((u) => u.origin === new URL(srv.url).origin && u.pathname === '/sites/suggest', async (route) => {
      const q = new URL(route.request().url()).searchParams.get('query');
      if (q !== 'ap') return route.continue();
      await sleep(1500);
      await route
        .fulfill({ status: 200, contentType: 'application/json', headers: { 'Access-Control-Allow-Origin': '*' }, body: JSON.stringify({ status: 'success', query: 'ap', suggests: { _: [{ name: 'STALE suggestion', image: null, link: 'https://x.invalid/', type: 'HTML', dataPoints: [] }] }, totalResults: 1, totalResultsPerContentGroup: { _: 1 }, querySuggestions: [] }) })
        .catch(() => {});
    });
    await page.route((u) => u.origin === new URL(srv.url).origin && u.pathname === '/sites', async (route) => {
      const q = new URL(route.request().url()).searchParams.get('query');
      if (q !== 'apple') return route.continue();
      await sleep(1500);
      await route
        .fulfill({ status: 200, contentType: 'application/json', headers: { 'Access-Control-Allow-Origin': '*' }, body: JSON.stringify({ status: 'success', query: 'apple', suggests: { _: [{ name: 'STALE result', image: null, link: 'https://x.invalid/', type: 'HTML', dataPoints: [], content: 'STALE' }] }, totalResults: 1, totalResultsPerContentGroup: { _: 1 }, sortingOptions: [], sorting: '', filterOptions: [], activeFilterOptions: [] }) })
        .catch(() => {});
    });
    await page.goto(host.url + '/');
    const input = page.getByRole('combobox', { name: 'Search this site' });
    await input.waitFor();
    const sawStale = await watchFor(page, 'STALE');
    const asked: string[] = [];
    const aborted: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(srv.url + '/sites')) asked.push(new URL(r.url()).searchParams.get('query') ?? '');
    });
    page.on('requestfailed', (r) => {
      if (r.url().startsWith(srv.url + '/sites') && /ABORTED/i.test(r.failure()?.errorText ?? '')) aborted.push(new URL(r.url()).searchParams.get('query') ?? '');
    });

    await input.pressSequentially('ap');
    await waitFor(() => asked.includes('ap'), 'the slow suggest request');
    await input.pressSequentially('ple pie');
    await waitFor(async () => (await page.getByRole('option', { name: /Apple pie/ }).count()) > 0, 'newer suggestions');
    await sleep(2000); // the held answer is delivered meanwhile
    t.notOk(await sawStale(), 'the late suggest answer was never shown');
    t.ok(await page.getByRole('option', { name: /Apple pie/ }).count(), 'the newer suggestions stay');
    t.ok(aborted.includes('ap'), 'the superseded suggest request was cancelled');

    await input.fill('apple');
    await input.press('Enter');
    await waitFor(() => asked.filter((q) => q === 'apple').length > 0, 'the slow search request');
    await input.fill('pear');
    await input.press('Enter');
    const status = page.getByRole('status');
    await waitFor(async () => /results? for “pear”/.test((await status.textContent()) ?? ''), 'pear results');
    await sleep(2000);
    t.notOk(await sawStale(), 'the late search answer was never shown');
    t.match(await status.textContent(), /results? for “pear”/, 'the newer results stay');
    await page.close();
  });

  t.test('hostile host CSS, text safety and theming', async (t) => {
    const page = await browser.newPage();
    await page.goto(host.url + '/hostile');
    const input = page.getByRole('combobox', { name: 'Search this site' });
    await input.waitFor();
    const box = await input.boundingBox();
    t.ok(box && box.width > 150 && box.height > 20, `the input is visible and sized: ${JSON.stringify(box)}`);
    const style = await input.evaluate((el) => {
      const s = getComputedStyle(el);
      return { fontSize: s.fontSize, color: s.color, display: s.display };
    });
    t.same(style, { fontSize: '16px', color: 'rgb(31, 35, 40)', display: 'block' }, "the page's rules do not reach inside");
    await input.pressSequentially('zanzi');
    await waitFor(async () => (await page.getByRole('option').count()) > 0, 'suggestions on the hostile page');
    t.ok(await page.getByRole('listbox').isVisible(), 'the listbox shows');
    t.equal(await page.locator('.ss-group-label').first().textContent(), 'Tips & <Tricks>', 'an escaped group name is shown as its text');
    await input.press('Enter');
    const title = page.locator('.ss-title').first();
    await title.waitFor();
    t.equal(await title.textContent(), 'Zanzibar <img src=x onerror="window.__xss=1"> & <b>spice</b>', 'the title is shown as text');
    t.equal(await page.locator('.ss-results img, .ss-results b, .ss-results script').count(), 0, 'no markup from page text');
    t.equal(await page.locator('.ss-dp dd').first().textContent(), '5 < 6 & "x"', 'a data point is shown as its text');
    t.match(await page.locator('.ss-snippet').first().textContent(), /<script>window\.__xss=2<\/script>/);
    t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'nothing ran');
    t.equal(await page.locator('.ss-title mark').first().textContent(), 'Zanzibar', 'the only markup is <mark>');
    const accent = await page.locator('.ss-submit').evaluate((el) => getComputedStyle(el).color);
    t.equal(accent, 'rgb(200, 0, 100)', 'themed through --sitesift-accent');
    await input.focus();
    const outline = await page.locator('.ss-form').evaluate((el) => getComputedStyle(el).outlineStyle);
    t.equal(outline, 'solid', 'focus is visible');
    await page.close();
  });

  t.test('phone width', async (t) => {
    const page = await browser.newPage({ width: 375, height: 740 });
    await page.goto(host.url + '/');
    const input = page.getByRole('combobox', { name: 'Search this site' });
    await input.fill('apple');
    await input.press('Enter');
    await page.locator('.ss-result').first().waitFor();
    const m = await page.evaluate(() => {
      const root = document.querySelector('[data-sitesift]')!.shadowRoot!;
      const results = root.querySelector('.ss-results')!.getBoundingClientRect();
      const side = root.querySelector('.ss-side') as HTMLDetailsElement;
      const main = root.querySelector('.ss-main')!.getBoundingClientRect();
      return { scroll: document.documentElement.scrollWidth, right: results.right, sideOpen: side.open, mainWidth: main.width };
    });
    t.ok(m.scroll <= 375, `no horizontal scrolling (${m.scroll}px)`);
    t.ok(m.right <= 375, 'the results fit the screen');
    t.equal(m.sideOpen, false, 'filters start collapsed on a phone');
    t.ok(m.mainWidth > 250, `results use the width (${m.mainWidth}px)`);
    await page.locator('.ss-summary').click();
    await page.getByRole('group', { name: 'Color' }).getByLabel('red').check();
    await waitFor(async () => /^3 results/.test((await page.getByRole('status').textContent()) ?? ''), 'filtered on a phone');
    t.pass('filters usable on a phone');
    await page.close();
  });

  t.test('axe-core: no serious or critical violations', async (t) => {
    const page = await browser.newPage();
    await page.goto(host.url + '/');
    await page.addScriptTag({ path: AXE });
    const input = page.getByRole('combobox', { name: 'Search this site' });
    const check = async (state: string) => {
      const result = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
        const r = await axe.run({ include: [['[data-sitesift]']] }, { resultTypes: ['violations'] });
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
      });
      const serious = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      t.same(serious, [], `${state}: ${JSON.stringify(result)}`);
    };
    await check('idle');
    await input.pressSequentially('appl');
    await page.getByRole('option').first().waitFor();
    await input.press('ArrowDown');
    await check('suggestions open');
    await input.press('Escape');
    await input.press('Enter');
    await page.locator('.ss-result').first().waitFor();
    await check('results shown');
    await page.close();
  });

  t.test('the demo page at / under the strict CSP', async (t) => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    const res = await page.goto(srv.url + '/');
    t.match(res?.headers()['content-security-policy'], /script-src 'self'/);
    const input = page.getByRole('combobox', { name: 'Search this site' });
    await input.pressSequentially('apple');
    await page.getByRole('option').first().waitFor();
    await input.press('Enter');
    await page.locator('.ss-result').first().waitFor();
    const bg = await page.locator('.ss-form').evaluate((el) => getComputedStyle(el).borderTopStyle);
    t.equal(bg, 'solid', "the widget's styles apply under style-src 'self' (adopted stylesheet)");
    t.same(violations, [], 'no CSP violations');
    await page.close();
  });
});
