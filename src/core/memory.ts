/**
 * The process's memory budget (`SITESIFT_MEMORY_MB`) and how it is split between threads and
 * caches. {@link planMemory} is pure: src/server.ts computes the plan once from the
 * configuration, hands each thread its share, logs it at start and `GET /admin/memory` reports
 * it with what each cache of the main thread holds.
 *
 * What the budget covers: the whole resident set of the server process. Each thread first gets
 * a fixed base (its V8 heap without caches, code, SQLite's own allocations, per-thread malloc
 * arenas: measured on the PostgreSQL manual with every cache emptied); what is left is split
 * into cache shares. The main thread: search answers, suggest answers, the query log (its page
 * caches and pending batches), the segment readers it opens for reports and liveness
 * bookkeeping. Each search thread: the engine caches (decoded postings, BM25F values, result
 * cards; src/index/budgets.ts) and the page caches of its segment connections. Pool threads
 * (segment builds and merges, crawl fetches) and the query-log writer get a base only: their
 * SQLite caches are fixed per task (src/index/segment-format.ts) and they keep nothing between
 * tasks. With `SITESIFT_SEARCH_THREADS=0` the main thread searches and gets one search
 * thread's share on top of its own.
 *
 * The budget is a ceiling the caches are sized to, not a reservation: an idle server with a
 * small site stays far below it.
 */

/** Default of `SITESIFT_MEMORY_MB`: a 1 GB machine, leaving the rest to the OS and the page cache of the segment files. */
export const DEFAULT_MEMORY_MB = 512;

/**
 * Fixed memory of each kind of thread before any cache (MiB): V8 heap and code, Koa and the
 * routes (main, with node's own code: 48 MB of file-backed pages in the resident set), the
 * pool's warm-up and one task's working set (pool), SQLite and malloc arenas, and the garbage
 * V8 keeps between collections. Measured on the PostgreSQL manual under `make soak`
 * (/proc/PID/smaps by mapping, each thread's heap from `GET /admin/memory`): a search thread at
 * its full 44 MB share held 69–78 MB of V8 heap, 18–19 MB outside it (typed arrays of decoded
 * postings and BM25F values) and its page caches, in a 34 MB malloc arena: 108–125 MB, 64–81
 * besides its share; the main thread 96 MB with its answer caches empty; the two pool threads
 * and the query-log writer together about 45 MB between tasks.
 */
export const THREAD_BASE_MB = Object.freeze({ main: 110, search: 70, pool: 40, writer: 20 });

/**
 * The V8 old-generation limit of a search thread with `share` (MiB): 1.25 × its base and share,
 * at least 128. Why: V8 sizes how far a heap may grow past its live objects before a full
 * collection from this limit (up to 4× with the default limit of several GB, about 1.3× near
 * 200 MB), so without it a search thread holding 55 MB kept 120 MB, and with twice its base and
 * share its heap still reached 118 MB at 219 requests/s. The base already counts garbage
 * between collections and part of the engine caches lives outside the V8 heap (typed arrays),
 * so this stays well above the live objects; 128 MB at least leaves room for what the engine
 * caches do not count (per-segment values of large sites). A thread whose live objects reach it
 * stops (out of memory) and is replaced.
 */
export function searchThreadHeapLimitMb(share: SearchThreadShare): number {
  return Math.max(128, Math.ceil(1.25 * (THREAD_BASE_MB.search + share.shareMb)));
}

/**
 * The built-in embedder's word vectors (MiB): 200,000 words × 100 dimensions of int8, the
 * vocabulary and its hash index, 24.6 MiB in one SharedArrayBuffer that every thread shares
 * (src/text/word-vectors.ts), so counted once per process, not per thread. 0 with
 * `SITESIFT_WORD_VECTORS=none`.
 */
export const WORD_VECTORS_MB = 25;

/** Smallest cache share a search thread may get (MiB): below it the engine re-decodes every list. */
export const MIN_SEARCH_THREAD_CACHE_MB = 8;

/** Shares of what is left for caches once every thread has its base (they add up to 1). */
const CACHE_SHARES = Object.freeze({ searchAnswers: 0.2, suggestAnswers: 0.08, queryLog: 0.06, mainReaders: 0.06, searchThreads: 0.6 });

/** Of a searching thread's share: what its SQLite page caches get (the engine caches get the rest). */
const SQLITE_OF_THREAD = 0.2;

