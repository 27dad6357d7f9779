/**
 * Match, the stage that finds the documents of a query: per segment and query word, the rows
 * its alternatives' postings hold, each with the best alternative's BM25F value and whether
 * only typo alternatives matched it; then per row, the words combined (AND: every required
 * word; OR for long questions: any word, scores added), with phrase and exclusion sets.
 *
 * Input: the snapshot, each word's alternatives (expand), the BM25F setup (score).
 * Output: {@link WordMatches} (per segment, per word: {@link SlotHits} and the word's live
 * document frequency), and each candidate row with its score and typo count
 * ({@link forEachMatch}).
 * Invariants: only live rows (not tombstoned in this generation) are recorded; a word's
 * document frequency is the live union of its alternatives' postings, whichever walk found
 * its rows (so idf does not depend on the walk); the lazy AND walk records, for every row it
 * visits, exactly what the full walk records. Per-row arrays are typed arrays taken from a
 * pool and handed back with {@link WordMatches.release}.
 */
import { scratchFloat64, type IndexSnapshot, type LiveSegment, type Postings } from '../index/index.js';
import { isSegmentedScript, stem as stemWord } from '../text/index.js';
import { termsWithStem, type Alternative } from './expand.js';
import type { ParsedQuery, QueryWord } from './query.js';
import { idf, impactsFor, postingScorer, type Scoring } from './score.js';

/**
 * The documents of one segment matching one query word: best alternative score per document
 * (typed arrays indexed by row id: no per-document objects on the hot path), `typo[id]` 0 when
 * a non-typo alternative matched, 1 when only typo ones did, {@link NO_MATCH} when none; `ids`
 * lists the matching rows in first-seen order. `score[id]` means something only where
 * `typo[id]` is not NO_MATCH: every first match writes it, so a released array's scores are
 * left as they were.
 */
export interface SlotHits {
  score: Float64Array;
  typo: Uint8Array;
  ids: Int32Array;
  count: number;
  /** Live documents matching the word in this segment (count may hold only candidates). */
  df: number;
}

/** `SlotHits.typo` of a row the word does not match. */
export const NO_MATCH = 255;

/**
 * Records every posting i of a list into `h` whose row `id` has `flags[id] !== skip` (live
 * rows: flags = tombstones, skip = 1; a probed word's candidates: flags = the first word's
 * typo marks, skip = NO_MATCH), with the alternative's typo mark `t`, its `weight` and its
 * BM25F values `imp` passed once per list instead of looked up per posting.
 */
function recordWhere(h: SlotHits, t: number, weight: number, ids: Int32Array, imp: Float64Array, flags: Uint8Array, skip: number): void {
  const { typo, score, ids: hids } = h;
  let count = h.count;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (flags[id] === skip) continue;
    const old = typo[id]!;
    if (t > old) continue;
    const sc = weight * imp[i]!;
    if (old === NO_MATCH) {
      hids[count++] = id;
      score[id] = sc;
      typo[id] = t;
    } else if (t < old) {
      score[id] = sc;
      typo[id] = t;
    } else if (sc > score[id]!) score[id] = sc;
  }
  h.count = count;
}

/** Records one match of row `id` with typo mark `t` and score `sc` in `h` ({@link recordWhere} for one posting). */
function recordOne(h: SlotHits, t: number, sc: number, id: number): void {
  const old = h.typo[id]!;
  if (t > old) return;
  if (old === NO_MATCH) {
    h.ids[h.count++] = id;
    h.score[id] = sc;
    h.typo[id] = t;
  } else if (t < old) {
    h.score[id] = sc;
    h.typo[id] = t;
  } else if (sc > h.score[id]!) h.score[id] = sc;
}

// Reusable SlotHits per segment size: fresh (zeroed) typed arrays of a big segment's size for
// every word of every query would keep the garbage collector busy.
const slotPool = new Map<number, SlotHits[]>();
const SLOT_POOL_PER_SIZE = 16;

