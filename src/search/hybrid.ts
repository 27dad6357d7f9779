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
 * Cosine similarity of each row of `seg` to the query (vectors are unit length), NaN for rows
 * without a vector or dead; null when the segment is not embedded in the query's space.
 */
export function segmentSims(seg: LiveSegment, q: SemanticQuery): Float32Array | null {
  const vs = seg.reader.vectors(q.fp);
  const v = q.vector!;
  if (!vs || vs.dims !== v.length) return null;
  const { data, has, dims } = vs;
  const n = seg.dead.length;
  const out = new Float32Array(n);
  for (let id = 0; id < n; id++) {
    if (!has[id] || seg.dead[id] === 1) {
      out[id] = NaN;
      continue;
    }
    let s = 0;
    const base = id * dims;
    for (let i = 0; i < dims; i++) s += data[base + i]! * v[i]!;
    out[id] = s;
  }
  return out;
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
