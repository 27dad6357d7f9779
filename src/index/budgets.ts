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
