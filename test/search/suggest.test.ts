import t from 'tap';
import {
  answerOf, computeSuggestPage, MAX_SUGGEST_WINDOW, pageFromWindow, suggestBody, SuggestCache,
  SuggestService, SUGGEST_SNIPPET_SIZE, windowSearchParams, type RunSearch, type SuggestParams,
} from '../../src/search/suggest.js';
import { type SearchParams, search } from '../../src/search/service.js';
import { defaultSettings } from '../../src/projects/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { countingSources } from '../helpers/services.js';
import type { PageDoc, Settings } from '../../src/core/index.js';

const docs: PageDoc[] = [
  makeDoc('https://s.test/create-table', 'CREATE TABLE', 'Define a new table. Tables hold rows of data in columns.', { headings: ['Synopsis'] }),
  makeDoc('https://s.test/create-index', 'CREATE INDEX', 'Define a new index on a table.', { contentGroup: 'Reference' }),
  makeDoc('https://s.test/create-view', 'CREATE VIEW', 'Define a new view.', { contentGroup: 'Reference' }),
  makeDoc('https://s.test/createdb', 'createdb', 'Create a new database from the shell.', { contentGroup: 'Tools' }),
  makeDoc('https://s.test/credentials', 'Credentials', 'Client credentials and passwords.', { contentGroup: 'Tools' }),
  makeDoc('https://s.test/tables', 'Tables', 'Tables, columns and constraints.', { contentGroup: 'Guide' }),
  makeDoc('https://s.test/tablespaces', 'Tablespaces', 'Where table files live.', { contentGroup: 'Guide' }),
  makeDoc('https://s.test/indexes', 'Indexes', 'An index speeds up queries on a table.', { contentGroup: 'Guide' }),
  makeDoc('https://s.test/vacuum', 'Routine Vacuuming', 'Vacuum reclaims storage occupied by dead tuples.'),
  makeDoc('https://s.test/views', 'Views', 'A view is a stored query over tables.', { contentGroup: 'Guide' }),
];

function settingsWith(extra: Partial<Settings['search']> = {}, suggest?: Settings['suggest']): Settings {
  const s = defaultSettings();
  return { ...s, search: { ...s.search, ...extra }, suggest: suggest ?? s.suggest };
}

const params = (query: string, extra: Partial<SuggestParams> = {}): SuggestParams => ({
  query, filters: [], limit: 2, groupResults: true, includeContent: false, highlightQueryTerms: false,
  includeContentGroups: null, excludeContentGroups: null, ...extra,
});

// Prefixes of every length, typos, several words, quotes and exclusions, a no-match query.
const QUERIES = ['c', 'cr', 'cre', 'crea', 'create', 'create ', 'create t', 'create in', 'creat tab', 'tabel', 'ind', 'vacum', '"create table"', 'create -index', 'zzz', 'v', '*'];
const VARIANTS: Array<Partial<SuggestParams>> = [
  {},
  { limit: 1 },
  { groupResults: false },
  { groupResults: false, limit: 1 },
  { includeContent: true, highlightQueryTerms: true },
  { includeContentGroups: ['Guide', '_'] },
  { excludeContentGroups: ['Reference'] },
];

