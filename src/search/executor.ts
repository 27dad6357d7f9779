/**
 * Where `GET /sites` searches run (main thread API). With `SITESIFT_SEARCH_THREADS` > 0 (the
 * default) searches run on a pool of search threads of their own — separate from the pool that
 * builds and merges segments, so a long merge never queues a search — and the main thread only
 * parses requests, pins a generation and writes the answer. With 0 they run on the main thread.
 * Both return the same {@link SearchOutcome}; src/search/remote.ts explains the thread protocol.
 * In front of either, answers are cached (SITESIFT_SEARCH_CACHE_MB; src/search/cache.ts).
 */
import { Piscina } from 'piscina';
import type { IndexSnapshot } from '../index/contract.js';
import { createPool } from '../pool.js';
import type { Settings } from '../types.js';
import { SearchCache } from './cache.js';
import { searchAnswer, snapshotSpec, type RemoteSearchResult } from './remote.js';
import type { SearchParams } from './service.js';
import { objectId } from './object-id.js';

/** A finished search: the response body as JSON and the parts the route reads. */
export type SearchOutcome = RemoteSearchResult;

/** Runs searches over pinned snapshots. The caller keeps the snapshot pinned until it settles. */
export interface SearchExecutor {
  /** `owner` is the project's index object (keys per-project caches). */
  run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome>;
  /** Threads in use (0: the main thread). */
  readonly threads: number;
  close(): Promise<void>;
}

/** Searches on the calling (main) thread. */
export class LocalSearchExecutor implements SearchExecutor {
  readonly threads = 0;

  async run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome> {
    return searchAnswer(snap, settings, params, owner);
  }

  async close(): Promise<void> {}
}

/** Searches on a dedicated pool of `threads` search threads. */
export class ThreadSearchExecutor implements SearchExecutor {
  private readonly pool: Piscina;

  constructor(readonly threads: number) {
    // Threads start on the first search and then stay (a cold thread must reopen segments).
    this.pool = createPool({ workers: threads, idleTimeoutMs: 24 * 3600_000 });
  }

  async run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome> {
    return (await this.pool.run({ task: 'search', snapshot: snapshotSpec(snap, objectId(owner)), settings, params })) as RemoteSearchResult;
  }

  /** Lets searches already queued finish (their pins are released by their requests), then stops. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** An executor behind the answer cache (src/search/cache.ts). */
export class CachedSearchExecutor implements SearchExecutor {
  constructor(
    private readonly inner: SearchExecutor,
    readonly cache: SearchCache,
  ) {}

  get threads(): number {
    return this.inner.threads;
  }

  run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome> {
    return this.cache.get(owner, snap, settings, params, () => this.inner.run(owner, snap, settings, params));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The executor for `threads` (0: main thread), behind a cache of `cacheBytes` (0: none). */
export function createSearchExecutor(threads: number, cacheBytes = 0): SearchExecutor {
  const inner = threads > 0 ? new ThreadSearchExecutor(threads) : new LocalSearchExecutor();
  return cacheBytes > 0 ? new CachedSearchExecutor(inner, new SearchCache(cacheBytes)) : inner;
}
