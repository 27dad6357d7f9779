/**
 * JSON indexing and removal routes against a real server on 127.0.0.1 (temp data dir).
 * The refresh interval is long (60 s) so that "searchable" can only come from refresh=true.
 */
import t from 'tap';
import { crawlerOf } from '../../src/ingest/index.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const doc = (path: string, over: Record<string, unknown> = {}) => ({
  url: `https://shop.example.com/${path}`,
  title: `Title of ${path}`,
  content: `Content of ${path} with some words`,
  ...over,
});

let s: TestServer;

t.before(async () => {
  s = await startTestServer({ env: { SITESIFT_REFRESH_MS: '60000', SITESIFT_MAX_BODY_BYTES: String(256 * 1024) } });
  const r = await api(s.url, '/admin/projects/default/settings', {
    method: 'PATCH',
    token: s.masterKey,
    json: {
      filters: [
        { id: 'fid#1', name: 'Price', type: 'range' },
        { id: 'fid#2', name: 'Colour', type: 'multiple' },
      ],
    },
  });
  if (r.status !== 200) throw new Error(`settings: ${r.text}`);
});
t.teardown(() => s.close());

const post = (path: string, json: unknown, query = '') => api(s.url, `${path}?token=${s.token}${query}`, { method: 'POST', json });
const listing = async (query = '') => (await api(s.url, `/sites/indexedContent?token=${s.token}&limit=1000${query}`)).body;
const searchableDocs = async (): Promise<number> => {
  const index = await s.services.indexes.get('default');
  const snap = index.acquire();
  try {
    return snap.totalDocs;
  } finally {
    snap.release();
  }
};

t.test('pageJson: one document, refresh=true makes it searchable at once', async (t) => {
  const before = await searchableDocs();
  const r = await post('/sites/pageJson', doc('one', { dataPoints: [{ key: 'price', value: 10, show: true }], filters: [{ key: 'fid#1', value: 10 }] }), '&refresh=true');
  t.equal(r.status, 200, r.text);
  t.same(r.body, { status: 'success', indexed: 1 });
  t.equal(await searchableDocs(), before + 1);
  const l = await listing('&url=shop.example.com/one');
  t.equal(l.total, 1);
  t.match(l.pages[0], { url: 'https://shop.example.com/one', title: 'Title of one', contentType: 'HTML', status: 200, contentGroup: '_', source: 'api' });
});

t.test('pagesJson: batch of 100 accepted; Bearer header works too', async (t) => {
  const batch = Array.from({ length: 100 }, (_, i) => doc(`batch/${i}`, { contentGroup: 'Batch', documentType: i % 2 ? 'PDF' : 'HTML' }));
  const r = await api(s.url, '/sites/pagesJson?refresh=true', { method: 'POST', token: s.token, json: batch });
  t.equal(r.status, 200, r.text);
  t.same(r.body, { status: 'success', indexed: 100 });
  t.equal((await listing('&url=/batch/')).total, 100);
});

t.test('without refresh the write is acknowledged but not yet searchable', async (t) => {
  const before = await searchableDocs();
  const r = await post('/sites/pageJson', doc('later'));
  t.equal(r.status, 200);
  // Listed (acknowledged, durable) …
  t.equal((await listing('&url=/later')).total, 1);
  // … but published only by the next refresh (60 s here) or a refresh=true write.
  t.equal(await searchableDocs(), before);
  await post('/sites/pageJson', doc('later2'), '&refresh=true');
  t.equal(await searchableDocs(), before + 2);
});

t.test('newest write wins, across requests and inside one batch', async (t) => {
  await post('/sites/pageJson', doc('wins', { title: 'v1' }));
  await post('/sites/pageJson', doc('wins', { title: 'v2' }), '&refresh=true');
  let l = await listing('&url=/wins');
  t.equal(l.total, 1);
  t.equal(l.pages[0].title, 'v2');
  const r = await post('/sites/pagesJson', [doc('dup', { title: 'first' }), doc('dup', { title: 'second' })], '&refresh=true');
  t.same(r.body, { status: 'success', indexed: 1 });
  l = await listing('&url=/dup');
  t.equal(l.total, 1);
  t.equal(l.pages[0].title, 'second');
});

