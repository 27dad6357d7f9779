import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';
import type { TaskPool } from '../../src/index/tasks.js';
import type { WriteOp } from '../../src/index/contract.js';
import { MAX_SEGMENTS_DEFERRING_MERGES, MERGE_ON_FLUSH_SEGMENTS, type SegmentStore } from '../../src/index/store.js';

/** Wraps the real pool; results of `taskName` tasks are held until `release()` is called. */
function gatedPool(inner: TaskPool, taskName = 'merge-segments') {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let started!: () => void;
  const mergeStarted = new Promise<void>((r) => (started = r));
  const pool: TaskPool = {
    async run(task) {
      const result = await inner.run(task);
      if ((task as { task?: string }).task === taskName) {
        started();
        await gate;
      }
      return result;
    },
  };
  return { pool, release: () => open(), mergeStarted };
}

async function writeAndFlush(store: SegmentStore, ops: WriteOp[]): Promise<void> {
  await store.write(ops);
  await store.flush();
}

t.test('writes and deletes that arrive during a merge are not lost', async (t) => {
  const dir = tempDir(t);
  const gated = gatedPool(realPool(t));
  const store = await openStore(dir, gated.pool);
  for (let s = 0; s < 3; s++) {
    await writeAndFlush(store, [0, 1, 2].map((i) => ({ op: 'upsert', doc: doc(`https://m.test/${s}-${i}`, `seg ${s} doc ${i} v1`) }) as WriteOp));
  }
  // A delete marker in a source segment whose older row lives in another source segment.
  await writeAndFlush(store, [{ op: 'delete', url: 'https://m.test/0-0' }]);
  t.equal(store.segments().length, 4);

  const merging = store.merge({ full: true });
  await gated.mergeStarted; // the merged file is written; its commit waits for the gate
  await writeAndFlush(store, [
    { op: 'upsert', doc: doc('https://m.test/1-1', 'updated during the merge') },
    { op: 'delete', url: 'https://m.test/2-2' },
    { op: 'upsert', doc: doc('https://m.test/new', 'added during the merge') },
  ]);
  await store.write([{ op: 'delete', url: 'https://m.test/1-2' }]); // acknowledged, not yet published
  gated.release();
  await merging;
  await store.flush();

  const expected = new Map<string, string>();
  for (let s = 0; s < 3; s++) for (let i = 0; i < 3; i++) expected.set(`https://m.test/${s}-${i}`, `seg ${s} doc ${i} v1`);
  expected.delete('https://m.test/0-0');
  expected.set('https://m.test/1-1', 'updated during the merge');
  expected.delete('https://m.test/2-2');
  expected.delete('https://m.test/1-2');
  expected.set('https://m.test/new', 'added during the merge');

  const check = (s: SegmentStore, label: string) => {
    const snap = s.acquire();
    try {
      const rows = liveRows(snap);
      t.same(new Map([...rows].map(([u, r]) => [u, r.content])), expected, `${label}: live rows`);
      t.equal(snap.totalDocs, expected.size, `${label}: totalDocs`);
      t.same(new Set(s.urls()), new Set(expected.keys()), `${label}: acknowledged view`);
    } finally {
      snap.release();
    }
  };
  check(store, 'after the merge');
  const merged = store.segments().find((s) => s.id.startsWith('m'));
  t.ok(merged, 'the merged segment is published');
  t.equal(merged!.docCount, 8, 'merged copies of the 8 rows live at merge start');
  t.equal(merged!.deadCount, 3, 'rows replaced or deleted during the merge are dead in the merged segment');
  t.equal(merged!.deleteCount, 0, 'the delete marker was dropped: no older row is left outside the merge');
  await store.close();

  const again = await openStore(dir, realPool(t));
  check(again, 'after reopening');
  await again.merge({ full: true });
  check(again, 'after a second full merge');
  t.equal(again.segments().length, 1);
  t.equal(again.segments()[0]!.deadCount, 0);
  await again.close();
});

