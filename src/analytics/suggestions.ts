/**
 * In-memory index of logged queries for `querySuggestions` (SPEC §6): one per project, owned
 * by that project's {@link SiteQueryLog}, mutated only on the main thread by the log writer
 * (after each committed batch) and by the window expiry (rollup job).
 *
 * Why in memory: suggest answers must take well under a millisecond with a million logged
 * searches. The SQLite side keeps the same numbers (`query_totals`) for restarts; this
 * structure is rebuilt from it at open.
 *
 * Layout: every distinct query has one mutable {@link QueryStat}. A sorted array of "match
 * keys" holds, for every query, the suffix starting at each word (so `postgres insert` is
 * keyed as `postgres insert` and `insert`); a typed prefix is a contiguous range of that
 * array (binary search), which gives both "starts with" and "a word starts with" matching.
 * Counts change in place (the keys never move), so the hot write path is a Map lookup; only
 * new distinct queries add keys, first to a small unsorted tail that is merged into the sorted
 * array when it grows past {@link PENDING_MERGE_AT}.
 *
 * Short prefixes (1–6 characters, what a visitor has typed after one to six keystrokes) match
 * up to thousands of keys, so their answer is cached: the top {@link MAX_SUGGESTIONS} eligible
 * queries of each such prefix, computed by one range scan on first use and then kept exact
 * by the writer (a count only grows between window moves: bubble up or insert; a query whose
 * latest search found nothing drops the prefix's entry, recomputed on next use). The daily
 * window move clears the cache; so does reaching {@link SuggestionIndex.shortCacheMax} typed
 * prefixes. Up to 6 rather than 3 characters because a 4–6-character prefix of a common word
 * (`crea`, `tabl`) still scanned thousands of keys per call (≈ 7 % of the suggest route's main
 * thread in the benchmark); the price is on the write side, a few more map lookups per logged
 * search, and visitors type several suggest prefixes per search they submit.
 *
 * Ranking: most searched first, ties alphabetical. Eligible: searched at least once in the
 * window, latest search returned results, not `*`. `minSearches` only cuts the ranked list
 * (the list is sorted by count, so the qualifying queries are a prefix of it).
 */
import { lowerBound } from '../text/index.js';

/** Aggregate of one normalised query over the suggestion window. */
export interface QueryStat {
  query: string;
  /** Searches in the window (last 90 UTC days). */
  count: number;
  /** Result count of the most recent logged search of this query. */
  lastResults: number;
  /** Time (ms) of that most recent search. */
  lastAt: number;
  /** Scratch: id of the last lookup that saw this stat (de-duplicates multi-word hits). */
  seen: number;
  /**
   * Its distinct prefixes of 1–6 characters at word starts, computed on its first add (the
   * writer adds popular queries again and again; slicing and hashing them each time cost more
   * than the cache updates themselves).
   */
  prefixes?: string[];
}

/** One entry of a suggestion answer. */
export interface QuerySuggestion {
  query: string;
}

const PENDING_MERGE_AT = 2048;
/** Most query suggestions one call may ask for (SPEC §6: `maxQuerySuggestions` 0–10). */
export const MAX_SUGGESTIONS = 10;
/** Typed prefixes up to this many UTF-16 units are answered from the short-prefix cache. */
const SHORT_PREFIX = 6;
/**
 * Prefixes up to this long get their cached list in one pass over the queries when the index
 * is loaded or compacted, instead of a range scan on first use: a 1-character prefix covers a
 * large part of all keys (a scan took up to ~30 ms of main thread with 76k queries in the
 * benchmark), and there are few such prefixes.
 */
const PRECOMPUTED_PREFIX = 2;

/** Start offsets of the words of a normalised (single-spaced, trimmed) query. */
function wordStarts(query: string): number[] {
  const starts = [0];
  for (let i = query.indexOf(' '); i !== -1; i = query.indexOf(' ', i + 1)) starts.push(i + 1);
  return starts;
}

/** The distinct prefixes of 1–{@link SHORT_PREFIX} characters at the word starts of a query. */
function shortPrefixes(query: string): string[] {
  const out = new Set<string>();
  for (const start of wordStarts(query)) {
    for (let d = 1; d <= SHORT_PREFIX && start + d <= query.length; d++) out.add(query.slice(start, start + d));
  }
  return [...out];
}

/**
 * Puts `stat` into `list` (ranked by {@link better}, at most `max` long) at its place, or leaves
 * the list alone when it would fall off the end. Insertion sort: lists are a handful long.
 */
function insertRanked(list: QueryStat[], stat: QueryStat, max: number): void {
  if (list.length === max && !better(stat, list[max - 1]!)) return;
  let i = Math.min(list.length, max - 1);
  if (list.length < max) list.push(stat);
  while (i > 0 && better(stat, list[i - 1]!)) {
    list[i] = list[i - 1]!;
    i--;
  }
  list[i] = stat;
}

