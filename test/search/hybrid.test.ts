import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { effectiveRatio, fuse, HYBRID_NEIGHBOURS, type SemanticQuery } from '../../src/search/hybrid.js';
import { QueryEmbedder, wordCoverage } from '../../src/search/semantic.js';
import { byRelevance, type Hit } from '../../src/search/score.js';
import type { LiveSegment } from '../../src/index/index.js';
import { docParts, embedParts, loadWordVectors } from '../../src/text/index.js';
import type { PageDoc, SearchSettings } from '../../src/core/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { FIXTURE_FP, writeFixtureWordVectors } from '../helpers/word-vectors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hybrid-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const wv = loadWordVectors(writeFixtureWordVectors(dir));
const write = { embed: (d: PageDoc) => embedParts(wv, docParts(d)), embedder: FIXTURE_FP };

const settings: SearchSettings = {
  language: 'en', stopWords: null, typoTolerance: 'default',
  fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [],
};
const colour = (c: string): PageDoc['filters'] => [{ key: 'fid#1', value: [c] }];
const docs: PageDoc[] = [
  makeDoc('https://h.test/rollback', 'ROLLBACK', 'abort the current transaction and revert its changes', { filters: colour('red') }),
  makeDoc('https://h.test/savepoint', 'SAVEPOINT', 'rollback part of a transaction', { filters: colour('blue') }),
  makeDoc('https://h.test/perf', 'Performance tips', 'speed up slow queries', { filters: colour('red') }),
  makeDoc('https://h.test/create', 'CREATE TABLE', 'define a new table in the database', { filters: colour('blue') }),
  makeDoc('https://h.test/cake', 'Chocolate cake', 'a recipe', { contentGroup: 'Blog', filters: colour('red') }),
];
const sem = (query: string, ratio = 0.5, threshold = 0.5): SemanticQuery => ({ ratio, fp: FIXTURE_FP, threshold, vector: embedParts(wv, [{ text: query, weight: 1 }]) });
const req = (query: string, extra: Partial<SearchRequest> = {}): SearchRequest => ({
  query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [], topK: 10,
  semantic: sem(query), ...extra,
});
const urls = (r: ReturnType<typeof runQuery>) => r.hits.map((h) => h.url.replace('https://h.test/', ''));

t.test('a question without the page\'s words finds it through its vector; lexical search finds nothing', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  const r = runQuery(s, settings, req('undo a mistake'));
  t.same(urls(r).slice(0, 2).sort(), ['rollback', 'savepoint'], 'the two pages about undoing');
  t.equal(r.total, 2, 'only neighbours above the threshold count');
  t.equal(r.semantic?.neighbours, 2);
  t.equal(r.semantic?.lexicalOnlySegments, 0);
  t.equal(runQuery(s, settings, req('undo a mistake', { semantic: sem('undo a mistake', 0) })).total, 0, 'ratio 0: lexical only');
  t.equal(runQuery(s, settings, req('undo a mistake', { semantic: undefined })).total, 0, 'no semantic part: lexical only');
  const fast = runQuery(s, settings, req('make it faster'));
  t.same(urls(fast)[0], 'perf');
});

t.test('nonsense stays at zero results: unknown words have no vector, far neighbours are below the threshold', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  t.equal(runQuery(s, settings, req('xyzzy plugh')).total, 0, 'no known word');
  // "new" alone points along a noise axis: similar to nothing above the threshold.
  const r = runQuery(s, settings, req('zzz', { semantic: { ...sem('new'), threshold: 0.9 } }));
  t.equal(r.total, 0, 'known word, no close neighbour');
});

t.test('hybrid results respect filters, content groups and exclusions, and count each page once', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  const red = runQuery(s, settings, req('undo a mistake', { filters: [{ key: 'fid#1', type: 'multiple', values: ['red'] }] }));
  t.same(urls(red), ['rollback'], 'the filter applies to neighbours');
  t.equal(red.total, 1);
  const cake = runQuery(s, settings, req('chocolate recipe', { includeContentGroups: ['_'] }));
  t.same(urls(cake), [], 'the lexical match and the neighbour in Blog are both outside the groups');
  t.equal(cake.total, 0);
  const blog = runQuery(s, settings, req('chocolate recipe'));
  t.same(urls(blog), ['cake'], 'a page matched both ways is one result');
  t.equal(blog.total, 1);
  t.same(blog.perGroup, { Blog: 1 });
  const both = runQuery(s, settings, req('rollback transaction'));
  t.equal(new Set(urls(both)).size, urls(both).length, 'no page twice');
  t.same(urls(runQuery(s, settings, req('undo a mistake -savepoint'))), ['rollback'], 'an excluded word excludes neighbours too');
  const facets = runQuery(s, settings, req('undo a mistake', { facetDefs: [{ id: 'fid#1', name: 'Colour', type: 'multiple' }] }));
  t.same(facets.facets.map((f) => (f as { values: Array<{ value: string; count: number }> }).values.map((v) => [v.value, v.count]).sort()), [[['blue', 1], ['red', 1]]], 'facets count neighbours');
});

