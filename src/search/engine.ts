/**
 * The search engine: matching, scoring, filtering, facets, sorting and grouping over one pinned
 * index generation (main thread, synchronous, no I/O beyond SQLite reads of immutable segments).
 *
 * Ranking: documents are ordered by (number of typo-matched words ascending, score descending,
 * URL ascending), so exact matches always come before typo matches and ties are deterministic.
 * The score is BM25F: per query word, the best of its expansions (exact, stem, synonym, prefix,
 * typo; each with a weight below 1 except exact) of idf × saturated field-weighted tf, summed
 * over query words, times the page's boost; the top results are then re-ranked by phrase and
 * exactness signals (title or a heading equal to the query, title starting with or holding it). Every statistic (N, average
 * field lengths, document frequencies) is taken over the live documents of all segments, so the
 * result does not depend on how the index is split.
 */
import type { IndexSnapshot, LiveSegment } from '../index/contract.js';
import { NFIELDS, hashWord, type Postings } from '../index/segment.js';
import type { FieldWeights, FilterDefinition, SearchSettings } from '../types.js';
import { engineCacheBudget, engineCacheUsed } from '../index/budgets.js';
import { inCodeUnitOrder, isEnglishStopWord, sortedWithPrefix, stem as stemWord, typoBudget, Vocabulary, words as analyse, type FuzzyMatch } from '../text/index.js';
import { parseQuery, type ParsedQuery, type QueryWord } from './query.js';
import { type ActiveFilter, Facet, passes, sortKey, compareKeys, type SortKey } from './filters.js';

export interface SearchRequest {
  query: string;
  filters: ActiveFilter[];
  sort: string | null;
  sortOrder: 'ASC' | 'DESC';
  includeContentGroups: string[] | null;
  excludeContentGroups: string[] | null;
  /** Compute facets for these filter definitions (empty: none). */
  facetDefs: FilterDefinition[];
  /** Overrides settings.typoTolerance (suggest uses its own). */
  typoTolerance?: 'default' | 'strict' | 'off';
  /** Last word as prefix (default true). */
  prefix?: boolean;
  /**
   * Only the first `topK` hits need to be in order (the rest still count in totals and
   * facets): large result sets are then ranked by a partial selection instead of a full sort.
   */
  topK?: number;
}

/** One ranked match. */
export interface Hit {
  seg: LiveSegment;
  id: number;
  url: string;
  /** Group name as reported ('_' for none). */
  group: string;
  score: number;
  typos: number;
}

export interface EngineResult {
  /** Number of matches (all of them, even when `hits` holds only the top `topK`). */
  total: number;
  /** Every match, ranked (or sorted); with `topK` and no sort, only the best ones, ranked. */
  hits: Hit[];
  perGroup: Record<string, number>;
  facets: Array<Record<string, unknown>>;
  /** Folded words that matched (for highlighting). */
  matched: Set<string>;
  /** Query words actually required after the drop-last-words fallback. */
  usedWords: string[];
  parsed: ParsedQuery;
}

type Kind = 'exact' | 'stem' | 'synonym' | 'prefix' | 'typo';
interface Alternative {
  term: string;
  kind: Kind;
  distance: number;
  weight: number;
}

const KIND_WEIGHT: Record<Kind, number> = { exact: 1, stem: 0.9, synonym: 0.9, prefix: 0.8, typo: 0.6 };
const K1 = 1.2;
// Length normalisation per field: titles and URLs are short and uniform, content varies.
const B: number[] = [0.5, 0.5, 0.6, 0.5, 0.75];
const MAX_PREFIX_EXPANSIONS = 60;
/** Queries with at least this many significant words use OR semantics with coordination. */
export const LONG_QUERY_WORDS = 4;
// Long natural-language queries ("what problems of heat conduction in composite slabs have
// been solved"): each word is weaker evidence of the page's topic than a short query's words,
// so a title holding one of them counts half as much, repeated occurrences saturate later
// (k1 2.0) and long pages are normalised less (content b 0.4). Measured on Cranfield
// (bench/relevance.ts): nDCG@10 0.409 → 0.423; the PostgreSQL known-item scores are unchanged.
export const K1_LONG = 2.0;
export const B_LONG: readonly number[] = [0.5, 0.5, 0.6, 0.5, 0.4];
export const FIELD_SCALE_LONG: readonly number[] = [0.5, 1, 1, 1, 1];


const vocabCache = new WeakMap<object, Vocabulary>();
const fuzzyCache = new WeakMap<object, Map<string, FuzzyMatch[]>>();
const FUZZY_CACHE_SIZE = 20_000;

/**
 * Typo matches of `word` in one segment, cached per segment (segments are immutable, and
 * visitors repeat queries): the trie walk is the costliest part of query expansion.
 */
function fuzzyIn(seg: LiveSegment, word: string, budget: number, prefix: boolean, limit?: number): FuzzyMatch[] {
  let cache = fuzzyCache.get(seg.reader);
  if (!cache) fuzzyCache.set(seg.reader, (cache = new Map()));
  const key = `${budget}${prefix ? 'p' : 'w'}${limit ?? ''}:${word}`;
  let r = cache.get(key);
  if (!r) {
    r = vocabularyOf(seg).fuzzy(word, budget, prefix, limit);
    if (cache.size >= FUZZY_CACHE_SIZE) cache.clear();
    cache.set(key, r);
  }
  return r;
}
function vocabularyOf(seg: LiveSegment): Vocabulary {
  let v = vocabCache.get(seg.reader);
  if (!v) vocabCache.set(seg.reader, (v = new Vocabulary(seg.reader.terms())));
  return v;
}

const stemCache = new WeakMap<object, Map<string, string[]>>();
const sortedTerms = new WeakMap<object, readonly string[]>();

/** Words of one segment sharing `stem`, cached per segment (visitors repeat words). */
function termsWithStem(seg: LiveSegment, stem: string): string[] {
  let cache = stemCache.get(seg.reader);
  if (!cache) stemCache.set(seg.reader, (cache = new Map()));
  let r = cache.get(stem);
  if (!r) {
    r = seg.reader.termsWithStem(stem);
    if (cache.size >= FUZZY_CACHE_SIZE) cache.clear();
    cache.set(stem, r);
  }
  return r;
}

