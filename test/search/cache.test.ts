import t from 'tap';
import { SearchCache } from '../../src/search/cache.js';
import { LocalSearchExecutor, type SearchOutcome } from '../../src/search/executor.js';
import { SearchService, type SearchParams } from '../../src/search/service.js';
import type { IndexSnapshot } from '../../src/index/index.js';
import { defaultSettings } from '../../src/projects/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { countingSources } from '../helpers/services.js';
import type { Settings } from '../../src/core/index.js';

const params = (query: string, extra: Partial<SearchParams> = {}): SearchParams => ({
  query, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 10,
  includeContent: true, highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null,
  groupResults: true, limitPerGroup: false, ...extra,
});
const snapAt = (generation: number) => ({ generation, segments: [], totalDocs: 0, totalLengths: [], release() {} }) as IndexSnapshot;
const outcome = (json: string): SearchOutcome => ({ json, totalResults: 0, sortingOptions: [], activeFilterOptions: [] });

t.test('a cached answer is reused only for the same index, generation, settings and parameters', async (t) => {
  const cache = new SearchCache(1 << 20);
  const owner = {};
  const settings = defaultSettings();
  let computed = 0;
  const get = (o: object, gen: number, s: Settings, p: SearchParams) =>
    cache.get(o, snapAt(gen), s, p, async () => outcome(`answer ${++computed}`));
  t.equal((await get(owner, 1, settings, params('table'))).json, 'answer 1');
  t.equal((await get(owner, 1, settings, params('table'))).json, 'answer 1', 'hit');
  t.equal((await get(owner, 2, settings, params('table'))).json, 'answer 2', 'new generation: recomputed');
  t.equal((await get(owner, 2, { ...settings }, params('table'))).json, 'answer 3', 'new settings object: recomputed');
  t.equal((await get({}, 2, settings, params('table'))).json, 'answer 4', 'another index: recomputed');
  // Every parameter is part of the key.
  const variants: Array<Partial<SearchParams>> = [
    { query: 'table ' }, { filters: [{ key: 'fid#1', type: 'values', values: ['a'] } as never] }, { filterOptions: true },
    { sort: 'price' }, { sortOrder: 'DESC' }, { offset: 1 }, { limit: 5 }, { includeContent: false },
    { highlightQueryTerms: false }, { includeContentGroups: ['Blog'] }, { excludeContentGroups: ['Blog'] },
    { groupResults: false }, { limitPerGroup: true }, { typoTolerance: 'off' }, { snippetSize: 100 },
  ];
  for (const v of variants) {
    const before = computed;
    await get(owner, 2, settings, params('table', v));
    t.equal(computed, before + 1, `${JSON.stringify(v)} is a different answer`);
  }
  t.same(cache.stats().hits, 1);
});

t.test('the cache stays within its byte budget, least recently used out first', async (t) => {
  const cache = new SearchCache(64 * 1024);
  const owner = {};
  const settings = defaultSettings();
  const big = 'x'.repeat(4000); // ~8 KB per answer
  for (let i = 0; i < 50; i++) await cache.get(owner, snapAt(1), settings, params(`q${i}`), async () => outcome(big + i));
  const st = cache.stats();
  t.ok(st.bytes <= 64 * 1024, `bytes ${st.bytes} within budget`);
  t.ok(st.entries >= 4 && st.entries < 50, `some entries evicted (${st.entries} kept)`);
  let recomputed = false;
  await cache.get(owner, snapAt(1), settings, params('q49'), async () => ((recomputed = true), outcome('new')));
  t.notOk(recomputed, 'the newest answer is still cached');
  await cache.get(owner, snapAt(1), settings, params('q0'), async () => ((recomputed = true), outcome('new')));
  t.ok(recomputed, 'the oldest answer was evicted');
  // An answer larger than a quarter of the budget is not cached at all.
  const tiny = new SearchCache(1000);
  let n = 0;
  await tiny.get(owner, snapAt(1), settings, params('a'), async () => outcome('y'.repeat(500 + n++)));
  await tiny.get(owner, snapAt(1), settings, params('a'), async () => outcome('y'.repeat(500 + n++)));
  t.equal(n, 2, 'too large: computed each time');
  t.equal(tiny.stats().entries, 0);
});

