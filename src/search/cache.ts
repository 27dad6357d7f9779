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
 * a newer generation of the same project index arrives ({@link GenerationKeys}), so a site that
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
 * The keys an answer cache holds per owner (project index) and the newest generation it saw of
 * each, so the answers of older generations leave at once instead of through the LRU.
 *
 * @example
 * const stale = gens.advance(ownerId, snap.generation); // keys to drop, or null: an older snapshot
 */
export class GenerationKeys {
  private readonly owners = new Map<number, { generation: number; keys: Set<string> }>();

  /**
   * Notes that `owner` answers at `generation`. Returns the keys of its older generations (now
   * forgotten here: the caller drops them), `[]` when there are none, or null when `generation`
   * is older than one already seen (a search pinned before a publish: do not cache its answer).
   */
  advance(owner: number, generation: number): string[] | null {
    const o = this.owners.get(owner);
    if (!o) {
      this.owners.set(owner, { generation, keys: new Set() });
      return [];
    }
    if (generation < o.generation) return null;
    if (generation === o.generation) return [];
    o.generation = generation;
    const stale = [...o.keys];
    o.keys.clear();
    return stale;
  }

  /** Records a key stored for `owner` (at the generation last passed to {@link advance}). */
  add(owner: number, key: string): void {
    this.owners.get(owner)?.keys.add(key);
  }

  /** Forgets a key the cache evicted. */
  delete(owner: number, key: string): void {
    const o = this.owners.get(owner);
    if (o && o.keys.delete(key) && o.keys.size === 0) this.owners.delete(owner);
  }

  /** Forgets everything. */
  clear(): void {
    this.owners.clear();
  }
}

/** An LRU of search answers shared by all projects, bounded in bytes (0 disables it). */
export class SearchCache {
  private readonly entries = new Map<string, { outcome: SearchOutcome; bytes: number; owner: number }>();
  private readonly generations = new GenerationKeys();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  /**
   * The answer for `params` over `snap`: cached when the same index, generation, settings object
   * and parameters were answered before; else `compute()` runs and its answer is remembered.
   * Concurrent misses of one key each compute (no request waits on another's search).
   */
  async get(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams, compute: () => Promise<SearchOutcome>): Promise<SearchOutcome> {
    if (this.maxBytes <= 0) return compute();
    const key = this.keyOf(owner, snap, settings, params);
    const e = this.entries.get(key);
    if (e) {
      this.hits++;
      this.entries.delete(key);
      this.entries.set(key, e);
      return e.outcome;
    }
    this.misses++;
    const ownerId = objectId(owner);
    const outcome = await compute();
    // After the search: a publish meanwhile makes this answer's generation the stale one.
    const stale = this.generations.advance(ownerId, snap.generation);
    if (stale === null) return outcome;
    for (const k of stale) this.drop(k);
    // UTF-16 string sizes, plus the key and bookkeeping.
    const bytes = 2 * (outcome.json.length + key.length) + 256;
    if (bytes <= this.maxBytes / 4) {
      this.drop(key);
      this.entries.set(key, { outcome, bytes, owner: ownerId });
      this.generations.add(ownerId, key);
      this.bytes += bytes;
      for (const [k, v] of this.entries) {
        if (this.bytes <= this.maxBytes) break;
        this.entries.delete(k);
        this.generations.delete(v.owner, k);
        this.bytes -= v.bytes;
      }
    }
    return outcome;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.generations.delete(e.owner, key);
    this.bytes -= e.bytes;
  }

  stats(): SearchCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, bytes: this.bytes };
  }

  private keyOf(owner: object, snap: IndexSnapshot, settings: Settings, p: SearchParams): string {
    // Every parameter, serialised whole (a parameter added later is part of the key by itself).
    // The raw query, not a normalised form: parsing looks at quotes, minus signs and a trailing
    // space (which ends the prefix word).
    // The query vector follows from the query and the embedder named in `semantic.fp`.
    return JSON.stringify([objectId(owner), snap.generation, objectId(settings), p], (k, v: unknown) => (k === 'vector' ? undefined : v));
  }
}
