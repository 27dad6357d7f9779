/**
 * Hybrid search, the vector side of a query: the similarity of every live row to the query
 * vector (segments embedded in the query's vector space only), the neighbours above the
 * threshold, and the fusion of the lexical and vector rankings.
 *
 * Fusion is normalised score blending (a convex combination): each lexical hit's BM25F score
 * divided by the best lexical score, each row's similarity measured on a fixed scale from the
 * threshold (0) to identity (1), blended as `(1 − r) · lexical + r · vector`. Blending keeps the
 * size of a lead: an exact title match far ahead lexically stays ahead unless the ratio is high,
 * where reciprocal rank fusion would turn a large lead and a narrow one into the same rank step
 * (known-item queries lost most under RRF in our measurements, docs/SEARCH.md). Three rules keep
 * the vector side from overturning what the query's words decide (docs/SEARCH.md, "Semantic and
 * hybrid search"):
 * - The vector scale is fixed, not stretched to the best neighbour: the pages related to a query
 *   sit a few hundredths apart in similarity (averaged word vectors), and a difference of 0.01
 *   stays worth 0.01 / (1 − threshold) instead of becoming most of a unit that flips a lexical
 *   near-tie.
 * - `r` is the requested ratio times the fourth power of the query's coverage (the share of its
 *   significant words the embedder knows, {@link SemanticQuery.coverage}): a vector that
 *   leaves out a misspelt word or an identifier describes another question, and those are the
 *   words lexical matching decides best.
 * - A neighbour (found only by its vector) takes the worst typo tier of the lexical hits: it
 *   matched none of the query's words, so it never ranks ahead of a page in a better tier (one
 *   that matched them with fewer typos) and competes by score only within the last tier.
 * Nothing here depends on snapshot-wide maxima other than the best lexical score, which is the
 * same however the index is split, so the order does not depend on segmentation.
 *
 * Search thread; pure over the pinned snapshot and the query vector.
 */
import type { LiveSegment } from '../index/index.js';
import type { Hit } from './score.js';
import { rowDots } from './vector-scan.js';

/** The semantic part of a query, resolved by the search service (src/search/semantic.ts). */
export interface SemanticQuery {
  /** 0: lexical only; 1: vector ranking only (lexical matches still count). */
  ratio: number;
  /** The vector space (embedder fingerprint) of `vector`; only segments embedded in it take part. */
  fp: string;
  /** Least cosine similarity of a neighbour that counts as a result. */
  threshold: number;
  /** Unit query vector, or null (no known word, or the embedder failed: lexical only). */
  vector: Float32Array | null;
  /**
   * Share (0–1) of the query's significant words that `vector` represents (the built-in
   * embedder skips words its table lacks); absent: 1 (an HTTP embedder reads every word).
   */
  coverage?: number;
}

/**
 * The weight of the vector side in fusion: the requested ratio times coverage⁴. One unknown
 * word in two leaves 1/16 of the ratio, one in four about a third, one in ten two thirds.
 *
 * @example effectiveRatio({ ratio: 0.25, fp, threshold: 0.55, vector, coverage: 0.5 }) // 0.015625
 */
export function effectiveRatio(q: SemanticQuery): number {
  const c = Math.min(1, Math.max(0, q.coverage ?? 1));
  return q.ratio * c * c * c * c;
}

/**
 * Lexical hits kept for fusion when only the top of the ranking is needed: a lexical match
 * below this rank keeps its place behind the fused list, but is not re-ranked by its vector.
 */
export const HYBRID_LEXICAL_KEEP = 1000;

/**
 * Most vector neighbours one query adds: the pages nearest the query above the threshold. A
 * typical question is above the threshold for about one page in ten, which at 100,000 pages
 * would put 10,000 pages in the totals, facets and group counts; a site-search visitor reads the
 * nearest few. Chosen before filters and content groups, which then apply to them as to lexical
 * matches, so facet counts stay exact: selecting a facet value returns the count it showed.
 */
export const HYBRID_NEIGHBOURS = 100;

/**
 * Cosine similarity of each row of `seg` to the query (vectors are unit length), NaN for rows
 * without a vector, dead, or not a live page (status other than 200: never a result); null when
 * the segment is not embedded in the query's space. The array belongs to the segment's vectors
 * and is overwritten by the next scan of the segment in this thread (vector-scan.ts).
 */