// Each seed field missing or of the wrong type: [name, document, field in the answer].
const invalid: Array<[string, unknown, string]> = [
  ['url missing', { title: 't', content: 'c' }, 'url'],
  ['url not a string', doc('x', { url: 5 }), 'url'],
  ['url relative', doc('x', { url: '/relative' }), 'url'],
  ['url not http', doc('x', { url: 'mailto:a@b.c' }), 'url'],
  ['title missing', { url: 'https://shop.example.com/x', content: 'c' }, 'title'],
  ['title not a string', doc('x', { title: 1 }), 'title'],
  ['content missing', { url: 'https://shop.example.com/x', title: 't' }, 'content'],
  ['content not a string', doc('x', { content: ['a'] }), 'content'],
  ['documentType unknown', doc('x', { documentType: 'EXE' }), 'documentType'],
  ['appendPageContent not boolean', doc('x', { appendPageContent: 'yes' }), 'appendPageContent'],
  ['contentGroup not a string', doc('x', { contentGroup: 1 }), 'contentGroup'],
  ['imageUrl not a string', doc('x', { imageUrl: 1 }), 'imageUrl'],
  ['dataPoints not an array', doc('x', { dataPoints: 'p' }), 'dataPoints'],
  ['dataPoint show not boolean', doc('x', { dataPoints: [{ key: 'k', value: 'v', show: 1 }] }), 'dataPoints[0].show'],
  ['filters not an array', doc('x', { filters: {} }), 'filters'],
  ['filter undefined', doc('x', { filters: [{ key: 'fid#7', value: 1 }] }), 'filters[0].key'],
  ['range filter given strings', doc('x', { filters: [{ key: 'fid#1', value: ['a'] }] }), 'filters[0].value'],
  ['boost out of range', doc('x', { boost: 101 }), 'boost'],
  ['boost not a number', doc('x', { boost: '1' }), 'boost'],
  ['keywords not an array', doc('x', { keywords: 'k' }), 'keywords'],
  ['language unknown', doc('x', { language: 'Quenya' }), 'language'],
  ['body not an object', [doc('x')], 'body'],
];

t.test('pageJson: every invalid field is a 400 naming it, and nothing is indexed', async (t) => {
  for (const [name, body, field] of invalid) {
    const r = await post('/sites/pageJson', body);
    t.equal(r.status, 400, name);
    t.equal(r.body.code, 'invalid_document', name);
    t.equal(r.body.field, field, `${name}: ${r.body.message}`);
    t.equal(r.body.status, 'failure', name);
    t.ok(Array.isArray(r.body.errors) && r.body.errors[0].index === 0, name);
  }
  t.equal((await listing('&url=shop.example.com/x')).total, 0);
});

t.test('pagesJson: all or nothing with per-entry errors', async (t) => {
  const r = await post('/sites/pagesJson', [doc('aon/1'), doc('aon/2', { title: null }), doc('aon/3', { boost: 0 })]);
  t.equal(r.status, 400);
  t.equal(r.body.code, 'invalid_document');
  t.same(
    r.body.errors.map((e: { index: number; field: string }) => [e.index, e.field]),
    [
      [1, 'title'],
      [2, 'boost'],
    ],
  );
  t.equal((await listing('&url=/aon/')).total, 0);
});

t.test('pagesJson: size limits', async (t) => {
  const many = Array.from({ length: 101 }, (_, i) => doc(`big/${i}`));
  let r = await post('/sites/pagesJson', many);
  t.equal(r.status, 400);
  t.equal(r.body.code, 'batch_too_large');
  r = await post('/sites/pagesJson', []);
  t.equal(r.status, 400);
  t.equal(r.body.code, 'invalid_document');
  r = await post('/sites/pagesJson', doc('notarray'));
  t.equal(r.status, 400);
  t.equal(r.body.field, 'body');
  t.equal((await listing('&url=/big/')).total, 0);
});