/** Ranking: most searched first, then alphabetical (a total order: queries are distinct). */
function better(a: QueryStat, b: QueryStat): boolean {
  if (a.count !== b.count) return a.count > b.count;
  return a.query < b.query;
}

/** Whether a stat may be suggested at all (`minSearches` aside). */
function eligible(s: QueryStat): boolean {
  // `*` is the browse-everything query, never a useful completion.
  return s.count > 0 && s.lastResults > 0 && s.query !== '*';
}

export class SuggestionIndex {
  private readonly stats = new Map<string, QueryStat>();
  private keys: string[] = [];
  private refs: QueryStat[] = [];
  private pendingKeys: string[] = [];
  private pendingRefs: QueryStat[] = [];
  private lookupId = 0;
  /** Short typed prefix → its top MAX_SUGGESTIONS eligible stats, ranked. */
  private readonly short = new Map<string, QueryStat[]>();
  /**
   * Bumped by every change that can change what {@link lookup} returns ({@link add},
   * {@link load}, {@link subtract}, {@link compact}; lookups only fill caches). A caller that
   * remembers a lookup's answer with this index and its version may reuse the answer while
   * both are unchanged (the suggest route's stored responses, src/http/suggest.ts).
   */
  version = 0;

  /** @param shortCacheMax at most this many cached short prefixes (then the cache starts over). */
  constructor(readonly shortCacheMax = 50_000) {}

  /** Distinct queries currently held (including ones whose window count fell to 0 until {@link compact}). */
  get size(): number {
    return this.stats.size;
  }

  /**
   * Adds `delta` searches of `query` (already normalised). `results`/`at` update the "last
   * results" when `at` is not older than what is known.
   */
  add(query: string, delta: number, results: number, at: number): void {
    this.version++;
    let stat = this.stats.get(query);
    if (!stat) {
      stat = { query, count: 0, lastResults: results, lastAt: at, seen: 0 };
      this.stats.set(query, stat);
      this.pushKeys(stat);
      if (this.pendingKeys.length >= PENDING_MERGE_AT) this.mergePending();
    }
    stat.count += delta;
    if (at >= stat.lastAt) {
      stat.lastAt = at;
      stat.lastResults = results;
    }
    if (this.short.size > 0) this.updateShort(stat);
  }

  /** Keeps the cached short-prefix lists exact after `stat` grew or changed its last results. */
  private updateShort(stat: QueryStat): void {
    const ok = eligible(stat);
    const prefixes = (stat.prefixes ??= shortPrefixes(stat.query));
    for (const prefix of prefixes) {
      const list = this.short.get(prefix);
      if (!list) continue;
      let i = list.indexOf(stat);
      if (!ok) {
        // Dropping an entry would leave a hole only a scan can fill: recompute on next use.
        if (i !== -1) this.short.delete(prefix);
        continue;
      }
      if (i === -1) {
        if (list.length === MAX_SUGGESTIONS && !better(stat, list[MAX_SUGGESTIONS - 1]!)) continue;
        if (list.length === MAX_SUGGESTIONS) list.pop();
        list.push(stat);
        i = list.length - 1;
      }
      while (i > 0 && better(stat, list[i - 1]!)) {
        list[i] = list[i - 1]!;
        list[--i] = stat;
      }
    }
  }

  /**
   * Bulk load (opening a project): like {@link add} for each row, but sorts the keys once at
   * the end instead of merging every {@link PENDING_MERGE_AT} new queries.
   */
  load(rows: Iterable<[query: string, count: number, lastResults: number, lastAt: number]>): void {
    this.version++;
    for (const [query, count, lastResults, lastAt] of rows) {
      let stat = this.stats.get(query);
      if (!stat) {
        stat = { query, count: 0, lastResults, lastAt, seen: 0 };
        this.stats.set(query, stat);
        this.pushKeys(stat);
      }
      stat.count += count;
      if (lastAt >= stat.lastAt) {
        stat.lastAt = lastAt;
        stat.lastResults = lastResults;
      }
    }
    this.short.clear();
    this.mergePending();
    this.precomputeShort();
  }

  /**
   * Fills the short-prefix cache for every prefix of up to {@link PRECOMPUTED_PREFIX}
   * characters at a word start, in one pass over the queries: the same lists as the range
   * scan of {@link lookup} (top {@link MAX_SUGGESTIONS} eligible, ranked), kept exact by
   * {@link add} from then on. Within {@link shortCacheMax}.
   */
  private precomputeShort(): void {
    const lists = new Map<string, QueryStat[]>();
    for (const stat of this.stats.values()) {
      if (!eligible(stat)) continue;
      const q = stat.query;
      for (const start of wordStarts(q)) {
        for (let d = 1; d <= PRECOMPUTED_PREFIX && start + d <= q.length; d++) {
          const prefix = q.slice(start, start + d);
          let list = lists.get(prefix);
          if (!list) lists.set(prefix, (list = []));
          // One entry per query even when several of its words start with the prefix.
          if (list.includes(stat)) continue;
          insertRanked(list, stat, MAX_SUGGESTIONS);
        }
      }
    }
    for (const [prefix, list] of lists) {
      if (this.short.size >= this.shortCacheMax) break;
      this.short.set(prefix, list);
    }
  }

