/**
 * Memory of the caches of each thread that searches (each search thread, or the main thread
 * with `SITESIFT_SEARCH_THREADS=0`): decoded postings (src/index/segment-reader.ts), BM25F
 * values of whole postings lists (src/search/score.ts) and result cards (src/search/results.ts).
 * Each cache is byte-bounded and evicts by CLOCK; this module holds their budgets and what they
 * count as used, so one setting (`SITESIFT_SEARCH_MEMORY_MB`, src/core/config.ts, which also
 * holds its default) sizes all three and tests can see the bounds hold. It lives in src/index
 * because the lowest of those caches (the decoded postings) does: src/search reads it from below.
 *
 * The budgets are ceilings, not reservations: a small site never fills them. The default is
 * sized for ~100k pages (docs/SEARCH.md §13): a realistic query mix over 100k pages touches
 * ~207 MB of decoded postings, and smaller budgets make each rotation of the mix decode and
 * rescore most lists again.
 */

import { getHeapStatistics } from 'node:v8';
import { DEFAULT_SEARCH_MEMORY_MB, PageCacheShare } from '../core/index.js';

/**
 * The page caches of this thread's segment reader connections together (src/index/segment-reader.ts):
 * each reader gets an equal part, 128 KiB to 2 MiB. Its total is this thread's `pageCacheMb`
 * of the memory plan (src/core/memory.ts), set at thread start; 16 MiB until then.
 */
export const readerPageCaches = new PageCacheShare(16 * 1024, 128, 2048);

/**
 * Sets this thread's caches from its share of the memory plan: `engineMb` for the engine caches
 * (split below), `pageCacheMb` for its segment connections' page caches together.
 *
 * @example setThreadCacheShare({ engineMb: 70, pageCacheMb: 17 })
 */
export function setThreadCacheShare(share: { engineMb: number; pageCacheMb: number }): void {
  setSearchMemoryMb(share.engineMb);
  readerPageCaches.setTotalKb(Math.floor(share.pageCacheMb * 1024));
}

// Shares of the total. Result cards hold the most per entry (a page's text and its word runs for
// snippets, up to ~60 KB) and every uncached search reads ten of them: with the whole PostgreSQL
// manual's known-item queries rotating, the cards fill their share first and a miss costs a
// SQLite read and the page's word runs again. `postings` holds the decoded lists together with
// their BM25F values (src/search/score.ts), counted once.
const SHARE = { postings: 384, cards: 544 };
const SHARES = SHARE.postings + SHARE.cards;

/** The byte budget of each engine cache in this thread. */
export const engineCacheBudget = { postings: 0, cards: 0 };
/** The bytes each engine cache counts as used now (by its own estimate of its entries). */
export const engineCacheUsed = { postings: 0, cards: 0 };

/**
 * Sets this thread's engine cache budgets from a total in MiB, split in fixed shares. Called
 * once per thread at start (server main thread, each search thread from its `workerData`);
 * a lower budget takes effect at each cache's next insertion.
 */
export function setSearchMemoryMb(mb: number): void {
  const bytes = Math.floor(mb * 1024 * 1024);
  engineCacheBudget.postings = Math.floor((bytes * SHARE.postings) / SHARES);
  engineCacheBudget.cards = Math.floor((bytes * SHARE.cards) / SHARES);
}

setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB);

/** An entry of a byte-bounded engine cache: its size and its second-chance bit. */
export interface ClockEntry {
  bytes: number;
  /** Set on each hit; cleared when the CLOCK passes the entry and spares it. */
  used: boolean;
}

/**
 * Evicts from engine cache `cache` until it uses at most 7/8 of its budget. `clock` holds its
 * entries in insertion order (a hit only sets `used`, so lookups never reorder it): an entry
 * used since the CLOCK last passed gets a second chance (cleared, moved to the back), another
 * is dropped (`drop` removes it from its owner) and its bytes stop counting. Evicting in
 * batches starts one iteration per batch rather than one per insertion.
 *
 * @example if (engineCacheUsed.cards > engineCacheBudget.cards) evictByClock('cards', clock, (e) => owner.delete(e.key));
 */