export function segmentSims(seg: LiveSegment, q: SemanticQuery): Float32Array | null {
  const vs = seg.reader.vectors(q.fp);
  const v = q.vector!;
  if (!vs || vs.dims !== v.length) return null;
  const n = seg.dead.length;
  const out = rowDots(vs, v, n);
  const { has } = vs;
  const dead = seg.dead;
  const status = seg.reader.docValues().status;
  for (let id = 0; id < n; id++) if (has[id] !== 1 || dead[id] === 1 || status[id] !== 200) out[id] = NaN;
  return out;
}

/** Zeroed marks (one byte per row of `seg`) for one query, reused from query to query. */
const markPool = new WeakMap<object, Uint8Array>();

/**
 * A zeroed byte per row of `seg` for the rows a query's lexical pass matched: one array per
 * segment reader and thread, cleared and handed out again by the next call (a search thread
 * runs one query at a time), instead of a new row-sized array per query and segment.
 */
export function segmentMarks(seg: LiveSegment): Uint8Array {
  const n = seg.dead.length;
  let m = markPool.get(seg.reader);
  if (!m || m.length !== n) {
    m = new Uint8Array(n);
    markPool.set(seg.reader, m);
  } else m.fill(0);
  return m;
}

/** The kept candidates of {@link neighbourBar} (a min-heap), reused. */
let barHeap = new Float64Array(HYBRID_NEIGHBOURS);

/**
 * The least similarity a vector neighbour needs: the threshold, or the similarity of the
 * {@link HYBRID_NEIGHBOURS}-th nearest candidate when more are above it (ties at that value all
 * count, so the choice does not depend on segment order). Candidates are live rows above the
 * threshold that the lexical pass did not match (`marks`). One pass over the similarities with
 * a min-heap of the `max` best values seen (with their repeats): its least is the `max`-th
 * largest candidate value.
 */
export function neighbourBar(sims: ReadonlyArray<Float32Array | null>, marks: readonly Uint8Array[], threshold: number, max = HYBRID_NEIGHBOURS): number {
  if (max <= 0) return threshold;
  if (barHeap.length < max) barHeap = new Float64Array(max);
  const heap = barHeap;
  let size = 0;
  let count = 0;
  for (let si = 0; si < sims.length; si++) {
    const sim = sims[si];
    if (!sim) continue;
    const mark = marks[si]!;
    for (let id = 0; id < sim.length; id++) {
      const s = sim[id]!;
      if (!(s >= threshold) || mark[id] === 1) continue;
      count++;
      if (size < max) {
        // Sift up.
        let i = size++;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (heap[parent]! <= s) break;
          heap[i] = heap[parent]!;
          i = parent;
        }
        heap[i] = s;
      } else if (s > heap[0]!) {
        // Replace the least and sift down.
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= size) break;
          const r = l + 1;
          const c = r < size && heap[r]! < heap[l]! ? r : l;
          if (heap[c]! >= s) break;
          heap[i] = heap[c]!;
          i = c;
        }
        heap[i] = s;
      }
    }
  }
  return count <= max ? threshold : heap[0]!;
}

/**
 * Blends the two lists' scores in place (see the module comment) and returns them as one list:
 * `lexical` (hits of the query's words, scores BM25F × boost) and `neighbours` (rows found only
 * by their vector). Neighbours take the worst typo tier of the lexical hits (0 when there are
 * none): a pure neighbour never ranks ahead of a lexical hit with fewer typos, and a query matched
 * only through typos does not push its neighbours behind every typo match either.
 */
export function fuse(lexical: Hit[], neighbours: Hit[], sims: Map<LiveSegment, Float32Array | null>, q: SemanticQuery): Hit[] {
  const simOf = (h: Hit): number => {
    const s = sims.get(h.seg)?.[h.id];
    return s === undefined || s !== s ? -1 : s;
  };
  let lexMax = 0;
  let maxTypos = 0;
  for (const h of lexical) {
    if (h.score > lexMax) lexMax = h.score;
    if (h.typos > maxTypos) maxTypos = h.typos;
  }
  const t = q.threshold;
  const span = 1 - t;
  const vec = (s: number): number => (span > 0 && s >= t ? Math.min(1, (s - t) / span) : 0);
  const r = effectiveRatio(q);
  for (const h of lexical) h.score = (1 - r) * (lexMax > 0 ? h.score / lexMax : 0) + r * vec(simOf(h));
  for (const h of neighbours) {
    h.score = r * vec(simOf(h));
    h.typos = maxTypos;
  }
  return lexical.concat(neighbours);
}
