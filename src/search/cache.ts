/**
 * The answer cache of `GET /sites` (main thread): rendered search answers keyed by (project
 * index, index generation, settings object, every search parameter). `SearchService`
 * (src/search/service.ts) consults it before handing a search to the executor. Same design as
 * the suggest cache (src/search/suggest.ts), sized in bytes because a search answer with
 * `includeContent` is several kilobytes.
 *
 * Why: visitors of one site repeat the same queries (a few hundred account for most searches),
 * and an answer only changes when the index or the settings change. Solr (queryResultCache) and
 * Algolia cache answers the same way; Elasticsearch has a request cache.
 *
 * Invalidation is by key, never by time: every commit, delete or merge publishes a new manifest
 * generation (strictly increasing per open index) and every settings change stores a new frozen
 * settings object, so an answer computed before a change can never be returned after it.
 * Entries of old generations are never looked up again: they are dropped as soon as a search of
 * a newer generation of the same project index arrives ({@link AnswerStore}), so a site that
 * keeps indexing does not fill the cache's share with dead answers. A cached
 * answer is the general search's answer by construction (tests compare them). The query log is
 * not part of the key: the route records hits and misses alike.
 */
import type { IndexSnapshot } from '../index/index.js';
import type { Settings } from '../core/index.js';
import type { SearchOutcome } from './executor.js';
import type { SearchParams } from './results.js';
import { objectId } from './object-id.js';

/** Counters of one {@link SearchCache}. */
export interface SearchCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

/**
 * The storage both answer caches use (this one and the suggest cache, src/search/suggest.ts):
 * an LRU map of answers bounded in bytes (and optionally in entries), which also knows the
 * newest generation it stored for each owner (project index) and drops an owner's older
 * generations' answers as soon as an answer of a newer one arrives, instead of leaving them to
 * the LRU.
 *
 * @example
 * const store = new AnswerStore<string>(1 << 20);
 * store.put(key, json, 2 * json.length, ownerId, snap.generation);
 * store.get(key); // json, now the most recently used
 */
export class AnswerStore<V> {
  private readonly entries = new Map<string, { key: string; value: V; bytes: number; owner: number }>();
  /** Per owner: the newest generation stored and the keys stored at it. */
  private readonly owners = new Map<number, { generation: number; keys: Set<string> }>();
  /** Estimated bytes of the entries held. */
  bytes = 0;

  /**
   * @param maxBytes total estimated size; @param maxEntryBytes the largest entry kept;
   * @param maxEntries most entries held.
   */
  constructor(
    readonly maxBytes: number,
    readonly maxEntryBytes = maxBytes,
    readonly maxEntries = Infinity,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value stored under `key`, now the most recently used, or undefined. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    // Under the key stored with the entry, not the caller's: the caller's key string is new on
    // every request, and keeping it would make one string per cached answer outlive the request
    // (copied by the next scavenge, then promoted to the old generation).
    this.entries.set(e.key, e);
    return e.value;
  }

  /**
   * Stores `value` (estimated `bytes`) computed by `owner` at `generation`, evicting the least
   * recently used past the bounds. Not stored when larger than `maxEntryBytes`, or when
   * `generation` is older than one already stored for `owner` (a search pinned before a
   * publish: its answer is already stale). Storing a newer generation drops the older ones'.
   */
  put(key: string, value: V, bytes: number, owner: number, generation: number): void {
    const o = this.owners.get(owner);
    if (!o) this.owners.set(owner, { generation, keys: new Set() });
    else if (generation < o.generation) return;
    else if (generation > o.generation) {
      o.generation = generation;
      const stale = [...o.keys];
      o.keys.clear();
      for (const k of stale) this.drop(k);
    }
    if (bytes > this.maxEntryBytes) return;
    // Replacing the key (two concurrent misses of one answer) may forget the owner: re-add it.
    this.drop(key);
    let mine = this.owners.get(owner);
    if (!mine) this.owners.set(owner, (mine = { generation, keys: new Set() }));
    this.entries.set(key, { key, value, bytes, owner });
    mine.keys.add(key);
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const [oldest] = this.entries.keys();
      this.drop(oldest!);
    }
  }

  /** Forgets everything. */
  clear(): void {
    this.entries.clear();
    this.owners.clear();
    this.bytes = 0;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
    // An owner without entries is forgotten (project indexes come and go).
    const o = this.owners.get(e.owner);
    if (o && o.keys.delete(key) && o.keys.size === 0) this.owners.delete(e.owner);
  }
}

/** An LRU of search answers shared by all projects, bounded in bytes (0 disables it). */
export class SearchCache {
  private readonly store: AnswerStore<SearchOutcome>;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {
    // One answer may take at most a quarter of the cache.
    this.store = new AnswerStore<SearchOutcome>(maxBytes, maxBytes / 4);
  }

  /**
   * The answer for `params` over `snap`: cached when the same index, generation, settings object
   * and parameters were answered before; else `compute()` runs and its answer is remembered.
   * Concurrent misses of one key each compute (no request waits on another's search).
   */
  async get(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams, compute: () => Promise<SearchOutcome>): Promise<SearchOutcome> {
    if (this.maxBytes <= 0) return compute();
    const key = this.keyOf(owner, snap, settings, params);
    const cached = this.store.get(key);
    if (cached) {
      this.hits++;
      return cached;
    }
    this.misses++;
    const outcome = await compute();
    // UTF-16 string sizes, plus the key and bookkeeping. Stored after the search: a publish
    // meanwhile makes this answer's generation the stale one, and the store then refuses it.
    this.store.put(key, outcome, 2 * (outcome.json.length + key.length) + 256, objectId(owner), snap.generation);
    return outcome;
  }

  stats(): SearchCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.store.size, bytes: this.store.bytes };
  }

  private keyOf(owner: object, snap: IndexSnapshot, settings: Settings, p: SearchParams): string {
    // Every parameter, serialised whole (a parameter added later is part of the key by itself).
    // The raw query, not a normalised form: parsing looks at quotes, minus signs and a trailing
    // space (which ends the prefix word).
    // The query vector follows from the query and the embedder named in `semantic.fp`.
    return JSON.stringify([objectId(owner), snap.generation, objectId(settings), p], (k, v: unknown) => (k === 'vector' ? undefined : v));
  }
}