  private pushKeys(stat: QueryStat): void {
    for (const start of wordStarts(stat.query)) {
      this.pendingKeys.push(start === 0 ? stat.query : stat.query.slice(start));
      this.pendingRefs.push(stat);
    }
  }

  /** Removes `delta` searches (window expiry). Never goes below zero. */
  subtract(query: string, delta: number): void {
    this.version++;
    const stat = this.stats.get(query);
    if (stat) stat.count = Math.max(0, stat.count - delta);
    this.short.clear();
  }

  /**
   * Drops queries whose count fell to zero (once a day, after the window moved). The sorted
   * key array is filtered in place of being rebuilt: O(keys), no re-sort.
   */
  compact(): void {
    this.version++;
    this.short.clear();
    this.mergePending();
    for (const [query, stat] of this.stats) if (stat.count <= 0) this.stats.delete(query);
    let k = 0;
    for (let i = 0; i < this.keys.length; i++) {
      if (this.refs[i]!.count > 0) {
        this.keys[k] = this.keys[i]!;
        this.refs[k++] = this.refs[i]!;
      }
    }
    this.keys.length = k;
    this.refs.length = k;
    this.precomputeShort();
  }

  /**
   * Every query with a positive window count as `[query, count, lastResults, lastAt]`, in
   * query order: what {@link load} takes (snapshots carry it to search nodes).
   */
  rows(): Array<[query: string, count: number, lastResults: number, lastAt: number]> {
    const out: Array<[string, number, number, number]> = [];
    for (const s of this.stats.values()) if (s.count > 0) out.push([s.query, s.count, s.lastResults, s.lastAt]);
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /** Current stat of a query (tests, reports). */
  get(query: string): Readonly<QueryStat> | undefined {
    return this.stats.get(query);
  }

  /**
   * Up to `max` (≤ {@link MAX_SUGGESTIONS}) logged queries matching the normalised `typed` text
   * at the start of the query or at the start of one of its words, searched at least
   * `minSearches` times in the window and whose latest search returned results; most searched
   * first, ties alphabetical. O(max) for 1–6 characters once cached, else O(log n + matches).
   */
  lookup(typed: string, max: number, minSearches: number): QuerySuggestion[] {
    if (max <= 0 || typed === '') return [];
    let ranked: QueryStat[];
    if (typed.length <= SHORT_PREFIX) {
      let list = this.short.get(typed);
      if (!list) {
        list = this.scan(typed, MAX_SUGGESTIONS, 1);
        if (this.short.size >= this.shortCacheMax) this.short.clear();
        this.short.set(typed, list);
      }
      ranked = list;
    } else {
      ranked = this.scan(typed, max, minSearches);
    }
    const out: QuerySuggestion[] = [];
    for (const s of ranked) {
      if (out.length === max || s.count < minSearches) break;
      out.push({ query: s.query });
    }
    return out;
  }

  /** Top `max` eligible stats with count ≥ `minSearches` whose keys start with `typed`, ranked. */
  private scan(typed: string, max: number, minSearches: number): QueryStat[] {
    const id = ++this.lookupId;
    const best: QueryStat[] = [];
    const consider = (stat: QueryStat): void => {
      if (stat.seen === id) return;
      stat.seen = id;
      if (stat.count < minSearches || !eligible(stat)) return;
      insertRanked(best, stat, max);
    };
    const keys = this.keys;
    for (let i = lowerBound(keys, typed); i < keys.length && keys[i]!.startsWith(typed); i++) consider(this.refs[i]!);
    const pk = this.pendingKeys;
    for (let i = 0; i < pk.length; i++) if (pk[i]!.startsWith(typed)) consider(this.pendingRefs[i]!);
    return best;
  }

  /** Sorts the pending tail and merges it into the sorted key array (linear merge). */
  private mergePending(): void {
    if (this.pendingKeys.length === 0) return;
    const order = this.pendingKeys.map((_, i) => i);
    const pk = this.pendingKeys;
    order.sort((a, b) => (pk[a]! < pk[b]! ? -1 : pk[a]! > pk[b]! ? 1 : 0));
    const keys: string[] = new Array(this.keys.length + pk.length);
    const refs: QueryStat[] = new Array(keys.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.keys.length || j < order.length) {
      if (j >= order.length || (i < this.keys.length && this.keys[i]! <= pk[order[j]!]!)) {
        keys[k] = this.keys[i]!;
        refs[k++] = this.refs[i++]!;
      } else {
        keys[k] = pk[order[j]!]!;
        refs[k++] = this.pendingRefs[order[j++]!]!;
      }
    }
    this.keys = keys;
    this.refs = refs;
    this.pendingKeys = [];
    this.pendingRefs = [];
  }
}