function takeSlotHits(n: number): SlotHits {
  const free = slotPool.get(n);
  const h = free?.pop();
  if (h) return h;
  return { score: new Float64Array(n), typo: new Uint8Array(n).fill(NO_MATCH), ids: new Int32Array(n), count: 0, df: 0 };
}

/** Clears the entries a query touched (their typo marks) and returns the arrays to the pool. */
function releaseSlotHits(h: SlotHits): void {
  // Only the marks: a score is read only where its mark says matched, and written first.
  const typo = h.typo;
  const ids = h.ids;
  for (let k = 0; k < h.count; k++) typo[ids[k]!] = NO_MATCH;
  h.count = 0;
  h.df = 0;
  const n = h.score.length;
  let free = slotPool.get(n);
  if (!free) slotPool.set(n, (free = []));
  if (free.length < SLOT_POOL_PER_SIZE) free.push(h);
}

/**
 * First index at or after `from` whose id is >= `target`, in ascending `ids` (ids[from] <
 * target): exponential then binary search, so skipping far ahead costs O(log distance).
 *
 * @example gallop(Int32Array.of(1, 3, 5, 7, 9), 0, 6) // 3
 */
export function gallop(ids: Int32Array, from: number, target: number): number {
  const len = ids.length;
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < len && ids[hi]! < target) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > len) hi = len;
  let a = lo + 1;
  let b = hi;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (ids[m]! < target) a = m + 1;
    else b = m;
  }
  return a;
}

const deadCounts = new WeakMap<Uint8Array, number>();
const unionMarks = new Map<number, { mark: Uint32Array; stamp: number }>();

/** Live rows (not dead in this generation) in the union of `lists`. */
export function liveUnion(lists: Array<Postings | null>, dead: Uint8Array): number {
  let deadCount = deadCounts.get(dead);
  if (deadCount === undefined) {
    deadCount = 0;
    for (let i = 0; i < dead.length; i++) deadCount += dead[i]!;
    deadCounts.set(dead, deadCount);
  }
  const present = lists.filter((p): p is Postings => p !== null);
  if (present.length === 0) return 0;
  if (present.length === 1) {
    const ids = present[0]!.ids;
    if (deadCount === 0) return ids.length;
    let c = 0;
    for (let i = 0; i < ids.length; i++) if (dead[ids[i]!] !== 1) c++;
    return c;
  }
  const n = dead.length;
  let m = unionMarks.get(n);
  if (!m || m.stamp === 0xffffffff) unionMarks.set(n, (m = { mark: new Uint32Array(n), stamp: 0 }));
  const stamp = ++m.stamp;
  const mark = m.mark;
  let c = 0;
  for (const p of present) {
    const ids = p.ids;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (mark[id] !== stamp && dead[id] !== 1) {
        mark[id] = stamp;
        c++;
      }
    }
  }
  return c;
}

/**
 * Live document frequency of one query word in one segment: the live union of its
 * alternatives' postings ({@link liveUnion}), cached per tombstone bitmap (one segment in one
 * generation) and reader, keyed by the alternative terms. A word probed only for candidates
 * (lazy AND) would otherwise still pass over every posting of every alternative to count them.
 */
const dfCache = new WeakMap<Uint8Array, WeakMap<object, Map<string, number>>>();
const DF_CACHE_SIZE = 20_000;

function slotDf(seg: LiveSegment, alts: Alternative[], lists: Array<Postings | null>): number {
  if (lists.length <= 1) return liveUnion(lists, seg.dead);
  let byReader = dfCache.get(seg.dead);
  if (!byReader) dfCache.set(seg.dead, (byReader = new WeakMap()));
  let m = byReader.get(seg.reader);
  if (!m) byReader.set(seg.reader, (m = new Map()));
  let key = '';
  for (const a of alts) key += a.term + '\u0000';
  let df = m.get(key);
  if (df === undefined) {
    df = liveUnion(lists, seg.dead);
    // Cleared whole when full: no per-hit reordering of a Map.
    if (m.size >= DF_CACHE_SIZE) m.clear();
    m.set(key, df);
  }
  return df;
}

