/**
 * `make screenshots`: writes docs/widget-desktop.png, docs/widget-phone.png and
 * docs/panel-*.png from a throw-away server (temp data dir) holding the browser tests' shop,
 * a crawled local site and a week of searches, in headless Chromium.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { hostPage, launchBrowser, startPages, waitFor } from '../test/helpers/browser.js';
import { api, startTestServer } from '../test/helpers/server.js';
import { seedShop } from '../test/web/fixture.js';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs');
const HOUR = 3_600_000;

const OWNER_PAGE_HEAD = `<style>
  body { margin: 0; font: 16px/1.5 Georgia, serif; color: #222; background: #fbfaf7; }
  header { padding: 18px 32px; background: #2f4f3a; color: #fff; font: 600 20px system-ui, sans-serif; }
  main { max-width: 880px; margin: 28px auto; padding: 0 20px; }
  [data-sitesift] { --sitesift-accent: #2f6b45; --sitesift-focus: #2f6b45; }
</style>`;

async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.waitForTimeout(250);
  await page.screenshot({ path: path.join(DOCS, name), fullPage });
  console.log(`docs/${name}`);
}

async function main(): Promise<void> {
  let shift = 0;
  const srv = await startTestServer({ env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0', SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' }, start: { clock: () => Date.now() - shift } });
  const shop = await startPages({});
  const site = await startPages({
    '/': '<!doctype html><title>Orchard</title><main><h1>Orchard</h1><a href="/trees">Trees</a> <a href="/visit">Visit</a> <a href="/private/x">x</a></main>',
    '/trees': '<!doctype html><title>Our trees</title><main><h1>Our trees</h1><p>Apple, pear and quince trees.</p><a href="/">Home</a></main>',
    '/visit': '<!doctype html><title>Visit the orchard</title><main><h1>Visit</h1><p>Open on weekends.</p></main>',
  });
  const browser = await launchBrowser();
  try {
    await seedShop(srv, shop.url);
    await api(srv.url, '/admin/projects/default/settings', {
      method: 'PATCH',
      token: srv.masterKey,
      json: { search: { resultMappings: [{ trigger: { type: 'contains', value: 'apple' }, action: { type: 'custom', html: '<strong>Apple season:</strong> 20% off all tarts this week.', position: 1, contentGroup: 'Recipes' } }] } },
    });
    // A week of searches, a few selected, some without results.
    const queries = ['apple', 'apple pie', 'apple tart', 'pear', 'cake', 'crumble', 'orchard', 'quince jam', 'apple', 'harvest'];
    for (let h = 7 * 24; h >= 0; h -= 3) {
      shift = h * HOUR;
      const n = 1 + ((h * 7) % 5);
      for (let i = 0; i < n; i++) {
        const q = queries[(h + i) % queries.length]!;
        await api(srv.url, `/sites?site=default&query=${encodeURIComponent(q)}`);
        if ((h + i) % 3 === 0) await api(srv.url, '/sites/queries/log', { method: 'POST', json: { site: 'default', query: q, action: 'select', link: shop.url + '/recipes/apple-pie', position: 1 } });
      }
    }
    shift = 0;
    srv.services.analytics.flush();
    srv.services.analytics.rollupAll();
    await api(srv.url, '/admin/projects/default/settings', {
      method: 'PATCH',
      token: srv.masterKey,
      json: { crawler: { rootUrls: [site.url + '/'], blacklist: ['/private/'], requestDelayMs: 0 } },
    });
    const crawl = await api(srv.url, `/sites/crawl?token=${srv.token}`, { method: 'POST' });
    await waitFor(async () => (await api(srv.url, `/tasks/${crawl.body.taskId}?token=${srv.token}`)).body.state === 'done', 'crawl', 60_000);

    // The widget on an owner's page: desktop with suggestions over the results, then a phone.
    shop.pages.set('/', { body: hostPage(srv.url, 'default', { extraHead: OWNER_PAGE_HEAD }).replace('<main><h1>An owner\'s page</h1>', "<header>Hillside Orchard</header><main><h1>Recipes &amp; notes</h1>") });
    const desk = await browser.newPage({ width: 1100, height: 820 });
    await desk.goto(shop.url + '/');
    const input = desk.getByRole('combobox', { name: 'Search this site' });
    await input.fill('apple');
    await input.press('Enter');
    await desk.locator('.ss-result').first().waitFor();
    await input.fill('');
    await input.pressSequentially('apple c', { delay: 30 });
    await desk.getByRole('option').first().waitFor();
    await input.press('ArrowDown');
    await shot(desk, 'widget-desktop.png');
    const phone = await browser.newPage({ width: 390, height: 844 });
    await phone.goto(shop.url + '/');
    const pin = phone.getByRole('combobox', { name: 'Search this site' });
    await pin.fill('apple');
    await pin.press('Enter');
    await phone.locator('.ss-result').first().waitFor();
    await shot(phone, 'widget-phone.png');

    // The Control Panel.
    const p = await browser.newPage({ width: 1280, height: 860 });
    await p.goto(srv.url + '/panel');
    await p.getByLabel('Master key or project API key').fill(srv.masterKey);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: 'Projects' }).waitFor();
    await shot(p, 'panel-projects.png');
    await p.goto(srv.url + '/panel#/p/default/crawl');
    await p.locator('.run[data-run-state="done"]').waitFor();
    await shot(p, 'panel-crawl.png');
    await p.goto(srv.url + '/panel#/p/default/content');
    await p.locator('table.content tbody tr').first().waitFor();
    await shot(p, 'panel-content.png');
    await p.goto(srv.url + '/panel#/p/default/analytics');
    await p.locator('.chart canvas').waitFor();
    await shot(p, 'panel-analytics.png');
    await p.goto(srv.url + '/panel#/p/default/keys');
    await p.getByLabel('Label').fill('production importer');
    await p.getByRole('button', { name: 'Generate key' }).click();
    await p.getByRole('textbox', { name: 'New API key' }).waitFor();
    await shot(p, 'panel-keys.png');
    await p.goto(srv.url + '/panel#/p/default/settings/crawler');
    await p.getByLabel('Maximum depth').fill('5000');
    await p.getByRole('button', { name: 'Save' }).click();
    await p.locator('[data-field="crawler.maxDepth"] .field-error').waitFor();
    await shot(p, 'panel-settings.png');
    await p.goto(srv.url + '/panel#/p/default/preview');
    const pv = p.getByRole('combobox', { name: 'Search this site' });
    await pv.fill('apple');
    await pv.press('Enter');
    await p.locator('ol.why > li').first().waitFor();
    await shot(p, 'panel-preview.png', true);
  } finally {
    await browser.close();
    await shop.close();
    await site.close();
    await srv.close();
  }
}

await main();