export function evictByClock<E extends ClockEntry>(cache: keyof typeof engineCacheBudget, clock: Set<E>, drop: (e: E) => void): void {
  const target = engineCacheBudget[cache] - engineCacheBudget[cache] / 8;
  for (const e of clock) {
    if (engineCacheUsed[cache] <= target) break;
    clock.delete(e);
    if (e.used) {
      e.used = false;
      clock.add(e);
      continue;
    }
    drop(e);
    engineCacheUsed[cache] -= e.bytes;
  }
}

/**
 * Size class of a pooled buffer of at least `bytes`: four classes per power of two (2^k × 1,
 * 1.25, 1.5, 1.75), at least 256 bytes, so a buffer wastes at most a fifth of itself and a
 * freed buffer fits the next list of about its size.
 *
 * @example sizeClass(1025) // 1280
 */
export function sizeClass(bytes: number): number {
  if (bytes <= 256) return 256;
  const quarter = 2 ** Math.floor(Math.log2(bytes)) / 4;
  return Math.ceil(bytes / quarter) * quarter;
}

/**
 * The buffers of decoded postings lists and their BM25F values (src/index/segment-reader.ts,
 * src/search/match.ts), recycled instead of allocated per cache miss: at ~100k pages every
 * uncached search decodes about a megabyte of lists, and fresh typed arrays of that size per
 * search kept V8's collector marking the whole heap (external memory pressure) about as long
 * as the search itself took.
 *
 * A search runs inside a scope ({@link inPostingsScope}); buffers taken during it stay the
 * search's until it ends, because the lists and values built on them are read until then. A
 * buffer freed meanwhile (its cache entry evicted, values not kept) is retired and becomes
 * free only when the outermost scope ends; outside any scope nothing is lent, and a buffer
 * whose list was handed out there is never recycled (its holder's lifetime is unknown).
 *
 * Accounting: free buffers count in the `postings` engine budget with the cache entries (an
 * entry counts its buffers whole, by size class), at most an eighth of that budget, the
 * oldest dropped first; at the end of a search the pool also gives up free buffers until
 * cache and pool together fit the budget. Buffers lent to or retired by the running search
 * are its working memory and count from its end, as free ones, like the lists a search holds
 * after the cache evicted them.
 */
export class BufferPool {
  /** Free buffers by size class. */
  private readonly free = new Map<number, ArrayBuffer[]>();
  /** Free buffers in the order they became free (the oldest are dropped first). */
  private readonly order = new Set<ArrayBuffer>();
  private retired: ArrayBuffer[] = [];
  private readonly lentBufs = new Set<ArrayBuffer>();
  private depth = 0;
  /** Bytes of the free buffers (counted in `engineCacheUsed.postings`). */
  freeBytes = 0;

  /** Whether a search scope is open (buffers taken now are lent until it ends). */
  get inScope(): boolean {
    return this.depth > 0;
  }

  /** Whether `buf` was taken from the pool and is neither adopted nor given back. */
  isLent(buf: ArrayBuffer): boolean {
    return this.lentBufs.has(buf);
  }

  /**
   * A buffer of at least `bytes` (its size class, or a free one up to two classes larger),
   * lent until {@link adopt}ed, {@link give}n back or the scope ends. Its content is whatever
   * the last user left: the taker writes before it reads.
   */
  take(bytes: number): ArrayBuffer {
    const c = sizeClass(bytes);
    let cls = c;
    for (let k = 0; k < 3; k++, cls = sizeClass(cls + 1)) {
      const list = this.free.get(cls);
      const b = list?.pop();
      if (b === undefined) continue;
      this.order.delete(b);
      this.freeBytes -= b.byteLength;
      engineCacheUsed.postings -= b.byteLength;
      this.lentBufs.add(b);
      return b;
    }
    const b = new ArrayBuffer(c);
    this.lentBufs.add(b);
    return b;
  }

  /** A lent buffer becomes a cache entry's (the entry counts it from now on). */
  adopt(b: ArrayBuffer): void {
    this.lentBufs.delete(b);
  }

  /**
   * Takes back a buffer nobody reads after the current search: a lent one, or an evicted
   * entry's (whose bytes the entry no longer counts). Retired until the scope ends when a scope
   * is open, else free at once.
   */
  give(b: ArrayBuffer): void {
    this.lentBufs.delete(b);
    if (this.depth > 0) this.retired.push(b);
    else {
      this.addFree(b);
      this.trim();
    }
  }

