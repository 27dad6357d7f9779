/**
 * The one worker file the Piscina pool loads (worker threads). Dispatches
 * `{task: '<name>', ...payload}` to `workers/<name>.{ts,js}`, whose default export is
 * `async (payload) => result`. To add a task: write `workers/<name>.ts` and add its name to
 * `TASKS` in src/core/pool.ts. Task modules are loaded lazily, once per thread (the module cache keeps them).
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { workerData } from 'node:worker_threads';
import { TASKS, type TaskName } from '../src/core/index.js';
import { adoptWordVectors, type SharedWordVectors } from '../src/text/index.js';

type TaskModule = { default: (payload: Record<string, unknown>) => unknown };

const FROM_TS = import.meta.url.endsWith('.ts');

async function loadTask(task: TaskName): Promise<TaskModule> {
  if (FROM_TS) {
    // Under tsx (tests), Node 20 does not run tsx's ESM hooks inside worker threads, but its
    // require hook works (Piscina loaded this file through it), so TypeScript tasks are required.
    return createRequire(import.meta.url)(`./${task}.ts`) as TaskModule;
  }
  return (await import(new URL(`./${task}.js`, import.meta.url).href)) as TaskModule;
}

/**
 * Nice value of threads that build, merge or crawl. On Linux the nice value is per thread, so
 * background indexing yields the CPU to search threads and the main thread (issue 3: search never
 * stalls behind indexing) without slowing it when the CPU is otherwise idle. Searches run on
 * threads of their own (workers/search.ts, not this pool), whose priority nothing lowers.
 */
export const BACKGROUND_NICE = 10;
/** The pool's setting (createPool's `nice`, from SITESIFT_WORKER_NICE), else the default. */
const NICE = typeof (workerData as { nice?: unknown } | null)?.nice === 'number' ? (workerData as { nice: number }).nice : BACKGROUND_NICE;
const FOREGROUND_TASKS: ReadonlySet<string> = new Set(['ping']);
let niced = false;

/** Lowers this thread's priority once (best effort: not every OS or sandbox allows it). */
function yieldToSearches(): void {
  if (niced) return;
  niced = true;
  try {
    if (os.getPriority() < NICE) os.setPriority(NICE);
  } catch {
    // Not permitted here: indexing simply runs at normal priority.
  }
}

/** Piscina entry point: runs `message.task` with the whole message as its payload. */
export default async function dispatch(message: { task?: unknown } & Record<string, unknown>): Promise<unknown> {
  const task = message?.task;
  if (typeof task !== 'string' || !(TASKS as readonly string[]).includes(task)) {
    throw new Error(`unknown worker task ${JSON.stringify(task)} (known: ${TASKS.join(', ')})`);
  }
  if (!FOREGROUND_TASKS.has(task)) yieldToSearches();
  const mod = await loadTask(task as TaskName);
  return mod.default(message);
}

// The word vectors the main thread loaded (createPool's `shared`): one copy for every thread.
adoptWordVectors((workerData as { shared?: { wordVectors?: Record<string, SharedWordVectors> } } | null)?.shared?.wordVectors);

/** Set by createPool's `warmUp` (src/core/pool.ts). */
const WARM_UP = (workerData as { warmUp?: unknown } | null)?.warmUp === true;

/**
 * {@link dispatch} once this thread is warm: the pool's handler when it was created with `warmUp`
 * (src/core/pool.ts names this export). Piscina awaits a handler export that is a promise before the
 * thread reports ready, so workers/warm-up.ts runs before the thread's first task. The warm-up
 * is background work: the thread lowers its priority first.
 */
export const dispatchWhenWarm: Promise<typeof dispatch> = WARM_UP
  ? loadTask('warm-up').then(
      (mod) => {
        yieldToSearches();
        (mod as unknown as typeof import('./warm-up.js')).warmUpThread();
        return dispatch;
      },
      // Never reject: Piscina would fail the thread's start-up; a cold thread still works.
      () => dispatch,
    )
  : Promise.resolve(dispatch);
