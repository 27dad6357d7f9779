/**
 * The routes that serve the browser side, over HTTP without a browser: `GET /widget.js`
 * (caching, ETag/304, versioned URL, CSP, size budget), `GET /panel` and its assets (CSP, no
 * inline script or style), the demo page at `/`, and the panel's APIs `GET /admin/whoami` and
 * `GET /sites/tasks`.
 */
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { ensureWebBuild } from '../../src/web/build.js';
import { startPages, waitFor } from '../helpers/browser.js';
import { api, startTestServer } from '../helpers/server.js';

const WIDGET_GZIP_BUDGET = 25 * 1024;

t.test('widget.js, panel and demo pages', async (t) => {
  const manifest = await ensureWebBuild();
  const srv = await startTestServer({ t, env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0' } });

  const res = await fetch(srv.url + '/widget.js', { headers: { 'Accept-Encoding': 'gzip' } });
  const body = await res.text();
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/javascript/);
  t.equal(res.headers.get('content-encoding'), 'gzip', 'sent compressed');
  t.equal(res.headers.get('cache-control'), 'public, max-age=300, stale-while-revalidate=86400');
  const etag = res.headers.get('etag')!;
  t.equal(etag, `W/"${manifest.assets['widget.js'].hash}"`, 'ETag is the content hash');
  t.match(res.headers.get('content-security-policy'), /default-src 'none'/);
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  t.equal(res.headers.get('access-control-allow-origin'), null, 'no CORS headers outside the public search routes');
  t.match(res.headers.get('x-sitesift-version'), new RegExp(`\\+${manifest.assets['widget.js'].hash}$`));
  t.match(body, /sitesift/);
  t.match(body, /adoptedStyleSheets/, 'the CSS is inside the one file');
  const gz = gzipSync(Buffer.from(body), { level: 9 }).length;
  t.ok(gz <= WIDGET_GZIP_BUDGET, `widget.js is ${gz} bytes gzip (budget ${WIDGET_GZIP_BUDGET})`);

  const again = await fetch(srv.url + '/widget.js', { headers: { 'If-None-Match': etag } });
  t.equal(again.status, 304, 'If-None-Match with the current ETag → 304');
  t.equal(await again.text(), '');
  t.equal(again.headers.get('etag'), etag);
  const stale = await fetch(srv.url + '/widget.js', { headers: { 'If-None-Match': 'W/"0000000000000000"' } });
  t.equal(stale.status, 200, 'another ETag → the file');
  await stale.arrayBuffer();

  const versioned = await fetch(`${srv.url}/widget.js?v=${manifest.assets['widget.js'].hash}`);
  t.equal(versioned.headers.get('cache-control'), 'public, max-age=31536000, immutable', '?v=<hash> is immutable');
  await versioned.arrayBuffer();
  const head = await fetch(srv.url + '/widget.js', { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD');

  const panel = await fetch(srv.url + '/panel');
  const html = await panel.text();
  t.equal(panel.status, 200);
  t.match(panel.headers.get('content-type'), /^text\/html/);
  const csp = panel.headers.get('content-security-policy') ?? '';
  for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) t.ok(csp.includes(d), `panel CSP has ${d}`);
  t.notMatch(csp, /unsafe-inline|unsafe-eval/, 'no unsafe-inline or unsafe-eval');
  t.equal(panel.headers.get('x-frame-options'), 'DENY');
  t.equal(panel.headers.get('set-cookie'), null, 'no cookies');
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  t.ok(scripts.length >= 1 && scripts.every((m) => /\bsrc="\/panel\/panel\.js\?v=[0-9a-f]{16}"/.test(m[1]!) && m[2] === ''), 'only external, versioned scripts');
  t.notMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline styles or handlers');
  const js = await fetch(`${srv.url}/panel/panel.js?v=${manifest.assets['panel.js'].hash}`);
  t.equal(js.status, 200);
  t.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  await js.arrayBuffer();
  const cssRes = await fetch(srv.url + '/panel/panel.css');
  t.match(cssRes.headers.get('content-type'), /^text\/css/);
  await cssRes.arrayBuffer();
  t.equal((await api(srv.url, '/panel/secret.txt')).status, 404, 'only the panel files');

  const demo = await fetch(srv.url + '/');
  const demoHtml = await demo.text();
  t.equal(demo.status, 200);
  t.match(demoHtml, /<div data-sitesift="default"/, 'the demo mounts the default project');
  t.match(demoHtml, new RegExp(`<script src="/widget\\.js\\?v=${manifest.assets['widget.js'].hash}" defer></script>`));
  t.equal(demo.headers.get('content-security-policy'), csp, 'the demo page has the panel CSP');
});

t.test('GET /admin/whoami and GET /sites/tasks', async (t) => {
  const srv = await startTestServer({ t, env: { SITESIFT_WORKERS: '1', SITESIFT_SEARCH_THREADS: '0', SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true' } });
  const site = await startPages({ '/': '<!doctype html><title>Home</title><main><h1>Home</h1><p>Welcome to the orchard.</p></main>' }, t);

  t.same((await api(srv.url, '/admin/whoami', { token: srv.masterKey })).body, { status: 'success', kind: 'master' });
  const who = await api(srv.url, '/admin/whoami', { token: srv.token });
  t.match(who.body, { status: 'success', kind: 'project', siteId: 'default' });
  t.match(who.body.keyId, /\w+/);
  t.equal((await api(srv.url, '/admin/whoami')).body.code, 'missing_token');
  t.equal((await api(srv.url, '/admin/whoami', { token: 'ss_nope' })).status, 401);

  const empty = await api(srv.url, `/sites/tasks?token=${srv.token}`);
  t.same(empty.body, { status: 'success', counts: { queued: 0, running: 0, done: 0, failed: 0 }, runs: [], tasks: [] }, 'no crawl queue yet');
  t.equal((await api(srv.url, '/sites/tasks')).status, 401, 'needs a key');
  t.equal((await api(srv.url, `/sites/tasks?token=${srv.token}&limit=0`)).body.field, 'limit');
  t.equal((await api(srv.url, `/sites/tasks?token=${srv.token}&state=gone`)).body.field, 'state');

  const push = await api(srv.url, `/index/documents?url=${encodeURIComponent(site.url + '/')}&token=${srv.token}`, { method: 'POST' });
  t.equal(push.status, 202);
  await waitFor(async () => (await api(srv.url, `/sites/tasks?token=${srv.token}`)).body.counts.done === 1, 'the push done', 60_000);
  const list = await api(srv.url, `/sites/tasks?token=${srv.token}`);
  t.same(list.body.counts, { queued: 0, running: 0, done: 1, failed: 0 });
  t.match(list.body.tasks, [{ taskId: push.body.taskId, type: 'url', state: 'done', url: site.url + '/', indexStatus: 200 }]);
  t.same((await api(srv.url, `/sites/tasks?token=${srv.token}&state=queued`)).body.tasks, [], 'state filter');
});
