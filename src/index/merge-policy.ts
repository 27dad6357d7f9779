/**
 * Which segments to merge: a pure function, modelled on Lucene's TieredMergePolicy.
 *
 * - Size is the live size: `bytes × (1 − deadCount/docCount)`, floored at `floorBytes` so that
 *   tiny segments count as equal and get merged together freely.
 * - The index is allowed `segmentsPerTier` segments per size tier (tiers grow by
 *   `maxMergeAtOnce`); while there are more segments than that, the best-scoring window of up
 *   to `maxMergeAtOnce` size-adjacent segments is merged. Score (lower is better): skew
 *   (largest / total, balanced merges first) × total^0.05 (small merges first) × liveRatio²
 *   (merges that reclaim deleted rows first).
 * - Segments whose live size is over half of `maxMergedBytes` are left alone by tier merges.
 * - Deleted-ratio trigger: any segment with more than `deletesPctAllowed`% dead rows that
 *   is not already in a merge is rewritten on its own.
 *
 * Any thread; no I/O. Deterministic: ties break on segment id.
 */

export interface MergeCandidate {
  id: string;
  /** File size in bytes; when 0/absent `docCount` is used as the size unit instead. */
  bytes?: number;
  /** Rows in the segment (any status, live or dead). */
  docCount: number;
  /** Rows that are tombstones in the current generation. */
  deadCount: number;
  /** Delete markers in the segment (they weigh like a small row each when sizing by docs). */
  deleteCount?: number;
}

export interface MergePolicyOptions {
  /** Segments allowed per tier before a merge is due (Lucene default 10). */
  segmentsPerTier: number;
  /** Most segments merged at once (Lucene default 10). */
  maxMergeAtOnce: number;
  /** Segments smaller than this count as this size (Lucene: 2 MB). */
  floorBytes: number;
  /** No tier merge produces a segment bigger than this (live bytes). */
  maxMergedBytes: number;
  /** Percentage of dead rows above which a segment is rewritten (Lucene default 20–33). */
  deletesPctAllowed: number;
}

export const DEFAULT_MERGE_POLICY: Readonly<MergePolicyOptions> = Object.freeze({
  segmentsPerTier: 8,
  maxMergeAtOnce: 10,
  floorBytes: 2 * 1024 * 1024,
  // Below Lucene's 5 GB. Merges stream (rows copied by SQL, postings renumbered term by term),
  // so a merge's memory does not grow with its size; the cap bounds how long one merge runs.
  // Fewer, larger segments make searches over large sites cheaper (one lookup per segment).
  maxMergedBytes: 1024 * 1024 * 1024,
  deletesPctAllowed: 25,
});

interface Sized {
  id: string;
  size: number;
  liveRatio: number;
  deadPct: number;
}

function sizeOf(c: MergeCandidate): Sized {
  const rows = c.docCount + (c.deleteCount ?? 0);
  const liveRatio = c.docCount > 0 ? Math.max(0, c.docCount - c.deadCount) / c.docCount : 0;
  const raw = c.bytes && c.bytes > 0 ? c.bytes : rows;
  return { id: c.id, size: raw * (c.docCount > 0 ? liveRatio : 1), liveRatio: c.docCount > 0 ? liveRatio : 1, deadPct: c.docCount > 0 ? (100 * c.deadCount) / c.docCount : 0 };
}

/**
 * Returns the merges to run now, each a list of segment ids; no segment appears twice.
 *
 * @example
 * selectMerges(segs.map(s => ({ id: s.id, bytes: s.bytes, docCount: s.docCount, deadCount: s.dead })))
 * // → [['a','b','c', …]] once more than segmentsPerTier small segments exist
 */
export function selectMerges(segments: readonly MergeCandidate[], options: Partial<MergePolicyOptions> = {}): string[][] {
  const opts = { ...DEFAULT_MERGE_POLICY, ...options };
  const sized = segments.map(sizeOf);
  const floor = (s: number) => Math.max(s, opts.floorBytes);
  const merges: string[][] = [];
  const taken = new Set<string>();

  // Largest first, ties by id: the same input always yields the same merges.
  const eligible = sized
    .filter((s) => s.size <= opts.maxMergedBytes / 2)
    .sort((a, b) => b.size - a.size || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  for (;;) {
    const pool = eligible.filter((s) => !taken.has(s.id));
    if (pool.length < 2) break;
    const allowed = allowedSegmentCount(pool.map((s) => floor(s.size)), opts);
    // Too-big segments count against the budget too (Lucene counts every segment).
    const total = pool.length + (sized.length - eligible.length);
    if (total <= allowed) break;
    let best: { ids: string[]; score: number } | null = null;
    for (let start = 0; start < pool.length - 1; start++) {
      const window: Sized[] = [];
      let bytes = 0;
      for (let i = start; i < pool.length && window.length < opts.maxMergeAtOnce; i++) {
        const s = pool[i]!;
        if (bytes + s.size > opts.maxMergedBytes) continue;
        window.push(s);
        bytes += s.size;
      }
      if (window.length < 2) continue;
      const floored = window.map((s) => floor(s.size));
      const totalFloored = floored.reduce((a, b) => a + b, 0);
      const skew = Math.max(...floored) / totalFloored;
      const live = window.reduce((a, s) => a + s.size * s.liveRatio, 0) / Math.max(1, window.reduce((a, s) => a + s.size, 0));
      const score = skew * Math.pow(totalFloored, 0.05) * Math.pow(live, 2);
      if (!best || score < best.score - 1e-12) best = { ids: window.map((s) => s.id), score };
    }
    if (!best) break;
    merges.push(best.ids);
    for (const id of best.ids) taken.add(id);
  }

  // Deleted-ratio trigger: rewrite a segment full of tombstones even when tiers are fine.
  for (const s of [...sized].sort((a, b) => b.deadPct - a.deadPct || (a.id < b.id ? -1 : 1))) {
    if (!taken.has(s.id) && s.deadPct > opts.deletesPctAllowed) {
      merges.push([s.id]);
      taken.add(s.id);
    }
  }
  return merges;
}

/** Lucene's tier budget: `segmentsPerTier` per tier, tier sizes growing by `maxMergeAtOnce`. */
function allowedSegmentCount(sizes: number[], opts: MergePolicyOptions): number {
  if (sizes.length === 0) return 0;
  let levelSize = Math.max(Math.min(...sizes), opts.floorBytes);
  let bytesLeft = sizes.reduce((a, b) => a + b, 0);
  let allowed = 0;
  for (;;) {
    const segCountLevel = bytesLeft / levelSize;
    if (segCountLevel < opts.segmentsPerTier || levelSize >= opts.maxMergedBytes) {
      allowed += Math.ceil(segCountLevel);
      break;
    }
    allowed += opts.segmentsPerTier;
    bytesLeft -= opts.segmentsPerTier * levelSize;
    levelSize = Math.min(opts.maxMergedBytes, levelSize * opts.maxMergeAtOnce);
  }
  return Math.max(allowed, opts.segmentsPerTier);
}