t.test("a newer generation drops the index's older answers at once; other indexes keep theirs", async (t) => {
  const cache = new SearchCache(1 << 20);
  const owner = {};
  const other = {};
  const settings = defaultSettings();
  for (let i = 0; i < 20; i++) await cache.get(owner, snapAt(1), settings, params(`q${i}`), async () => outcome(`gen 1 answer ${i}`));
  await cache.get(other, snapAt(1), settings, params('q0'), async () => outcome('other'));
  t.equal(cache.stats().entries, 21);
  const bytesBefore = cache.stats().bytes;
  await cache.get(owner, snapAt(2), settings, params('q0'), async () => outcome('gen 2 answer'));
  t.equal(cache.stats().entries, 2, "the index's 20 answers of generation 1 are gone, its new one and the other index's remain");
  t.ok(cache.stats().bytes < bytesBefore / 5, 'and their bytes no longer count');
  let computed = 0;
  await cache.get(other, snapAt(1), settings, params('q0'), async () => ((computed++), outcome('other again')));
  t.equal(computed, 0, "another index's answer is still a hit");
  // A search pinned to generation 1 that finishes after generation 2 was seen: answered, not kept.
  await cache.get(owner, snapAt(1), settings, params('late'), async () => outcome('late'));
  t.equal(cache.stats().entries, 2, 'an answer of a superseded generation is not cached');
});

t.test('two concurrent misses of one answer both store it: the second replaces the first', async (t) => {
  const cache = new SearchCache(1 << 20);
  const owner = {};
  const settings = defaultSettings();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = cache.get(owner, snapAt(1), settings, params('same'), async () => (await gate, outcome('first')));
  const second = cache.get(owner, snapAt(1), settings, params('same'), async () => (await gate, outcome('second')));
  release();
  t.same([(await first).json, (await second).json], ['first', 'second']);
  t.equal(cache.stats().entries, 1);
  let computed = 0;
  const hit = await cache.get(owner, snapAt(1), settings, params('same'), async () => ((computed++), outcome('third')));
  t.equal(computed, 0, 'a hit');
  t.equal(hit.json, 'second', 'the later answer');
  // The owner's generation is still tracked: a newer one drops the answer.
  await cache.get(owner, snapAt(2), settings, params('other'), async () => outcome('gen 2'));
  t.equal(cache.stats().entries, 1);
});

t.test('a budget of 0 disables caching', async (t) => {
  const off = new SearchCache(0);
  let n = 0;
  await off.get({}, snapAt(1), defaultSettings(), params('a'), async () => outcome(String(n++)));
  await off.get({}, snapAt(1), defaultSettings(), params('a'), async () => outcome(String(n++)));
  t.equal(n, 2);
  t.equal(off.stats().entries, 0);
});

const docs = [
  makeDoc('https://s.test/a', 'CREATE TABLE', 'Define a new table.'),
  makeDoc('https://s.test/b', 'Tables', 'Tables and columns.'),
];

t.test('SearchService.run: the general answer, from the cache on a repeat; a snapshot pinned for the search and released', async (t) => {
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const src = countingSources(snap, defaultSettings());
  const service = new SearchService(src, 1 << 20);
  const local = new LocalSearchExecutor();
  for (const q of ['table', 'tab', 'tabel', '*', 'zzz']) {
    const want = await local.run({}, snap, src.settings, params(q));
    const runs = src.runs;
    t.equal((await service.run('default', params(q))).json, want.json, `miss: ${q}`);
    t.equal(src.runs, runs + 1, `searched: ${q}`);
    t.equal((await service.run('default', params(q))).json, want.json, `hit: ${q}`);
    t.equal(src.runs, runs + 1, `not searched again: ${q}`);
  }
  t.same(service.cache.stats().hits, 5);
  t.same(src.pinsDuringRuns, [1, 1, 1, 1, 1], 'every search ran on a pinned snapshot');
  t.equal(src.acquired, 10, 'hits pin too (the generation is part of the key)');
  t.equal(src.pins, 0, 'every pin released');

  // New settings: a new key, searched with the new settings.
  src.settings = { ...src.settings, search: { ...src.settings.search, resultMappings: [{ trigger: { type: 'equals', value: 'table' }, action: { type: 'redirect', url: 'https://s.test/tables' } }] } };
  t.match(JSON.parse((await service.run('default', params('table'))).json), { redirect: 'https://s.test/tables' }, 'new settings: recomputed');
  t.equal(src.runs, 6);
});

t.test('SearchService.run: settings are read at the call; failures release the pin', async (t) => {
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const src = countingSources(snap, defaultSettings());
  const service = new SearchService(src, 0);
  // Settings change after the call: the search uses those the route validated against.
  const pending = service.run('default', params('table'));
  src.settings = { ...src.settings, search: { ...src.settings.search, resultMappings: [{ trigger: { type: 'equals', value: 'table' }, action: { type: 'redirect', url: 'https://s.test/x' } }] } };
  t.notOk('redirect' in JSON.parse((await pending).json), 'the settings of the moment of the call');
  t.ok('redirect' in JSON.parse((await service.run('default', params('table'))).json), 'the next call sees the new ones');
  t.equal(src.runs, 2, 'a budget of 0: every call searches');

  src.failWith = new Error('thread lost');
  await t.rejects(service.run('default', params('table')), /thread lost/);
  t.equal(src.pins, 0, 'released after a failed search');
  await t.rejects(service.run('ghost', params('table')), /no project ghost/);
  t.equal(src.acquired, 3, 'an unknown project pins nothing');
  t.equal(src.pins, 0);
});
