import t from 'tap';
import { ThreadSearchExecutor, type SearchExecutor } from '../../src/search/executor.js';
import { SearchThreadState, snapshotSpec, WARMED, type SearchRequest } from '../../src/search/remote.js';
import { GenerationWarmer, WARM_WINDOW_MS, type WarmSources } from '../../src/search/warm.js';
import type { SearchParams } from '../../src/search/service.js';
import type { IndexSnapshot, ProjectIndex, SegmentReader } from '../../src/index/index.js';
import { defaultSettings } from '../../src/projects/index.js';
import type { Settings } from '../../src/core/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';

const batches = [
  [makeDoc('https://w.test/a', 'Create table', 'Define a new table.'), makeDoc('https://w.test/b', 'Create index', 'Define a new index.')],
  [makeDoc('https://w.test/c', 'Vacuum', 'Reclaims storage.')],
];

const params = (query: string): SearchParams => ({
  query, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 10,
  includeContent: false, highlightQueryTerms: false, includeContentGroups: null, excludeContentGroups: null,
  groupResults: false, limitPerGroup: false,
});

/** Whether a reader has loaded its doc values (a private field: what a warm is for). */
const hasDocValues = (r: SegmentReader) => (r as unknown as { values?: unknown }).values !== undefined;

t.test('a warm request loads each segment of the generation on the thread and runs no search', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const state = new SearchThreadState();
  t.teardown(() => state.close());
  const spec = snapshotSpec(snap, 1);
  const req: SearchRequest = { id: 1, settingsId: 9, settings: defaultSettings(), owner: 1, generation: spec.generation, snapshot: spec, params: params(''), warm: { fp: null } };
  t.same(state.handle(req), { id: 1, result: WARMED });
  const opened = state.snapshots.find(1, spec.generation)!;
  t.equal(opened.segments.length, 2);
  for (const s of opened.segments) t.ok(hasDocValues(s.reader), `${s.id}: doc values loaded`);
  // Without the warm flag the same request is a search.
  const search = state.handle({ ...req, id: 2, warm: undefined, params: params('table') });
  t.ok('result' in search && search.result.totalResults === 1);
});

t.test('the executor warms only on an idle thread, never ahead of a search', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const settings: Settings = defaultSettings();
  const ex = new ThreadSearchExecutor(1);
  t.teardown(() => ex.close());
  const owner = {};
  t.equal(await ex.warm(owner, snap, settings, null), true, 'idle thread: warmed');
  const busy = ex.run(owner, snap, settings, params('table'));
  t.equal(await ex.warm(owner, snap, settings, null), false, 'the only thread is searching: no warm');
  t.equal((await busy).totalResults, 1);
  t.equal(await ex.warm(owner, snap, settings, null), true, 'idle again');
});

/** An index whose generation the test moves, over one snapshot; counts pins. */
function fakeIndex(snap: IndexSnapshot) {
  const s = { generation: 1, pins: 0 };
  const index = {
    get generation() {
      return s.generation;
    },
    acquire(): IndexSnapshot {
      s.pins++;
      return { ...snap, generation: s.generation, release: () => void s.pins-- };
    },
  } as unknown as ProjectIndex;
  return { index, s };
}

t.test('the warmer warms each new generation of a recently searched, open project once', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const { index, s } = fakeIndex(snap);
  let open = true;
  let now = 1_000_000;
  let answer = true;
  const calls: Array<[number, string | null]> = [];
  const executor = { threads: 2, warm: async (_o: object, sn: IndexSnapshot, _st: Settings, fp: string | null) => (calls.push([sn.generation, fp]), answer) } as unknown as SearchExecutor;
  let settings: Settings = defaultSettings();
  let embedder: { fp: string } | null = null;
  const sources: WarmSources = {
    projects: { getSettings: () => settings },
    indexes: { peek: () => (open ? index : null) },
    executor,
    embedderOf: () => embedder as never,
  };
  const w = new GenerationWarmer(sources, () => now);
  t.teardown(() => w.stop());

  w.searched('p', index, 1);
  await w.check();
  t.same(calls, [], 'the searched generation is not warmed');
  s.generation = 2;
  await w.check();
  t.same(calls, [[2, null]], 'a new generation is warmed (no embedder: no vectors)');
  t.equal(s.pins, 0, 'its pin released');
  await w.check();
  t.same(calls.length, 1, 'and only once');

  // A warm that found no idle thread is tried again at the next check.
  s.generation = 3;
  answer = false;
  await w.check();
  answer = true;
  await w.check();
  t.same(calls.slice(1), [[3, null], [3, null]]);

  // With an embedder and a default ratio above 0, the vectors are loaded too; a ratio of 0 reads none.
  embedder = { fp: 'builtin:v1' };
  settings = { ...settings, search: { ...settings.search, semantic: { ...settings.search.semantic!, semanticRatio: 0.4 } } };
  s.generation = 4;
  await w.check();
  t.same(calls.at(-1), [4, 'builtin:v1']);
  settings = { ...settings, search: { ...settings.search, semantic: { ...settings.search.semantic!, semanticRatio: 0 } } };
  s.generation = 5;
  await w.check();
  t.same(calls.at(-1), [5, null]);

  // A search of a generation newer than the warmed one counts as warm.
  w.searched('p', index, 7);
  s.generation = 7;
  await w.check();
  t.same(calls.at(-1), [5, null], 'generation 7 was searched: not warmed');

  // Closed by the registry: forgotten, never reopened.
  open = false;
  s.generation = 8;
  await w.check();
  t.equal(w.size, 0);
  t.same(calls.at(-1), [5, null]);

  // Not searched for the warm window: forgotten.
  open = true;
  w.searched('p', index, 8);
  now += WARM_WINDOW_MS + 1;
  s.generation = 9;
  await w.check();
  t.equal(w.size, 0);
  t.same(calls.at(-1), [5, null]);
});

t.test('no warming without search threads or without a way to peek at open indexes', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const { index } = fakeIndex(snap);
  const base = { projects: { getSettings: () => defaultSettings() }, executor: { threads: 1, warm: async () => true } as unknown as SearchExecutor };
  const noThreads = new GenerationWarmer({ ...base, executor: { threads: 0 } as unknown as SearchExecutor, indexes: { peek: () => index } });
  noThreads.searched('p', index, 1);
  t.equal(noThreads.size, 0, 'main-thread searches: a warm would block requests');
  const noPeek = new GenerationWarmer({ ...base, indexes: {} });
  noPeek.searched('p', index, 1);
  t.equal(noPeek.size, 0, 'no peek: it could reopen a closed project');
});