/**
 * The rows of one segment matching each query word, with their best BM25F value. Without
 * `lazy`, every word's alternatives are walked in full. With `lazy` (AND queries), the word
 * with the shortest postings is walked in full and the others only for the rows it matched,
 * so a common word costs a few probes instead of a pass over its postings.
 */
function matchSegment(seg: LiveSegment, alternatives: Alternative[][], lists: Array<Array<Postings | null>>, scoring: Scoring, lazy: boolean, required: number): SlotHits[] {
  const dv = seg.reader.docValues();
  const n = dv.urls.length;
  const dead = seg.dead;
  const bm25 = postingScorer(scoring, dv.lengths);
  const impacts = impactsFor(seg, scoring.key);
  // The BM25F values of a whole list, computed once and remembered for later queries of this
  // generation (in a pooled buffer: kept with the cached list, or recycled after the search).
  const impactsOf = (a: Alternative, p: Postings): Float64Array => {
    let imp = impacts.get(a.term, p);
    if (!imp) {
      imp = scratchFloat64(p.ids.length);
      for (let i = 0; i < p.ids.length; i++) imp[i] = bm25(p, i, p.ids[i]!);
      impacts.set(a.term, p, imp);
    }
    return imp;
  };
  const scoreAll = (slot: number): SlotHits => {
    const h = takeSlotHits(n);
    alternatives[slot]!.forEach((a, ai) => {
      const p = lists[slot]![ai];
      if (!p) return;
      recordWhere(h, a.kind === 'typo' ? 1 : 0, a.weight, p.ids, impactsOf(a, p), dead, 1);
    });
    h.df = h.count;
    return h;
  };
  let first = -1;
  if (lazy && alternatives.length > 1) {
    const totals = lists.map((ls) => ls.reduce((t, p) => t + (p ? p.ids.length : 0), 0));
    first = 0;
    for (let i = 1; i < required; i++) if (totals[i]! < totals[first]!) first = i;
  }
  if (first < 0) return alternatives.map((_, slot) => scoreAll(slot));
  const out = new Array<SlotHits>(alternatives.length);
  const h0 = scoreAll(first);
  out[first] = h0;
  // Candidates in id order, for galloping through lists much longer than the candidate set
  // (sorted only when such a list comes up).
  let cands: Int32Array | null = null;
  for (let slot = 0; slot < alternatives.length; slot++) {
    if (slot === first) continue;
    const h = takeSlotHits(n);
    h.df = slotDf(seg, alternatives[slot]!, lists[slot]!);
    alternatives[slot]!.forEach((a, ai) => {
      const p = lists[slot]![ai];
      if (!p) return;
      const ids = p.ids;
      const len = ids.length;
      const t = a.kind === 'typo' ? 1 : 0;
      // A list not much longer than the candidate set is walked whole: its BM25F values are
      // then worth computing once for the whole list (and kept) rather than per match, and
      // a candidate is recognised by its entry in the first word's map (no search).
      if (len <= 4 * h0.count) {
        recordWhere(h, t, a.weight, ids, impactsOf(a, p), h0.typo, NO_MATCH);
        return;
      }
      // Otherwise walk the candidates and gallop in the list.
      const imp = impacts.get(a.term, p);
      const cs = (cands ??= h0.ids.slice(0, h0.count).sort());
      let j = 0;
      for (let c = 0; c < cs.length && j < len; c++) {
        const id = cs[c]!;
        if (ids[j]! < id) {
          j = gallop(ids, j, id);
          if (j >= len) break;
        }
        if (ids[j] === id && t <= h.typo[id]!) recordOne(h, t, a.weight * (imp ? imp[j]! : bm25(p, j, id)), id);
      }
    });
    out[slot] = h;
  }
  return out;
}

