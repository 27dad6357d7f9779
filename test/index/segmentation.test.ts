/**
 * The same op sequence indexed as one segment, as many small segments, and as many segments
 * merged by policy, gives the same live rows and the same BM25 statistics (SPEC §5: results
 * do not depend on how the index is split).
 */
import t from 'tap';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';
import type { WriteOp } from '../../src/index/contract.js';
import type { SegmentStore } from '../../src/index/store.js';

function opSequence(): WriteOp[][] {
  const batches: WriteOp[][] = [];
  const words = ['search', 'index', 'segment', 'merge', 'tombstone', 'manifest', 'crawler', 'sitemap', 'query', 'ranking'];
  const text = (n: number) => Array.from({ length: 5 + (n % 17) }, (_, j) => words[(n * 7 + j * 3) % words.length]).join(' ');
  for (let b = 0; b < 24; b++) {
    const ops: WriteOp[] = [];
    for (let i = 0; i < 6; i++) {
      const n = b * 6 + i;
      ops.push({ op: 'upsert', doc: doc(`https://s.test/p${n}`, text(n), { keywords: n % 3 === 0 ? ['kw', 'extra'] : [], headings: n % 4 === 0 ? ['A heading here'] : [] }) });
    }
    if (b > 2) ops.push({ op: 'upsert', doc: doc(`https://s.test/p${b * 2}`, `rewritten ${text(b)} again`) });
    if (b > 3 && b % 2 === 0) ops.push({ op: 'delete', url: `https://s.test/p${b * 3 - 1}` });
    // Non-searchable entries replace searchable ones and must not count in the statistics.
    if (b > 4 && b % 5 === 0) ops.push({ op: 'upsert', doc: doc(`https://s.test/p${b}`, '', { status: 404, message: 'Not found' }) });
    batches.push(ops);
  }
  return batches;
}

async function state(store: SegmentStore) {
  const snap = store.acquire();
  try {
    const rows = liveRows(snap);
    return {
      totalDocs: snap.totalDocs,
      totalLengths: snap.totalLengths,
      rows: [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
      segments: snap.segments.length,
    };
  } finally {
    snap.release();
  }
}

t.test('one segment vs many segments vs merged', async (t) => {
  const pool = realPool(t);
  const batches = opSequence();

  const one = await openStore(tempDir(t), pool);
  for (const ops of batches) await one.write(ops);
  await one.flush();
  const single = await state(one);
  t.equal(single.segments, 1);

  const many = await openStore(tempDir(t), pool, { mergePolicy: { segmentsPerTier: 3, maxMergeAtOnce: 3, floorBytes: 1 } });
  for (const ops of batches) {
    await many.write(ops);
    await many.flush();
  }
  const split = await state(many);
  t.ok(split.segments > 10, `${split.segments} segments`);
  t.equal(split.totalDocs, single.totalDocs, 'totalDocs');
  t.same(split.totalLengths, single.totalLengths, 'totalLengths');
  t.same(split.rows, single.rows, 'live rows (url, seq, content, status)');
  t.ok(single.rows.some(([, r]) => r.status === 404), 'non-searchable entries are live rows too');
  t.equal(single.totalDocs, single.rows.filter(([, r]) => r.status === 200).length, 'totalDocs counts live status-200 rows');

  await many.merge();
  const tiered = await state(many);
  t.ok(tiered.segments < split.segments, `policy merges reduced ${split.segments} to ${tiered.segments} segments`);
  t.same({ ...tiered, segments: 0 }, { ...single, segments: 0 }, 'same after policy merges');

  await many.merge({ full: true });
  const full = await state(many);
  t.equal(full.segments, 1);
  t.same({ ...full, segments: 0 }, { ...single, segments: 0 }, 'same after a full merge');
  t.same(many.stats(), one.stats(), 'same stats');
  t.same(many.listEntries({ limit: 1000 }), one.listEntries({ limit: 1000 }), 'same indexedContent listing');
  await one.close();
  await many.close();
});