/** One searching thread's share (MiB). */
export interface SearchThreadShare {
  /** The whole share: `engineMb + pageCacheMb`. */
  shareMb: number;
  /** Engine caches (decoded postings, BM25F values, result cards), split by src/index/budgets.ts. */
  engineMb: number;
  /** Page caches of this thread's segment connections together ({@link PageCacheShare}). */
  pageCacheMb: number;
}

/** The split of {@link Config.memoryMb}, all in MiB. */
export interface MemoryPlan {
  budgetMb: number;
  /** Fixed bases: per thread kind, and their sum over the threads the server starts. */
  base: { mainMb: number; searchThreadMb: number; poolThreadMb: number; writerMb: number; wordVectorsMb: number; totalMb: number };
  /** The main thread's cache shares. */
  main: {
    /** `GET /sites` answer cache (src/search/cache.ts). */
    searchAnswersMb: number;
    /** `GET /sites/suggest` answer cache (src/search/suggest.ts). */
    suggestAnswersMb: number;
    /** Query log: page caches of the open projects' log databases together, and pending batches. */
    queryLogMb: number;
    /** Page caches of the segment readers the main thread opens (reports, liveness). */
    readersMb: number;
    /** With no search threads the main thread searches: one thread's engine and page caches; else null. */
    search: SearchThreadShare | null;
    /** Everything above plus the base. */
    totalMb: number;
  };
  /** Each search thread (`count` of them; `share` is null with none). */
  searchThreads: { count: number; share: SearchThreadShare | null; eachTotalMb: number };
  /** Pool threads: base only. */
  poolThreads: { count: number };
  /** What the plan gives out (≤ `budgetMb`). */
  plannedMb: number;
}

/** Why a plan cannot be made (the configuration names the setting). */
export class MemoryPlanError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'MemoryPlanError';
  }
}

/** What {@link planMemory} reads (a subset of the configuration). */
export interface MemoryInputs {
  memoryMb: number;
  searchThreads: number;
  workers: number;
  /** `SITESIFT_SEARCH_CACHE_MB` when set: the answer cache's size instead of its share. */
  searchCacheMb?: number | null;
  /** `SITESIFT_SEARCH_MEMORY_MB` when set: each searching thread's engine caches instead of their share. */
  searchMemoryMb?: number | null;
  /** `SITESIFT_WORD_VECTORS`: a table's path reserves {@link WORD_VECTORS_MB}; `none` or absent reserves nothing. */
  wordVectors?: string | null;
}

/**
 * Splits the budget: bases first, then fixed shares of the rest (answer caches, query log and
 * readers of the main thread, the search threads). Explicit `searchCacheMb` / `searchMemoryMb`
 * replace their shares and must still fit. Throws {@link MemoryPlanError} when the bases alone,
 * or the explicit sizes, do not fit in the budget.
 *
 * @example planMemory({ memoryMb: 512, searchThreads: 2, workers: 2 }).searchThreads.share.engineMb
 */
