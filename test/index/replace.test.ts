/**
 * Bulk replace (SegmentStore.beginReplace / writeReplace / commitReplace / abortReplace): a
 * staging index is built beside the live one and swapped in by one manifest commit.
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';
import type { SegmentStore } from '../../src/index/store.js';

const OLD = ['https://r.test/keep', 'https://r.test/old-1', 'https://r.test/old-2', 'https://r.test/old-3'];
const NEW = ['https://r.test/keep', 'https://r.test/new-1', 'https://r.test/new-2'];

async function seeded(t: { teardown(fn: () => Promise<void> | void): void }): Promise<{ store: SegmentStore; dir: string; pool: ReturnType<typeof realPool> }> {
  const dir = tempDir(t);
  const pool = realPool(t);
  const store = await openStore(dir, pool);
  await store.write(OLD.map((url) => ({ op: 'upsert', doc: doc(url, `old version of ${url}`) })));
  await store.flush();
  return { store, dir, pool };
}

function urlsOf(store: SegmentStore): string[] {
  const snap = store.acquire();
  try {
    return [...liveRows(snap).keys()].sort();
  } finally {
    snap.release();
  }
}

t.test('staged pages are invisible until the commit; then exactly they are live, reopen included', async (t) => {
  const { store, dir, pool } = await seeded(t);
  const id = await store.beginReplace();
  await store.writeReplace(id, NEW.map((url) => ({ op: 'upsert', doc: doc(url, `new version of ${url}`) })));
  t.same(urlsOf(store), OLD, 'searches keep the live index while the staging one is filled');
  t.equal(store.stats().pages, OLD.length);
  const r = await store.commitReplace(id);
  t.same(urlsOf(store), NEW);
  t.same(r, { pages: NEW.length, removed: 3, mirrored: 0 });
  const snap = store.acquire();
  t.equal(liveRows(snap).get('https://r.test/keep')!.content, 'new version of https://r.test/keep');
  t.equal(snap.totalDocs, NEW.length, 'statistics come from the new segments only');
  snap.release();
  t.same([...store.urls()].sort(), NEW, 'the acknowledged view (reports) follows the swap');
  t.notOk(store.has('https://r.test/old-1'));
  t.notOk(fs.existsSync(path.join(dir, 'replace')), 'the staging folder is gone');
  // A write after the swap wins over the staged row of the same URL (one seq order).
  await store.write([{ op: 'upsert', doc: doc('https://r.test/new-1', 'after the swap') }]);
  await store.flush();
  const after = store.acquire();
  t.equal(liveRows(after).get('https://r.test/new-1')!.content, 'after the swap');
  after.release();
  await store.close();
  const again = await openStore(dir, pool);
  t.same(urlsOf(again), NEW);
  t.same(again.listEntries({}).rows.map((x) => x.url), NEW);
  await again.close();
});

t.test('writes to the live index during the rebuild are searchable at once and survive the swap', async (t) => {
  const { store } = await seeded(t);
  const id = await store.beginReplace();
  await store.writeReplace(id, NEW.map((url) => ({ op: 'upsert', doc: doc(url, `from the file ${url}`) })));
  // A new page, an update of a page the file also has, and a removal of a page the file has.
  await store.write([
    { op: 'upsert', doc: doc('https://r.test/live-new', 'pushed during the rebuild') },
    { op: 'upsert', doc: doc('https://r.test/keep', 'updated during the rebuild') },
    { op: 'delete', url: 'https://r.test/new-2' },
  ]);
  await store.flush();
  t.ok(urlsOf(store).includes('https://r.test/live-new'), 'the live write is searchable before the swap');
  // And a removal by pattern that only matches staged pages.
  t.equal(await store.deleteWhere((u) => u.endsWith('/new-1')), 0, 'no live page matches');
  const r = await store.commitReplace(id);
  t.equal(r.mirrored, 1, 'the live write was applied to the staging index');
  const snap = store.acquire();
  const rows = liveRows(snap);
  snap.release();
  t.same([...rows.keys()].sort(), ['https://r.test/keep', 'https://r.test/live-new']);
  t.equal(rows.get('https://r.test/keep')!.content, 'updated during the rebuild', 'the newer write wins over the file');
  await store.close();
});

t.test('writes arriving during the swap wait for it and land on the new index', async (t) => {
  const { store } = await seeded(t);
  const id = await store.beginReplace();
  await store.writeReplace(id, NEW.map((url) => ({ op: 'upsert', doc: doc(url, 'file') })));
  const swap = store.commitReplace(id);
  const during = store.write([{ op: 'upsert', doc: doc('https://r.test/during', 'written while swapping') }]);
  await swap;
  await store.waitSearchable(await during);
  t.ok(urlsOf(store).includes('https://r.test/during'));
  await store.close();
});

t.test('no search sees a mix of old and new or an empty index while the swap runs', async (t) => {
  const { store } = await seeded(t);
  const id = await store.beginReplace();
  await store.writeReplace(id, NEW.map((url) => ({ op: 'upsert', doc: doc(url, 'file') })));
  const seen = new Set<string>();
  let done = false;
  let samples = 0;
  const sampler = (async () => {
    while (!done) {
      seen.add(urlsOf(store).join(' '));
      samples++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  await store.commitReplace(id);
  done = true;
  await sampler;
  seen.add(urlsOf(store).join(' '));
  t.ok(samples > 1);
  t.same([...seen].sort(), [NEW.join(' '), OLD.join(' ')].sort(), 'every snapshot is the old set or the new set');
  await store.close();
});

t.test('abort, a second replace, and a replace abandoned by a restart leave the live index alone', async (t) => {
  const { store, dir, pool } = await seeded(t);
  const id = await store.beginReplace();
  await t.rejects(store.beginReplace(), { code: 'conflict' });
  await store.writeReplace(id, [{ op: 'upsert', doc: doc('https://r.test/x', 'x') }]);
  await store.abortReplace(id);
  await t.rejects(store.commitReplace(id), { code: 'not_found' });
  t.same(urlsOf(store), OLD);
  const id2 = await store.beginReplace();
  await store.writeReplace(id2, [{ op: 'upsert', doc: doc('https://r.test/y', 'y') }]);
  await store.close();
  const again = await openStore(dir, pool);
  t.same(urlsOf(again), OLD, 'an uncommitted replace is not applied at the next open');
  t.notOk(fs.existsSync(path.join(dir, 'replace')));
  await again.close();
});
