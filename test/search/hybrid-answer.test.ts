/**
 * Hybrid search through the whole answer (src/search/results.ts, what `GET /sites` serialises):
 * result mappings, content groups with their counts, filters and facets act on vector neighbours
 * as on lexical matches, and the answer — order, totals, group counts, facets — is the same
 * however the index is split into segments. (The engine-level checks are test/search/hybrid.test.ts.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { PageDoc, Settings } from '../../src/core/index.js';
import { defaultSettings } from '../../src/projects/index.js';
import { search, type SearchParams, type SearchResponse } from '../../src/search/service.js';
import { docParts, embedParts, loadWordVectors } from '../../src/text/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { FIXTURE_FP, writeFixtureWordVectors } from '../helpers/word-vectors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hybrid-answer-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const wv = loadWordVectors(writeFixtureWordVectors(dir));
const write = { embed: (d: PageDoc) => embedParts(wv, docParts(d)), embedder: FIXTURE_FP };

const base = defaultSettings();
const settings: Settings = {
  ...base,
  filters: [{ id: 'fid#1', name: 'Colour', type: 'multiple' }],
  search: {
    ...base.search,
    resultMappings: [
      { trigger: { type: 'equals', value: 'undo a mistake' }, action: { type: 'hide', urls: ['https://h.test/savepoint'] } },
      { trigger: { type: 'equals', value: 'make it faster' }, action: { type: 'pin', urls: ['https://h.test/create'] } },
      { trigger: { type: 'contains', value: 'revert' }, action: { type: 'custom', html: '<b>Undo guide</b>', position: 2, contentGroup: 'Blog' } },
    ],
  } as Settings['search'],
};
const colour = (c: string): PageDoc['filters'] => [{ key: 'fid#1', value: [c] }];
const docs: PageDoc[] = [
  makeDoc('https://h.test/rollback', 'ROLLBACK', 'abort the current transaction and revert its changes', { filters: colour('red') }),
  makeDoc('https://h.test/savepoint', 'SAVEPOINT', 'rollback part of a transaction', { filters: colour('blue') }),
  makeDoc('https://h.test/undo', 'Undo', 'revert changes', { contentGroup: 'Blog', filters: colour('red') }),
  makeDoc('https://h.test/perf', 'Performance tips', 'speed up slow queries', { filters: colour('red') }),
  makeDoc('https://h.test/faster', 'Faster', 'speed', { contentGroup: 'Blog', filters: colour('blue') }),
  makeDoc('https://h.test/create', 'CREATE TABLE', 'define a new table in the database', { filters: colour('blue') }),
  makeDoc('https://h.test/cake', 'Chocolate cake', 'a recipe', { contentGroup: 'Blog' }),
];
const params = (query: string, extra: Partial<SearchParams> = {}): SearchParams => ({
  query, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: false, highlightQueryTerms: false,
  includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false,
  semantic: { ratio: 0.5, fp: FIXTURE_FP, threshold: 0.5, vector: embedParts(wv, [{ text: query, weight: 1 }]) }, ...extra,
});
const ask = (snap: Parameters<typeof search>[0], query: string, extra: Partial<SearchParams> = {}): SearchResponse => search(snap, settings, params(query, extra), {});
const links = (r: SearchResponse) => Object.values(r.suggests).flat().map((x) => (x.type === 'custom' ? 'custom' : x.link.replace('https://h.test/', '')));

t.test('result mappings act on vector neighbours: hide, pin, custom results', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  const plain = ask(s, 'undo a mistake');
  t.ok(links(plain).includes('rollback') && links(plain).includes('undo'), 'neighbours found by their vectors');
  t.notOk(links(plain).includes('savepoint'), 'a hidden neighbour never shows');
  t.equal(plain.totalResults, links(plain).length, 'and is not counted');
  const fast = ask(s, 'make it faster', { groupResults: false });
  t.equal(links(fast)[0], 'create', 'a pinned page goes first, before the neighbours');
  t.ok(links(fast).includes('perf'));
  t.equal(fast.totalResults, links(fast).length, 'the pinned page counts once');
  const custom = ask(s, 'revert mistake');
  t.same(custom.suggests.Blog?.map((x) => x.type), ['HTML', 'custom'], 'the custom result at its position in its group');
});

t.test('content groups, per-group paging, filters and facets with neighbours', async (t) => {
  const s = snapshotOf([docs], undefined, write);
  t.teardown(() => s.cleanup());
  const all = ask(s, 'revert mistake');
  const groups = ask(s, 'revert mistake', { includeContentGroups: ['Blog'] });
  t.same(Object.keys(groups.suggests), ['Blog']);
  t.same(groups.totalResultsPerContentGroup, { Blog: all.totalResultsPerContentGroup.Blog }, 'a group\'s count is the same alone');
  const none = ask(s, 'revert mistake', { excludeContentGroups: ['Blog'] });
  t.equal(none.totalResults + groups.totalResults, all.totalResults, 'groups split the total exactly');
  const perGroup = ask(s, 'revert mistake', { limitPerGroup: true, limit: 1 });
  for (const [g, list] of Object.entries(perGroup.suggests)) t.ok(list.length <= 1, `at most one result in ${g}`);
  const red = ask(s, 'revert mistake', { filters: [{ key: 'fid#1', type: 'multiple', values: ['red'] }], filterOptions: true });
  const blue = ask(s, 'revert mistake', { filters: [{ key: 'fid#1', type: 'multiple', values: ['blue'] }] });
  const facet = (red.filterOptions[0] as { values: Array<{ value: string; count: number }> }).values;
  t.ok(red.totalResults > 0 && blue.totalResults > 0);
  t.equal(facet.find((v) => v.value === 'red')?.count, red.totalResults, 'the facet counts the red results (a custom result passes no filter)');
  t.equal(facet.find((v) => v.value === 'blue')?.count, blue.totalResults, 'and what choosing blue would give');
});

t.test('the same answer however the index is split, with replaced and deleted pages', async (t) => {
  const extra = [makeDoc('https://h.test/old', 'Old', 'revert obsolete'), makeDoc('https://h.test/perf', 'Stale', 'stale text')];
  const one = snapshotOf([[...extra, ...docs, { delete: 'https://h.test/old' }]], undefined, write);
  const many = snapshotOf([[extra[0]!], [extra[1]!, docs[0]!], docs.slice(1, 3), docs.slice(3, 6), [docs[6]!, { delete: 'https://h.test/old' }]], undefined, write);
  t.teardown(() => (one.cleanup(), many.cleanup()));
  for (const q of ['undo a mistake', 'make it faster', 'revert mistake', 'rollback transaction', 'table', 'chocolate recipe', 'xyzzy']) {
    for (const extraParams of [{}, { groupResults: false, limit: 3, offset: 1 }, { filterOptions: true, filters: [{ key: 'fid#1', type: 'multiple' as const, values: ['red'] }] }, { limitPerGroup: true, limit: 1 }]) {
      t.same(ask(many, q, extraParams), ask(one, q, extraParams), `${q} ${JSON.stringify(extraParams)}`);
    }
  }
});
