/**
 * One URL identity for JSON pages and crawled pages (src/core/url.ts), end to end on a real server:
 * a page pushed as JSON under another spelling of its URL and the same page reached by a site
 * crawl are one entry, whichever comes first, and `DELETE ?url=` with a third spelling
 * removes it.
 */
import t from 'tap';
import { startTestServer, api } from '../helpers/server.js';
import { startSiteServer } from './helpers/site-server.js';
import { until } from './helpers/until.js';

t.test('a JSON-pushed URL and the crawled URL of the same page are the same document', async (t) => {
  const site = await startSiteServer();
  t.teardown(() => site.close());
  const html = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>T</title></head><body><main>${body}</main></body></html>`);
  };
  // The site links to its pages with an escaped ~ and a fragment.
  site.routes.set('/', html('<a href="/docs/%7eintro.html#setup">intro</a> <a href="b.html#top">b</a>'));
  site.routes.set('/docs/~intro.html', html('<h1>Intro</h1><p>crawled zymurgy text</p>'));
  site.routes.set('/b.html', html('<p>page b</p>'));
  const srv = await startTestServer({ env: { SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' }, t });
  const token = srv.token;
  const patch = await api(srv.url, '/admin/projects/default/settings', {
    method: 'PATCH',
    token: srv.masterKey,
    json: { crawler: { rootUrls: [`${site.url}/`], requestDelayMs: 0, respectRobotsTxt: false } },
  });
  t.equal(patch.status, 200, JSON.stringify(patch.body));
  const stored = `${site.url}/docs/~intro.html`;
  const entries = async () => (await api(srv.url, `/sites/indexedContent?token=${token}&url=intro`)).body.pages as Array<{ url: string; source: string }>;

  // 1. JSON first, spelled with an upper-case scheme, an escaped ~ and a fragment.
  const spelled = `HTTP://${site.url.slice('http://'.length)}/docs/%7Eintro.html#setup`;
  const push = await api(srv.url, `/sites/pageJson?token=${token}&refresh=true`, {
    method: 'POST',
    json: { url: spelled, title: 'Intro (JSON)', content: 'json zymurgy text', appendPageContent: false, contentGroup: '', imageUrl: '' },
  });
  t.equal(push.status, 200, JSON.stringify(push.body));
  t.same((await entries()).map((e) => e.url), [stored], 'stored in the shared form');

  // 2. The crawl reaches the same page through its own spelling: still one entry.
  const crawl = await api(srv.url, `/sites/crawl?token=${token}`, { method: 'POST' });
  t.equal(crawl.status, 202);
  await until(async () => (await api(srv.url, `/tasks/${crawl.body.taskId}?token=${token}`)).body.state === 'done', 'site crawl');
  await until(async () => (await api(srv.url, `/sites/indexStatus?token=${token}`)).body.pending === 0, 'pending 0');
  const afterCrawl = await entries();
  t.same(afterCrawl.map((e) => e.url), [stored], 'one entry after the crawl');
  t.equal(afterCrawl[0]!.source, 'crawler', 'the crawl queued after the JSON push replaced it (newest write wins)');
  const b = (await api(srv.url, `/sites/indexedContent?token=${token}&url=b.html`)).body.pages;
  t.same(b.map((e: { url: string }) => e.url), [`${site.url}/b.html`], 'link fragment dropped');

  // 3. JSON again under yet another spelling: replaces the crawled entry, no duplicate.
  const again = await api(srv.url, `/sites/pagesJson?token=${token}&refresh=true`, {
    method: 'POST',
    json: [{ url: `${site.url}/docs/./%7eintro.html#x`, title: 'Intro (JSON 2)', content: 'json again', appendPageContent: false, contentGroup: '', imageUrl: '' }],
  });
  t.equal(again.status, 200, JSON.stringify(again.body));
  const afterJson = await entries();
  t.same(afterJson.map((e) => e.url), [stored], 'still one entry');
  t.equal(afterJson[0]!.source, 'api');
  const found = await api(srv.url, `/sites?site=default&query=zymurgy&log=false`);
  t.equal(found.body.totalResults, 0, 'the old text is gone: one document, replaced');

  // 4. Removal by a third spelling.
  const del = await api(srv.url, `/index/documents?token=${token}&url=${encodeURIComponent(`HTTP://${site.url.slice(7)}/docs/~intro.html#end`)}`, { method: 'DELETE' });
  t.equal(del.status, 200);
  t.equal(del.body.deleted, 1);
  t.same(await entries(), []);
});
