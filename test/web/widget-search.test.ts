/**
 * The widget in chromium on an owner's page (another origin than the server), embedded with
 * the two documented lines: suggestions while typing, grouped with keyboard navigation, and
 * Enter showing grouped results with highlighted terms; a chosen suggested result navigates.
 */
import t from 'tap';
import { hostPage, launchBrowser, startPages, waitFor } from '../helpers/browser.js';
import { startTestServer } from '../helpers/server.js';
import { seedShop } from './fixture.js';

t.test('suggest, keyboard and grouped results', async (t) => {
  const srv = await startTestServer({ t });
  const host = await startPages({}, t);
  host.pages.set('/', { body: hostPage(srv.url, 'default') });
  host.pages.set('/recipes/apple-pie', { body: '<!doctype html><title>Apple pie page</title><h1>Apple pie page</h1>' });
  await seedShop(srv, host.url);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const suggestUrls: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/sites/suggest')) suggestUrls.push(r.url());
  });
  await page.goto(host.url + '/');

  const input = page.getByRole('combobox', { name: 'Search this site' });
  await input.waitFor();
  t.equal(await input.getAttribute('aria-expanded'), 'false', 'collapsed at first');
  t.ok(await page.evaluate(() => !!document.querySelector('[data-sitesift]')?.shadowRoot), 'rendered in a shadow root');

  // Typing: debounced suggest requests, one listbox with groups.
  await input.pressSequentially('appl', { delay: 20 });
  const listbox = page.getByRole('listbox');
  await listbox.waitFor({ state: 'visible' });
  await waitFor(async () => (await page.getByRole('option').count()) > 0, 'options');
  t.ok(suggestUrls.length < 4, `debounced: ${suggestUrls.length} suggest requests for 4 keystrokes`);
  t.ok(suggestUrls.every((u) => new URL(u).origin === new URL(srv.url).origin), 'talks to the server that served widget.js');
  t.equal(await input.getAttribute('aria-expanded'), 'true');
  const groups = await listbox.getByRole('group').evaluateAll((els) =>
    els.map((e) => (e.getRootNode() as ShadowRoot).getElementById(e.getAttribute('aria-labelledby')!)!.textContent),
  );
  t.same(groups.sort(), ['Blog', 'Other', 'Recipes'], 'suggested results grouped by content group (labelled groups)');
  const options = page.getByRole('option');
  const n = await options.count();
  t.ok(n >= 3, `${n} options`);
  t.match(await options.first().textContent(), /apple/i);
  t.ok(await listbox.locator('mark').count(), 'matched prefix highlighted');

  // Arrow keys move the active option (aria-activedescendant); they wrap.
  await input.press('ArrowDown');
  const first = await options.nth(0).getAttribute('id');
  t.equal(await input.getAttribute('aria-activedescendant'), first, 'ArrowDown: first option active');
  t.equal(await options.nth(0).getAttribute('aria-selected'), 'true');
  await input.press('ArrowDown');
  t.equal(await input.getAttribute('aria-activedescendant'), await options.nth(1).getAttribute('id'), 'ArrowDown again: second');
  await input.press('ArrowUp');
  await input.press('ArrowUp');
  t.equal(await input.getAttribute('aria-activedescendant'), await options.nth(n - 1).getAttribute('id'), 'ArrowUp from the first wraps to the last');
  // Escape closes the list and keeps the text.
  await input.press('Escape');
  await listbox.waitFor({ state: 'hidden' });
  t.equal(await input.getAttribute('aria-expanded'), 'false', 'Escape collapses');
  t.notOk(await input.getAttribute('aria-activedescendant'), 'no active option when collapsed');
  t.equal(await input.inputValue(), 'appl');

  // Enter without an active option: the results layer, grouped, with highlighted terms.
  await input.press('e');
  await listbox.waitFor({ state: 'visible' });
  await input.press('Enter');
  const status = page.getByRole('status');
  await waitFor(async () => /results? for “apple”/.test((await status.textContent()) ?? ''), 'results status');
  t.match(await status.textContent(), /^8 results for “apple”$/);
  t.equal(await input.getAttribute('aria-expanded'), 'false', 'Enter closes the suggestions');
  const tabs = page.getByRole('tab');
  const tabTexts = (await tabs.allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim());
  t.equal(tabTexts[0], 'All 8', 'All tab with the total');
  t.same(new Set(tabTexts.slice(1)), new Set(['Recipes 5', 'Blog 2', 'Other 1']), 'a tab per content group with its count');
  const headings = (await page.locator('.ss-section-title').allTextContents()).map((s) => s.replace(/\s+\d+$/, '').trim());
  t.ok(headings.includes('Recipes') && headings.includes('Blog'), `sections per group: ${headings}`);
  const marks = await page.locator('.ss-results mark').allTextContents();
  t.ok(marks.length >= 5, `${marks.length} highlighted terms`);
  t.ok(marks.every((m) => /^apples?$/i.test(m)), `only the query term is marked: ${[...new Set(marks)]}`);
  t.ok(await page.locator('.ss-results .ss-snippet mark').count(), 'snippets carry highlights');
  t.ok(await page.locator('.ss-dp dd', { hasText: '12' }).count(), 'data point marked show is displayed');

  // Choosing a suggested result with the keyboard goes to its page.
  await input.fill('');
  await input.pressSequentially('apple pi', { delay: 20 });
  await waitFor(async () => (await page.getByRole('option', { name: /Apple pie/ }).count()) > 0, 'apple pie option');
  const count = await options.count();
  let steps = 0;
  for (let i = 0; i < count; i++) {
    await input.press('ArrowDown');
    steps++;
    const activeId = await input.getAttribute('aria-activedescendant');
    const text = await page.locator(`[id="${activeId}"]`).textContent();
    if (/Apple pie/.test(text ?? '')) break;
  }
  t.ok(steps <= count, 'reached the Apple pie option');
  await Promise.all([page.waitForURL(host.url + '/recipes/apple-pie'), input.press('Enter')]);
  t.equal(await page.title(), 'Apple pie page', 'Enter on a suggested result opens it');
});
