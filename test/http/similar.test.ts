/**
 * `GET /sites/similar` over HTTP: a server with the fixture word vectors (built-in embedder),
 * search threads on, answers checked against the route's documented schema.
 */
import t from 'tap';
import { api, startTestServer, tempDataDir } from '../helpers/server.js';
import { writeFixtureWordVectors } from '../helpers/word-vectors.js';

const page = (slug: string, title: string, content: string, extra: Record<string, unknown> = {}) => ({
  url: `https://h.test/${slug}`, title, content, contentGroup: '', imageUrl: '', appendPageContent: false, ...extra,
});
const pages = [
  page('rollback', 'ROLLBACK', 'abort the current transaction and revert its changes'),
  page('savepoint', 'SAVEPOINT', 'rollback part of a transaction'),
  page('undo', 'Undo a mistake', 'revert changes', { contentGroup: 'Blog' }),
  page('perf', 'Performance tips', 'speed up slow queries'),
  page('faster', 'Faster queries', 'performance'),
  page('cake', 'Chocolate cake', 'a recipe'),
  page('xyzzy', 'Xyzzy', 'plugh'),
];

t.test('similar pages over HTTP: answer, CORS, groups, 404 and 400 on url, no embedder', async (t) => {
  const s = await startTestServer({ t, env: { SITESIFT_WORD_VECTORS: writeFixtureWordVectors(tempDataDir(t)), SITESIFT_SEARCH_THREADS: '1' } });
  let r = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: s.masterKey, json: { search: { semantic: { threshold: 0.6 } } } });
  t.equal(r.status, 200);
  r = await api(s.url, `/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', json: pages });
  t.equal(r.status, 200, 'indexed');
  const get = async (q: string) => {
    const res = await fetch(`${s.url}/sites/similar?site=default&${q}`, { headers: { Origin: 'https://shop.example' } });
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  };
  const links = (body: any) => (Object.values(body.suggests).flat() as any[]).map((x) => x.link.replace('https://h.test/', ''));

  const a = await get('url=https://h.test/rollback');
  t.equal(a.status, 200);
  t.equal(a.headers.get('access-control-allow-origin'), '*', 'public route: CORS');
  t.same(links(a.body), ['savepoint', 'undo']);
  t.same(a.body.totalResultsPerContentGroup, { _: 1, Blog: 1 });
  t.same(a.body.semantic, { ratio: 1, embedder: 'builtin:sg100:1', lexicalOnlyDocuments: 0 });
  t.same(links((await get('url=HTTPS://H.TEST/rollback')).body), ['savepoint', 'undo'], 'the url is normalised like indexing normalises it');
  t.same(links((await get('url=https://h.test/rollback&excludeContentGroups=["Blog"]')).body), ['savepoint'], 'content groups apply');
  const content = await get('url=https://h.test/perf&includeContent=true&groupResults=false');
  t.same(content.body.suggests._.map((x: any) => [x.link, x.content]), [['https://h.test/faster', 'performance']], 'rendered like search results');

  const unknown = await get('url=https://h.test/nope');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.status, 'failure');
  t.equal(unknown.body.code, 'not_found');
  t.equal(unknown.body.field, 'url');
  t.match(unknown.body.message, /https:\/\/h\.test\/nope/, 'the message names the url');
  t.equal(unknown.headers.get('access-control-allow-origin'), '*', 'errors carry CORS too');
  for (const q of ['', 'url=', 'url=not-a-url', 'url=https://h.test/rollback&limit=0']) {
    const bad = await get(q);
    t.equal(bad.status, 400, `400 for "${q}"`);
    t.equal(bad.body.field, q.includes('limit') ? 'limit' : 'url');
  }
  const none = await get('url=https://h.test/xyzzy');
  t.equal(none.status, 200);
  t.equal(none.body.totalResults, 0);
  t.match(none.body.semantic.error, /no vector/, 'a page without a vector: said');
  t.equal((await fetch(`${s.url}/sites/similar?site=nope&url=https://h.test/rollback`)).status, 404, 'unknown site');

  r = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: s.masterKey, json: { search: { semantic: { embedder: 'none' } } } });
  t.equal(r.status, 200);
  const off = await get('url=https://h.test/rollback');
  t.equal(off.status, 200);
  t.equal(off.body.totalResults, 0);
  t.equal(off.body.semantic.embedder, 'none');
  t.match(off.body.semantic.error, /no embedder/, 'embedder none: said');
  t.equal((await get('url=https://h.test/nope')).status, 404, 'an unknown url is still a 404');
});