  private addFree(b: ArrayBuffer): void {
    const list = this.free.get(b.byteLength);
    if (list) list.push(b);
    else this.free.set(b.byteLength, [b]);
    this.order.add(b);
    this.freeBytes += b.byteLength;
    engineCacheUsed.postings += b.byteLength;
  }

  /**
   * Drops free buffers, oldest first, while they take more than an eighth of the postings
   * budget or cache and pool together more than the budget.
   */
  private trim(): void {
    const cap = engineCacheBudget.postings / 8;
    for (const b of this.order) {
      if (this.freeBytes <= cap && engineCacheUsed.postings <= engineCacheBudget.postings) return;
      this.order.delete(b);
      const list = this.free.get(b.byteLength)!;
      list.splice(list.lastIndexOf(b), 1);
      this.freeBytes -= b.byteLength;
      engineCacheUsed.postings -= b.byteLength;
    }
  }

  /** Opens a search scope (nestable). */
  begin(): void {
    this.depth++;
  }

  /**
   * Closes a scope; at the outermost, every buffer of the search (retired or still lent)
   * becomes free, within the pool's cap and the budget.
   */
  end(): void {
    if (this.depth === 0 || --this.depth > 0) return;
    for (const b of this.retired) this.addFree(b);
    this.retired = [];
    for (const b of this.lentBufs) this.addFree(b);
    this.lentBufs.clear();
    this.trim();
  }

  /** Drops every free buffer (the thread's last segment reader closed). */
  clear(): void {
    engineCacheUsed.postings -= this.freeBytes;
    this.free.clear();
    this.order.clear();
    this.freeBytes = 0;
  }
}

/** This thread's pool of postings and BM25F value buffers. */
export const postingsPool = new BufferPool();

/**
 * Runs `fn` as one search: postings lists and BM25F values it gets stay valid until it returns,
 * and their buffers are recycled after. Every search over segment readers runs in one
 * (src/search/engine.ts, runQuery); nested calls share the outer scope.
 *
 * @example const result = inPostingsScope(() => runQueryBody(snap, settings, req));
 */
export function inPostingsScope<T>(fn: () => T): T {
  postingsPool.begin();
  try {
    return fn();
  } finally {
    postingsPool.end();
  }
}

/**
 * A Float64Array of `n` values for the current search: from the pool inside a scope (to be
 * kept with a cached list, or recycled when the search ends), a fresh one outside.
 */
export function scratchFloat64(n: number): Float64Array {
  if (!postingsPool.inScope) return new Float64Array(n);
  return new Float64Array(postingsPool.take(n * 8), 0, n);
}

/** What one thread's caches hold against their budgets, and its V8 heap (MiB, one decimal). */
export interface ThreadCacheUsage {
  /** Engine caches: budget and estimated use of each. */
  engine: { [K in keyof typeof engineCacheBudget]: { budgetMb: number; usedMb: number } };
  /** Page caches of the thread's segment connections: their budget together, how many, each one's size. */
  readerPageCaches: { budgetMb: number; connections: number; eachKb: number };
  /**
   * The thread's V8 heap: live objects, what V8 holds for it, and its limit; `externalMb`: memory
   * outside the heap that its objects hold (typed arrays, Buffers, SQLite blobs being read).
   */
  heap: { usedMb: number; totalMb: number; limitMb: number; externalMb: number };
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** This thread's {@link ThreadCacheUsage} (`GET /admin/memory`). */
export function threadCacheUsage(): ThreadCacheUsage {
  const h = getHeapStatistics();
  const m = process.memoryUsage();
  const one = (k: keyof typeof engineCacheBudget) => ({ budgetMb: mib(engineCacheBudget[k]), usedMb: mib(Math.max(0, engineCacheUsed[k])) });
  return {
    engine: { postings: one('postings'), cards: one('cards') },
    readerPageCaches: { budgetMb: mib(readerPageCaches.budgetKb * 1024), connections: readerPageCaches.size, eachKb: readerPageCaches.perConnectionKb },
    heap: { usedMb: mib(h.used_heap_size), totalMb: mib(h.total_heap_size), limitMb: mib(h.heap_size_limit), externalMb: mib(m.external) },
  };
}
