/**
 * The Piscina worker pool (SPEC §0): crawling/extraction and segment builds/merges run on
 * `config.workers` threads, so the main thread only routes requests and commits results.
 *
 * One dispatcher file, `workers/index.{ts,js}`, receives `{task, ...payload}` and runs the
 * module `workers/<task>.{ts,js}`. The path is resolved relative to this file so the same code
 * works from `src/` under tsx (tests, `.ts`) and from `dist/` (`.js`).
 */
import { Piscina } from 'piscina';
import type { TaskName } from '../workers/index.js';

export type { TaskName };

const RUNNING_FROM_TS = import.meta.url.endsWith('.ts');

/** File URL of the dispatcher worker next to this build (`.ts` under tsx, `.js` in dist). */
export function workerFile(): string {
  return new URL(`../workers/index.${RUNNING_FROM_TS ? 'ts' : 'js'}`, import.meta.url).href;
}

export interface PoolOptions {
  /** Threads (SITESIFT_WORKERS). */
  workers: number;
  /** Idle threads are stopped after this many ms (default 30 s); they restart on demand. */
  idleTimeoutMs?: number;
}

/**
 * Creates the pool. Under tsx the workers load tsx too (`--import tsx`), so task modules can
 * be TypeScript. Destroy it with `pool.destroy()` at shutdown (after in-flight tasks settle).
 */
export function createPool(opts: PoolOptions): Piscina {
  const execArgv = RUNNING_FROM_TS
    ? [...process.execArgv.filter((a) => !/^--import(=|$)/.test(a) && a !== 'tsx'), '--import', 'tsx']
    : process.execArgv;
  return new Piscina({
    filename: workerFile(),
    minThreads: 0,
    maxThreads: Math.max(1, opts.workers),
    idleTimeout: opts.idleTimeoutMs ?? 30_000,
    execArgv,
  });
}

/**
 * Runs one task in the pool: `runTask(pool, 'build-segment', payload)`. The payload must be
 * structured-cloneable; the result is whatever the task module's default export resolves to.
 */
export function runTask<R = unknown>(pool: Piscina, task: TaskName, payload: Record<string, unknown> = {}, opts: { signal?: AbortSignal } = {}): Promise<R> {
  return pool.run({ ...payload, task }, { signal: opts.signal }) as Promise<R>;
}