/**
 * The alternatives of each query word with the word's own form (its `exact` alternative)
 * weighted by how much rarer it is than the word's alternatives together: the idf of the exact
 * form over the idf of their union ({@link WordMatches.idfs}). A page holding the form as typed
 * then scores as if that form alone were the query word, while stems and typos keep the union's
 * idf (a rare variant still does not outrank the word). In languages with rich inflection
 * (German `pakets`, French `téléchargé`) the typed form is what tells pages apart.
 *
 * Not for a word read as a prefix (a visitor still typing: `desc` of `SET DESC` is a rare word
 * of its own, and the completions are what is meant) nor for words of scripts segmented by
 * dictionary (a query word there is often a piece of a page's word). Lists without an exact
 * alternative, or where it is as common as the union, are returned as they are (`words` is
 * aligned with the first `alternatives`, the others are left as they are; `postingsOf` gives a term's postings per segment).
 *
 */
function withExactIdf(
  snap: IndexSnapshot, alternatives: Alternative[][], words: QueryWord[], N: number, postingsOf: (term: string) => Array<Postings | null>,
): Alternative[][] {
  return alternatives.map((alts, wi) => {
    const ei = alts.findIndex((a) => a.kind === 'exact');
    const w = words[wi];
    if (!w || ei < 0 || alts.length < 2 || w.prefix || isSegmentedScript(w.word)) return alts;
    let dfExact = 0;
    let dfAll = 0;
    const perAlt = alts.map((a) => postingsOf(a.term));
    snap.segments.forEach((seg, si) => {
      const lists = perAlt.map((p) => p[si] ?? null);
      dfExact += liveUnion([lists[ei]!], seg.dead);
      dfAll += slotDf(seg, alts, lists);
    });
    if (dfExact === 0 || dfExact >= dfAll) return alts;
    const factor = idf(N, dfExact) / idf(N, dfAll);
    if (!(factor > 1) || !Number.isFinite(factor)) return alts;
    return alts.map((a, i) => (i === ei ? { ...a, weight: a.weight * factor } : a));
  });
}

/**
 * The matches of every query word in every segment of a snapshot, for one query. Starts lazy
 * when asked (AND queries of several words); {@link scoreAllInFull} switches to full walks.
 */
export class WordMatches {
  /** Per segment, per query word (slot). */
  maps: SlotHits[][];
  private lazy: boolean;
  /** Each alternative's postings per segment, looked up once per query. */
  private readonly postingsCache = new Map<string, Array<Postings | null>>();

  private readonly alternatives: Alternative[][];

  /**
   * `words` (aligned with `alternatives`): the query words, whose typed forms then count with
   * their own idf ({@link withExactIdf}); without them every alternative counts with the word's.
   */
  constructor(
    private readonly snap: IndexSnapshot,
    alternatives: Alternative[][],
    private readonly scoring: Scoring,
    lazy: boolean,
    words?: QueryWord[],
    /** Words from this index on are optional (scored where they match, never walked first). */
    private readonly required = alternatives.length,
  ) {
    this.lazy = lazy;
    this.alternatives = words ? withExactIdf(snap, alternatives, words, scoring.N, (t) => this.postingsOf(t)) : alternatives;
    this.maps = this.build(lazy);
  }

  /**
   * One idf per query word over the union of its alternatives (live documents of all
   * segments): alternatives act as one term, so a rare variant does not outrank the word.
   */
  idfs(): number[] {
    return this.alternatives.map((_, i) => {
      let df = 0;
      for (const maps of this.maps) df += maps[i]!.df;
      return idf(this.scoring.N, df);
    });
  }

  /**
   * Walks every word in full from now on: after the drop-last-words fallback drops a word,
   * the word walked first in a lazy match may be the one dropped.
   */
  scoreAllInFull(): void {
    if (!this.lazy) return;
    this.release();
    this.maps = this.build(false);
    this.lazy = false;
  }

  /** Hands the per-row arrays back to the pool; the matches are unusable afterwards. */
  release(): void {
    for (const maps of this.maps) for (const h of maps) releaseSlotHits(h);
  }