export function planMemory(c: MemoryInputs): MemoryPlan {
  const searching = Math.max(1, c.searchThreads);
  const wordVectorsMb = c.wordVectors && c.wordVectors !== 'none' ? WORD_VECTORS_MB : 0;
  const base = {
    mainMb: THREAD_BASE_MB.main,
    searchThreadMb: THREAD_BASE_MB.search,
    poolThreadMb: THREAD_BASE_MB.pool,
    writerMb: THREAD_BASE_MB.writer,
    wordVectorsMb,
    totalMb: THREAD_BASE_MB.main + c.searchThreads * THREAD_BASE_MB.search + c.workers * THREAD_BASE_MB.pool + THREAD_BASE_MB.writer + wordVectorsMb,
  };
  const rest = c.memoryMb - base.totalMb;
  const need = base.totalMb + searching * MIN_SEARCH_THREAD_CACHE_MB;
  if (rest < searching * MIN_SEARCH_THREAD_CACHE_MB) {
    throw new MemoryPlanError(
      'SITESIFT_MEMORY_MB',
      `SITESIFT_MEMORY_MB=${c.memoryMb} is below the ${need} MB this server needs with ${c.searchThreads} search and ${c.workers} pool threads (raise it, or lower SITESIFT_SEARCH_THREADS or SITESIFT_WORKERS)`,
    );
  }
  const floor = (x: number) => Math.floor(x * 10) / 10;
  const searchAnswersMb = c.searchCacheMb ?? floor(rest * CACHE_SHARES.searchAnswers);
  const perThread = (rest * CACHE_SHARES.searchThreads) / searching;
  const engineMb = c.searchMemoryMb ?? floor(perThread * (1 - SQLITE_OF_THREAD));
  const share: SearchThreadShare = { engineMb, pageCacheMb: floor(perThread * SQLITE_OF_THREAD), shareMb: 0 };
  share.shareMb = floor(share.engineMb + share.pageCacheMb);
  const main = {
    searchAnswersMb,
    suggestAnswersMb: floor(rest * CACHE_SHARES.suggestAnswers),
    queryLogMb: floor(rest * CACHE_SHARES.queryLog),
    readersMb: floor(rest * CACHE_SHARES.mainReaders),
    search: c.searchThreads === 0 ? share : null,
    totalMb: 0,
  };
  main.totalMb = floor(base.mainMb + base.writerMb + main.searchAnswersMb + main.suggestAnswersMb + main.queryLogMb + main.readersMb + (main.search?.shareMb ?? 0));
  const eachTotalMb = c.searchThreads > 0 ? floor(base.searchThreadMb + share.shareMb) : 0;
  const plannedMb = floor(main.totalMb + c.searchThreads * eachTotalMb + c.workers * base.poolThreadMb + base.wordVectorsMb);
  if (plannedMb > c.memoryMb) {
    const which = c.searchMemoryMb != null ? 'SITESIFT_SEARCH_MEMORY_MB' : 'SITESIFT_SEARCH_CACHE_MB';
    throw new MemoryPlanError(
      which,
      `SITESIFT_SEARCH_CACHE_MB and SITESIFT_SEARCH_MEMORY_MB (× ${searching} searching threads) need ${plannedMb} MB with the threads' bases, over SITESIFT_MEMORY_MB=${c.memoryMb} (lower them or raise the budget)`,
    );
  }
  return { budgetMb: c.memoryMb, base, main, searchThreads: { count: c.searchThreads, share: c.searchThreads > 0 ? share : null, eachTotalMb }, poolThreads: { count: c.workers }, plannedMb };
}

/** A SQLite connection as {@link PageCacheShare} needs it (better-sqlite3's `Database` fits). */
export interface PragmaTarget {
  pragma(source: string): unknown;
  readonly open: boolean;
}

/**
 * One byte budget for the page caches of a set of SQLite connections of one thread (segment
 * readers, query-log databases): each gets `total / n`, at least `floorKb` and at most `capKb`,
 * re-applied as connections come and go (a smaller `cache_size` makes SQLite free the pages
 * over it at once). Memory-mapped I/O stays off (`mmap_size = 0`): mapped pages would count
 * in the resident set outside any budget.
 *
 * @example
 * const caches = new PageCacheShare(8 * 1024, 256, 2048);
 * caches.add(db); // on open
 * caches.delete(db); // before close
 */
export class PageCacheShare {
  private readonly members = new Set<PragmaTarget>();
  private eachKb = -1;

  constructor(
    private totalKb: number,
    readonly floorKb = 128,
    readonly capKb = 2048,
  ) {}

  /** The page cache each connection gets now (KiB). */
  get perConnectionKb(): number {
    const n = Math.max(1, this.members.size);
    return Math.max(this.floorKb, Math.min(this.capKb, Math.floor(this.totalKb / n)));
  }

  /** Connections sharing the budget. */
  get size(): number {
    return this.members.size;
  }

  /** The budget of all connections together (KiB); the floor may exceed it with very many connections. */
  get budgetKb(): number {
    return this.totalKb;
  }

  /** Sets the total (each thread once at start, from its share of the plan). */
  setTotalKb(kb: number): void {
    this.totalKb = kb;
    this.apply(true);
  }

  /** Adds a connection: it and the others get their new share. */
  add(db: PragmaTarget): void {
    this.members.add(db);
    db.pragma('mmap_size = 0');
    db.pragma(`cache_size = -${this.perConnectionKb}`);
    this.apply(false);
  }

  /** Removes a connection (before or after it closes): the others may grow back. */
  delete(db: PragmaTarget): void {
    if (this.members.delete(db)) this.apply(false);
  }

  private apply(force: boolean): void {
    const kb = this.perConnectionKb;
    if (!force && kb === this.eachKb) return;
    this.eachKb = kb;
    for (const db of this.members) if (db.open) db.pragma(`cache_size = -${kb}`);
  }
}