/**
 * The first `limit` words of one segment starting with `prefix`, in code-unit order: listed from
 * the segment's typo trie (loaded once for typo matching anyway) instead of an SQLite range
 * query per keystroke. Where the trie cannot list in code-unit order (surrogates in the prefix
 * or a lone one in the vocabulary), a binary search over the sorted word list.
 */
export function termsWithPrefix(seg: LiveSegment, prefix: string, limit: number): string[] {
  const fromTrie = vocabularyOf(seg).withPrefix(prefix, limit);
  if (fromTrie) return fromTrie;
  let terms = sortedTerms.get(seg.reader);
  if (!terms) sortedTerms.set(seg.reader, (terms = inCodeUnitOrder(seg.reader.terms())));
  return sortedWithPrefix(terms, prefix, limit);
}

export function groupName(g: string): string {
  return g === '' ? '_' : g;
}

function isStop(word: string, settings: SearchSettings): boolean {
  if (settings.stopWords) return settings.stopWords.includes(word);
  return settings.language === 'en' && isEnglishStopWord(word);
}

/** Expansions of one query word present anywhere in the snapshot. */
function expand(
  q: QueryWord, snap: IndexSnapshot, settings: SearchSettings, tolerance: 'default' | 'strict' | 'off', allowPrefix: boolean,
  typosOnlyWhenUnknown: boolean,
): Map<string, Alternative> {
  const alts = new Map<string, Alternative>();
  const add = (term: string, kind: Kind, distance: number, weight = KIND_WEIGHT[kind]) => {
    const old = alts.get(term);
    if (!old || weight > old.weight) alts.set(term, { term, kind, distance, weight });
  };
  const w = q.word;
  const segs = snap.segments;
  for (const s of segs) if (s.reader.hasTerm(w)) { add(w, 'exact', 0); break; }
  if (q.exactOnly) return alts;
  if (q.joinNext) for (const s of segs) if (s.reader.hasTerm(q.joinNext)) { add(q.joinNext, 'stem', 0, KIND_WEIGHT.stem); break; }
  const st = stemWord(w, settings.language);
  for (const s of segs) for (const t of termsWithStem(s, st)) if (t !== w) add(t, 'stem', 0);
  for (const syn of synonymsOf(w, settings)) {
    for (const s of segs) if (s.reader.hasTerm(syn)) { add(syn, 'synonym', 0); break; }
    const sst = stemWord(syn, settings.language);
    for (const s of segs) for (const t of termsWithStem(s, sst)) add(t, 'synonym', 0, KIND_WEIGHT.synonym * 0.95);
  }
  if (q.prefix && allowPrefix) {
    for (const s of segs) {
      for (const t of termsWithPrefix(s, w, MAX_PREFIX_EXPANSIONS)) {
        // Closer completions are likelier what the visitor is typing.
        if (t !== w) add(t, 'prefix', 0, KIND_WEIGHT.prefix * Math.max(0.5, w.length / t.length) ** 0.5);
      }
    }
  }
  // Identifiers typed with a joiner also match their joined form, with its own typo budget.
  if (q.compound) {
    const c = q.compound;
    for (const s of segs) if (s.reader.hasTerm(c)) { add(c, 'exact', 0); break; }
    if (q.prefix && allowPrefix) for (const s of segs) for (const t of termsWithPrefix(s, c, MAX_PREFIX_EXPANSIONS)) if (t !== c) add(t, 'prefix', 0, KIND_WEIGHT.prefix);
    const cb = typoBudget([...c].length, tolerance);
    if (cb > 0) for (const s of segs) for (const m of fuzzyIn(s, c, cb, false)) if (m.distance > 0) add(m.term, 'typo', m.distance, KIND_WEIGHT.typo / m.distance);
  }
  // In long OR queries, typo variants of words the index knows only add noise.
  const budget = typosOnlyWhenUnknown && alts.size > 0 ? 0 : typoBudget([...w].length, tolerance);
  if (budget > 0) {
    for (const s of segs) {
      for (const m of fuzzyIn(s, w, budget, false)) {
        if (m.distance > 0) add(m.term, 'typo', m.distance, KIND_WEIGHT.typo / m.distance);
      }
      if (q.prefix && allowPrefix && w.length >= 4) {
        for (const m of fuzzyIn(s, w, 1, true, 60)) {
          if (m.distance > 0) add(m.term, 'typo', m.distance, KIND_WEIGHT.typo * KIND_WEIGHT.prefix);
        }
      }
    }
  }
  return alts;
}

const expansionCache = new WeakMap<IndexSnapshot, WeakMap<SearchSettings, Map<string, Alternative[]>>>();
/** Cached expansions per snapshot and settings object, cleared when full (like the typo cache). */
const EXPANSION_CACHE_SIZE = 5_000;

/**
 * {@link expand}'s alternatives as a list (search thread), cached per snapshot and settings
 * object: an expansion depends only on the snapshot's segment vocabularies (not on deletes),
 * the settings (language, synonyms) and the word's own flags, all in the key or the maps'
 * owners; visitors repeat words, and the cached list is read only. A new generation (another
 * snapshot object) starts empty.
 */
function expansionsOf(
  q: QueryWord, snap: IndexSnapshot, settings: SearchSettings, tolerance: 'default' | 'strict' | 'off', allowPrefix: boolean,
  typosOnlyWhenUnknown: boolean,
): Alternative[] {
  let bySettings = expansionCache.get(snap);
  if (!bySettings) expansionCache.set(snap, (bySettings = new WeakMap()));
  let cache = bySettings.get(settings);
  if (!cache) bySettings.set(settings, (cache = new Map()));
  const key = `${tolerance}\u0000${allowPrefix ? 1 : 0}${typosOnlyWhenUnknown ? 1 : 0}${q.prefix ? 1 : 0}${q.exactOnly ? 1 : 0}\u0000${q.word}\u0000${q.joinNext ?? ''}\u0000${q.compound ?? ''}`;
  let r = cache.get(key);
  if (!r) {
    r = [...expand(q, snap, settings, tolerance, allowPrefix, typosOnlyWhenUnknown).values()];
    if (cache.size >= EXPANSION_CACHE_SIZE) cache.clear();
    cache.set(key, r);
  }
  return r;
}

