/**
 * The store's commit step awaits its file work (segment rename, directory fsync, manifest
 * write) instead of blocking the main thread. These tests hold a commit at the manifest's
 * rename (a gate on fs.promises.rename) and check what may happen meanwhile: a second commit
 * waits for the first and never moves committedSeq back, readers keep the old generation, gc
 * keeps a just-renamed segment, and close leaves a state the next open reads whole.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MANIFEST_FILE, readManifest } from '../../src/index/manifest.js';
import type { SegmentStore } from '../../src/index/store.js';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';

/**
 * Holds every rename onto `manifest.json` until `open()`; counts how many were held at once.
 * Restored at teardown.
 */
function manifestGate(t: { teardown(fn: () => void): void }) {
  const rename = fs.promises.rename;
  let release!: () => void;
  let opened = new Promise<void>((r) => (release = r));
  const state = {
    waiting: 0,
    maxWaiting: 0,
    /** Resolves once a manifest rename is held. */
    reached: null as Promise<void> | null,
    open: () => release(),
    close: () => {
      opened = new Promise<void>((r) => (release = r));
    },
  };
  let arrived!: () => void;
  state.reached = new Promise<void>((r) => (arrived = r));
  fs.promises.rename = (async (from: fs.PathLike, to: fs.PathLike) => {
    if (path.basename(String(to)) === MANIFEST_FILE) {
      state.waiting++;
      state.maxWaiting = Math.max(state.maxWaiting, state.waiting);
      arrived();
      await opened;
      state.waiting--;
    }
    return rename(from, to);
  }) as typeof fs.promises.rename;
  t.teardown(() => {
    fs.promises.rename = rename;
  });
  return state;
}

async function write(store: SegmentStore, urls: string[]): Promise<number> {
  return store.write(urls.map((url) => ({ op: 'upsert', doc: doc(url, `content of ${url}`) })));
}

t.test('a merge commit queued behind a flush commit waits for it and keeps its committedSeq', async (t) => {
  const dir = tempDir(t);
  const store = await openStore(dir, realPool(t));
  await write(store, ['https://r.test/1']);
  await store.flush();
  await write(store, ['https://r.test/2']);
  await store.flush();
  const gate = manifestGate(t);
  // Records the committedSeq each commit is called with (the store's private commit chain: the race is inside).
  const calls: number[] = [];
  const internals = (store as unknown as { commits: { commit: (a: unknown, r: unknown, seq: number) => Promise<void> } }).commits;
  const commit = internals.commit;
  internals.commit = function (this: unknown, a: unknown, r: unknown, seq: number) {
    calls.push(seq);
    return commit.call(this, a, r, seq);
  };
  const seq = await write(store, ['https://r.test/3']);
  const flushing = store.flush();
  await gate.reached;
  t.equal(store.position.committedSeq, seq - 1, 'the flush is not published while its manifest write waits');
  // The merge is built now, and asks to commit with the committedSeq it sees: the old one.
  const merging = store.merge({ full: true });
  for (let i = 0; i < 1000 && calls.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
  t.same(calls, [seq, seq - 1], 'the merge asked to commit while the flush commit was held');
  t.equal(gate.waiting, 1, 'the merge commit waits for the chain, not in the manifest write');
  gate.open();
  await Promise.all([flushing, merging]);
  t.equal(gate.maxWaiting, 1, 'never two manifest writes in flight');
  t.equal(store.position.committedSeq, seq, 'committedSeq did not move back');
  const onDisk = readManifest(dir);
  t.equal(onDisk.committedSeq, seq);
  t.equal(onDisk.generation, store.position.generation);
  const snap = store.acquire();
  t.same([...liveRows(snap).keys()].sort(), ['https://r.test/1', 'https://r.test/2', 'https://r.test/3']);
  snap.release();
  await store.close();
  const again = await openStore(dir, realPool(t));
  t.equal(again.position.committedSeq, seq, 'reopened at the same committedSeq');
  const snap2 = again.acquire();
  t.equal(snap2.totalDocs, 3);
  snap2.release();
  await again.close();
});

t.test('readers keep the old generation until the manifest is durable', async (t) => {
  const dir = tempDir(t);
  const store = await openStore(dir, realPool(t));
  await write(store, ['https://g.test/1']);
  await store.flush();
  const gate = manifestGate(t);
  const seq = await write(store, ['https://g.test/2']);
  const searchable = store.waitSearchable(seq).then(() => 'searchable');
  const flushing = store.flush();
  await gate.reached;
  const during = store.acquire();
  t.equal(during.totalDocs, 1, 'a snapshot taken during the commit sees the old generation');
  t.equal(await Promise.race([searchable, new Promise((r) => setImmediate(() => r('waiting')))]), 'waiting');
  gate.open();
  await flushing;
  t.equal(await searchable, 'searchable');
  t.equal(during.totalDocs, 1, 'the pinned snapshot is unchanged');
  t.same([...liveRows(during).keys()], ['https://g.test/1'], 'and its readers still work');
  during.release();
  const after = store.acquire();
  t.equal(after.totalDocs, 2);
  after.release();
  await store.close();
});

t.test('gc between the segment rename and its directory fsync keeps the renamed segment', async (t) => {
  const dir = tempDir(t);
  const store = await openStore(dir, realPool(t));
  const segDir = path.join(dir, 'segments');
  const open = fs.promises.open;
  let held!: () => void;
  const reached = new Promise<void>((r) => (held = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  // The directory fsync after the rename opens segments/ itself: hold that open.
  fs.promises.open = (async (p: fs.PathLike, ...rest: unknown[]) => {
    if (path.resolve(String(p)) === segDir) {
      held();
      await gate;
    }
    return (open as (...a: unknown[]) => Promise<fs.promises.FileHandle>)(p, ...rest);
  }) as typeof fs.promises.open;
  t.teardown(() => {
    fs.promises.open = open;
  });
  await write(store, ['https://c.test/1']);
  const flushing = store.flush();
  await reached;
  const files = fs.readdirSync(segDir).filter((f) => f.endsWith('.seg'));
  t.equal(files.length, 1, 'the new segment is renamed into place');
  t.equal(store.gc(), 0, 'gc removes nothing');
  t.same(fs.readdirSync(segDir).filter((f) => f.endsWith('.seg')), files);
  release();
  await flushing;
  t.equal(store.segments().length, 1);
  t.same(readManifest(dir).segments.map((s) => s.file), files, 'published');
  await store.close();
});

t.test('close during a commit: the next open reads the durable manifest and every segment it lists', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  const store = await openStore(dir, pool);
  const gate = manifestGate(t);
  const seq = await write(store, ['https://x.test/1', 'https://x.test/2']);
  const flushing = store.flush();
  await gate.reached;
  const closing = store.close({ flush: false });
  gate.open();
  await t.rejects(flushing, /closed/);
  await closing;
  const onDisk = readManifest(dir);
  t.equal(onDisk.committedSeq, seq, 'the manifest was written');
  for (const s of onDisk.segments) t.ok(fs.existsSync(path.join(dir, 'segments', s.file)), `${s.file} kept`);
  const again = await openStore(dir, pool);
  const snap = again.acquire();
  t.same([...liveRows(snap).keys()].sort(), ['https://x.test/1', 'https://x.test/2']);
  snap.release();
  await again.close();
});