t.test('a partial merge keeps delete markers that still shadow rows outside the merge', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  // Two segments allowed; the big one is over half of maxMergedBytes, so only the small ones merge.
  const store = await openStore(dir, pool, { mergePolicy: { segmentsPerTier: 2, floorBytes: 1, maxMergedBytes: 1024 * 1024 } });
  const words = (i: number) => Array.from({ length: 120 }, (_, j) => `w${(i * 131 + j * 7) % 5000}`).join(' ');
  await writeAndFlush(store, Array.from({ length: 400 }, (_, i) => ({ op: 'upsert', doc: doc(`https://p.test/${i}`, words(i)) }) as WriteOp));
  t.ok(store.segments()[0]!.bytes > 512 * 1024, 'the first segment is big');
  await writeAndFlush(store, [{ op: 'delete', url: 'https://p.test/0' }]);
  await writeAndFlush(store, [{ op: 'upsert', doc: doc('https://p.test/x', 'small') }]);
  const big = store.segments()[0]!.id;
  await store.merge();
  const segs = store.segments();
  t.ok(segs.some((s) => s.id === big), 'the big segment was not part of the merge');
  t.ok(segs.length < 3, 'the small ones were merged');
  t.equal(segs.find((s) => s.id !== big)?.deleteCount, 1, 'the marker for the row in the big segment is kept');
  t.notOk(store.has('https://p.test/0'));
  await store.close();
  const again = await openStore(dir, pool);
  t.notOk(again.has('https://p.test/0'), 'still deleted after reopening');
  const snap = again.acquire();
  t.notOk(liveRows(snap).has('https://p.test/0'));
  snap.release();
  await again.close();
});

t.test('a pinned generation keeps its files until the last release', async (t) => {
  const dir = tempDir(t);
  const store = await openStore(dir, realPool(t));
  await writeAndFlush(store, [{ op: 'upsert', doc: doc('https://g.test/1', 'one') }]);
  await writeAndFlush(store, [{ op: 'upsert', doc: doc('https://g.test/2', 'two') }]);
  const segDir = path.join(dir, 'segments');
  const before = fs.readdirSync(segDir).sort();
  const pinned = store.acquire();
  const pinned2 = store.acquire();
  await store.merge({ full: true });
  t.equal(store.segments().length, 1);
  t.equal(store.gc(), 0, 'gc leaves pinned files alone');
  for (const f of before) t.ok(fs.existsSync(path.join(segDir, f)), `${f} kept while pinned`);
  t.same([...liveRows(pinned).keys()].sort(), ['https://g.test/1', 'https://g.test/2'], 'the pinned readers still work');
  pinned.release();
  pinned.release(); // idempotent: does not drop the second pin
  for (const f of before) t.ok(fs.existsSync(path.join(segDir, f)), `${f} kept while one pin remains`);
  pinned2.release();
  for (const f of before) t.notOk(fs.existsSync(path.join(segDir, f)), `${f} deleted after the last release`);
  t.equal(fs.readdirSync(segDir).length, 1);
  const snap = store.acquire();
  t.equal(snap.totalDocs, 2);
  snap.release();
  await store.close();
});

t.test('close does not wait forever for a slow build; the write log keeps the ops', async (t) => {
  const dir = tempDir(t);
  const real = realPool(t);
  const gated = gatedPool(real, 'build-segment');
  const store = await openStore(dir, gated.pool);
  await store.write([{ op: 'upsert', doc: doc('https://slow.test/1', 'slow') }]);
  const flushing = store.flush();
  await gated.mergeStarted; // the build finished in the worker; its result is held
  await store.close({ timeoutMs: 20 });
  gated.release();
  await t.rejects(flushing, /closed/, 'the held build is abandoned, not published');
  t.same(fs.readdirSync(path.join(dir, 'segments')), [], 'its temp file is removed');
  const again = await openStore(dir, real);
  t.ok(again.has('https://slow.test/1'), 'replayed from the write log');
  const snap = again.acquire();
  t.equal(snap.totalDocs, 1);
  snap.release();
  await again.close();
});

/** Wraps the real pool; while `hold()` is in effect, build results wait for `release()`. */
function holdablePool(inner: TaskPool) {
  let gate: Promise<void> | null = null;
  let open = () => {};
  let held: Promise<void> = Promise.resolve();
  let announce = () => {};
  const pool: TaskPool = {
    async run(task) {
      const result = await inner.run(task);
      if ((task as { task?: string }).task === 'build-segment' && gate) {
        announce();
        await gate;
      }
      return result;
    },
  };
  return {
    pool,
    hold() {
      gate = new Promise<void>((r) => (open = r));
      held = new Promise<void>((r) => (announce = r));
    },
    /** Resolves once a build is being held. */
    held: () => held,
    release() {
      gate = null;
      open();
    },
  };
}