/** Single-word synonyms of `word` from settings (groups both ways, mappings one way). */
function synonymsOf(word: string, settings: SearchSettings): string[] {
  const out: string[] = [];
  for (const s of settings.synonyms) {
    if ('terms' in s) {
      const forms = s.terms.map((t) => analyse(t).join(' '));
      if (forms.includes(word)) for (const f of forms) if (f !== word && !f.includes(' ')) out.push(f);
    } else if (analyse(s.from).join(' ') === word) {
      for (const t of s.to) {
        const f = analyse(t).join(' ');
        if (f && !f.includes(' ')) out.push(f);
      }
    }
  }
  return out;
}

/**
 * The documents of one segment matching one query word: best expansion score per document
 * (typed arrays indexed by row id: no per-document objects on the hot path), `typo[id]` 0 when
 * a non-typo expansion matched, 1 when only typo ones did, 255 when none; `ids` lists the
 * matching rows in first-seen order. `score[id]` means something only where `typo[id]` is not
 * 255: every first match writes it, so a released array's scores are left as they were.
 */
interface SlotHits {
  score: Float64Array;
  typo: Uint8Array;
  ids: Int32Array;
  count: number;
  /** Live documents matching the word in this segment (count may hold only candidates). */
  df: number;
}
const NO_MATCH = 255;

/**
 * `record` (in buildSlotMaps) of every posting i of a list into `h` whose row `id` has
 * `flags[id] !== skip` (live rows: flags = tombstones, skip = 1; a probed word's candidates:
 * flags = the first word's typo marks, skip = NO_MATCH) — the same updates in the same order,
 * with the alternative's typo mark `t`, its `weight` and its BM25F values `imp` passed once
 * per list instead of looked up per posting.
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

// Reusable SlotHits per segment size: allocating (and zeroing) fresh typed arrays of a big
// segment's size for every word of every query kept the garbage collector busy.
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

/** One cached list of values; `used` is its second-chance bit (CLOCK eviction). */
interface ImpactEntry {
  p: Postings;
  imp: Float64Array;
  bytes: number;
  used: boolean;
  owner: Map<string, ImpactEntry>;
  term: string;
  /** The reader's maps by scoring setup, and this entry's setup (emptied maps are dropped). */
  setups: Map<string, Map<string, ImpactEntry>>;
  setup: string;
}
/** Per segment reader, per scoring setup: term → cached values. */
const impactMaps = new WeakMap<object, Map<string, Map<string, ImpactEntry>>>();
/**
 * Eviction order of all entries (insertion order; a hit only sets `used`, so lookups never
 * reorder a Map), evicted in batches down to 7/8 of the budget.
 */
const impactClock = new Set<ImpactEntry>();

/**
 * BM25F values of whole postings lists for one scoring setup (field weights, b, k1 and the
 * snapshot's average lengths): common words recur across queries, and their value per posting
 * is the same until a new generation changes the averages. Values come from the same function
 * as uncached scoring, so cached and fresh scores are identical. One budget for the thread,
 * sized in bytes (values plus the decoded postings an entry keeps alive).
 */
interface ImpactCache {
  get(term: string, p: Postings): Float64Array | undefined;
  set(term: string, p: Postings, imp: Float64Array): void;
}

function impactsFor(seg: LiveSegment, scoringKey: string): ImpactCache {
  let byKey = impactMaps.get(seg.reader);
  if (!byKey) {
    const setups = new Map<string, Map<string, ImpactEntry>>();
    impactMaps.set(seg.reader, (byKey = setups));
    // A retired segment's values go with its reader, not when the CLOCK comes round to them.
    seg.reader.onClose(() => {
      for (const m of setups.values()) {
        for (const e of m.values()) {
          impactClock.delete(e);
          engineCacheUsed.impacts -= e.bytes;
        }
      }
      setups.clear();
    });
  }
  let map = byKey.get(scoringKey);
  if (!map) byKey.set(scoringKey, (map = new Map()));
  const m = map;
  const setups = byKey;
  return {
    get(term, p) {
      const e = m.get(term);
      // The postings object identifies the decoded list the values belong to.
      if (!e || e.p !== p) return undefined;
      e.used = true;
      return e.imp;
    },
    set(term, p, imp) {
      const bytes = imp.byteLength + p.ids.byteLength + p.tfs.byteLength + 2 * term.length + 128;
      // Budget: all segments of this thread (src/index/budgets.ts); one list may take an eighth.
      if (bytes > engineCacheBudget.impacts / 8) return;
      const old = m.get(term);
      if (old) {
        impactClock.delete(old);
        engineCacheUsed.impacts -= old.bytes;
      }
      const e: ImpactEntry = { p, imp, bytes, used: false, owner: m, term, setups, setup: scoringKey };
      m.set(term, e);
      impactClock.add(e);
      engineCacheUsed.impacts += bytes;
      if (engineCacheUsed.impacts <= engineCacheBudget.impacts) return;
      const target = engineCacheBudget.impacts - engineCacheBudget.impacts / 8;
      for (const x of impactClock) {
        if (engineCacheUsed.impacts <= target) break;
        impactClock.delete(x);
        if (x.used) {
          x.used = false;
          impactClock.add(x);
          continue;
        }
        if (x.owner.get(x.term) === x) x.owner.delete(x.term);
        // Setups of past generations empty out and go.
        if (x.owner.size === 0 && x.setups.get(x.setup) === x.owner) x.setups.delete(x.setup);
        engineCacheUsed.impacts -= x.bytes;
      }
    },
  };
}