t.test('ignoreUndefinedFilters=true drops undefined filters', async (t) => {
  const r = await post('/sites/pageJson', doc('filtered', { filters: [{ key: 'fid#9', value: 1 }, { key: 'fid#2', value: ['red'] }] }), '&ignoreUndefinedFilters=true');
  t.equal(r.status, 200, r.text);
  const bad = await post('/sites/pageJson', doc('filtered'), '&ignoreUndefinedFilters=maybe');
  t.equal(bad.status, 400);
  t.equal(bad.body.field, 'ignoreUndefinedFilters');
  const badRefresh = await post('/sites/pageJson', doc('filtered'), '&refresh=soon');
  t.equal(badRefresh.body.field, 'refresh');
});

t.test('malformed JSON, wrong media type and huge bodies', async (t) => {
  let r = await api(s.url, `/sites/pageJson?token=${s.token}`, { method: 'POST', body: '{"url":', headers: { 'Content-Type': 'application/json' } });
  t.equal(r.status, 400);
  t.equal(r.body.code, 'invalid_json');
  r = await api(s.url, `/sites/pageJson?token=${s.token}`, { method: 'POST', body: 'url=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  t.equal(r.status, 415);
  r = await post('/sites/pageJson', doc('huge', { content: 'x'.repeat(300 * 1024) }));
  t.equal(r.status, 413);
  t.equal(r.body.code, 'payload_too_large');
  t.equal((await listing('&url=/huge')).total, 0);
});

t.test('appendPageContent=true without a crawler is 501 and writes nothing; with one 202', async (t) => {
  // A loopback URL: a crawler, when present, refuses it (private address) without any network.
  const r = await post('/sites/pageJson', doc('append', { url: 'http://127.0.0.1:9/append-page', appendPageContent: true }));
  if (crawlerOf(s.services.crawl)?.pushUrl) {
    t.equal(r.status, 202, r.text);
    t.type(r.body.taskId, 'string');
  } else {
    t.equal(r.status, 501, r.text);
    t.equal(r.body.code, 'not_implemented');
    t.equal((await listing('&url=/append-page')).total, 0);
  }
  // appendPageContent=false is an ordinary write.
  const ok = await post('/sites/pageJson', doc('noappend', { appendPageContent: false }));
  t.equal(ok.status, 200);
});

t.test('auth: missing, wrong and deleted keys; master key with site', async (t) => {
  let r = await api(s.url, '/sites/pageJson', { method: 'POST', json: doc('auth') });
  t.equal(r.status, 401);
  t.equal(r.body.code, 'missing_token');
  r = await api(s.url, '/sites/pageJson?token=nope', { method: 'POST', json: doc('auth') });
  t.equal(r.status, 401);
  t.equal(r.body.code, 'invalid_token');

  const key = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: s.masterKey, json: { label: 'temp' } });
  t.equal(key.status, 201);
  r = await api(s.url, `/sites/pageJson?token=${key.body.token}`, { method: 'POST', json: doc('auth') });
  t.equal(r.status, 200);
  await api(s.url, `/admin/projects/default/keys/${key.body.id}`, { method: 'DELETE', token: s.masterKey });
  r = await api(s.url, `/sites/pageJson?token=${key.body.token}`, { method: 'POST', json: doc('auth') });
  t.equal(r.status, 401);
  t.equal(r.body.code, 'invalid_token');

  r = await api(s.url, '/sites/pagesJson?site=default', { method: 'POST', token: s.masterKey, json: [doc('master')] });
  t.equal(r.status, 200, r.text);
  r = await api(s.url, '/sites/pagesJson?site=nosuchsite', { method: 'POST', token: s.masterKey, json: [doc('master')] });
  t.equal(r.status, 404);
  t.equal(r.body.code, 'unknown_site');
  r = await api(s.url, `/index/documents?url=https://shop.example.com/one`, { method: 'DELETE', token: 'ss_wrong' });
  t.equal(r.status, 401);
});

t.test('wrong method is 405', async (t) => {
  const r = await api(s.url, `/sites/pagesJson?token=${s.token}`);
  t.equal(r.status, 405);
});

