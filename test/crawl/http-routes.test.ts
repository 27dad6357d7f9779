/**
 * The crawl routes against a real server (in-process, real worker pool, real index) crawling a
 * fixture site on 127.0.0.1 (SITESIFT_CRAWLER_ALLOW_PRIVATE=true): URL push → 202 + task,
 * GET /tasks, site crawl, sitemap import, indexStatus pending, errors; and Control Panel rules
 * not applied to a JSON page pushed with appendPageContent.
 */
import t from 'tap';
import { startTestServer, api } from '../helpers/server.js';
import { startSiteServer } from './helpers/site-server.js';
import { until } from './helpers/until.js';

t.test('crawl routes end to end', async (t) => {
  const site = await startSiteServer();
  t.teardown(() => site.close());
  const sitemap = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <url><loc>${site.url}/a.html</loc><lastmod>2024-01-01</lastmod></url><url><loc>${site.url}/c.html</loc></url></urlset>`;
  site.routes.set('/sitemap.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(sitemap);
  });
  const srv = await startTestServer({ env: { SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' }, t });
  const token = srv.token;
  const settings = {
    crawler: { rootUrls: [`${site.url}/`], sitemapUrls: [`${site.url}/sitemap.xml`], blacklist: ['/private/'], requestDelayMs: 0 },
    dataPoints: [{ key: 'price', meta: 'product:price', type: 'number', show: true, sortable: true, searchable: false }],
    resultGroups: [{ name: 'Shop', selector: 'main.product' }],
  };
  const patch = await api(srv.url, '/admin/projects/default/settings', { method: 'PATCH', token: srv.masterKey, json: settings });
  t.equal(patch.status, 200, JSON.stringify(patch.body));

  // URL push
  const push = await api(srv.url, `/index/documents?url=${encodeURIComponent(site.url + '/b.html')}&token=${token}`, { method: 'POST' });
  t.equal(push.status, 202);
  t.equal(push.body.status, 'success');
  t.equal(push.body.url, `${site.url}/b.html`);
  t.match(push.body.taskId, /^t_[0-9a-f]{20}$/);
  await until(async () => (await api(srv.url, `/tasks/${push.body.taskId}?token=${token}`)).body.state === 'done', 'URL push');
  const task = await api(srv.url, `/tasks/${push.body.taskId}?token=${token}`);
  t.match(task.body, { status: 'success', taskId: push.body.taskId, type: 'url', state: 'done', url: `${site.url}/b.html`, indexStatus: 200 });
  t.ok(task.body.createdAt && task.body.finishedAt);

  const listing = await api(srv.url, `/sites/indexedContent?token=${token}&url=b.html`);
  t.match(listing.body.pages[0], { url: `${site.url}/b.html`, status: 200, source: 'crawler', contentGroup: 'Shop' });

  // Errors
  t.equal((await api(srv.url, `/index/documents?url=ftp://x&token=${token}`, { method: 'POST' })).status, 400);
  t.equal((await api(srv.url, `/index/documents?url=${encodeURIComponent(site.url)}`, { method: 'POST' })).status, 401);
  const missing = await api(srv.url, `/tasks/t_00000000000000000000?token=${token}`);
  t.equal(missing.status, 404);
  t.equal(missing.body.code, 'not_found');

  // Site crawl
  const crawl = await api(srv.url, `/sites/crawl?token=${token}`, { method: 'POST' });
  t.equal(crawl.status, 202);
  t.equal(crawl.body.type, 'crawl');
  await until(async () => (await api(srv.url, `/tasks/${crawl.body.taskId}?token=${token}`)).body.state === 'done', 'site crawl');
  // pending counts crawl tasks plus acknowledged writes not yet searchable (refresh interval).
  await until(async () => (await api(srv.url, `/sites/indexStatus?token=${token}`)).body.pending === 0, 'pending 0');
  const status = await api(srv.url, `/sites/indexStatus?token=${token}`);
  t.ok(status.body.pages >= 8, `pages ${status.body.pages}`);
  t.ok(status.body['8XX'] >= 4, 'skipped entries counted');
  const secret = await api(srv.url, `/sites/indexedContent?token=${token}&url=secret`);
  t.match(secret.body.pages[0], { status: 801, message: /Blacklisted/ });

  // Search finds crawled content.
  const found = await api(srv.url, `/sites?site=default&query=dredged&log=false`);
  t.equal(found.body.totalResults, 1, 'crawled text is searchable');

  // Sitemap import
  const sm = await api(srv.url, `/sites/sitemap?token=${token}`, { method: 'POST' });
  t.equal(sm.status, 202);
  t.match(sm.body, { status: 'success', type: 'sitemap', urls: 2, queued: 2, errors: [] });
  await until(async () => (await api(srv.url, `/tasks/${sm.body.taskId}?token=${token}`)).body.state === 'done', 'sitemap import');
  const sm2 = await api(srv.url, `/sites/sitemap?token=${token}`, { method: 'POST' });
  t.equal(sm2.body.queued, 1, 'only the URL without lastmod is queued again');

  // A JSON page with appendPageContent: blacklist, data points and groups are not applied.
  const json = await api(srv.url, `/sites/pageJson?token=${token}`, {
    method: 'POST',
    json: { url: `${site.url}/private/secret.html`, title: 'Pushed secret', content: 'Supplied text.', appendPageContent: true, contentGroup: 'Notes', imageUrl: '' },
  });
  t.equal(json.status, 202, JSON.stringify(json.body));
  await until(async () => (await api(srv.url, `/tasks/${json.body.taskId}?token=${token}`)).body.state === 'done', 'append');
  const page = await api(srv.url, `/sites/indexedContent?token=${token}&url=secret`);
  t.match(page.body.pages[0], { status: 200, source: 'api', title: 'Pushed secret', contentGroup: 'Notes' });

  // No rules configured → 400s that say what to set.
  await api(srv.url, '/admin/projects/default/settings', { method: 'PATCH', token: srv.masterKey, json: { crawler: { rootUrls: [], sitemapUrls: [] } } });
  const noRoots = await api(srv.url, `/sites/crawl?token=${token}`, { method: 'POST' });
  t.equal(noRoots.status, 400);
  t.equal(noRoots.body.field, 'rootUrls');
});
