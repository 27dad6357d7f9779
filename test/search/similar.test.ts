import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { AppError, type PageDoc, type Settings } from '../../src/core/index.js';
import { defaultSettings } from '../../src/projects/index.js';
import { search, type SearchParams, type SearchResponse } from '../../src/search/service.js';
import { similarSemantic } from '../../src/search/similar.js';
import { HYBRID_NEIGHBOURS } from '../../src/search/hybrid.js';
import { docParts, embedParts, embedderFingerprint, loadWordVectors } from '../../src/text/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { FIXTURE_FP, writeFixtureWordVectors } from '../helpers/word-vectors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'similar-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const table = writeFixtureWordVectors(dir);
const wv = loadWordVectors(table);
const write = { embed: (d: PageDoc) => embedParts(wv, docParts(d)), embedder: FIXTURE_FP };

const base = defaultSettings();
const settings: Settings = {
  ...base,
  filters: [{ id: 'fid#1', name: 'Colour', type: 'multiple' }],
  dataPoints: [{ key: 'year', type: 'number', show: true, sortable: true, searchable: false }],
  search: { ...base.search, semantic: { ...base.search.semantic!, threshold: 0.6 } },
};
const colour = (c: string): PageDoc['filters'] => [{ key: 'fid#1', value: [c] }];
const year = (y: string): PageDoc['dataPoints'] => [{ key: 'year', value: y, show: true }];
// Pairwise similarities with the fixture table: rollback–savepoint 0.94, rollback–undo 0.87,
// savepoint–create 0.74, savepoint–undo 0.65, perf–faster 0.93, rollback–create 0.58 (below
// the 0.6 threshold); cake is near nothing; xyzzy has no known word (no vector).
const docs: PageDoc[] = [
  makeDoc('https://h.test/rollback', 'ROLLBACK', 'abort the current transaction and revert its changes', { filters: colour('red'), dataPoints: year('2001') }),
  makeDoc('https://h.test/savepoint', 'SAVEPOINT', 'rollback part of a transaction', { filters: colour('blue'), dataPoints: year('1999') }),
  makeDoc('https://h.test/undo', 'Undo a mistake', 'revert changes', { contentGroup: 'Blog', filters: colour('red'), dataPoints: year('2010') }),
  makeDoc('https://h.test/perf', 'Performance tips', 'speed up slow queries', { filters: colour('red') }),
  makeDoc('https://h.test/faster', 'Faster queries', 'performance', { filters: colour('blue') }),
  makeDoc('https://h.test/create', 'CREATE TABLE', 'define a new table in the database', { filters: colour('blue') }),
  makeDoc('https://h.test/cake', 'Chocolate cake', 'a recipe', { contentGroup: 'Blog' }),
  makeDoc('https://h.test/xyzzy', 'Xyzzy', 'plugh'),
];

const spec = { kind: 'builtin' as const, fp: FIXTURE_FP, table };
/** The semantic parameters the search service sets for a project's embedder (null: none). */
const semanticOf = (s: typeof spec | null): Partial<SearchParams> => {
  const r = similarSemantic(s, settings.search.semantic);
  return { semantic: r.semantic, ...(r.error ? { semanticError: r.error } : {}) };
};
const params = (url: string, extra: Partial<SearchParams> = {}): SearchParams => ({
  query: '', filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: false, highlightQueryTerms: false,
  includeContentGroups: null, excludeContentGroups: null, groupResults: false, limitPerGroup: false,
  similarTo: `https://h.test/${url}`, ...semanticOf(spec), ...extra,
});
const ask = (snap: Parameters<typeof search>[0], url: string, extra: Partial<SearchParams> = {}): SearchResponse => search(snap, settings, params(url, extra), {});
const links = (r: SearchResponse) => Object.values(r.suggests).flat().map((x) => x.link.replace('https://h.test/', ''));

t.test('the nearest pages of a page, most similar first, the page itself and far pages left out', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  const r = ask(s, 'rollback');
  t.same(links(r), ['savepoint', 'undo'], 'above the threshold, by similarity');
  t.equal(r.totalResults, 2);
  t.equal(r.query, '');
  t.same(r.semantic, { ratio: 1, embedder: FIXTURE_FP, lexicalOnlyDocuments: 0 });
  t.same(links(ask(s, 'savepoint')), ['rollback', 'create', 'undo']);
  t.same(links(ask(s, 'perf')), ['faster']);
  const cake = ask(s, 'cake');
  t.same(links(cake), [], 'nothing is near the cake');
  t.equal(cake.semantic?.error, undefined, 'an empty answer for a page with a vector is no error');
  t.same(links(ask(s, 'savepoint', { limit: 1, offset: 1 })), ['create'], 'paging');
  t.same(links(ask(s, 'savepoint', { sort: 'year', sortOrder: 'DESC' })), ['undo', 'rollback', 'create'], 'sorted by a data point, pages without it last');
});

t.test('filters, content groups and facets apply to similar pages as to search results', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  const red = ask(s, 'savepoint', { filters: [{ key: 'fid#1', type: 'multiple', values: ['red'] }] });
  t.same(links(red), ['rollback', 'undo']);
  t.equal(red.totalResults, 2);
  const noBlog = ask(s, 'savepoint', { excludeContentGroups: ['Blog'] });
  t.same(links(noBlog), ['rollback', 'create']);
  t.equal(noBlog.totalResults, 2);
  const onlyBlog = ask(s, 'savepoint', { includeContentGroups: ['Blog'], groupResults: true });
  t.same(Object.keys(onlyBlog.suggests), ['Blog']);
  t.same(onlyBlog.totalResultsPerContentGroup, { Blog: 1 });
  const grouped = ask(s, 'savepoint', { groupResults: true });
  t.same(grouped.totalResultsPerContentGroup, { _: 2, Blog: 1 });
  const facets = ask(s, 'savepoint', { filterOptions: true, filters: [{ key: 'fid#1', type: 'multiple', values: ['red'] }] });
  const values = (facets.filterOptions[0] as { values: Array<{ value: string; count: number }> }).values.map((v) => [v.value, v.count]);
  t.same(values.sort(), [['blue', 1], ['red', 2]], 'a filter does not narrow its own facet');
});

