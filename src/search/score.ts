/**
 * Score, the stage that values a match: BM25F over the five fields with snapshot-wide
 * statistics, one idf per query word over the union of its alternatives, and the ranking order
 * of hits.
 *
 * Input: the project's field weights, the snapshot's document count and field lengths, whether
 * the query is long; per posting, its field term frequencies and its row's field lengths.
 * Output: a {@link Scoring} setup, per-posting BM25F values (cached per whole postings list),
 * per-word idf values, {@link byRelevance} and a bounded heap by it (the worst hit on top).
 * Invariants: every statistic (N, average field lengths, document frequencies) is taken over
 * the live documents of all segments, so a score does not depend on how the index is split;
 * cached and freshly computed values come from the same function and are identical; the
 * ranking order is total (typo tier, then score, then URL), so results are deterministic.
 */
import { type IndexSnapshot, type LiveSegment, NFIELDS, type Postings } from '../index/index.js';
import type { FieldWeights } from '../core/index.js';

const K1 = 1.2;
// Length normalisation per field: titles and URLs are short and uniform, content varies.
const B: number[] = [0.5, 0.5, 0.6, 0.5, 0.75];
// Long natural-language queries ("what problems of heat conduction in composite slabs have
// been solved"): each word is weaker evidence of the page's topic than a short query's words,
// so a title holding one of them counts half as much, repeated occurrences saturate later
// (k1 2.0) and long pages are normalised less (content b 0.4). Tuned on Cranfield
// (bench/relevance.ts).
/** BM25F k1 of long queries. */
export const K1_LONG = 2.0;
/** BM25F b per field of long queries (title, keywords, headings, URL, content). */
export const B_LONG: readonly number[] = [0.5, 0.5, 0.6, 0.5, 0.4];
/** Field weight multipliers of long queries (title, keywords, headings, URL, content). */
export const FIELD_SCALE_LONG: readonly number[] = [0.5, 1, 1, 1, 1];

/** Everything a posting's BM25F value depends on besides the posting and its row. */
export interface Scoring {
  k1: number;
  /** b per field. */
  bs: readonly number[];
  /** Weight per field. */
  fw: number[];
  /** Average length per field over the snapshot's live documents. */
  avg: number[];
  /** Live searchable documents of the snapshot (at least 1). */
  N: number;
  /** The setup as a string: the key of the cached BM25F values. */
  key: string;
}

/**
 * The BM25F setup of one query over `snap`: the short-query or the long-query parameters.
 *
 * @example scoringFor(settings.fieldWeights, snap, false).k1 // 1.2
 */
export function scoringFor(weights: FieldWeights, snap: IndexSnapshot, longQuery: boolean): Scoring {
  const w = [weights.title, weights.keywords, weights.headings, weights.url, weights.content];
  const N = Math.max(1, snap.totalDocs);
  const avg = snap.totalLengths.map((l) => Math.max(1, l / N));
  const k1 = longQuery ? K1_LONG : K1;
  const bs = longQuery ? B_LONG : B;
  const fw = longQuery ? w.map((x, f) => x * FIELD_SCALE_LONG[f]!) : w;
  return { k1, bs, fw, avg, N, key: `${k1}|${bs.join(',')}|${fw.join(',')}|${avg.join(',')}` };
}

/** BM25F value of posting `i` of a list, whose row is `id`. */
export type PostingScorer = (p: Postings, i: number, id: number) => number;

/**
 * The BM25F scorer of one segment's postings: saturated, length-normalised, field-weighted
 * term frequency. `lengths[id * NFIELDS + f]` is row id's length in field f.
 */
export function postingScorer(s: Scoring, lengths: Uint32Array): PostingScorer {
  const { fw, bs, avg, k1 } = s;
  return (p, i, id) => {
    let x = 0;
    for (let f = 0; f < NFIELDS; f++) {
      const tf = p.tfs[i * NFIELDS + f]!;
      if (tf === 0) continue;
      const len = lengths[id * NFIELDS + f]!;
      x += (fw[f]! * tf) / (1 - bs[f]! + (bs[f]! * len) / avg[f]!);
    }
    return (x * (k1 + 1)) / (x + k1);
  };
}

/**
 * Idf of a query word matched by `df` live documents out of `N` (its alternatives' union:
 * they act as one term, so a rare variant does not outrank the word itself).
 */
export function idf(N: number, df: number): number {
  return Math.log(1 + (N - df + 0.5) / (df + 0.5));
}

/**
 * BM25F values of whole postings lists of one segment for one scoring setup: common words recur
 * across queries, and their value per posting is the same until a new generation changes the
 * averages. Kept with the decoded list in the segment reader's postings cache (one budget for
 * both, src/index/budgets.ts), so a list and its values are evicted together and counted once.
 */
export interface ImpactCache {
  /** The values of `term`'s list `p` (the postings object identifies the decoded list). */
  get(term: string, p: Postings): Float64Array | undefined;
  set(term: string, p: Postings, imp: Float64Array): void;
}

/** The {@link ImpactCache} of `seg` under the setup `scoringKey` ({@link Scoring.key}). */
export function impactsFor(seg: LiveSegment, scoringKey: string): ImpactCache {
  const reader = seg.reader;
  return {
    get: (term, p) => reader.postingValues(term, p, scoringKey),
    set: (term, p, imp) => reader.keepPostingValues(term, p, scoringKey, imp),
  };
}

/** One ranked match. */
export interface Hit {
  seg: LiveSegment;
  id: number;
  url: string;
  /** Group name as reported ('_' for none). */
  group: string;
  score: number;
  /** Query words matched only through typo alternatives. */
  typos: number;
}

/**
 * The ranking order: fewer typo-matched words first (exact matches always before typo
 * matches), then the higher score, then the URL, so ties are deterministic.
 */
export function byRelevance(a: Hit, b: Hit): number {
  return a.typos - b.typos || b.score - a.score || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
}

/** Max-heap by relevance (the worst hit on top): sifts entry `i` up. */
export function heapUp(heap: Hit[], i: number): void {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (byRelevance(heap[i]!, heap[p]!) <= 0) break;
    [heap[i], heap[p]] = [heap[p]!, heap[i]!];
    i = p;
  }
}

/** Max-heap by relevance (the worst hit on top): sifts entry `i` down. */
export function heapDown(heap: Hit[], i: number): void {
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && byRelevance(heap[l]!, heap[m]!) > 0) m = l;
    if (r < heap.length && byRelevance(heap[r]!, heap[m]!) > 0) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m]!, heap[i]!];
    i = m;
  }
}
