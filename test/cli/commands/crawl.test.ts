/**
 * `sitesift crawl` and `sitesift sitemap` end to end: the CLI (in-process) drives a real server
 * that crawls a fixture site on 127.0.0.1.
 */
import t from 'tap';
import { runCliAgainst } from '../../helpers/cli.js';
import { api, startTestServer, type TestServer } from '../../helpers/server.js';
import { startSiteServer, type SiteServer } from '../../crawl/helpers/site-server.js';

let s: TestServer;
let site: SiteServer;
t.before(async () => {
  site = await startSiteServer();
  site.routes.set('/sitemap.xml', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/e.html</loc></url></urlset>`);
  });
  s = await startTestServer({ env: { SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' } });
  await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'cr' } });
  await api(s.url, '/admin/projects/cr/settings', {
    method: 'PATCH',
    token: s.masterKey,
    json: { crawler: { rootUrls: [`${site.url}/a.html`], sitemapUrls: [`${site.url}/sitemap.xml`], maxDepth: 1 } },
  });
});
t.teardown(async () => {
  await s.close();
  await site.close();
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCliAgainst(s, [...args]);
}

t.test('crawl --wait, crawl --page, sitemap', async (t) => {
  const c = await cli(['crawl', 'cr', '--wait']);
  t.equal(c.code, 0, c.stderr);
  t.match(c.stdout, /crawl of cr started \(task t_[0-9a-f]+\)/);
  t.match(c.stdout, /done — Crawl finished/);
  // The progress figures of GET /tasks, on the last line as on the server.
  const crawlTask = (await api(s.url, `/tasks?site=cr&type=crawl`, { token: s.masterKey })).body.tasks[0];
  const pr = crawlTask.progress;
  const skipped = Object.values(pr.skipped as Record<string, number>).reduce((a, n) => a + n, 0);
  t.ok(c.stdout.trim().endsWith(`found ${pr.found}, fetched ${pr.fetched}, indexed ${pr.indexed}, skipped ${skipped}${skipped ? ` (${Object.entries(pr.skipped).map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''}, failed ${pr.failed}`), c.stdout);
  t.ok(pr.found > 0 && pr.found === pr.fetched, 'every page of the finished crawl is counted');
  const p = await cli(['crawl', 'cr', '--page', `${site.url}/d.html`, '--wait']);
  t.equal(p.code, 0, p.stderr);
  t.match(p.stdout, /queued .*\/d\.html/);
  t.match(p.stdout, /done · found 1, fetched 1, indexed 1, skipped 0, failed 0/);
  const m = await cli(['sitemap', 'cr', '--wait']);
  t.equal(m.code, 0, m.stderr);
  t.match(m.stdout, /1 URLs read, 1 queued, 0 removed/);
  const listing = await api(s.url, '/sites/indexedContent?site=cr&limit=100', { token: s.masterKey });
  const urls = listing.body.pages.map((x: { url: string }) => x.url.replace(site.url, ''));
  for (const u of ['/a.html', '/c.html', '/d.html', '/e.html']) t.ok(urls.includes(u), u);
  const usage = await cli(['crawl']);
  t.equal(usage.code, 2);
});

t.test('crawl --page --wait exits 1 with the status when the page was not indexed', async (t) => {
  const missing = await cli(['crawl', 'cr', '--page', `${site.url}/missing.html`, '--wait']);
  t.equal(missing.code, 1, 'a 404 is a failure for the caller');
  t.match(missing.stdout, /done — HTTP 404/, 'the task itself is done: its outcome was recorded');
  t.match(missing.stdout, /done — HTTP 404 · found 1, fetched 1, indexed 0, skipped 1 \(404: 1\), failed 0/, 'with its progress');
  t.match(missing.stderr, /missing\.html was not indexed: status 404 \(HTTP 404\)/);
  const json = await cli(['crawl', 'cr', '--page', `${site.url}/missing.html`, '--wait', '--json']);
  t.equal(json.code, 1);
  t.match(JSON.parse(json.stdout.trim().split('\n').pop()!), { state: 'done', indexStatus: 404 });
  const found = await cli(['crawl', 'cr', '--page', `${site.url}/b.html`, '--wait']);
  t.equal(found.code, 0, found.stderr);
});