t.test('policy merges wait while segment builds are behind, and run once they caught up', async (t) => {
  const h = holdablePool(realPool(t));
  const store = await openStore(tempDir(t), h.pool, {
    maxBufferedDocs: 8,
    mergePolicy: { segmentsPerTier: 2, floorBytes: 1 },
  });
  t.teardown(() => h.release());
  for (let s = 0; s < 4; s++) await writeAndFlush(store, [{ op: 'upsert', doc: doc(`https://d.test/${s}`, `seg ${s}`) }] as WriteOp[]);
  t.equal(store.segments().length, 4);
  t.ok(store.mergeDue(), 'the policy wants a merge while nothing is being built');

  // Half a buffer (4 of 8) starts a build at once; hold it: builds are now behind.
  h.hold();
  const seq = await store.write([0, 1, 2, 3].map((i) => ({ op: 'upsert', doc: doc(`https://d.test/b${i}`, `bulk ${i}`) }) as WriteOp));
  await h.held();
  t.notOk(store.mergeDue(), 'no policy merge is due while a build is behind');
  await store.merge();
  t.equal(store.segments().length, 4, 'merge() did not merge');

  h.release();
  await store.waitSearchable(seq);
  t.equal(store.segments().length, 5);
  t.ok(store.mergeDue(), 'due again once the build is published');
  await store.merge();
  t.ok(store.segments().length < 5, `merged after catching up (${store.segments().length} segments)`);
  const snap = store.acquire();
  t.equal(liveRows(snap).size, 8);
  snap.release();
  await store.close();
});

/** A pool that passes tasks to `inner` and resolves `mergeDone` once a merge task has finished. */
function signallingMerges(inner: TaskPool): { pool: TaskPool; mergeDone: Promise<void> } {
  let merged!: () => void;
  const mergeDone = new Promise<void>((r) => (merged = r));
  const pool: TaskPool = {
    async run(task) {
      const result = await inner.run(task);
      if ((task as { task?: string }).task === 'merge-segments') merged();
      return result;
    },
  };
  return { pool, mergeDone };
}

t.test('mergeOnFlush: a flush reaching the segment bound runs the policy without anyone calling merge()', async (t) => {
  const { pool, mergeDone } = signallingMerges(realPool(t));
  const store = await openStore(tempDir(t), pool, { mergeOnFlush: true, mergePolicy: { segmentsPerTier: 2, floorBytes: 1 } });
  for (let s = 0; s < MERGE_ON_FLUSH_SEGMENTS - 1; s++) {
    await writeAndFlush(store, [{ op: 'upsert', doc: doc(`https://f.test/${s}`, `flush ${s}`) }] as WriteOp[]);
  }
  t.equal(store.segments().length, MERGE_ON_FLUSH_SEGMENTS - 1, 'below the bound the flushes merge nothing');
  await writeAndFlush(store, [{ op: 'upsert', doc: doc('https://f.test/last', 'flush last') }] as WriteOp[]);
  await mergeDone;
  await store.merge(); // waits for the queued policy run to finish
  t.ok(store.segments().length < MERGE_ON_FLUSH_SEGMENTS, `merged after the flush that reached the bound (${store.segments().length} segments)`);
  const snap = store.acquire();
  t.equal(liveRows(snap).size, MERGE_ON_FLUSH_SEGMENTS);
  snap.release();
  await store.close();
});

