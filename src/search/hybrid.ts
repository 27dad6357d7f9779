/**
 * Hybrid search, the vector side of a query: the similarity of every live row to the query
 * vector (segments embedded in the query's vector space only), the neighbours above the
 * threshold, and the fusion of the lexical and vector rankings.
 *
 * Fusion is normalised score blending (a convex combination): each lexical hit's BM25F score
 * divided by the best lexical score, each row's similarity rescaled so that the threshold is 0
 * and the best neighbour 1, blended as `(1 − ratio) · lexical + ratio · vector`. Blending keeps
 * the size of a lead: an exact title match far ahead lexically stays ahead unless the ratio is
 * high, where reciprocal rank fusion would turn a large lead and a narrow one into the same rank
 * step (known-item queries lost most under RRF in our measurements, docs/SEARCH.md). Both
 * normalisations use snapshot-wide maxima, so the order does not depend on segmentation.
 *
 * Search thread; pure over the pinned snapshot and the query vector.
 */
import type { LiveSegment } from '../index/index.js';
import type { Hit } from './score.js';

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
 * the segment is not embedded in the query's space.
 */
export function segmentSims(seg: LiveSegment, q: SemanticQuery): Float32Array | null {
  const vs = seg.reader.vectors(q.fp);
  const v = q.vector!;
  if (!vs || vs.dims !== v.length) return null;
  const { data, has, dims } = vs;
  const status = seg.reader.docValues().status;
  const qd = Float64Array.from(v);
  const n = seg.dead.length;
  const out = new Float32Array(n);
  const whole = dims - (dims % 4);
  for (let id = 0; id < n; id++) {
    if (!has[id] || seg.dead[id] === 1 || status[id] !== 200) {
      out[id] = NaN;
      continue;
    }
    // Four independent sums: one running sum waits on each addition's latency.
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    const base = id * dims;
    let i = 0;
    for (; i < whole; i += 4) {
      s0 += data[base + i]! * qd[i]!;
      s1 += data[base + i + 1]! * qd[i + 1]!;
      s2 += data[base + i + 2]! * qd[i + 2]!;
      s3 += data[base + i + 3]! * qd[i + 3]!;
    }
    for (; i < dims; i++) s0 += data[base + i]! * qd[i]!;
    out[id] = s0 + s1 + s2 + s3;
  }
  return out;
}

/**
 * The least similarity a vector neighbour needs: the threshold, or the similarity of the
 * {@link HYBRID_NEIGHBOURS}-th nearest candidate when more are above it (ties at that value all
 * count, so the choice does not depend on segment order). Candidates are live rows above the
 * threshold that the lexical pass did not match (`marks`).
 */
export function neighbourBar(sims: ReadonlyArray<Float32Array | null>, marks: readonly Uint8Array[], threshold: number, max = HYBRID_NEIGHBOURS): number {
  let count = 0;
  for (let si = 0; si < sims.length; si++) {
    const sim = sims[si];
    if (!sim) continue;
    const mark = marks[si]!;
    for (let id = 0; id < sim.length; id++) if (sim[id]! >= threshold && mark[id] !== 1) count++;
  }
  if (count <= max) return threshold;
  const all = new Float32Array(count);
  let k = 0;
  for (let si = 0; si < sims.length; si++) {
    const sim = sims[si];
    if (!sim) continue;
    const mark = marks[si]!;
    for (let id = 0; id < sim.length; id++) if (sim[id]! >= threshold && mark[id] !== 1) all[k++] = sim[id]!;
  }
  all.sort();
  return all[count - max]!;
}

/**
 * Blends the two lists' scores in place (see the module comment) and returns them as one list:
 * `lexical` (hits of the query's words, scores BM25F × boost) and `neighbours` (rows found only
 * by their vector). Neighbours take the typo tier of the best lexical hit, so a query matched
 * only through typos does not push its vector neighbours behind every typo match.
 */
export function fuse(lexical: Hit[], neighbours: Hit[], sims: Map<LiveSegment, Float32Array | null>, q: SemanticQuery): Hit[] {
  const simOf = (h: Hit): number => {
    const s = sims.get(h.seg)?.[h.id];
    return s === undefined || s !== s ? -1 : s;
  };
  let lexMax = 0;
  let simMax = -1;
  let minTypos = Infinity;
  for (const h of lexical) {
    if (h.score > lexMax) lexMax = h.score;
    if (h.typos < minTypos) minTypos = h.typos;
    const s = simOf(h);
    if (s > simMax) simMax = s;
  }
  for (const h of neighbours) {
    const s = simOf(h);
    if (s > simMax) simMax = s;
  }
  const t = q.threshold;
  const span = simMax - t;
  const vec = (s: number): number => (span > 0 && s >= t ? (s - t) / span : 0);
  const r = q.ratio;
  for (const h of lexical) h.score = (1 - r) * (lexMax > 0 ? h.score / lexMax : 0) + r * vec(simOf(h));
  const tier = minTypos === Infinity ? 0 : minTypos;
  for (const h of neighbours) {
    h.score = r * vec(simOf(h));
    h.typos = tier;
  }
  return lexical.concat(neighbours);
}