/**
 * First index at or after `from` whose id is >= `target`, in ascending `ids` (ids[from] <
 * target): exponential then binary search, so skipping far ahead costs O(log distance).
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

/** Each row's group as an index into the distinct group names (as reported), per doc values. */
interface GroupIndex {
  ids: Int32Array;
  names: string[];
}
const groupIndexes = new WeakMap<object, GroupIndex>();

function groupIndex(dv: { group: string[] }): GroupIndex {
  let g = groupIndexes.get(dv);
  if (!g) {
    const byName = new Map<string, number>();
    const names: string[] = [];
    const ids = new Int32Array(dv.group.length);
    for (let id = 0; id < dv.group.length; id++) {
      const name = groupName(dv.group[id] ?? '');
      let k = byName.get(name);
      if (k === undefined) {
        k = names.push(name) - 1;
        byName.set(name, k);
      }
      ids[id] = k;
    }
    groupIndexes.set(dv, (g = { ids, names }));
  }
  return g;
}

/**
 * Each row's boost where the row is live in this generation and has status 200, NaN elsewhere:
 * the plain match path's one read per match instead of three (tombstone, status, boost; random
 * reads into row-sized arrays are most of that path's cost at ~100k rows). Cached per tombstone
 * bitmap (one segment in one generation) and doc values, like the document frequencies below.
 */
const liveBoostCache = new WeakMap<Uint8Array, WeakMap<object, Float64Array>>();

function liveBoosts(dead: Uint8Array, dv: { status: Int32Array; boost: Float64Array }): Float64Array {
  let byDv = liveBoostCache.get(dead);
  if (!byDv) liveBoostCache.set(dead, (byDv = new WeakMap()));
  let lb = byDv.get(dv);
  if (!lb) {
    lb = new Float64Array(dv.boost.length);
    for (let id = 0; id < lb.length; id++) lb[id] = dead[id] !== 1 && dv.status[id] === 200 ? dv.boost[id]! : NaN;
    byDv.set(dv, lb);
  }
  return lb;
}

/**
 * Live document frequency of one query word in one segment: the live union of its
 * expansions' postings ({@link liveUnion}), cached per tombstone bitmap (one segment in one
 * generation) and reader, keyed by the expansion terms. A word probed only for candidates (lazy
 * AND) would otherwise still pass over every posting of every expansion to count them.
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
    // Cleared whole when full (no per-hit reordering; see the CLOCK caches above for why).
    if (m.size >= DF_CACHE_SIZE) m.clear();
    m.set(key, df);
  }
  return df;
}

/**
 * Runs a query over a pinned snapshot. Pure with respect to its inputs; statistics are
 * snapshot-wide.
 */
