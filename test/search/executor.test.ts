import fs from 'node:fs';
import t from 'tap';
import { createSearchExecutor, LocalSearchExecutor, ThreadSearchExecutor } from '../../src/search/executor.js';
import { SearchThreadState, sharedBitmap, snapshotSpec, ThreadSnapshots, IDLE_SNAPSHOT_MS, type SearchRequest } from '../../src/search/remote.js';
import type { SearchParams } from '../../src/search/service.js';
import { defaultSettings } from '../../src/projects/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import type { Settings } from '../../src/core/index.js';

// Three segments with a replaced page and a deleted page, so tombstones matter.
const batches = [
  [
    makeDoc('https://s.test/create-table', 'CREATE TABLE', 'Define a new table with columns and constraints.', { headings: ['Synopsis'] }),
    makeDoc('https://s.test/create-index', 'CREATE INDEX', 'Define a new index on a table.', { contentGroup: 'Reference' }),
    makeDoc('https://s.test/vacuum', 'Routine Vacuuming', 'Vacuum reclaims storage occupied by dead tuples.'),
  ],
  [
    makeDoc('https://s.test/create-index', 'CREATE INDEX', 'Define a new index on a table; replaced copy about btree.', { contentGroup: 'Reference' }),
    makeDoc('https://s.test/tables', 'Tables', 'Tables, columns and constraints <b>bold</b>.', { contentGroup: 'Guide' }),
    makeDoc('https://s.test/views', 'Views', 'A view is a stored query over tables.', { contentGroup: 'Guide' }),
  ],
  [{ delete: 'https://s.test/vacuum' }, makeDoc('https://s.test/indexes', 'Indexes', 'An index speeds up queries on a table.')],
];

const params = (query: string, extra: Partial<SearchParams> = {}): SearchParams => ({
  query, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC', offset: 0, limit: 10,
  includeContent: true, highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null,
  groupResults: true, limitPerGroup: false, ...extra,
});

const QUERIES = ['table', 'create', 'crea', 'tabel', 'vacuum', 'index btree', '"new table"', 'table -index', '*', 'zzz'];

t.test('search threads answer exactly what the main thread answers', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const settings: Settings = defaultSettings();
  const local = new LocalSearchExecutor();
  const threads = new ThreadSearchExecutor(2);
  t.teardown(() => threads.close());
  t.equal(threads.threads, 2);
  const owner = {};
  let compared = 0;
  for (const q of QUERIES) {
    for (const extra of [{}, { groupResults: false, limit: 2, offset: 1 }, { limitPerGroup: true, limit: 1 }]) {
      const a = await local.run(owner, snap, settings, params(q, extra));
      const b = await threads.run(owner, snap, settings, params(q, extra));
      t.equal(b.json, a.json, `same body for ${q} ${JSON.stringify(extra)}`);
      t.equal(b.totalResults, a.totalResults);
      t.same(b.sortingOptions, a.sortingOptions);
      compared++;
    }
  }
  t.equal(compared, QUERIES.length * 3);
  // The tombstones were honoured on the thread: the deleted page is not found, the replaced one once.
  const vac = JSON.parse((await threads.run(owner, snap, settings, params('vacuum'))).json);
  t.equal(vac.totalResults, 0, 'deleted page stays deleted');
  const idx = JSON.parse((await threads.run(owner, snap, settings, params('btree'))).json);
  t.equal(idx.totalResults, 1, 'replacement found once');
});

t.test('searches that come one at a time all run on one thread; concurrent ones use every thread', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const settings = defaultSettings();
  const threads = new ThreadSearchExecutor(2);
  t.teardown(() => threads.close());
  // Reach the threads (not part of the API): a thread was sent the generation iff it searched it.
  const all = (threads as unknown as { all: Array<{ sentSnapshots: Set<string> }> }).all;
  const searched = () => all.map((x) => x.sentSnapshots.size);
  const owner = {};
  for (const q of QUERIES) await threads.run(owner, snap, settings, params(q));
  t.same(searched().sort(), [0, 1], 'sequential searches: the thread idle most recently takes each one, the other opens nothing');
  const both = await Promise.all([threads.run(owner, snap, settings, params('table')), threads.run(owner, snap, settings, params('tabel'))]);
  t.equal(both.length, 2);
  t.same(searched(), [1, 1], 'two at once: the second thread joins');
});

