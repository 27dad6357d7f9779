// PATCH settings is a JSON Merge Patch (RFC 7396); PUT replaces the whole object.
import t, { type Test } from 'tap';
import { defaultSettings, mergePatch } from '../../src/projects/settings.js';
import { api, startTestServer } from '../helpers/server.js';

const s = await startTestServer();
t.teardown(() => s.close());
const M = s.masterKey;
const PATH = '/admin/projects/default/settings';

async function put(json: unknown) {
  return api(s.url, PATH, { method: 'PUT', token: M, json });
}
async function patch(json: unknown, headers?: Record<string, string>) {
  if (headers) return api(s.url, PATH, { method: 'PATCH', token: M, body: JSON.stringify(json), headers });
  return api(s.url, PATH, { method: 'PATCH', token: M, json });
}
async function get() {
  return (await api(s.url, PATH, { token: M })).body;
}
function ok(t: Test, res: { status: number; body: any }): any {
  t.equal(res.status, 200, res.body?.message ?? 'ok');
  return res.body;
}

const CRAWLER = {
  rootUrls: ['https://example.com/'],
  sitemapUrls: ['https://example.com/sitemap.xml'],
  blacklist: ['/private/', '\\?print=1$'],
  recrawlSchedule: '0 */6 * * *',
  requestDelayMs: 500,
};

t.test('objects merge: a one-field crawler patch keeps rootUrls, sitemapUrls and blacklist', async (t) => {
  ok(t, await put({ crawler: CRAWLER, search: { language: 'de', fieldWeights: { title: 10 } } }));
  const body = ok(t, await patch({ crawler: { requestDelayMs: 100 } }));
  t.equal(body.crawler.requestDelayMs, 100);
  t.same(body.crawler.rootUrls, CRAWLER.rootUrls);
  t.same(body.crawler.sitemapUrls, CRAWLER.sitemapUrls);
  t.same(body.crawler.blacklist, CRAWLER.blacklist);
  t.equal(body.crawler.recrawlSchedule, CRAWLER.recrawlSchedule);
  t.equal(body.search.language, 'de', 'other sections kept');
  const weights = ok(t, await patch({ search: { fieldWeights: { content: 2 } } })).search.fieldWeights;
  t.same(weights, { title: 10, keywords: 6, headings: 4, url: 3, content: 2 }, 'nested objects merge too');
  t.same((await get()).crawler.blacklist, CRAWLER.blacklist, 'stored, not just answered');
});

t.test('arrays and scalars replace', async (t) => {
  ok(t, await put({ crawler: CRAWLER, resultGroups: [{ name: 'Blog', urlPattern: '/blog/' }, { name: 'Docs', urlPattern: '/docs/' }] }));
  const body = ok(t, await patch({ crawler: { blacklist: ['/tmp/'] }, resultGroups: [{ name: 'News' }] }));
  t.same(body.crawler.blacklist, ['/tmp/'], 'array replaced, not appended');
  t.same(body.resultGroups, [{ name: 'News' }], 'array of objects replaced, not merged by position');
  t.same(body.crawler.rootUrls, CRAWLER.rootUrls);
  t.equal(ok(t, await patch({ crawler: { userAgent: 'bot/2' } })).crawler.userAgent, 'bot/2');
});

t.test('null deletes: the field or section goes back to its default', async (t) => {
  ok(t, await put({ crawler: CRAWLER, suggest: { minSearches: 7 } }));
  const d = defaultSettings();
  const body = ok(t, await patch({ crawler: { blacklist: null, requestDelayMs: null, recrawlSchedule: null }, suggest: null }));
  t.same(body.crawler.blacklist, d.crawler.blacklist);
  t.equal(body.crawler.requestDelayMs, d.crawler.requestDelayMs);
  t.equal(body.crawler.recrawlSchedule, null);
  t.same(body.crawler.rootUrls, CRAWLER.rootUrls, 'siblings of a deleted field kept');
  t.same(body.suggest, d.suggest, 'a deleted section is back to its defaults');
  t.same(ok(t, await patch({ crawler: null })).crawler, d.crawler);
});

t.test('the merged result is validated whole; an invalid merge stores nothing', async (t) => {
  ok(t, await put({ crawler: CRAWLER }));
  const before = await get();
  const bad = await patch({ crawler: { requestDelayMs: 5, maxDepth: -1 } });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'invalid_parameter');
  t.equal(bad.body.field, 'crawler.maxDepth');
  for (const body of [{ crawler: { blacklist: '/x/' } }, { crawler: { bogus: 1 } }, { nope: {} }, ['crawler'], 'x', JSON.parse('{"__proto__":{"x":1}}')]) {
    const res = await patch(body);
    t.equal(res.status, 400, `refused: ${JSON.stringify(body)}`);
  }
  const after = await get();
  t.same(after, before, 'nothing changed, updatedAt included');
});

t.test('Content-Type application/merge-patch+json is accepted', async (t) => {
  const body = ok(t, await patch({ crawler: { maxPages: 42 } }, { 'Content-Type': 'application/merge-patch+json' }));
  t.equal(body.crawler.maxPages, 42);
});

t.test('PUT replaces the whole object: sections and fields not given take their defaults', async (t) => {
  ok(t, await put({ crawler: CRAWLER, suggest: { minSearches: 7 } }));
  const body = ok(t, await put({ crawler: { maxPages: 5 } }));
  const d = defaultSettings();
  t.same(body.crawler, { ...d.crawler, maxPages: 5 });
  t.same(body.suggest, d.suggest);
});

t.test('mergePatch follows RFC 7396 appendix A', async (t) => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, p, result] of cases) t.same(mergePatch(target, p), result, `${JSON.stringify(target)} + ${JSON.stringify(p)}`);
  const frozen = Object.freeze({ a: Object.freeze({ b: 1 }) });
  t.same(mergePatch(frozen, { a: { c: 2 } }), { a: { b: 1, c: 2 } }, 'a frozen target is not mutated');
  const polluted = mergePatch({}, JSON.parse('{"__proto__":{"x":1}}')) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(polluted), Object.prototype, '__proto__ stays an own key');
  t.equal((polluted as { x?: unknown }).x, undefined);
});