export function runQuery(snap: IndexSnapshot, settings: SearchSettings, req: SearchRequest): EngineResult {
  const parsed = parseQuery(req.query);
  const tolerance = req.typoTolerance ?? settings.typoTolerance;
  const weights = fieldWeightArray(settings.fieldWeights);
  const N = Math.max(1, snap.totalDocs);
  const avg = snap.totalLengths.map((l) => Math.max(1, l / N));
  const matched = new Set<string>();

  // Words that must match: stop words only count when the query has nothing else.
  let slots = parsed.words.filter((w) => w.phrase >= 0 || !isStop(w.word, settings));
  if (slots.length === 0) slots = parsed.words;
  const longQuery = !parsed.browse && parsed.phrases.length === 0 && slots.filter((s) => !s.exactOnly).length >= LONG_QUERY_WORDS;
  const alternatives = slots.map((w) => expansionsOf(w, snap, settings, tolerance, req.prefix !== false, longQuery));
  const k1 = longQuery ? K1_LONG : K1;
  const bs = longQuery ? B_LONG : B;
  const fw = longQuery ? weights.map((w, f) => w * FIELD_SCALE_LONG[f]!) : weights;
  // Everything a posting's BM25F value depends on besides the posting and its row.
  const scoringKey = `${k1}|${bs.join(',')}|${fw.join(',')}|${avg.join(',')}`;

  const postingsCache = new Map<string, Array<Postings | null>>();
  const postingsOf = (term: string): Array<Postings | null> => {
    let p = postingsCache.get(term);
    if (!p) postingsCache.set(term, (p = snap.segments.map((s) => s.reader.postings(term))));
    return p;
  };

  // Per segment, per slot: best alternative score of each document. With `lazy` (AND
  // queries), the slot with the shortest postings is scored in full and the others are only
  // looked up for the documents it matched (a galloping walk over their sorted postings), so a
  // common word costs a few probes instead of a pass over its postings. Each slot's document
  // frequency (for its idf) is still the live union over all its expansions (`df`).
  const buildSlotMaps = (lazy: boolean): SlotHits[][] => snap.segments.map((seg, si) => {
    const dv = seg.reader.docValues();
    const n = dv.urls.length;
    const dead = seg.dead;
    const lists = alternatives.map((alts) => alts.map((a) => postingsOf(a.term)[si] ?? null));
    const totals = lists.map((ls) => ls.reduce((t, p) => t + (p ? p.ids.length : 0), 0));
    const bm25 = (p: Postings, i: number, id: number): number => {
      let x = 0;
      for (let f = 0; f < NFIELDS; f++) {
        const tf = p.tfs[i * NFIELDS + f]!;
        if (tf === 0) continue;
        const len = dv.lengths[id * NFIELDS + f]!;
        x += (fw[f]! * tf) / (1 - bs[f]! + (bs[f]! * len) / avg[f]!);
      }
      return (x * (k1 + 1)) / (x + k1);
    };
    const impacts = impactsFor(seg, scoringKey);
    // Records the match of row `id` (at postings index i) by alternative `a` in `h`; `imp` holds
    // the list's precomputed BM25F values when it was scored in full before.
    const record = (h: SlotHits, a: Alternative, p: Postings, i: number, id: number, imp: Float64Array | undefined): void => {
      const t = a.kind === 'typo' ? 1 : 0;
      const old = h.typo[id]!;
      if (t > old) return;
      const sc = a.weight * (imp ? imp[i]! : bm25(p, i, id));
      if (old === NO_MATCH) {
        h.ids[h.count++] = id;
        h.score[id] = sc;
        h.typo[id] = t;
      } else if (t < old) {
        h.score[id] = sc;
        h.typo[id] = t;
      } else if (sc > h.score[id]!) h.score[id] = sc;
    };
    // The BM25F values of a whole list, computed once and remembered for later queries of
    // this generation.
    const impactsOf = (a: Alternative, p: Postings): Float64Array => {
      let imp = impacts.get(a.term, p);
      if (!imp) {
        imp = new Float64Array(p.ids.length);
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
        // record() of every live posting, inlined with the alternative's constants hoisted:
        // this loop visits every posting of the word's expansions.
        recordWhere(h, a.kind === 'typo' ? 1 : 0, a.weight, p.ids, impactsOf(a, p), dead, 1);
      });
      h.df = h.count;
      return h;
    };
    let first = -1;
    if (lazy && alternatives.length > 1) {
      first = 0;
      for (let i = 1; i < totals.length; i++) if (totals[i]! < totals[first]!) first = i;
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
        // A list not much longer than the candidate set is walked whole: its BM25F values are
        // then worth computing once for the whole list (and kept) rather than per match, and
        // a candidate is recognised by its entry in the first word's map (no search).
        if (len <= 4 * h0.count) {
          recordWhere(h, a.kind === 'typo' ? 1 : 0, a.weight, ids, impactsOf(a, p), h0.typo, NO_MATCH);
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
          if (ids[j] === id) record(h, a, p, j, id, imp);
        }
      });
      out[slot] = h;
    }
    return out;
  });
  let lazyMaps = !longQuery && slots.length > 1;
  let slotMaps = buildSlotMaps(lazyMaps);

  // One idf per query word over the union of its expansions (live documents of all segments):
  // expansions act as one term, so a rare variant does not outrank the word itself.
  const slotIdf = slots.map((_, i) => {
    let df = 0;
    for (const maps of slotMaps) df += maps[i]!.df;
    return Math.log(1 + (N - df + 0.5) / (df + 0.5));
  });

  const phraseSets = (si: number): Array<Set<number>> =>
    parsed.phrases.map((ph) => snap.segments[si]!.reader.ftsMatch('"' + ph.join(' ') + '"'));
  const excludedIds = (si: number): Set<number> => {
    const out = new Set<number>();
    const seg = snap.segments[si]!;
    for (const w of parsed.excludes) {
      const forms = new Set([w, ...termsWithStem(seg, stemWord(w, settings.language))]);
      for (const t of forms) {
        const p = seg.reader.postings(t);
        if (p) for (const id of p.ids) out.add(id);
      }
    }
    for (const ph of parsed.excludedPhrases) for (const id of seg.reader.ftsMatch('"' + ph.join(' ') + '"')) out.add(id);
    return out;
  };

  const includeGroups = req.includeContentGroups ? new Set(req.includeContentGroups) : null;
  const excludeGroups = req.excludeContentGroups ? new Set(req.excludeContentGroups) : null;
  const facets = req.facetDefs.map((d) => new Facet(d));
  const facetIndex = new Map(req.facetDefs.map((d, i) => [d.id, i]));

  // Drop-last-words fallback: require the first k slots, k from all down to 1.
  let required = slots.length;
  let hits: Hit[] = [];
  let total = 0;
  // With topK and relevance order, only the best `keep` hits are kept while collecting
  // (a bounded heap, worst on top): large result sets then allocate no object per match.
  const keep = req.topK !== undefined && !req.sort ? Math.max(req.topK, RERANK_TOP) : 0;
  const perGroup: Record<string, number> = {};
  const mustKeep = slots.map((s) => s.phrase >= 0 || s.exactOnly);
  // Long questions in plain words ("what problems of heat conduction in composite slabs have
  // been solved") rarely have a page containing every word: they rank with OR semantics
  // (BM25 sum; pages holding more of the words score higher by construction).
  const orMode = longQuery;
  for (;;) {
    hits = [];
    total = 0;
    for (const f of facets) f.counts.clear(), (f.min = Infinity), (f.max = -Infinity), (f.seen = 0);
    for (const k of Object.keys(perGroup)) delete perGroup[k];
    const use = slots.map((_, i) => i < required || mustKeep[i]!);
    const idfs = slotIdf.filter((_, i) => use[i]);
    snap.segments.forEach((seg, si) => {
      const dv = seg.reader.docValues();
      const maps = slotMaps[si]!.filter((_, i) => use[i]);
      const phrases = parsed.phrases.length ? phraseSets(si) : [];
      const excluded = parsed.excludes.length || parsed.excludedPhrases.length ? excludedIds(si) : null;
      // Without phrases, exclusions, group lists, filters or facets (the common request), a
      // match only needs liveness, its group's count and the top-k heap: groups are counted
      // by row group index into a typed array and added to `perGroup` at the end of the
      // segment in first-seen order (the order the keys would have been inserted in).
      const plain = phrases.length === 0 && !excluded && !includeGroups && !excludeGroups && req.filters.length === 0 && facets.length === 0;
      const gi = plain ? groupIndex(dv) : null;
      const groupCounts = gi ? new Int32Array(gi.names.length) : null;
      const groupOrder: number[] = [];
      const lb = gi ? liveBoosts(seg.dead, dv) : null;
      const consider = (id: number, score: number, typos: number) => {
        if (lb) {
          // One read for liveness, status and boost (NaN: not a live 200 row).
          const boost = lb[id]!;
          if (boost !== boost) return;
          const g = gi!.ids[id]!;
          if (groupCounts![g]++ === 0) groupOrder.push(g);
          total++;
          const final = score * boost;
          if (keep === 0) {
            hits.push({ seg, id, url: dv.urls[id]!, group: gi!.names[g]!, score: final, typos });
            return;
          }
          if (hits.length < keep) {
            hits.push({ seg, id, url: dv.urls[id]!, group: gi!.names[g]!, score: final, typos });
            heapUp(hits, hits.length - 1);
            return;
          }
          const worst = hits[0]!;
          if (typos > worst.typos || (typos === worst.typos && final < worst.score)) return;
          const url = dv.urls[id]!;
          const c = typos - worst.typos || worst.score - final || (url < worst.url ? -1 : url > worst.url ? 1 : 0);
          if (c < 0) {
            hits[0] = { seg, id, url, group: gi!.names[g]!, score: final, typos };
            heapDown(hits, 0);
          }
          return;
        }
        if (seg.dead[id] === 1 || dv.status[id] !== 200) return;
        if (excluded?.has(id)) return;
        for (const ph of phrases) if (!ph.has(id)) return;
        const group = groupName(dv.group[id]!);
        if (includeGroups && !includeGroups.has(group)) return;
        if (excludeGroups && excludeGroups.has(group)) return;
        // Filters: a document failing exactly one filter still counts for that filter's facet.
        let failed = -1;
        let failures = 0;
        const fv = dv.filters[id] ?? null;
        for (let fi = 0; fi < req.filters.length; fi++) {
          if (!passes(fv, req.filters[fi]!)) {
            failures++;
            failed = fi;
            if (failures > 1) break;
          }
        }
        if (failures === 1) {
          const idx = facetIndex.get(req.filters[failed]!.key);
          if (idx !== undefined) facets[idx]!.add(fv);
          return;
        }
        if (failures > 1) return;
        for (const f of facets) f.add(fv);
        perGroup[group] = (perGroup[group] ?? 0) + 1;
        total++;
        const final = score * dv.boost[id]!;
        if (keep === 0) {
          hits.push({ seg, id, url: dv.urls[id]!, group, score: final, typos });
          return;
        }
        if (hits.length < keep) {
          hits.push({ seg, id, url: dv.urls[id]!, group, score: final, typos });
          heapUp(hits, hits.length - 1);
          return;
        }
        const worst = hits[0]!;
        // Better than the worst kept hit? (same order as byRelevance)
        const c = typos - worst.typos || worst.score - final || (dv.urls[id]! < worst.url ? -1 : dv.urls[id]! > worst.url ? 1 : 0);
        if (c < 0) {
          hits[0] = { seg, id, url: dv.urls[id]!, group, score: final, typos };
          heapDown(hits, 0);
        }
      };
      const scan = (): void => {
        if (parsed.browse || maps.length === 0) {
          for (let id = 0; id < dv.urls.length; id++) consider(id, 0, 0);
          return;
        }
        if (orMode) {
          // Natural-language query: any word matches; scores add up over the words matched
          // (accumulated word by word, in word order, into one pooled array).
          const acc = takeSlotHits(dv.urls.length);
          for (let mi = 0; mi < maps.length; mi++) {
            const m = maps[mi]!;
            const idf = idfs[mi]!;
            for (let k = 0; k < m.count; k++) {
              const id = m.ids[k]!;
              if (acc.typo[id] === NO_MATCH) {
                acc.typo[id] = 0;
                acc.ids[acc.count++] = id;
                acc.score[id] = 0 + m.score[id]! * idf;
              } else acc.score[id]! += m.score[id]! * idf;
            }
          }
          for (let k = 0; k < acc.count; k++) consider(acc.ids[k]!, acc.score[acc.ids[k]!]!, 0);
          releaseSlotHits(acc);
          return;
        }
        let smallest = 0;
        for (let i = 1; i < maps.length; i++) if (maps[i]!.count < maps[smallest]!.count) smallest = i;
        const first = maps[smallest]!;
        for (let k = 0; k < first.count; k++) {
          const id = first.ids[k]!;
          let score = 0;
          let typos = 0;
          let ok = true;
          for (let mi = 0; mi < maps.length; mi++) {
            const m = maps[mi]!;
            const t = m.typo[id]!;
            if (t === NO_MATCH) {
              ok = false;
              break;
            }
            score += m.score[id]! * idfs[mi]!;
            typos += t;
          }
          if (ok) consider(id, score, typos);
        }
      };
      scan();
      for (const g of groupOrder) {
        const name = gi!.names[g]!;
        perGroup[name] = (perGroup[name] ?? 0) + groupCounts![g]!;
      }
    });
    if (hits.length > 0 || parsed.browse) break;
    // Drop the last droppable word and retry.
    let next = required - 1;
    while (next > 0 && mustKeep[next]) next--;
    if (next <= 0 || slots.length <= 1) break;
    required = next;
    // The word scored first may be the one dropped: score every word in full from now on.
    if (lazyMaps) {
      for (const maps of slotMaps) for (const h of maps) releaseSlotHits(h);
      slotMaps = buildSlotMaps(false);
      lazyMaps = false;
    }
  }

  const used = slots.filter((_, i) => i < required || mustKeep[i]!);
  for (const [i, alts] of alternatives.entries()) if (i < required || mustKeep[i]) for (const a of alts) matched.add(a.term);

  for (const maps of slotMaps) for (const h of maps) releaseSlotHits(h);
  if (keep > 0) hits.sort(byRelevance);
  else sortHits(hits, req);
  if (!req.sort && !parsed.browse && hits.length > 1) {
    // Read the last word as typed and, when it is unfinished, as a prefix; keep the better.
    const readings = [queryPhrase(parsed, slots, alternatives, snap, false), queryPhrase(parsed, slots, alternatives, snap, true)];
    applyPhraseBonus(hits, readings.filter((r, i): r is QueryPhrase => r !== null && (i === 0 || r.prefixLast)));
  }
  return {
    total,
    hits,
    perGroup,
    facets: facets.map((f) => f.out()).filter((x): x is Record<string, unknown> => x !== null),
    matched,
    usedWords: used.map((s) => s.word),
    parsed,
  };
}