t.test('identical ranking, scores and totals however the index is split or merged', async (t) => {
  const extra = [makeDoc('https://h.test/old', 'Old rollback', 'revert obsolete changes'), makeDoc('https://h.test/perf', 'Stale', 'stale text')];
  const one = snapshotOf([[...extra, ...docs, { delete: 'https://h.test/old' }]], undefined, write);
  const many = snapshotOf([[extra[0]!, extra[1]!], docs.slice(0, 3), docs.slice(3, 6), [...docs.slice(6), { delete: 'https://h.test/old' }]], undefined, write);
  t.teardown(() => (one.cleanup(), many.cleanup()));
  for (const url of ['rollback', 'savepoint', 'undo', 'perf', 'faster', 'create', 'cake']) {
    for (const extraParams of [{}, { groupResults: true }, { filters: [{ key: 'fid#1', type: 'multiple' as const, values: ['blue'] }] }]) {
      const a = ask(one, url, extraParams);
      const b = ask(many, url, extraParams);
      t.same(b, a, `same answer for ${url} ${JSON.stringify(extraParams)}`);
    }
  }
  t.notOk(links(ask(many, 'rollback')).includes('old'), 'a deleted page is no neighbour');
});

t.test('an unknown, removed or error page is a 404 on url; a page without a vector says so', async (t) => {
  const s = snapshotOf([[...docs, { ...makeDoc('https://h.test/gone', 'Gone', 'revert'), status: 404 }], [{ delete: 'https://h.test/cake' }]], undefined, write);
  t.teardown(() => s.cleanup());
  for (const url of ['nope', 'cake', 'gone']) {
    t.throws(() => ask(s, url), { code: 'not_found', field: 'url', message: /No searchable page with url "https:\/\/h\.test\// });
  }
  const xyz = ask(s, 'xyzzy');
  t.equal(xyz.totalResults, 0);
  t.match(xyz.semantic?.error, /no vector/, 'the page has no vector: said');

  const lexical = snapshotOf([docs.slice(0, 3), docs.slice(3)], undefined, {});
  t.teardown(() => lexical.cleanup());
  const r = ask(lexical, 'rollback');
  t.equal(r.totalResults, 0);
  t.match(r.semantic?.error, /not embedded/, 'a segment not embedded yet: said');
  t.equal(r.semantic?.lexicalOnlyDocuments, docs.length);

  const off = search(s, settings, params('rollback', semanticOf(null)), {});
  t.equal(off.totalResults, 0);
  t.equal(off.semantic?.embedder, 'none');
  t.match(off.semantic?.error, /no embedder/, 'a project without an embedder: said');
  t.equal(embedderFingerprint('builtin'), FIXTURE_FP);
});

t.test('at most the nearest HYBRID_NEIGHBOURS pages, as in hybrid search, the same however the index is split', async (t) => {
  // 160 pages about undoing work with a varying share of database words: every one above the
  // threshold of the first, at many different similarities.
  const many: PageDoc[] = Array.from({ length: 160 }, (_, i) =>
    makeDoc(`https://h.test/n${i}`, `Note ${i}`, `${'revert '.repeat(1 + (i % 13))}${'table '.repeat(1 + Math.floor(i / 13))}`, { filters: colour(i % 2 ? 'red' : 'blue') }));
  const vec = (d: PageDoc) => embedParts(wv, docParts(d))!;
  const self = vec(many[0]!);
  const sims = many.slice(1).map((d) => vec(d).reduce((a, x, k) => a + x * self[k]!, 0));
  const above = sims.filter((x) => x >= 0.6).sort((a, b) => b - a);
  t.ok(above.length > HYBRID_NEIGHBOURS + 20, `more pages above the threshold (${above.length}) than the cap`);
  const bar = above[HYBRID_NEIGHBOURS - 1]!;
  const one = snapshotOf([many], undefined, write);
  const split = snapshotOf([many.slice(0, 50), many.slice(50, 120), many.slice(120)], undefined, write);
  t.teardown(() => (one.cleanup(), split.cleanup()));
  const r = ask(one, 'n0', { limit: 100 });
  t.ok(r.totalResults >= HYBRID_NEIGHBOURS && r.totalResults <= HYBRID_NEIGHBOURS + 5, `about ${HYBRID_NEIGHBOURS} neighbours (${r.totalResults}: ties at the last one all count)`);
  t.equal(r.totalResults, above.filter((x) => Math.fround(x) >= Math.fround(bar) - 1e-6).length, 'the nearest ones');
  t.same(ask(split, 'n0', { limit: 100 }), r, 'the same answer from three segments');
  const red = ask(one, 'n0', { filters: [{ key: 'fid#1', type: 'multiple', values: ['red'] }], filterOptions: true });
  const counts = Object.fromEntries((red.filterOptions[0] as { values: Array<{ value: string; count: number }> }).values.map((v) => [v.value, v.count]));
  t.equal(counts.red, red.totalResults, 'chosen before filters: the facet count is the filtered total');
  t.equal(counts.red + counts.blue, r.totalResults);
});