t.test('DELETE by url', async (t) => {
  await post('/sites/pagesJson', [doc('del/a'), doc('del/b')], '&refresh=true');
  const before = await searchableDocs();
  let r = await api(s.url, `/index/documents?token=${s.token}&url=${encodeURIComponent('https://SHOP.example.com/del/a')}&refresh=true`, { method: 'DELETE' });
  t.same(r.body, { status: 'success', deleted: 1 });
  t.equal(await searchableDocs(), before - 1);
  r = await api(s.url, `/index/documents?token=${s.token}&url=${encodeURIComponent('https://shop.example.com/del/a')}`, { method: 'DELETE' });
  t.same(r.body, { status: 'success', deleted: 0 });
  t.same((await listing('&url=/del/')).pages.map((p: { url: string }) => p.url), ['https://shop.example.com/del/b']);

  r = await api(s.url, `/index/documents?token=${s.token}&url=not-a-url`, { method: 'DELETE' });
  t.equal(r.status, 400);
  t.equal(r.body.field, 'url');
  r = await api(s.url, `/index/documents?token=${s.token}`, { method: 'DELETE' });
  t.equal(r.status, 400);
  t.equal(r.body.code, 'invalid_parameter');
  r = await api(s.url, `/index/documents?token=${s.token}&url=https://shop.example.com/del/b&urlPattern=del`, { method: 'DELETE' });
  t.equal(r.status, 400);
  t.equal(r.body.code, 'invalid_parameter');
  t.equal((await listing('&url=/del/b')).total, 1);
});

t.test('DELETE by urlPattern: search semantics, RE2, invalid and catastrophic patterns', async (t) => {
  await post('/sites/pagesJson', [doc('pat/2023/a'), doc('pat/2024/b'), doc('pat/2024/c'), doc('pat/x'), doc(`pat/${'a'.repeat(60)}`), doc(`pat/${'a'.repeat(60)}!`)], '&refresh=true');
  let r = await api(s.url, `/index/documents?token=${s.token}&urlPattern=${encodeURIComponent('/pat/2024/')}`, { method: 'DELETE' });
  t.same(r.body, { status: 'success', deleted: 2 });
  t.same((await listing('&url=/pat/2')).pages.map((p: { url: string }) => p.url), ['https://shop.example.com/pat/2023/a']);

  // Exponential for a backtracking engine on the URL ending in "!"; linear in RE2.
  r = await api(s.url, `/index/documents?token=${s.token}&urlPattern=${encodeURIComponent('pat/(a+)+$')}`, { method: 'DELETE' });
  t.equal(r.status, 200);
  t.equal(r.body.deleted, 1);

  r = await api(s.url, `/index/documents?token=${s.token}&urlPattern=${encodeURIComponent('^https://shop\\.example\\.com/pat/x$')}&refresh=true`, { method: 'DELETE' });
  t.equal(r.body.deleted, 1);

  for (const bad of ['(unclosed', '(?=lookahead)', '(a)\\1']) {
    r = await api(s.url, `/index/documents?token=${s.token}&urlPattern=${encodeURIComponent(bad)}`, { method: 'DELETE' });
    t.equal(r.status, 400, bad);
    t.equal(r.body.field, 'urlPattern', bad);
    t.match(r.body.message, /regular expression/);
  }
  r = await api(s.url, `/index/documents?token=${s.token}&urlPattern=${encodeURIComponent('nothing-matches-this')}`, { method: 'DELETE' });
  t.same(r.body, { status: 'success', deleted: 0 });
  t.equal((await listing('&url=/pat/2023/a')).total, 1);
});

t.test('refresh=true: searchable through GET /sites at once; a refreshed delete hides it at once', async (t) => {
  const word = 'quetzalcoatlus';
  const w = await post('/sites/pageJson', doc('searchable', { content: `A page about the ${word} pterosaur` }), '&refresh=true');
  t.equal(w.status, 200);
  let r = await api(s.url, `/sites?site=default&query=${word}&log=false`);
  t.equal(r.status, 200, r.text);
  t.equal(r.body.totalResults, 1);
  const d = await api(s.url, `/index/documents?token=${s.token}&url=${encodeURIComponent('https://shop.example.com/searchable')}&refresh=true`, { method: 'DELETE' });
  t.same(d.body, { status: 'success', deleted: 1 });
  r = await api(s.url, `/sites?site=default&query=${word}&log=false`);
  t.equal(r.body.totalResults, 0);
});