const PREFIX_READING = 0.6;
/** How many top results get the phrase/exactness re-ranking. */
const RERANK_TOP = 100;
// Multipliers added to 1 for each signal a document shows.
const BONUS = { titleExact: 3, titleStart: 1, titlePhrase: 1, headingExact: 1.5 };

/** The query as a phrase of indexed words, for exactness signals. */
interface QueryPhrase {
  words: string[];
  /** The last word is an unfinished prefix. */
  prefixLast: boolean;
}

/**
 * The whole query as typed (stop words included) in indexed words: for each word its exact
 * form when indexed, else its most frequent closest expansion; the last word stays a prefix
 * when it is one. Null when some word has no usable form.
 */
function queryPhrase(
  parsed: ParsedQuery, slots: QueryWord[], alternatives: Alternative[][], snap: IndexSnapshot, allowPrefix: boolean,
): QueryPhrase | null {
  const out: string[] = [];
  let prefixLast = false;
  for (const [i, w] of parsed.words.entries()) {
    const si = slots.indexOf(w);
    const alts = si < 0 ? [] : alternatives[si]!;
    const isLast = i === parsed.words.length - 1;
    if (allowPrefix && w.prefix && isLast && alts.some((a) => (a.kind === 'prefix' || a.kind === 'exact') && a.term.startsWith(w.word))) {
      out.push(w.word);
      prefixLast = true;
      continue;
    }
    if (si < 0 || alts.some((a) => a.kind === 'exact' && a.term === w.word)) {
      out.push(w.word);
      continue;
    }
    const best = closestForm(w, alts, snap);
    if (best === null) return null;
    out.push(best);
  }
  return out.length ? { words: out, prefixLast } : null;
}