  private build(lazy: boolean): SlotHits[][] {
    return this.snap.segments.map((seg, si) => {
      const lists = this.alternatives.map((alts) => alts.map((a) => this.postingsOf(a.term)[si] ?? null));
      return matchSegment(seg, this.alternatives, lists, this.scoring, lazy, this.required);
    });
  }

  private postingsOf(term: string): Array<Postings | null> {
    let p = this.postingsCache.get(term);
    if (!p) this.postingsCache.set(term, (p = this.snap.segments.map((s) => s.reader.postings(term))));
    return p;
  }
}

/** Calls `consider(row id, score, typo-matched words)` for each candidate row of a segment. */
export type Consider = (id: number, score: number, typos: number) => void;

/**
 * Each row of one segment that the query matches, with its score (sum over the words of
 * BM25F value × idf) and typo count: with `browse`, every row (score 0); with `orMode`, every
 * row matching any of `maps`' words, scores added word by word; otherwise the rows matching
 * all of them. `rows` is the segment's row count.
 */
export function forEachMatch(maps: SlotHits[], idfs: number[], orMode: boolean, browse: boolean, rows: number, consider: Consider, required = maps.length): void {
  if (browse || maps.length === 0) {
    for (let id = 0; id < rows; id++) consider(id, 0, 0);
    return;
  }
  if (orMode) {
    // Accumulated word by word, in word order, into one pooled array.
    const acc = takeSlotHits(rows);
    for (let mi = 0; mi < maps.length; mi++) {
      const m = maps[mi]!;
      const wordIdf = idfs[mi]!;
      for (let k = 0; k < m.count; k++) {
        const id = m.ids[k]!;
        if (acc.typo[id] === NO_MATCH) {
          acc.typo[id] = 0;
          acc.ids[acc.count++] = id;
          acc.score[id] = 0 + m.score[id]! * wordIdf;
        } else acc.score[id]! += m.score[id]! * wordIdf;
      }
    }
    for (let k = 0; k < acc.count; k++) consider(acc.ids[k]!, acc.score[acc.ids[k]!]!, 0);
    releaseSlotHits(acc);
    return;
  }
  let smallest = 0;
  for (let i = 1; i < required; i++) if (maps[i]!.count < maps[smallest]!.count) smallest = i;
  const first = maps[smallest]!;
  for (let k = 0; k < first.count; k++) {
    const id = first.ids[k]!;
    let score = 0;
    let typos = 0;
    let ok = true;
    for (let mi = 0; mi < required; mi++) {
      const m = maps[mi]!;
      const t = m.typo[id]!;
      if (t === NO_MATCH) {
        ok = false;
        break;
      }
      score += m.score[id]! * idfs[mi]!;
      typos += t;
    }
    if (!ok) continue;
    for (let mi = required; mi < maps.length; mi++) {
      const m = maps[mi]!;
      if (m.typo[id] !== NO_MATCH) score += m.score[id]! * idfs[mi]!;
    }
    consider(id, score, typos);
  }
}

/** Rows of `seg` holding each of `phrases` (its words at consecutive positions in one field, see SegmentReader.phraseRows). */
export function phraseSets(seg: LiveSegment, phrases: string[][]): Array<Set<number>> {
  return phrases.map((ph) => seg.reader.phraseRows(ph));
}

/**
 * Rows of `seg` that the query excludes: those holding an excluded word or a word of the same
 * stem (in `language`), or an excluded phrase.
 */
export function excludedIds(seg: LiveSegment, parsed: ParsedQuery, language: string): Set<number> {
  const out = new Set<number>();
  for (const w of parsed.excludes) {
    const forms = new Set([w, ...termsWithStem(seg, stemWord(w, language))]);
    for (const t of forms) {
      const p = seg.reader.postings(t);
      if (p) for (const id of p.ids) out.add(id);
    }
  }
  for (const rows of phraseSets(seg, parsed.excludedPhrases)) for (const id of rows) out.add(id);
  return out;
}
