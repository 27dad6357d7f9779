import t from 'tap';
import { once } from 'node:events';
import { startThread } from '../../src/pool.js';
import { retiredFlag, SearchThreadState, snapshotSpec, ThreadSnapshots, type SearchReply, type SearchRequest } from '../../src/search/remote.js';
import type { SearchParams } from '../../src/search/service.js';
import { defaultSettings } from '../../src/projects/settings.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';

// Three one-page segments: generation 2 of the tests drops the first (as a merge would replace it).
const batches = [
  [makeDoc('https://s.test/a', 'Alpha tables', 'Tables hold rows.')],
  [makeDoc('https://s.test/b', 'Beta indexes', 'Indexes speed up queries on tables.')],
  [makeDoc('https://s.test/c', 'Gamma views', 'A view is a stored query.')],
];

const params = (query: string): SearchParams => ({
  query, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC', offset: 0, limit: 10,
  includeContent: true, highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null,
  groupResults: true, limitPerGroup: false,
});

t.test('retiredFlag: one shared flag per main-thread reader, set when that reader closes', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const r0 = snap.segments[0]!.reader;
  const flag = retiredFlag(r0);
  t.ok(flag.buffer instanceof SharedArrayBuffer, 'in shared memory');
  t.equal(retiredFlag(r0), flag, 'the same flag for the same reader');
  const spec = snapshotSpec(snap, 1);
  t.equal(spec.segments[0]!.retired, flag, 'snapshotSpec sends it');
  t.equal(Atomics.load(flag, 0), 0);
  t.equal(Atomics.load(spec.segments[1]!.retired, 0), 0);
  r0.close();
  t.equal(Atomics.load(flag, 0), 1, 'set at close');
  t.equal(Atomics.load(spec.segments[1]!.retired, 0), 0, 'other segments untouched');
});

t.test('ThreadSnapshots.dropRetired closes the readers of retired segments at once, keeps the rest', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const cache = new ThreadSnapshots(() => 1_000_000);
  t.teardown(() => cache.close());
  const spec1 = snapshotSpec(snap, 7);
  const spec2 = { ...spec1, generation: 2, segments: spec1.segments.slice(1) };
  cache.get(spec1);
  const g2 = cache.get(spec2);
  t.equal(cache.openFiles().length, 3);
  t.equal(cache.dropRetired(), 0, 'nothing retired yet');
  t.equal(cache.openFiles().length, 3, 'generation 1 is still cached (within the newest few)');
  // The main thread retires segment 0 (no generation it holds lists it): its reader closes.
  snap.segments[0]!.reader.close();
  t.equal(cache.dropRetired(), 1, 'generation 1 dropped');
  t.same(cache.openFiles().sort(), spec2.segments.map((s) => s.path).sort(), 'only the retired segment closed');
  t.equal(cache.find(7, 2), g2, 'generation 2 still open, same object');
  t.equal(cache.find(7, 1), undefined);
  t.equal(cache.dropRetired(), 0, 'idempotent');
});

t.test('ThreadSnapshots.get drops retired generations before reusing readers by path', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const cache = new ThreadSnapshots();
  t.teardown(() => cache.close());
  const spec1 = snapshotSpec(snap, 1);
  cache.get(spec1);
  snap.segments[0]!.reader.close();
  const spec2 = { ...spec1, generation: 2, segments: spec1.segments.slice(1) };
  const g2 = cache.get(spec2);
  t.equal(cache.find(1, 1), undefined, 'the retired generation went with the new one');
  t.same(cache.openFiles().sort(), spec2.segments.map((s) => s.path).sort(), 'the retired segment is closed');
  t.equal(g2.segments.length, 2);
});

t.test('SearchThreadState: a generation with a retired segment is dropped, the next one answers', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const state = new SearchThreadState();
  t.teardown(() => state.close());
  const spec = snapshotSpec(snap, 1);
  const req = (id: number, extra: Partial<SearchRequest> = {}): SearchRequest => ({ id, settingsId: 1, owner: 1, generation: 1, params: params('tables'), ...extra });
  const first = state.handle(req(1, { settings: defaultSettings(), snapshot: spec }));
  t.ok('result' in first && first.result.totalResults === 2);
  snap.segments[0]!.reader.close();
  t.equal(state.dropRetired(), 1);
  t.equal(state.snapshots.openFiles().length, 0, 'its only generation: every reader closed');
  const spec2 = { ...spec, generation: 2, segments: spec.segments.slice(1) };
  t.same(state.handle(req(2, { generation: 2 })), { id: 2, missing: true }, 'a new generation is asked for');
  const second = state.handle(req(3, { generation: 2, snapshot: spec2 }));
  t.ok('result' in second && second.result.totalResults === 1, 'answers from the remaining segments');
});

t.test('a search thread closes a retired segment\'s reader without any further request', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const worker = startThread(import.meta.url, '../../workers/search');
  t.teardown(() => worker.terminate());
  const ask = async (req: SearchRequest): Promise<SearchReply> => {
    worker.postMessage(req);
    const [reply] = (await once(worker, 'message')) as [SearchReply];
    return reply;
  };
  const spec = snapshotSpec(snap, 1);
  const req = (id: number, extra: Partial<SearchRequest> = {}): SearchRequest => ({ id, settingsId: 1, owner: 1, generation: 1, params: params('tables'), ...extra });
  const first = await ask(req(1, { settings: defaultSettings(), snapshot: spec }));
  t.ok('result' in first && first.result.totalResults === 2, 'generation opened in the thread');
  const kept = await ask(req(2));
  t.ok('result' in kept, 'and kept');
  snap.segments[0]!.reader.close();
  // The thread checks its retired flags on a timer (RETIRED_CHECK_MS): poll until it has
  // dropped the generation (it then asks for it again), bounded so a regression fails.
  let id = 3;
  let reply: SearchReply;
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    reply = await ask(req(id++));
    if ('missing' in reply || id > 100) break;
  }
  t.ok('missing' in reply, 'the thread dropped the generation listing the retired segment');
});