/**
 * Per cached list of alternatives ({@link expansionsOf}: one word with its flags, one snapshot):
 * the word's closest, most frequent indexed form ({@link closestForm}), or null when it has none.
 */
const closestForms = new WeakMap<Alternative[], string | null>();

/**
 * The alternative of `w` with the fewest edits, then the most postings over the snapshot's
 * segments (not the joined compound or the word joined with the next one): `w`'s form in the
 * query phrase when `w` itself is not indexed. Remembered per alternatives list, which fixes
 * the word, its flags and the snapshot: the choice looked up every alternative's postings in
 * every segment on each query, hundreds of lookups for a prefix.
 */
function closestForm(w: QueryWord, alts: Alternative[], snap: IndexSnapshot): string | null {
  const known = closestForms.get(alts);
  if (known !== undefined) return known;
  let best: Alternative | null = null;
  let bestDf = -1;
  for (const a of alts) {
    if (a.term === w.compound || a.term === w.joinNext) continue;
    const df = snap.segments.reduce((n, s) => n + (s.reader.postings(a.term)?.ids.length ?? 0), 0);
    if (!best || a.distance < best.distance || (a.distance === best.distance && df > bestDf)) {
      best = a;
      bestDf = df;
    }
  }
  const form = best ? best.term : null;
  closestForms.set(alts, form);
  return form;
}

/**
 * Re-ranks the top results by phrase and exactness signals: the title equal to the query,
 * starting with it, or holding it as a phrase (checked on the in-memory title keys), a heading
 * equal to the query or holding it, and the content holding it (FTS5 phrase queries over
 * boundary-marked streams). Only the top {@link RERANK_TOP} are touched; typo tiers are kept.
 * Deterministic and independent of segmentation (per-document signals only).
 */
function applyPhraseBonus(hits: Hit[], phrases: QueryPhrase[]): void {
  if (phrases.length === 0) return;
  const top = hits.slice(0, RERANK_TOP);
  const best = new Float64Array(top.length).fill(1);
  const flags = new FieldFlags(top);
  for (const phrase of phrases) {
    // A prefix reading is weaker evidence than the words as typed.
    const scale = phrase.prefixLast ? PREFIX_READING : 1;
    const bonus = phraseBonus(top, phrase, flags);
    for (let i = 0; i < top.length; i++) best[i] = Math.max(best[i]!, 1 + (bonus[i]! - 1) * scale);
  }
  for (let i = 0; i < top.length; i++) top[i]!.score *= best[i]!;
  top.sort(byRelevance);
  for (let i = 0; i < top.length; i++) hits[i] = top[i]!;
}

const TITLE_FIELD = 0;
const HEADINGS_FIELD = 2;

/** Bit of {@link FieldFlags}: the word is in the page's title. */
const IN_TITLE = 1;
/** Bit of {@link FieldFlags}: the word is in one of the page's headings. */
const IN_HEADINGS = 2;

/**
 * Whether each reading word is in the title and in the headings of each of `top` (IN_TITLE |
 * IN_HEADINGS), from one binary search of the word's postings per word and page, made on first
 * use and shared by both fields and every reading of the query (the readings share words).
 */
class FieldFlags {
  private readonly byWord = new Map<string, Int8Array>();
  /**
   * Each word's postings per segment, looked up once: the top 100 mostly share a few segments,
   * and a postings lookup (a large per-reader map) cost more than the binary search itself.
   */
  private readonly postingsByWord = new Map<string, Map<LiveSegment, Postings | null>>();

  constructor(private readonly top: Hit[]) {}

  of(word: string, i: number): number {
    let a = this.byWord.get(word);
    if (!a) this.byWord.set(word, (a = new Int8Array(this.top.length).fill(-1)));
    let v = a[i]!;
    if (v < 0) {
      const h = this.top[i]!;
      let bySeg = this.postingsByWord.get(word);
      if (!bySeg) this.postingsByWord.set(word, (bySeg = new Map()));
      let p = bySeg.get(h.seg);
      if (p === undefined) bySeg.set(h.seg, (p = h.seg.reader.postings(word)));
      v = a[i] = fieldFlags(p, h.id);
    }
    return v;
  }
}

/** {@link FieldFlags} of a term in row `id`, from the term's postings `p` in the row's segment (binary search). */
function fieldFlags(p: Postings | null, id: number): number {
  if (!p) return 0;
  const ids = p.ids;
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (ids[m]! < id) lo = m + 1;
    else hi = m;
  }
  if (lo >= ids.length || ids[lo] !== id) return 0;
  return (p.tfs[lo * NFIELDS + TITLE_FIELD]! > 0 ? IN_TITLE : 0) | (p.tfs[lo * NFIELDS + HEADINGS_FIELD]! > 0 ? IN_HEADINGS : 0);
}

