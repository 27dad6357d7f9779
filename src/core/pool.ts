/**
 * The Piscina worker pool (SPEC §0): crawling/extraction and segment builds/merges run on
 * `config.workers` threads, so the main thread only routes requests and commits results.
 *
 * One dispatcher file, `workers/index.{ts,js}`, receives `{task, ...payload}` and runs the
 * module `workers/<task>.{ts,js}`. The path is resolved relative to this file so the same code
 * works from `src/` under tsx (tests, `.ts`) and from `dist/` (`.js`).
 */
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { Piscina } from 'piscina';

/**
 * The tasks the pool runs: each is a module `workers/<name>.ts` whose default export is
 * `async (payload) => result`, dispatched by workers/index.ts. To add a task, write its module
 * and list its name here. Declared here, below the workers, so callers of {@link runTask} name a
 * task without importing the worker side.
 */
export const TASKS = ['ping', 'build-segment', 'merge-segments', 'fetch-extract', 'read-sitemap', 'warm-up'] as const;
/** The name of a pool task (one of {@link TASKS}). */
export type TaskName = (typeof TASKS)[number];

const RUNNING_FROM_TS = import.meta.url.endsWith('.ts');

/** File URL of the dispatcher worker next to this build (`.ts` under tsx, `.js` in dist). */
export function workerFile(): string {
  return new URL(`../../workers/index.${RUNNING_FROM_TS ? 'ts' : 'js'}`, import.meta.url).href;
}

export interface PoolOptions {
  /** Threads (SITESIFT_WORKERS). */
  workers: number;
  /** Idle threads are stopped after this many ms (default 30 s); they restart on demand. */
  idleTimeoutMs?: number;
  /**
   * Nice value background tasks (builds, merges, crawling) lower their thread to
   * (SITESIFT_WORKER_NICE; default 10; 0 keeps normal priority). See workers/index.ts.
   */
  nice?: number;
  /**
   * V8 young-generation cap per thread, MB (0: V8's default, up to 48 MB per thread). See
   * {@link WORKER_YOUNG_GENERATION_MB}.
   */
  youngGenerationMb?: number;
  /**
   * Warm threads (default false): all `workers` threads start with the pool and stay for its
   * lifetime (the idle timeout no longer stops them), and each runs workers/warm-up.ts (the
   * crawler's extraction and the index's analysis and segment build over fixture pages) before
   * its first task, so a crawl or build never pays V8's warm-up on its first pages.
   */
  warmUp?: boolean;
  /**
   * Read-only data every thread shares instead of loading its own copy (worker data `shared`),
   * e.g. `{ wordVectors: sharedWordVectors() }` (src/text/word-vectors.ts): SharedArrayBuffers
   * are shared between threads, not copied, so the memory counts once.
   */
  shared?: Record<string, unknown>;
}

/**
 * Default young-generation size of pool, search and query-log writer threads, MB. V8's default
 * (here 48) lets each isolate keep that much new space committed, and builds and searches churn
 * through short-lived strings (log lines, answers). Measured with bench-ingest on a quiet machine
 * (12:26–12:41 UTC): V8's default 719 MB peak RSS at 100k, 1.27 ms of server CPU per document;
 * 16 MB 602 MB, 1.23 ms; 6 MB 559 MB but 1.41 ms (scavenges; the crawler and the search threads
 * showed the same GC cost), so 16.
 */
export const WORKER_YOUNG_GENERATION_MB = 16;

/**
 * V8 old-generation limit of each pool thread, MB. Why: V8 lets a heap grow past its live
 * objects by a factor that follows this limit (1.3× up to 256 MB, 4× from 2 GB, the default
 * here being several GB), and pool threads allocate fast in segment builds and merges, so
 * without a limit a pool thread's heap may grow to several times what it keeps alive before a
 * collection (the resident set with it, `make soak`). 512 keeps the factor near 1.4 and leaves room for
 * a merge's working set: the whole server peaked under 510 MB resident importing 100,000 pages
 * (bench-ingest). A task whose live objects reach it fails (ERR_WORKER_OUT_OF_MEMORY) and
 * Piscina starts a new thread.
 */
export const POOL_OLD_GENERATION_MB = 512;

/**
 * Creates the pool. Under tsx the workers load tsx too (`--import tsx`), so task modules can
 * be TypeScript. Destroy it with `pool.destroy()` at shutdown (after in-flight tasks settle).
 */
export function createPool(opts: PoolOptions): Piscina {
  workerHeapLimitDefault();
  const execArgv = workerExecArgv(process.execArgv, RUNNING_FROM_TS);
  const youngMb = opts.youngGenerationMb ?? WORKER_YOUNG_GENERATION_MB;
  return new Piscina({
    filename: workerFile(),
    minThreads: opts.warmUp ? Math.max(1, opts.workers) : 0,
    maxThreads: Math.max(1, opts.workers),
    idleTimeout: opts.idleTimeoutMs ?? 30_000,
    execArgv,
    workerData: { nice: opts.nice ?? 10, warmUp: opts.warmUp === true, shared: opts.shared ?? {} },
    // The dispatcher's export that resolves once the thread has warmed up (workers/index.ts).
    ...(opts.warmUp ? { name: 'dispatchWhenWarm' } : {}),
    resourceLimits: { ...(youngMb > 0 ? { maxYoungGenerationSizeMb: youngMb } : {}), maxOldGenerationSizeMb: POOL_OLD_GENERATION_MB },
    // Idle threads wait for the next task with Atomics.waitAsync, not Atomics.wait, so their
    // event loop runs between tasks and V8's memory reducer can shrink the heap a build or
    // merge left behind (blocked, a thread kept it until its next task). docs/STORAGE.md "Memory".
    atomics: 'async',
  });
}