t.test('identical ranking and totals however the index is split', async (t) => {
  const extra = [makeDoc('https://h.test/old', 'Old', 'revert obsolete'), makeDoc('https://h.test/perf', 'Stale', 'stale text')];
  const one = snapshotOf([[...extra, ...docs, { delete: 'https://h.test/old' }]], undefined, write);
  const many = snapshotOf([[extra[0]!, extra[1]!], docs.slice(0, 2), docs.slice(2, 4), [docs[4]!, { delete: 'https://h.test/old' }]], undefined, write);
  t.teardown(() => (one.cleanup(), many.cleanup()));
  for (const q of ['undo a mistake', 'make it faster', 'rollback transaction', 'table', 'chocolate recipe', 'database queries']) {
    for (const ratio of [0.25, 0.5, 1]) {
      const a = runQuery(one, settings, req(q, { semantic: sem(q, ratio) }));
      const b = runQuery(many, settings, req(q, { semantic: sem(q, ratio) }));
      t.same(urls(b), urls(a), `same order for ${q} at ${ratio}`);
      t.same(b.hits.map((h) => h.score.toFixed(9)), a.hits.map((h) => h.score.toFixed(9)), `same scores for ${q} at ${ratio}`);
      t.equal(b.total, a.total, `same total for ${q} at ${ratio}`);
    }
  }
  t.notOk(urls(runQuery(many, settings, req('revert obsolete'))).includes('old'), 'a deleted page is no neighbour');
});

t.test('segments without vectors in the query\'s space are searched lexically and counted', async (t) => {
  const s = snapshotOf([docs.slice(0, 2), docs.slice(2)], undefined, {});
  t.teardown(() => s.cleanup());
  const r = runQuery(s, settings, req('undo a mistake'));
  t.equal(r.total, 0);
  t.same(r.semantic, { lexicalOnlySegments: 2, lexicalOnlyDocs: 5, neighbours: 0 });
});

t.test('a query adds at most HYBRID_NEIGHBOURS vector neighbours, the nearest, chosen before filters; facet counts stay exact; the choice does not depend on segmentation', async (t) => {
  // 150 pages between "undo" and "speed" in varying proportions: all above a low threshold, none
  // matching the query's words lexically.
  const many: PageDoc[] = [];
  for (let i = 0; i < 150; i++) {
    const body = `${'revert '.repeat(1 + (i % 11))}${'slow '.repeat(1 + (i % 7))}${'chocolate '.repeat(i % 3)}`;
    many.push(makeDoc(`https://h.test/p${i}`, `Page ${i}`, body, { filters: colour(i % 2 ? 'red' : 'blue') }));
  }
  const query = 'undo a mistake';
  const q = sem(query, 0.5, 0.3);
  const sims = many.map((d) => {
    const v = embedParts(wv, docParts(d))!;
    return { url: d.url.replace('https://h.test/', ''), s: v.reduce((a, x, i) => a + x * q.vector![i]!, 0) };
  });
  const above = sims.filter((x) => x.s >= q.threshold);
  t.ok(above.length > HYBRID_NEIGHBOURS, `${above.length} pages are above the threshold`);
  // Pages with proportional word counts have the same vector: all pages tied with the last one
  // kept are kept.
  const bar = Math.fround([...above].sort((a, b) => b.s - a.s)[HYBRID_NEIGHBOURS - 1]!.s);
  const nearest = above.filter((x) => Math.fround(x.s) >= bar).map((x) => x.url).sort();
  t.ok(nearest.length < above.length, `${nearest.length} kept`);
  const one = snapshotOf([many], undefined, write);
  const split = snapshotOf([many.slice(0, 40), many.slice(40, 95), many.slice(95)], undefined, write);
  t.teardown(() => (one.cleanup(), split.cleanup()));
  const all = { topK: 1000, semantic: q };
  const r = runQuery(one, settings, req(query, all));
  t.equal(r.total, nearest.length, 'the total counts the neighbours kept');
  t.same(urls(r).sort(), nearest, 'the nearest pages are the ones kept');
  const rs = runQuery(split, settings, req(query, all));
  t.same(urls(rs), urls(r), 'same pages in the same order when the index is split');
  t.equal(rs.total, r.total);
  // Facets count the kept neighbours; choosing a value returns the count it showed.
  const facetDefs = [{ id: 'fid#1', name: 'Colour', type: 'multiple' as const }];
  const counts = Object.fromEntries((runQuery(one, settings, req(query, { ...all, facetDefs })).facets[0] as { values: Array<{ value: string; count: number }> }).values.map((v) => [v.value, v.count]));
  t.equal(counts.red! + counts.blue!, nearest.length);
  for (const c of ['red', 'blue']) {
    const f = runQuery(one, settings, req(query, { ...all, filters: [{ key: 'fid#1', type: 'multiple', values: [c] }] }));
    t.equal(f.total, counts[c], `filtering on ${c} returns the ${c} facet count`);
  }
});

