/**
 * `GET /tasks` lists a project's URL pushes, crawl and sitemap runs and reindex tasks, newest
 * first and paged, each with its progress (found, fetched, indexed, skipped by status, failed);
 * `state` and `type` filter it; a key sees only its own project's tasks. Reindex tasks are
 * created with `POST /tasks` and take their client's counts with `PATCH /tasks/{taskId}`.
 * Against a real server crawling a small site on 127.0.0.1.
 */
import t from 'tap';
import { api, startTestServer } from '../helpers/server.js';
import { startSiteServer } from '../crawl/helpers/site-server.js';
import { until } from '../crawl/helpers/until.js';

const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

t.test('task list: every task type with its progress, filters, order, paging and scoping', async (t) => {
  const site = await startSiteServer();
  t.teardown(() => site.close());
  const page = (body: string, status = 200) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  site.routes.set('/robots.txt', page('', 404));
  site.routes.set('/', page(html('Home', '<a href="/p1.html">one</a> <a href="/p2.html">two</a> <a href="/gone.html">gone</a> <a href="/private/s.html">secret</a>')));
  site.routes.set('/p1.html', page(html('Page one', '<p>Alpha text.</p>')));
  site.routes.set('/p2.html', page(html('Page two', '<p>Beta text.</p>')));
  site.routes.set('/gone.html', page(html('Gone', ''), 404));
  site.routes.set('/private/s.html', page(html('Secret', '<p>Never fetched.</p>')));
  site.routes.set('/sitemap.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/p2.html</loc></url><url><loc>${site.url}/gone.html</loc></url></urlset>`);
  });

  const srv = await startTestServer({ env: { SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' }, t });
  const token = srv.token;
  const patch = await api(srv.url, '/admin/projects/default/settings', {
    method: 'PATCH',
    token: srv.masterKey,
    json: { crawler: { rootUrls: [`${site.url}/`], sitemapUrls: [`${site.url}/sitemap.xml`], blacklist: ['/private/'], requestDelayMs: 0 } },
  });
  t.equal(patch.status, 200, JSON.stringify(patch.body));
  const task = async (id: string) => (await api(srv.url, `/tasks/${id}?token=${token}`)).body;
  const finished = (id: string, what: string) => until(async () => ['done', 'failed'].includes((await task(id)).state), what);

  t.same((await api(srv.url, `/tasks?token=${token}`)).body, { status: 'success', total: 0, offset: 0, limit: 50, tasks: [] }, 'no task yet');

  // A URL push.
  const push = await api(srv.url, `/index/documents?token=${token}&url=${encodeURIComponent(site.url + '/p1.html')}`, { method: 'POST' });
  t.equal(push.status, 202);
  await finished(push.body.taskId, 'URL push');
  // A site crawl: /, p1, p2 indexed; gone.html 404; the blacklisted page 801 (not fetched).
  const crawl = await api(srv.url, `/sites/crawl?token=${token}`, { method: 'POST' });
  t.equal(crawl.status, 202);
  await finished(crawl.body.taskId, 'site crawl');
  // A sitemap import: p2 and gone.html.
  const sm = await api(srv.url, `/sites/sitemap?token=${token}`, { method: 'POST' });
  t.equal(sm.status, 202);
  await finished(sm.body.taskId, 'sitemap import');
  t.equal(site.hits.get('/private/s.html') ?? 0, 0, 'the blacklisted page was never fetched');

  // A reindex (a bulk import the client runs and reports).
  const created = await api(srv.url, `/tasks?token=${token}`, { method: 'POST', json: { type: 'reindex', source: 'pages.jsonl' } });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.match(created.body, { status: 'success', type: 'reindex', state: 'running', message: 'Bulk import of pages.jsonl', progress: { found: 0, fetched: 0, indexed: 0, skipped: {}, failed: 0 } });
  const reindexId = created.body.taskId as string;
  const reported = await api(srv.url, `/tasks/${reindexId}?token=${token}`, { method: 'PATCH', json: { found: 3, indexed: 2, failed: 1 } });
  t.equal(reported.status, 200, JSON.stringify(reported.body));
  t.same(reported.body.progress, { found: 3, fetched: 3, indexed: 2, skipped: {}, failed: 1 });
  const done = await api(srv.url, `/tasks/${reindexId}?token=${token}`, { method: 'PATCH', json: { state: 'done', message: '2 indexed, 1 rejected' } });
  t.match(done.body, { state: 'done', message: '2 indexed, 1 rejected', progress: { found: 3, indexed: 2, failed: 1 } });
  t.ok(done.body.finishedAt, 'finishedAt once done');
  t.equal((await api(srv.url, `/tasks/${reindexId}?token=${token}`, { method: 'PATCH', json: { found: 4 } })).status, 409, 'a finished reindex task takes no more reports');
  t.equal((await api(srv.url, `/tasks/${crawl.body.taskId}?token=${token}`, { method: 'PATCH', json: { found: 4 } })).status, 409, 'the crawler owns its tasks');
  t.equal((await api(srv.url, `/tasks/${reindexId}?token=${token}`, { method: 'PATCH', json: { found: -1 } })).body.field, 'found');
  t.equal((await api(srv.url, `/tasks/${reindexId}?token=${token}`, { method: 'PATCH', json: { bogus: 1 } })).body.field, 'bogus');
  t.equal((await api(srv.url, `/tasks?token=${token}`, { method: 'POST', json: { type: 'crawl' } })).body.field, 'type');

  // The list: newest first, each with its progress.
  const list = await api(srv.url, `/tasks?token=${token}`);
  t.equal(list.status, 200);
  t.equal(list.body.total, 4);
  t.same(list.body.tasks.map((x: { type: string }) => x.type), ['reindex', 'sitemap', 'crawl', 'url'], 'newest first');
  t.same(list.body.tasks.map((x: { taskId: string }) => x.taskId), [reindexId, sm.body.taskId, crawl.body.taskId, push.body.taskId]);
  const [ri, smT, crawlT, urlT] = list.body.tasks;
  t.same(urlT.progress, { found: 1, fetched: 1, indexed: 1, skipped: {}, failed: 0 }, 'URL push');
  t.match(urlT, { state: 'done', indexStatus: 200, url: `${site.url}/p1.html` });
  t.same(crawlT.progress, { found: 5, fetched: 5, indexed: 3, skipped: { '404': 1, '801': 1 }, failed: 0 }, 'site crawl');
  t.same(smT.progress, { found: 2, fetched: 2, indexed: 1, skipped: { '404': 1 }, failed: 0 }, 'sitemap import');
  t.same(ri.progress, { found: 3, fetched: 3, indexed: 2, skipped: {}, failed: 1 }, 'reindex');
  t.same((await task(crawl.body.taskId)).progress, crawlT.progress, 'GET /tasks/{taskId} shows the same progress');
  t.notOk(list.body.tasks.some((x: { type: string }) => x.type === 'page'), 'the pages of runs are not listed');

  // The same outcomes in the metrics: crawl fetches by index status (1 push + 3 crawled + 1 from
  // the sitemap indexed; gone.html twice; the blacklisted page once), and an empty queue.
  const metrics = await (await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${srv.masterKey}` } })).text();
  const sample = (name: string) => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1]);
  t.equal(sample('sitesift_crawl_fetches_total{status="200"}'), 5);
  t.equal(sample('sitesift_crawl_fetches_total{status="404"}'), 2);
  t.equal(sample('sitesift_crawl_fetches_total{status="801"}'), 1);
  t.equal(sample('sitesift_crawl_queue_depth{site="default"}'), 0);

  // Filters.
  const ids = async (q: string) => {
    const r = await api(srv.url, `/tasks?token=${token}&${q}`);
    t.equal(r.status, 200, q);
    return { total: r.body.total as number, ids: (r.body.tasks as Array<{ taskId: string }>).map((x) => x.taskId) };
  };
  const open = await api(srv.url, `/tasks?token=${token}`, { method: 'POST', json: { type: 'reindex' } });
  t.same(await ids('state=running'), { total: 1, ids: [open.body.taskId] }, 'state=running');
  t.same(await ids('type=reindex'), { total: 2, ids: [open.body.taskId, reindexId] }, 'type=reindex');
  t.same(await ids('type=reindex&state=done'), { total: 1, ids: [reindexId] }, 'type and state together');
  t.same(await ids('type=crawl'), { total: 1, ids: [crawl.body.taskId] });
  t.same(await ids('type=sitemap'), { total: 1, ids: [sm.body.taskId] });
  t.same(await ids('type=url'), { total: 1, ids: [push.body.taskId] });
  t.same(await ids('type=append'), { total: 0, ids: [] });
  t.same(await ids('state=failed'), { total: 0, ids: [] });
  for (const [q, field] of [['state=paused', 'state'], ['type=page', 'type'], ['limit=0', 'limit'], ['limit=1001', 'limit'], ['offset=-1', 'offset']]) {
    const r = await api(srv.url, `/tasks?token=${token}&${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.body.field, field, q);
  }

  // Paging.
  const all = [open.body.taskId, reindexId, sm.body.taskId, crawl.body.taskId, push.body.taskId];
  const p1 = await api(srv.url, `/tasks?token=${token}&limit=2`);
  t.match(p1.body, { total: 5, offset: 0, limit: 2 });
  const p2 = await api(srv.url, `/tasks?token=${token}&limit=2&offset=2`);
  const p3 = await api(srv.url, `/tasks?token=${token}&limit=2&offset=4`);
  t.same([...p1.body.tasks, ...p2.body.tasks, ...p3.body.tasks].map((x: { taskId: string }) => x.taskId), all, 'pages follow each other');
  t.equal(p3.body.tasks.length, 1);
  t.same((await api(srv.url, `/tasks?token=${token}&offset=10`)).body, { status: 'success', total: 5, offset: 10, limit: 50, tasks: [] }, 'past the end');

  // Scoping: another project's key sees none of these tasks and cannot touch them.
  const other = await api(srv.url, '/admin/projects', { method: 'POST', token: srv.masterKey, json: { siteId: 'other' } });
  t.equal(other.status, 201);
  const otherKey = other.body.apiKey.token as string;
  t.same((await api(srv.url, `/tasks?token=${otherKey}`)).body.tasks, [], 'another project lists nothing');
  t.equal((await api(srv.url, `/tasks?token=${otherKey}&site=default`)).body.total, 0, 'site does not widen a project key');
  t.equal((await api(srv.url, `/tasks/${crawl.body.taskId}?token=${otherKey}`)).status, 404);
  t.equal((await api(srv.url, `/tasks/${open.body.taskId}?token=${otherKey}`, { method: 'PATCH', json: { state: 'done' } })).status, 404, 'nor report to them');
  const theirs = await api(srv.url, `/tasks?token=${otherKey}`, { method: 'POST', json: { type: 'reindex' } });
  t.same((await ids('type=reindex')).total, 2, 'their task is not in this list');
  t.same((await api(srv.url, `/tasks?site=other`, { token: srv.masterKey })).body.tasks.map((x: { taskId: string }) => x.taskId), [theirs.body.taskId], 'the master key names the project with site');
  t.equal((await api(srv.url, '/tasks')).status, 401, 'a key is needed');
  const reportsOnly = await api(srv.url, '/admin/projects/default/keys', { method: 'POST', token: srv.masterKey, json: { scopes: ['reports'] } });
  t.equal((await api(srv.url, `/tasks?token=${reportsOnly.body.token}`)).status, 403, 'listing needs the index scope');
});