/**
 * Starts a plain `worker_threads` Worker (not a pool thread) running `file` — a path without
 * extension relative to `base` (`import.meta.url` of the caller) — as `.ts` under tsx or `.js`
 * in dist/, with the pool threads' young-generation cap. Under tsx (tests) a worker gets no ESM
 * hooks on Node 20, but tsx's require hook works, so the `.ts` file is required through it.
 * Used by the search threads and the query-log writer thread. `maxOldGenerationMb` caps the
 * thread's V8 old generation (the search threads' share of the memory budget, src/core/memory.ts).
 */
export function startThread(base: string, file: string, opts: Omit<WorkerOptions, 'eval' | 'resourceLimits'> = {}, maxOldGenerationMb?: number): Worker {
  workerHeapLimitDefault();
  // Same V8 young-generation cap as the pool threads (memory per thread).
  const options: WorkerOptions = {
    ...opts,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, ...(maxOldGenerationMb ? { maxOldGenerationSizeMb: maxOldGenerationMb } : {}) },
  };
  if (!RUNNING_FROM_TS) return new Worker(new URL(`${file}.js`, base), options);
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs');
  const path = new URL(`${file}.ts`, base).pathname;
  return new Worker(`require(${JSON.stringify(tsx)}); require(${JSON.stringify(path)});`, { ...options, eval: true });
}

/**
 * Sets V8's `--max-old-space-size` back to 0 (V8's own limit, from the machine's memory) for
 * isolates created from now on. Main thread; {@link createPool} and {@link startThread} call it
 * before starting any thread, so `--max-old-space-size=N` on node's command line (the launcher's
 * SITESIFT_MAIN_HEAP_MB) caps the main thread's heap only: V8 reads the flag once, when an
 * isolate is created, and the main isolate keeps its limit. Why: V8's largest heap growing
 * factor follows the limit (≈ 1.5× the live size at 768 MB, 4× from 2 GB), which keeps the
 * main heap small during bulk imports; the search and pool threads keep V8's own factor, as
 * full GCs of their large heaps cost search latency (bin/sitesift, README "### Ingest").
 * Worker `resourceLimits` cannot do this: the flag overrides them. Idempotent.
 */
export function workerHeapLimitDefault(): void {
  setFlagsFromString('--max-old-space-size=0');
  // Likewise the launcher's --max-semi-space-size (the main thread's young generation): worker
  // threads keep their own cap (WORKER_YOUNG_GENERATION_MB), which the flag would override.
  setFlagsFromString('--max-semi-space-size=0');
}

// V8 heap and GC flags. Worker threads refuse every V8 flag in execArgv
// (ERR_WORKER_INVALID_EXEC_ARGV), and they need none: V8 flags are process-wide (but
// --max-old-space-size is reset before any worker starts: workerHeapLimitDefault).
const V8_FLAG_RE = /^--(max[-_]old[-_]space[-_]size|max[-_]semi[-_]space[-_]size|max[-_]heap[-_]size|initial[-_]heap[-_]size|initial[-_]old[-_]space[-_]size|max[-_]young[-_]generation[-_]size|stack[-_]size|expose[-_]gc|optimize[-_]for[-_]size|gc[-_]interval|trace[-_]gc(?:[-_]nvp|[-_]verbose)?|(?:no[-_])?parallel[-_]scavenge|single[-_]threaded[-_]gc|heap[-_]growing[-_]percent)(=|$)/;

/**
 * The `execArgv` pool threads start with: the process's own, minus the V8 flags workers refuse
 * (without this, starting the server with a heap limit made every segment build fail), and
 * under tsx with the tsx loader. Exported for tests.
 */
export function workerExecArgv(execArgv: readonly string[], fromTs: boolean): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    if (V8_FLAG_RE.test(a)) {
      // `--max-old-space-size 256` (value as the next argument) goes too.
      if (!a.includes('=') && i + 1 < execArgv.length && /^\d+$/.test(execArgv[i + 1]!)) i++;
      continue;
    }
    if (fromTs && (/^--import(=|$)/.test(a) || a === 'tsx')) continue;
    kept.push(a);
  }
  return fromTs ? [...kept, '--import', 'tsx'] : kept;
}

/**
 * Runs one task in the pool: `runTask(pool, 'build-segment', payload)`. The payload must be
 * structured-cloneable; the result is whatever the task module's default export resolves to.
 */
export function runTask<R = unknown>(pool: Piscina, task: TaskName, payload: Record<string, unknown> = {}, opts: { signal?: AbortSignal } = {}): Promise<R> {
  return pool.run({ ...payload, task }, { signal: opts.signal }) as Promise<R>;
}
