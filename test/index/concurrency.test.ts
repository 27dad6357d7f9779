/**
 * Parallel writers, deleters and readers while refreshes and merges run in the pool; afterwards
 * (and after reopening) the live state equals a model built from the acknowledged seqs.
 */
import t from 'tap';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';
import type { WriteOp } from '../../src/index/contract.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const tick = () => new Promise<void>((r) => setImmediate(r));

t.test('concurrent writes, deletes, reads and merges', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t, 2);
  const store = await openStore(dir, pool, { refreshMs: 5, mergePolicy: { segmentsPerTier: 3, maxMergeAtOnce: 4, floorBytes: 1 } });
  const urls = Array.from({ length: 80 }, (_, i) => `https://c.test/page-${i}`);
  /** url → [seq, content | null] of the highest acknowledged seq. */
  const model = new Map<string, [number, string | null]>();
  const record = (ops: WriteOp[], lastSeq: number) => {
    ops.forEach((op, i) => {
      const seq = lastSeq - ops.length + 1 + i;
      const url = op.op === 'upsert' ? op.doc.url : op.url;
      const prev = model.get(url);
      if (!prev || prev[0] < seq) model.set(url, [seq, op.op === 'upsert' ? op.doc.content : null]);
    });
  };

  let done = false;
  let merges = 0;
  let reads = 0;
  const merger = (async () => {
    while (!done) {
      const before = store.position.generation;
      await store.merge();
      if (store.position.generation !== before) merges++;
      await tick();
    }
  })();
  const readers = [1, 2].map(async () => {
    for (let n = 0; !done; n++) {
      await tick();
      // Reading every stored row is slow; check every 10th pin, pin and release every time.
      const snap = store.acquire();
      if (n % 10 !== 0) {
        snap.release();
        continue;
      }
      try {
        const rows = liveRows(snap); // throws when a URL is live twice in one generation
        const searchable = [...rows.values()].filter((r) => r.status === 200).length;
        if (searchable !== snap.totalDocs) throw new Error(`totalDocs ${snap.totalDocs} != ${searchable} live rows`);
        reads++;
      } finally {
        snap.release();
      }
    }
  });
  const writers = [0, 1, 2, 3].map(async (w) => {
    const rand = rng(w + 1);
    for (let b = 0; b < 30; b++) {
      const ops: WriteOp[] = [];
      for (let i = 0; i < 3; i++) {
        const url = urls[Math.floor(rand() * urls.length)]!;
        ops.push({ op: 'upsert', doc: doc(url, `writer ${w} batch ${b} op ${i}`, rand() < 0.1 ? { status: 503, message: 'down' } : {}) });
      }
      const seq = await store.write(ops);
      record(ops, seq);
      if (b % 10 === 9) await store.waitSearchable(seq); // refresh=true callers
    }
  });
  const deleters = [10, 11].map(async (d) => {
    const rand = rng(d);
    for (let b = 0; b < 25; b++) {
      const ops: WriteOp[] = [{ op: 'delete', url: urls[Math.floor(rand() * urls.length)]! }];
      if (rand() < 0.3) ops.push({ op: 'delete', url: urls[Math.floor(rand() * urls.length)]! });
      const seq = await store.write(ops);
      record(ops, seq);
      await tick();
    }
  });
  await Promise.all([...writers, ...deleters]);
  done = true;
  await Promise.all([merger, ...readers]);
  await store.flush();
  t.ok(reads > 0, `${reads} consistent reads during the run`);
  t.comment(`${merges} merge commits during the run`);

  const expected = new Map([...model].filter(([, v]) => v[1] !== null).map(([u, v]) => [u, v[1] as string]));
  const check = (label: string, s: typeof store) => {
    const snap = s.acquire();
    try {
      const rows = liveRows(snap);
      t.same(new Map([...rows].map(([u, r]) => [u, r.content])), expected, `${label}: newest content by seq for every live URL`);
      t.same(new Set(s.urls()), new Set(expected.keys()), `${label}: acknowledged view`);
      t.equal(snap.totalDocs, [...rows.values()].filter((r) => r.status === 200).length, `${label}: totalDocs`);
    } finally {
      snap.release();
    }
  };
  check('after the run', store);
  await store.merge({ full: true });
  check('after a full merge', store);
  await store.close();
  const again = await openStore(dir, pool);
  check('after reopening', again);
  await again.close();
});