t.test('createSearchExecutor: 0 threads searches on the main thread', async (t) => {
  const e = createSearchExecutor(0);
  t.equal(e.threads, 0);
  t.ok(e instanceof LocalSearchExecutor);
  await e.close();
  const p = createSearchExecutor(1);
  t.equal(p.threads, 1);
  t.ok(p instanceof ThreadSearchExecutor);
  await p.close();
});

t.test('ThreadSnapshots reuses readers across generations and closes unused ones', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  let now = 1_000_000;
  const cache = new ThreadSnapshots(() => now);
  t.teardown(() => cache.close());
  const spec1 = snapshotSpec(snap, 7);
  const s1 = cache.get(spec1);
  t.equal(cache.get(spec1), s1, 'same generation: same snapshot object (warm caches)');
  t.equal(cache.openFiles().length, 3);
  // A later generation without the first segment: the shared readers are reused.
  const spec2 = { ...spec1, generation: 2, segments: spec1.segments.slice(1) };
  const s2 = cache.get(spec2);
  t.equal(s2.segments[0]!.reader, s1.segments[1]!.reader, 'reader shared between generations');
  t.equal(cache.openFiles().length, 3, 'generation 1 still cached');
  // Only the newest few generations of one owner are kept.
  for (let g = 3; g <= 5; g++) cache.get({ ...spec2, generation: g });
  t.equal(cache.openFiles().length, 2, 'generation 1 dropped: its first segment closed');
  now += IDLE_SNAPSHOT_MS - 1;
  t.equal(cache.sweep(), 0, 'nothing idle yet');
  now += 2;
  t.equal(cache.sweep(), 2, 'idle older generations (3 and 4) dropped');
  t.equal(cache.openFiles().length, 2, 'the newest generation stays open while its files exist');
  t.ok(cache.find(7, 5), 'and is found warm however long it was idle');
  now += 10 * IDLE_SNAPSHOT_MS;
  t.equal(cache.sweep(), 0, 'still kept after a long idle');
  // A merge retired one of its segments and the main thread deleted the file.
  fs.rmSync(spec2.segments[0]!.path);
  now += IDLE_SNAPSHOT_MS + 1;
  t.equal(cache.sweep(), 1, 'a generation with a deleted file is dropped');
  t.equal(cache.openFiles().length, 0, 'every reader closed');
  // Distinct owners with the same generation number are distinct snapshots.
  const kept = spec1.segments.filter((s) => fs.existsSync(s.path));
  const a = cache.get({ ...spec1, segments: kept, owner: 1 });
  const b = cache.get({ ...spec1, segments: kept, owner: 2 });
  t.not(a, b);
  t.not(cache.owner(1), cache.owner(2));
  t.equal(cache.owner(1), cache.owner(1));
});

t.test('a missing segment file fails without leaking readers', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const cache = new ThreadSnapshots();
  const spec = snapshotSpec(snap, 1);
  spec.segments.push({ ...spec.segments[0]!, id: 'gone', path: '/nonexistent/x.seg' });
  t.throws(() => cache.get(spec));
  t.equal(cache.openFiles().length, 0);
});

t.test('SearchThreadState answers requests, keeps settings and generations, reports what it lacks', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const state = new SearchThreadState();
  t.teardown(() => state.close());
  const spec = snapshotSpec(snap, 1);
  const req = (id: number, extra: Partial<SearchRequest> = {}): SearchRequest => ({ id, settingsId: 5, owner: 1, generation: spec.generation, params: params('table'), ...extra });
  t.same(state.handle(req(1)), { id: 1, missing: true }, 'neither settings nor generation sent yet');
  t.same(state.handle(req(2, { settings: defaultSettings() })), { id: 2, missing: true }, 'generation still missing');
  const full = state.handle(req(3, { snapshot: spec }));
  t.ok('result' in full && full.result.totalResults > 0, 'settings kept from request 2, generation opened');
  const again = state.handle(req(4));
  t.ok('result' in again && 'result' in full && again.result.json === full.result.json, 'both kept: ids alone suffice');
  t.same(state.handle(req(5, { settingsId: 6 })), { id: 5, missing: true }, 'another settings version is not guessed');
  t.same(state.handle(req(6, { owner: 2 })), { id: 6, missing: true }, 'another project is not guessed');
  // Broken settings make the service throw: the reply carries the error (the route answers 500).
  const broken = { ...defaultSettings(), search: null } as unknown as Settings;
  const err = state.handle(req(7, { settingsId: 9, settings: broken }));
  t.ok('error' in err && err.error.message.length > 0 && err.id === 7);
});