t.test('mergeOnFlush: no merge starts after a bulk flush while documents keep arriving (import still flowing)', async (t) => {
  const h = holdablePool(realPool(t));
  const tasks: string[] = [];
  let merged!: () => void;
  const mergeDone = new Promise<void>((r) => (merged = r));
  const pool: TaskPool = {
    async run(task) {
      const name = (task as { task: string }).task;
      tasks.push(name);
      const result = await h.pool.run(task);
      if (name === 'merge-segments') merged();
      return result;
    },
  };
  const logged: string[] = [];
  const log = { info: (m: string) => logged.push(m), warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) };
  const store = await openStore(tempDir(t), pool, { log, mergeOnFlush: true, maxBufferedDocs: 8, mergePolicy: { segmentsPerTier: 2, floorBytes: 1 } });
  t.teardown(() => h.release());
  for (let s = 0; s < MERGE_ON_FLUSH_SEGMENTS - 1; s++) {
    await writeAndFlush(store, [{ op: 'upsert', doc: doc(`https://g.test/${s}`, `flush ${s}`) }] as WriteOp[]);
  }
  tasks.length = 0;
  // Half a buffer starts a bulk build (held); one more document arrives meanwhile: the import
  // still flows, so the flush that publishes the bulk build starts no merge.
  h.hold();
  await store.write([0, 1, 2, 3].map((i) => ({ op: 'upsert', doc: doc(`https://g.test/a${i}`, `bulk a ${i}`) }) as WriteOp));
  await h.held();
  const seq = await store.write([{ op: 'upsert', doc: doc('https://g.test/b', 'bulk b') }] as WriteOp[]);
  h.release();
  await store.waitSearchable(seq);
  await mergeDone;
  await store.merge(); // waits for the queued policy run to finish
  t.same(tasks.slice(0, 3), ['build-segment', 'build-segment', 'merge-segments'], 'the due build ran before any merge');
  t.match(logged.join('\n'), /index test: merged \d+ segments \(\d+ live rows\) in \d+ ms; \d+ segments, 0 documents unpublished/, 'each merge is logged');
  t.ok(store.segments().length < MERGE_ON_FLUSH_SEGMENTS, `merged once the builds caught up (${store.segments().length} segments)`);
  const snap = store.acquire();
  t.equal(liveRows(snap).size, MERGE_ON_FLUSH_SEGMENTS - 1 + 5);
  snap.release();
  await store.close();
});

t.test(`policy merges stop waiting for builds at ${MAX_SEGMENTS_DEFERRING_MERGES} segments`, async (t) => {
  const h = holdablePool(realPool(t));
  const store = await openStore(tempDir(t), h.pool, { maxBufferedDocs: 8, mergePolicy: { segmentsPerTier: 2, floorBytes: 1 } });
  t.teardown(() => h.release());
  for (let s = 0; s < MAX_SEGMENTS_DEFERRING_MERGES - 1; s++) {
    await writeAndFlush(store, [{ op: 'upsert', doc: doc(`https://c.test/${s}`, `seg ${s}`) }] as WriteOp[]);
  }
  h.hold();
  const seq = await store.write([0, 1, 2, 3].map((i) => ({ op: 'upsert', doc: doc(`https://c.test/b${i}`, `bulk ${i}`) }) as WriteOp));
  await h.held();
  t.notOk(store.mergeDue(), `below ${MAX_SEGMENTS_DEFERRING_MERGES} segments merges wait for the held build`);
  // One more segment reaches the bound: written and flushed while the held build still runs.
  h.release();
  await store.waitSearchable(seq);
  t.equal(store.segments().length, MAX_SEGMENTS_DEFERRING_MERGES);
  h.hold();
  const seq2 = await store.write([0, 1, 2, 3].map((i) => ({ op: 'upsert', doc: doc(`https://c.test/c${i}`, `bulk c ${i}`) }) as WriteOp));
  await h.held();
  t.ok(store.mergeDue(), 'at the bound a merge is due although a build is behind');
  h.release();
  await store.waitSearchable(seq2);
  await store.close();
});

t.test('mergeOnFlush: a bulk flush that ends the import (nothing more buffered) starts the merges', async (t) => {
  const { pool, mergeDone } = signallingMerges(realPool(t));
  const store = await openStore(tempDir(t), pool, { mergeOnFlush: true, maxBufferedDocs: 8, mergePolicy: { segmentsPerTier: 2, floorBytes: 1 } });
  for (let s = 0; s < MERGE_ON_FLUSH_SEGMENTS - 1; s++) {
    await writeAndFlush(store, [{ op: 'upsert', doc: doc(`https://e.test/${s}`, `flush ${s}`) }] as WriteOp[]);
  }
  const seq = await store.write([0, 1, 2, 3].map((i) => ({ op: 'upsert', doc: doc(`https://e.test/b${i}`, `bulk ${i}`) }) as WriteOp));
  await store.waitSearchable(seq);
  await mergeDone;
  await store.merge();
  t.ok(store.segments().length < MERGE_ON_FLUSH_SEGMENTS, `merged after the last bulk flush (${store.segments().length} segments)`);
  await store.close();
});