t.test('computeSuggestPage is the general search with suggest parameters (SPEC §6)', async (t) => {
  const snap = snapshotOf([docs.slice(0, 5), docs.slice(5)]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith({}, { minSearches: 2, typoTolerance: 'strict' });
  const owner = {};
  for (const q of QUERIES) {
    for (const v of VARIANTS) {
      const p = params(q, v);
      const page = computeSuggestPage(snap, settings, p, owner);
      const direct = search(snap, settings, {
        query: q, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: p.limit,
        includeContent: p.includeContent, highlightQueryTerms: p.highlightQueryTerms,
        includeContentGroups: p.includeContentGroups, excludeContentGroups: p.excludeContentGroups,
        groupResults: p.groupResults, limitPerGroup: p.groupResults, typoTolerance: 'strict', snippetSize: SUGGEST_SNIPPET_SIZE,
      }, owner);
      const label = `${JSON.stringify(q)} ${JSON.stringify(v)}`;
      t.same(page.suggests, direct.suggests, `results ${label}`);
      t.equal(page.totalResults, direct.totalResults, `total ${label}`);
      t.same(page.totalResultsPerContentGroup, direct.totalResultsPerContentGroup, `per group ${label}`);
      for (const list of Object.values(page.suggests)) {
        t.ok(list.length <= p.limit, `limit ${p.limit} per list ${label}`);
      }
      if (!p.groupResults) t.ok(Object.keys(page.suggests).every((g) => g === '_'), `ungrouped under _ ${label}`);
    }
  }
  // Per content group: 'cre' matches pages in four groups, two per group at most.
  const grouped = computeSuggestPage(snap, settings, params('cre'), owner);
  t.same(Object.keys(grouped.totalResultsPerContentGroup).sort(), ['Reference', 'Tools', '_']);
  t.equal(grouped.suggests.Reference!.length, 2);
});

t.test('a cached answer equals the uncached general search, on the first and every later call', async (t) => {
  const snap = snapshotOf([docs.slice(0, 3), docs.slice(3, 7), docs.slice(7)]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith({
    synonyms: [{ terms: ['view', 'vista'] }],
    resultMappings: [
      { trigger: { type: 'equals', value: 'create' }, action: { type: 'pin', urls: ['https://s.test/vacuum'] } },
      { trigger: { type: 'contains', value: 'tables' }, action: { type: 'hide', urls: ['https://s.test/tables'] } },
      { trigger: { type: 'equals', value: 'promo' }, action: { type: 'custom', html: '<b>Promo</b>', position: 1 } },
      { trigger: { type: 'equals', value: 'home' }, action: { type: 'redirect', url: 'https://s.test/' } },
    ],
  });
  const cache = new SuggestCache();
  const owner = {};
  const queries = [...QUERIES, 'vist', 'tables', 'promo', 'home'];
  for (let round = 0; round < 3; round++) {
    for (const q of queries) {
      for (const v of VARIANTS) {
        const p = params(q, v);
        const label = `round ${round} ${JSON.stringify(q)} ${JSON.stringify(v)}`;
        const answer = cache.get(snap, settings, p, owner);
        const fresh = computeSuggestPage(snap, settings, p, owner);
        t.same(answer.page, fresh, label);
        t.same(JSON.parse(`{${answer.json}}`), JSON.parse(JSON.stringify({ suggests: fresh.suggests, totalResults: fresh.totalResults, totalResultsPerContentGroup: fresh.totalResultsPerContentGroup })), `json ${label}`);
      }
    }
  }
  const n = queries.length * VARIANTS.length;
  t.match(cache.stats(), { hits: 2 * n, misses: n, shared: 0, size: n }, 'every later call was a hit');
  const promo = cache.get(snap, settings, params('promo'), owner).page;
  t.equal(promo.suggests._![0]!.suggestionHtml, '<b>Promo</b>', 'custom result carries suggestionHtml');
  t.equal(cache.get(snap, settings, params('home'), owner).page.redirect, 'https://s.test/');
  t.throws(() => {
    (promo.suggests._ as unknown as unknown[]).push({});
  }, 'cached answers are frozen: one response cannot change another');
});

t.test('a new index generation, new settings or another project is never answered from the cache', async (t) => {
  const before = snapshotOf([docs.slice(0, 5)]);
  // The next generation of the same index: a page added, one deleted.
  const afterRaw = snapshotOf([[...docs.slice(0, 5), makeDoc('https://s.test/crete', 'Crete travel', 'Islands.'), { delete: 'https://s.test/createdb' }]]);
  t.teardown(() => (before.cleanup(), afterRaw.cleanup()));
  const after = { ...afterRaw, generation: before.generation + 1 };
  const settings = settingsWith();
  const cache = new SuggestCache();
  const owner = {};
  const p = params('cre', { groupResults: false });
  const links = (x: ReturnType<typeof computeSuggestPage>) => Object.values(x.suggests).flat().map((r) => r.link);
  const get = (snap: typeof before, settings: ReturnType<typeof settingsWith>, p: SuggestParams, owner: object) => cache.get(snap, settings, p, owner).page;

  const first = get(before, settings, p, owner);
  t.equal(first.totalResults, 5);
  const next = get(after, settings, p, owner);
  t.same(next, computeSuggestPage(after, settings, p, owner), 'new generation: recomputed');
  t.equal(next.totalResults, 5, 'one page added, one deleted');
  t.notOk(links(next).includes('https://s.test/createdb'), 'the deleted page is gone');
  t.same(get(before, settings, p, owner), first, 'a search still pinned to the old generation gets the old answer');

  // Settings are replaced by a new object on every change.
  const second = links(next)[1]!;
  const pinned = settingsWith({ resultMappings: [{ trigger: { type: 'equals', value: 'cre' }, action: { type: 'pin', urls: [second] } }] });
  const withPin = get(after, pinned, p, owner);
  t.equal(links(withPin)[0], second, 'new settings: recomputed with the pin');
  const strict = settingsWith({}, { minSearches: 2, typoTolerance: 'off' });
  t.equal(get(after, strict, params('tabel'), owner).totalResults, 0, 'suggest typo tolerance off: no typo matches');
  t.ok(get(after, settings, params('tabel'), owner).totalResults > 0, 'default tolerance: typo matches');

  // Another project with the same generation number and settings object.
  const other = snapshotOf([docs.slice(5)]);
  t.teardown(() => other.cleanup());
  t.equal(get(other, settings, p, {}).totalResults, 0, 'another project: its own answer');
  const tab = get(other, settings, params('tab'), {});
  t.ok(tab.totalResults > 0);
  t.same(tab, computeSuggestPage(other, settings, params('tab'), {}));
});

t.test("a newer generation drops the project's older suggest answers at once", async (t) => {
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const next = { ...snap, generation: snap.generation + 1 };
  const settings = settingsWith();
  const owner = {};
  const cache = new SuggestCache();
  for (const q of ['c', 'cr', 'cre', 'crea', 'ta', 'tab']) cache.get(snap, settings, params(q), owner);
  cache.get(snap, settings, params('c'), {});
  t.equal(cache.stats().size, 7);
  cache.get(next, settings, params('c'), owner);
  t.equal(cache.stats().size, 2, 'the six answers of the old generation are gone; the other project keeps its answer');
  cache.get(snap, settings, params('tab'), owner);
  t.equal(cache.stats().size, 2, 'a late answer of the old generation is not kept');
});

t.test('the cache is bounded (LRU) and can be disabled', async (t) => {
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith();
  const owner = {};
  const cache = new SuggestCache(3);
  for (const q of ['c', 'cr', 'cre']) cache.get(snap, settings, params(q), owner);
  cache.get(snap, settings, params('c'), owner); // 'c' is now the most recent
  cache.get(snap, settings, params('crea'), owner); // evicts 'cr', the least recent
  t.equal(cache.stats().size, 3);
  const misses = cache.stats().misses;
  cache.get(snap, settings, params('c'), owner);
  t.equal(cache.stats().misses, misses, 'recently used entry kept');
  cache.get(snap, settings, params('cr'), owner);
  t.equal(cache.stats().misses, misses + 1, 'least recently used entry was evicted');
  t.equal(cache.stats().size, 3);

  const off = new SuggestCache(0);
  t.same(off.get(snap, settings, params('cre'), owner).page, computeSuggestPage(snap, settings, params('cre'), owner));
  t.same(off.stats(), { hits: 0, misses: 0, shared: 0, size: 0, bytes: 0 }, 'maxEntries 0 stores nothing');
});

t.test('the response text equals JSON.stringify of the response object', async (t) => {
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith({
    resultMappings: [
      { trigger: { type: 'equals', value: 'promo' }, action: { type: 'custom', html: '<b>"Promo"</b>', position: 1 } },
      { trigger: { type: 'equals', value: 'home' }, action: { type: 'redirect', url: 'https://s.test/?a="b"' } },
    ],
  });
  for (const q of ['cre', 'promo', 'home', 'zzz', 'a "quoted\\ query']) {
    const page = computeSuggestPage(snap, settings, params(q, { includeContent: true, highlightQueryTerms: true }), {});
    const qs = q === 'cre' ? [{ query: 'create table' }, { query: 'créer "x"' }] : [];
    const expected = JSON.stringify({
      status: 'success', query: q, suggests: page.suggests, totalResults: page.totalResults,
      totalResultsPerContentGroup: page.totalResultsPerContentGroup, querySuggestions: qs,
      ...(page.redirect ? { redirect: page.redirect } : {}),
    });
    t.equal(suggestBody(q, answerOf(page), qs), expected, JSON.stringify(q));
  }
});

t.test('getAsync: a miss searches elsewhere (as JSON, like the search threads); hits, shared misses, failures', async (t) => {
  const snap = snapshotOf([docs.slice(0, 4), docs.slice(4)]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith({
    resultMappings: [{ trigger: { type: 'equals', value: 'promo' }, action: { type: 'custom', html: '<b>Promo</b>', position: 1 } }],
  });
  const owner = {};
  const cache = new SuggestCache();
  const calls: SearchParams[] = [];
  // What a search thread does: the general search, answered as JSON text.
  const run: RunSearch = async (params) => {
    calls.push(params);
    await new Promise((r) => setImmediate(r));
    return { json: JSON.stringify(search(snap, settings, params, owner)) };
  };
  for (const q of [...QUERIES, 'promo']) {
    for (const v of VARIANTS) {
      const p = params(q, v);
      const label = `${JSON.stringify(q)} ${JSON.stringify(v)}`;
      const fresh = computeSuggestPage(snap, settings, p, owner);
      const first = await cache.getAsync(snap, settings, p, owner, run);
      t.same(first.page, JSON.parse(JSON.stringify(fresh)), `miss ${label}`);
      t.equal(first.json, answerOf(fresh).json, `same JSON ${label}`);
      t.equal(await cache.getAsync(snap, settings, p, owner, run), first, `hit ${label}`);
    }
  }
  const n = (QUERIES.length + 1) * VARIANTS.length;
  t.equal(calls.length, n, 'one search per distinct request');
  t.equal(calls[0]!.limitPerGroup, true, 'suggest parameters: limit per group when grouping');
  t.equal(calls[0]!.snippetSize, SUGGEST_SNIPPET_SIZE);
  const promo = (await cache.getAsync(snap, settings, params('promo'), owner, run)).page;
  t.equal(promo.suggests._![0]!.suggestionHtml, '<b>Promo</b>', 'custom result from JSON carries suggestionHtml');

  // Concurrent misses of one key: one search.
  calls.length = 0;
  const same = await Promise.all([1, 2, 3].map(() => cache.getAsync(snap, settings, params('tabl'), owner, run)));
  t.equal(calls.length, 1, 'three concurrent requests, one search');
  t.ok(same.every((a) => a === same[0]));
  t.equal(cache.stats().shared, 2);

  // A failed search is not cached; the next request searches again.
  let fail = true;
  const flaky: RunSearch = async (p) => {
    if (fail) throw new Error('search thread pool overloaded');
    return run(p);
  };
  await t.rejects(cache.getAsync(snap, settings, params('vacu'), owner, flaky), /overloaded/);
  fail = false;
  t.equal((await cache.getAsync(snap, settings, params('vacu'), owner, flaky)).page.totalResults, 1, 'searched again after the failure');
});

t.test('the cache is bounded in bytes too', async (t) => {
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith();
  const owner = {};
  const one = answerOf(computeSuggestPage(snap, settings, params('cre', { includeContent: true }), owner));
  const perEntry = 4 * one.json.length + 256;
  // Room for about three answers of this size.
  const cache = new SuggestCache(1000, Math.floor(3.5 * (perEntry + 400)));
  const queries = ['cre', 'crea', 'creat', 'create', 'c', 'cr'];
  for (const q of queries) cache.get(snap, settings, params(q, { includeContent: true }), owner);
  const st = cache.stats();
  t.ok(st.bytes <= cache.maxBytes, `${st.bytes} bytes ≤ ${cache.maxBytes}`);
  t.ok(st.size < queries.length && st.size >= 2, `oldest answers evicted (${st.size} kept)`);
  const misses = cache.stats().misses;
  cache.get(snap, settings, params('cr', { includeContent: true }), owner);
  t.equal(cache.stats().misses, misses, 'the newest answer is kept');
  cache.get(snap, settings, params('cre', { includeContent: true }), owner);
  t.equal(cache.stats().misses, misses + 1, 'the oldest was evicted');
  const tiny = new SuggestCache(1000, 10);
  t.same(tiny.get(snap, settings, params('cre'), owner).page, computeSuggestPage(snap, settings, params('cre'), owner), 'an answer larger than the budget is answered, not stored');
  t.equal(tiny.stats().size, 0);
});

t.test('a windowed search answers grouped requests exactly, and falls back when the window is short of a group', async (t) => {
  // Many pages in one group ("Guide") that outrank the others for "ta": a window of `limit` x
  // groups results may hold too few of the smaller groups, so both paths are exercised.
  const many = Array.from({ length: 12 }, (_, i) => makeDoc(`https://s.test/guide/table-${i}`, `Table ${i} tables`, `Tables and table rows ${i}.`, { contentGroup: 'Guide' }));
  const snap = snapshotOf([[...docs.slice(0, 5), ...many.slice(0, 6)], [...docs.slice(5), ...many.slice(6)]]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith({ resultMappings: [{ trigger: { type: 'equals', value: 'home' }, action: { type: 'redirect', url: 'https://s.test/' } }] });
  const owner = {};
  const calls: SearchParams[] = [];
  const run: RunSearch = async (sp) => {
    calls.push(sp);
    return { json: JSON.stringify(search(snap, settings, sp, owner)) };
  };
  const cache = new SuggestCache();
  const syncCache = new SuggestCache();
  for (const q of [...QUERIES, 'ta', 'tab', 'table', 'rows', 'home']) {
    for (const v of VARIANTS) {
      const p = params(q, v);
      const label = `${JSON.stringify(q)} ${JSON.stringify(v)}`;
      const exact = computeSuggestPage(snap, settings, p, owner);
      t.same(syncCache.get(snap, settings, p, owner).page, exact, `sync ${label}`);
      const answer = await cache.getAsync(snap, settings, p, owner, run);
      t.same(answer.page, JSON.parse(JSON.stringify(exact)), `async ${label}`);
      t.equal(answer.json, answerOf(exact).json, `same JSON ${label}`);
    }
  }
  const windows = calls.filter((c) => c.groupResults && !c.limitPerGroup);
  t.ok(windows.length > 0, 'grouped requests searched a window first');
  t.ok(windows.every((c) => c.limit <= MAX_SUGGEST_WINDOW), 'windows are small');
  t.ok(calls.some((c) => c.groupResults && c.limitPerGroup), 'a window short of some group fell back to limit per group');

  // Direct: a window that holds too few of a group is refused.
  const short = pageFromWindow({ suggests: { Guide: [] as never[] }, totalResults: 3, totalResultsPerContentGroup: { Guide: 2, Tools: 1 } }, 2);
  t.equal(short, null, 'a group with matches but none shown: not exact');
  t.equal(windowSearchParams(settings, params('ta', { groupResults: false }), 4), null, 'ungrouped requests are a plain top-k already');
  const pinning = settingsWith({ resultMappings: [{ trigger: { type: 'equals', value: 'x' }, action: { type: 'pin', urls: ['https://s.test/vacuum'] } }] });
  t.equal(windowSearchParams(pinning, params('ta'), 4), null, 'pins, hides and customs place results per group: no window');
});

t.test('an index where windows are rarely exact stops trying them', async (t) => {
  // Every query matches one page in each of many groups ranked far apart: a window of
  // limit x (groups seen) is short of the last groups until the count is learnt, then exact;
  // here the per-group count keeps growing, so windows keep failing and are given up.
  const pages = Array.from({ length: 60 }, (_, i) => makeDoc(`https://s.test/p${i}`, `alpha ${'beta '.repeat(i % 7)}`, `alpha words ${i}`, { contentGroup: `G${i}` }));
  const snap = snapshotOf([pages]);
  t.teardown(() => snap.cleanup());
  const settings = settingsWith();
  const owner = {};
  let windows = 0;
  let exacts = 0;
  const run: RunSearch = async (sp) => {
    if (sp.limitPerGroup) exacts++;
    else windows++;
    return { json: JSON.stringify(search(snap, settings, sp, owner)) };
  };
  const cache = new SuggestCache();
  for (let i = 0; i < 80; i++) {
    const p = params('alp', { excludeContentGroups: [`absent-${i}`] });
    const answer = await cache.getAsync(snap, settings, p, owner, run);
    t.same(answer.page, JSON.parse(JSON.stringify(computeSuggestPage(snap, settings, p, owner))), `exact answer ${i}`);
  }
  t.equal(exacts, 80, 'every request needed the limit-per-group search');
  t.ok(windows >= 32 && windows < 80, `windows were given up after a while (${windows} tried)`);
});

t.test('SuggestService.run: the response body, the page from the cache on a repeat, query suggestions every time, pins released', async (t) => {
  const snap = snapshotOf([docs.slice(0, 5), docs.slice(5)]);
  t.teardown(() => snap.cleanup());
  const src = countingSources(snap, settingsWith({}, { minSearches: 3, typoTolerance: 'default' }));
  const asked: Array<{ siteId: string; query: string; max: number; minSearches: number }> = [];
  let logged = [{ query: 'create table' }];
  const service = new SuggestService({
    ...src,
    querySuggestions: (siteId, query, o) => {
      asked.push({ siteId, query, ...o });
      return logged;
    },
  });
  const owner = {};
  for (const q of ['cre', 'tab', 'zzz']) {
    const want = JSON.parse(suggestBody(q, answerOf(computeSuggestPage(snap, src.settings, params(q), owner)), logged));
    const runs = src.runs;
    t.same(JSON.parse(await service.run('default', { ...params(q), maxQuerySuggestions: 3 })), want, `miss: ${q}`);
    t.ok(src.runs > runs, `searched: ${q}`);
    const searched = src.runs;
    t.same(JSON.parse(await service.run('default', { ...params(q), maxQuerySuggestions: 3 })), want, `hit: ${q}`);
    t.equal(src.runs, searched, `not searched again: ${q}`);
  }
  t.equal(service.cache.stats().hits, 3);
  t.ok(src.pinsDuringRuns.every((n) => n === 1), 'every search ran on a pinned snapshot');
  t.equal(src.pins, 0, 'every pin released');
  t.same(asked[0], { siteId: 'default', query: 'cre', max: 3, minSearches: 3 }, 'the settings\' minSearches');
  t.equal(asked.length, 6, 'query suggestions looked up for hits and misses alike');

  // Query suggestions are never cached with the page.
  logged = [{ query: 'create index' }];
  t.same(JSON.parse(await service.run('default', { ...params('cre'), maxQuerySuggestions: 3 })).querySuggestions, logged, 'the current ones');
  await service.run('default', { ...params('cre'), maxQuerySuggestions: 0 });
  t.equal(asked.length, 7, 'maxQuerySuggestions=0: not looked up');

  src.failWith = new Error('thread lost');
  await t.rejects(service.run('default', { ...params('vacu'), maxQuerySuggestions: 0 }), /thread lost/);
  t.equal(src.pins, 0, 'released after a failed search');
});
