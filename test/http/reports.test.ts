/**
 * indexStatus and indexedContent against a real server on 127.0.0.1 (temp data dir). Entries
 * with non-200 statuses (what the crawler records) are written straight into the store.
 */
import t from 'tap';
import type { PageDoc } from '../../src/core/index.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { makeDoc } from '../helpers/docs.js';

let s: TestServer;
let token2 = '';

t.before(async () => {
  s = await startTestServer();
  const p = await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'reports' } });
  if (p.status !== 201) throw new Error(p.text);
  token2 = p.body.apiKey.token;
});
t.teardown(() => s.close());

const get = (path: string, token = token2) => api(s.url, `${path}${path.includes('?') ? '&' : '?'}token=${token}`);

function entry(url: string, status: number, over: Partial<PageDoc> = {}): PageDoc {
  return makeDoc(url, url, status === 200 ? 'text' : '', {
    source: 'crawler',
    status,
    ...(status === 200 ? {} : { message: `status ${status}` }),
    ...over,
  });
}

t.test('indexStatus of an empty project', async (t) => {
  const r = await get('/sites/indexStatus');
  t.equal(r.status, 200, r.text);
  t.same(r.body, { status: 'success', pages: 0, '4XX': 0, '5XX': 0, '8XX': 0, pending: 0, lastUpdated: null });
});

t.test('counts and listing after JSON pushes and crawler outcomes', async (t) => {
  const docs = [
    { url: 'https://r.example.com/guide/a', title: 'A', content: 'alpha', contentGroup: 'Guide' },
    { url: 'https://r.example.com/guide/b', title: 'B', content: 'beta', documentType: 'PDF' },
    { url: 'https://r.example.com/blog/c', title: 'C', content: 'gamma' },
  ];
  const w = await api(s.url, `/sites/pagesJson?token=${token2}&refresh=true`, { method: 'POST', json: docs });
  t.equal(w.status, 200, w.text);
  const index = await s.services.indexes.get('reports');
  await index.write([
    { op: 'upsert', doc: entry('https://r.example.com/gone', 404) },
    { op: 'upsert', doc: entry('https://r.example.com/also-gone', 410) },
    { op: 'upsert', doc: entry('https://r.example.com/broken', 503) },
    { op: 'upsert', doc: entry('https://r.example.com/private', 801) },
  ]);

  const st = await get('/sites/indexStatus');
  t.match(st.body, { status: 'success', pages: 3, '4XX': 2, '5XX': 1, '8XX': 1 });
  t.type(st.body.pending, 'number');
  t.ok(!Number.isNaN(Date.parse(st.body.lastUpdated)), st.body.lastUpdated);

  const all = await get('/sites/indexedContent');
  t.equal(all.status, 200);
  t.match(all.body, { status: 'success', total: 7, offset: 0, limit: 50 });
  t.same(
    all.body.pages.map((p: { url: string }) => p.url),
    [
      'https://r.example.com/also-gone',
      'https://r.example.com/blog/c',
      'https://r.example.com/broken',
      'https://r.example.com/gone',
      'https://r.example.com/guide/a',
      'https://r.example.com/guide/b',
      'https://r.example.com/private',
    ],
  );
  const a = all.body.pages.find((p: { url: string }) => p.url.endsWith('/guide/a'));
  t.match(a, { title: 'A', contentType: 'HTML', status: 200, contentGroup: 'Guide', source: 'api' });
  t.ok(Date.parse(a.indexedAt) <= Date.parse(a.updatedAt));
  t.notOk('message' in a);
  const gone = all.body.pages.find((p: { url: string }) => p.url.endsWith('/gone') && !p.url.includes('also'));
  t.match(gone, { status: 404, message: 'status 404', source: 'crawler', contentGroup: '_' });

  const urls = async (q: string) => (await get(`/sites/indexedContent?${q}`)).body.pages.map((p: { url: string }) => p.url.replace('https://r.example.com', ''));
  t.same(await urls('url=/guide/'), ['/guide/a', '/guide/b']);
  t.same(await urls('contentType=PDF'), ['/guide/b']);
  t.same(await urls('contentType=pdf'), ['/guide/b']);
  t.same(await urls('status=200'), ['/blog/c', '/guide/a', '/guide/b']);
  t.same(await urls('status=404'), ['/gone']);
  t.same(await urls('status=4XX'), ['/also-gone', '/gone']);
  t.same(await urls('status=801'), ['/private']);
  t.same(await urls('status=200&url=guide&contentType=HTML'), ['/guide/a']);

  const page = await get('/sites/indexedContent?offset=2&limit=2');
  t.match(page.body, { total: 7, offset: 2, limit: 2 });
  t.same(page.body.pages.map((p: { url: string }) => p.url.replace('https://r.example.com', '')), ['/broken', '/gone']);
  const past = await get('/sites/indexedContent?offset=100');
  t.match(past.body, { total: 7, pages: [] });

  // The other project sees none of it.
  const other = await get('/sites/indexedContent?url=r.example.com', s.token);
  t.equal(other.body.total, 0);
});

t.test('a deleted URL leaves the listing and the counts', async (t) => {
  const r = await api(s.url, `/index/documents?token=${token2}&url=${encodeURIComponent('https://r.example.com/gone')}`, { method: 'DELETE' });
  t.same(r.body, { status: 'success', deleted: 1 });
  const st = await get('/sites/indexStatus');
  t.match(st.body, { pages: 3, '4XX': 1 });
  t.equal((await get('/sites/indexedContent?url=gone')).body.total, 1); // only /also-gone
});

t.test('indexedContent rejects out-of-range and malformed parameters', async (t) => {
  const bad: Array<[string, string]> = [
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=1.5', 'offset'],
    ['status=abc', 'status'],
    ['status=1000', 'status'],
    ['status=4X', 'status'],
    ['contentType=EXE', 'contentType'],
    ['limit=1&limit=2', 'limit'],
  ];
  for (const [q, field] of bad) {
    const r = await get(`/sites/indexedContent?${q}`);
    t.equal(r.status, 400, q);
    t.equal(r.body.code, 'invalid_parameter', q);
    t.equal(r.body.field, field, q);
  }
  const max = await get('/sites/indexedContent?limit=1000');
  t.equal(max.status, 200);
  t.equal(max.body.limit, 1000);
});

t.test('auth on report routes', async (t) => {
  for (const path of ['/sites/indexStatus', '/sites/indexedContent']) {
    let r = await api(s.url, path);
    t.equal(r.status, 401, path);
    t.equal(r.body.code, 'missing_token');
    r = await api(s.url, `${path}?token=ss_not_a_key`);
    t.equal(r.status, 401);
    t.equal(r.body.code, 'invalid_token');
    r = await api(s.url, `${path}?site=nosuch`, { token: s.masterKey });
    t.equal(r.status, 404);
    t.equal(r.body.code, 'unknown_site');
    r = await api(s.url, `${path}?site=reports`, { token: s.masterKey });
    t.equal(r.status, 200);
  }
  const key = await api(s.url, '/admin/projects/reports/keys', { method: 'POST', token: s.masterKey, json: { label: 'gone soon' } });
  await api(s.url, `/admin/projects/reports/keys/${key.body.id}`, { method: 'DELETE', token: s.masterKey });
  const r = await get('/sites/indexStatus', key.body.token);
  t.equal(r.status, 401);
  t.equal(r.body.code, 'invalid_token');
});