/**
 * The multiplier each of `top` earns for one reading of the query (aligned with `top`). A title
 * or heading can only equal, start with or hold the reading when every full word of it is in
 * that field of the page's postings (the field's postings count every folded word of the
 * title and of each heading), so the title key and the heading hashes are looked at only then:
 * most of the top 100 hold the words in their content only.
 */
function phraseBonus(top: Hit[], phrase: QueryPhrase, flags: FieldFlags): Float64Array {
  const out = new Float64Array(top.length);
  const text = phrase.words.join(' ');
  const textHash = hashWord(text);
  // Words that must be whole words of the title (a prefix reading's last word is unfinished).
  const full = phrase.prefixLast ? phrase.words.slice(0, -1) : phrase.words;
  // The phrase checks below without building a padded title per hit: `' ' + title + ' '`
  // holding `' ' + text` (prefix reading) or `' ' + text + ' '`, once the title is known not
  // to start with the text (prefix) or with `text + ' '` and not to equal it (as typed).
  const spaced = ' ' + text;
  const spacedBoth = spaced + ' ';
  const textSpace = text + ' ';
  for (let i = 0; i < top.length; i++) {
    const h = top[i]!;
    const seg = h.seg;
    let b = 0;
    let titleMay = true;
    for (const w of full) if ((flags.of(w, i) & IN_TITLE) === 0) { titleMay = false; break; }
    if (titleMay) {
      const title = seg.reader.titleKey(h.id);
      if (phrase.prefixLast ? title.startsWith(text) && wordCount(title) === phrase.words.length : title === text) b = BONUS.titleExact;
      else if (title.startsWith(phrase.prefixLast ? text : textSpace)) b = BONUS.titleStart;
      else if (phrase.prefixLast ? title.includes(spaced) : title.endsWith(spaced) || title.includes(spacedBoth)) b = BONUS.titlePhrase;
    }
    // A heading equal to the query (hash of its folded words; as typed only).
    if (!phrase.prefixLast) {
      let headingMay = true;
      for (const w of full) if ((flags.of(w, i) & IN_HEADINGS) === 0) { headingMay = false; break; }
      if (headingMay) {
        const hk = seg.reader.headingKeys(h.id);
        if (hk && hk.includes(textHash)) b += BONUS.headingExact;
      }
    }
    out[i] = 1 + b;
  }
  return out;
}

/** `s.split(' ').length` without the array. */
function wordCount(s: string): number {
  let n = 1;
  for (let i = s.indexOf(' '); i >= 0; i = s.indexOf(' ', i + 1)) n++;
  return n;
}

function fieldWeightArray(w: FieldWeights): number[] {
  return [w.title, w.keywords, w.headings, w.url, w.content];
}

function byRelevance(a: Hit, b: Hit): number {
  return a.typos - b.typos || b.score - a.score || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
}

function sortHits(hits: Hit[], req: SearchRequest): void {
  if (!req.sort) {
    const k = req.topK === undefined ? hits.length : Math.max(req.topK, RERANK_TOP);
    if (hits.length > 4 * k) selectTop(hits, k);
    else hits.sort(byRelevance);
    return;
  }
  const key = req.sort;
  const keys = new Map<Hit, { k: SortKey; raw: string }>();
  for (const h of hits) {
    const dps = h.seg.reader.docValues().dataPoints[h.id] ?? null;
    const k = sortKey(dps, key);
    const raw = dps?.find((d) => d.key === key)?.value ?? '';
    keys.set(h, { k, raw: String(raw) });
  }
  const dir = req.sortOrder === 'DESC' ? -1 : 1;
  hits.sort((a, b) => {
    const ka = keys.get(a)!;
    const kb = keys.get(b)!;
    // Pages without the key sort last in both orders.
    if (ka.k === null || kb.k === null) {
      if (ka.k === null && kb.k === null) return byRelevance(a, b);
      return ka.k === null ? 1 : -1;
    }
    return dir * compareKeys(ka.k, kb.k, ka.raw, kb.raw) || byRelevance(a, b);
  });
}

/** Max-heap by relevance (the worst hit on top): sift up. */
function heapUp(heap: Hit[], i: number): void {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (byRelevance(heap[i]!, heap[p]!) <= 0) break;
    [heap[i], heap[p]] = [heap[p]!, heap[i]!];
    i = p;
  }
}

/** Max-heap by relevance (the worst hit on top): sift down. */
function heapDown(heap: Hit[], i: number): void {
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

/**
 * Moves the `k` best hits (by relevance) to the front of `hits`, in order; the rest follow in
 * no particular order. A bounded max-heap of the worst kept hit: O(n log k).
 */
export function selectTop(hits: Hit[], k: number): void {
  const heap: Hit[] = [];
  const rest: Hit[] = [];
  for (const h of hits) {
    if (heap.length < k) {
      heap.push(h);
      heapUp(heap, heap.length - 1);
    } else if (byRelevance(h, heap[0]!) < 0) {
      rest.push(heap[0]!);
      heap[0] = h;
      heapDown(heap, 0);
    } else rest.push(h);
  }
  heap.sort(byRelevance);
  for (let i = 0; i < heap.length; i++) hits[i] = heap[i]!;
  for (let i = 0; i < rest.length; i++) hits[heap.length + i] = rest[i]!;
}

/** Data-point keys present in the snapshot (default sorting options). */
export function dataPointKeys(snap: IndexSnapshot): string[] {
  const keys = new Set<string>();
  for (const s of snap.segments) {
    const dv = s.reader.docValues();
    dv.dataPoints.forEach((dps, id) => {
      if (dps && s.dead[id] !== 1 && dv.status[id] === 200) for (const d of dps) keys.add(d.key);
    });
  }
  return [...keys].sort();
}