t.test('a page found only by its vector takes the worst typo tier of the lexical matches: a one-typo match stays ahead of it', async (t) => {
  const pages = [
    makeDoc('https://h.test/literal', 'Revert chnges', 'revert chnges as typed'),
    makeDoc('https://h.test/changes', 'Revert changes', 'revert the changes of a transaction'),
    makeDoc('https://h.test/undo', 'Undo', 'undo a mistake, abort'),
  ];
  const s = snapshotOf([pages], undefined, write);
  t.teardown(() => s.cleanup());
  // Up to an even blend (at 1 the vector alone orders each tier). Full coverage, so that the
  // ratio is not damped: only the tier keeps the neighbour back.
  for (const ratio of [0.25, 0.5]) {
    const q: SemanticQuery = { ...sem('revert chnges', ratio), coverage: 1 };
    const r = runQuery(s, settings, req('revert chnges', { semantic: q }));
    t.same(urls(r), ['literal', 'changes', 'undo'], `exact match, one-typo match, then the neighbour at ${ratio}`);
    t.same(r.hits.map((h) => h.typos), [0, 1, 1], 'the neighbour takes the worst lexical tier');
  }
});

t.test('fusion: a small similarity difference does not overturn a lexical lead; the neighbour scale is fixed', async (t) => {
  const seg = {} as LiveSegment;
  const hit = (id: number, score: number, typos = 0): Hit => ({ seg, id, url: `u${id}`, group: '_', score, typos });
  // Similarities 0.60 and 0.62 above a threshold of 0.55: stretched to the best neighbour they
  // would be 0.71 and 1, and 0.5 · 0.29 would outweigh a 5% lexical lead.
  const sims = new Map([[seg, Float32Array.from([0.6, 0.62, 0.9])]]);
  const q: SemanticQuery = { ratio: 0.5, fp: FIXTURE_FP, threshold: 0.55, vector: new Float32Array(6) };
  const out = fuse([hit(0, 10), hit(1, 9.5)], [hit(2, 0)], sims, q).sort(byRelevance);
  t.same(out.map((h) => h.url), ['u0', 'u1', 'u2']);
  t.ok(Math.abs(out[0]!.score - (0.5 + 0.5 * (0.05 / 0.45))) < 1e-6, 'the best lexical hit: 0.5 · 1 + 0.5 · its similarity on the fixed scale');
  t.ok(Math.abs(out[2]!.score - 0.5 * (0.35 / 0.45)) < 1e-6, 'a neighbour scores ratio · (similarity − threshold) / (1 − threshold)');
});

t.test('the vector weight falls with the share of query words the embedder knows', async (t) => {
  t.equal(wordCoverage(wv, 'undo a mistake'), 1, 'stop words do not count');
  t.equal(wordCoverage(wv, 'revert chnges'), 0.5, 'a misspelt word is unknown');
  t.equal(wordCoverage(wv, "rollback's 15 x"), 1, 'one-letter tokens and numbers do not count');
  t.equal(wordCoverage(wv, 'xyzzy'), 0);
  const q = sem('revert chnges', 0.5);
  t.equal(effectiveRatio(q), 0.5, 'coverage absent: 1 (HTTP embedders)');
  t.equal(effectiveRatio({ ...q, coverage: 0.5 }), 0.5 / 16);
  // Two pages with the query's words in their text: the one with "revert" twice is ahead
  // lexically, the other is nearer the query vector (the undo axis). The vector decides at full
  // coverage; with the misspelt word left out of the vector (coverage 1/2) the words do.
  const pages = [
    makeDoc('https://h.test/words', 'Notes', 'revert chnges revert table'),
    makeDoc('https://h.test/near', 'Notes', 'revert chnges undo mistake rollback abort'),
  ];
  const s = snapshotOf([pages], undefined, write);
  t.teardown(() => s.cleanup());
  t.same(urls(runQuery(s, settings, req('revert chnges', { semantic: undefined }))), ['words', 'near'], 'lexical order');
  t.same(urls(runQuery(s, settings, req('revert chnges', { semantic: { ...sem('revert chnges', 0.25), coverage: 1 } }))), ['near', 'words'], 'full coverage: the vector decides');
  t.same(urls(runQuery(s, settings, req('revert chnges', { semantic: { ...sem('revert chnges', 0.25), coverage: 0.5 } }))), ['words', 'near'], 'coverage 1/2: the words decide');
});

t.test('the built-in embedder resolves a query with its coverage, cached with the vector', async (t) => {
  const embedder = new QueryEmbedder();
  const spec = { kind: 'builtin' as const, fp: FIXTURE_FP, table: path.join(dir, 'fixture.wv') };
  const settings = { embedder: 'builtin' as const, semanticRatio: 0.25, threshold: null, http: {} as never };
  for (let i = 0; i < 2; i++) {
    const typo = (await embedder.resolve(spec, settings, 'revert chnges', undefined)).q!;
    t.equal(typo.coverage, 0.5, `a misspelt word lowers the coverage (${i ? 'cached' : 'computed'})`);
    t.equal(typo.ratio, 0.25, 'the requested ratio is reported as it was asked');
    t.equal((await embedder.resolve(spec, settings, 'undo a mistake', undefined)).q!.coverage, undefined, 'every word known: no coverage');
  }
});