t.test('search threads: a dropped generation or new settings are sent again; failures reject', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const local = new LocalSearchExecutor();
  const threads = new ThreadSearchExecutor(1);
  t.teardown(() => threads.close());
  const owner = {};
  const settings = defaultSettings();
  const gen = (g: number) => ({ ...snap, generation: g });
  const first = await threads.run(owner, gen(1), settings, params('tabel'));
  t.equal(first.json, (await local.run(owner, gen(1), settings, params('tabel'))).json);
  // The thread keeps the newest 3 generations of a project: 2..5 push generation 1 out, while
  // the main thread still remembers having sent it (the thread answers `missing`, gets it again).
  for (let g = 2; g <= 5; g++) await threads.run(owner, gen(g), settings, params('table'));
  t.equal((await threads.run(owner, gen(1), settings, params('tabel'))).json, first.json, 'resent after the thread dropped it');
  // New settings (a new object: a new version) reach the thread.
  const strict: Settings = { ...settings, search: { ...settings.search, typoTolerance: 'off' } };
  const off = await threads.run(owner, gen(1), strict, params('tabel'));
  t.equal(off.json, (await local.run(owner, gen(1), strict, params('tabel'))).json);
  t.not(off.totalResults, first.totalResults, 'typo tolerance off: the typo no longer matches');
  const broken = { ...settings, search: null } as unknown as Settings;
  await t.rejects(threads.run(owner, gen(1), broken, params('table')), 'a failing search rejects');
  t.equal((await threads.run(owner, gen(1), settings, params('tabel'))).json, first.json, 'the thread keeps serving');
  // Requests beyond the one thread queue and all settle; close() waits for them.
  const many = QUERIES.map((q) => threads.run(owner, gen(1), settings, params(q)));
  const closed = threads.close();
  const answers = await Promise.all(many);
  await closed;
  for (let i = 0; i < QUERIES.length; i++) t.equal(answers[i]!.json, (await local.run(owner, gen(1), settings, params(QUERIES[i]!))).json);
  await t.rejects(threads.run(owner, gen(1), settings, params('table')), 'closed');
});

t.test('sharedBitmap copies a bitmap into shared memory once', async (t) => {
  const dead = new Uint8Array([0, 1, 0, 1]);
  const s = sharedBitmap(dead);
  t.ok(s.buffer instanceof SharedArrayBuffer);
  t.same([...s], [0, 1, 0, 1]);
  t.equal(sharedBitmap(dead), s, 'cached per bitmap object');
  t.equal(sharedBitmap(s), s, 'already shared');
  t.equal(sharedBitmap(new Uint8Array(0)).length, 0);
});

t.test('a search thread that dies is replaced', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const threads = new ThreadSearchExecutor(1);
  t.teardown(() => threads.close());
  const owner = {};
  const before = await threads.run(owner, snap, defaultSettings(), params('table'));
  // Reach the thread's Worker (not part of the API) to end it as a crash would.
  const worker = (threads as unknown as { all: Array<{ worker: { terminate(): Promise<number>; threadId: number } }> }).all[0]!.worker;
  const deadId = worker.threadId;
  await worker.terminate();
  const after = await threads.run(owner, snap, defaultSettings(), params('table'));
  t.equal(after.json, before.json, 'a fresh thread answers');
  t.not((threads as unknown as { all: Array<{ worker: { threadId: number } }> }).all[0]!.worker.threadId, deadId, 'on a new thread');
});

t.test('threads that keep dying are not restarted forever: searches then fail at once', async (t) => {
  const snap = snapshotOf(batches);
  t.teardown(() => snap.cleanup());
  const threads = new ThreadSearchExecutor(1);
  t.teardown(() => threads.close());
  const all = (threads as unknown as { all: Array<{ worker: { terminate(): Promise<number> } }> }).all;
  // Kill each replacement before it answers anything: 5 restarts, then none.
  let kills = 0;
  while (all.length > 0 && kills < 20) {
    const victim = all[0]!;
    await victim.worker.terminate();
    kills++;
    // The exit event is delivered asynchronously: wait until the executor has handled it.
    for (let i = 0; i < 1000 && all[0] === victim; i++) await new Promise((r) => setImmediate(r));
  }
  t.equal(kills, 6, 'the first thread and 5 replacements');
  await t.rejects(threads.run({}, snap, defaultSettings(), params('table')), /keep failing/);
});
