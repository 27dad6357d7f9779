/**
 * The one worker file the Piscina pool loads (worker threads). Dispatches
 * `{task: '<name>', ...payload}` to `workers/<name>.{ts,js}`, whose default export is
 * `async (payload) => result`. To add a task: write `workers/<name>.ts` and add its name to
 * {@link TASKS}. Task modules are loaded lazily, once per thread (the module cache keeps them).
 */
import { createRequire } from 'node:module';

export const TASKS = ['ping', 'build-segment', 'merge-segments', 'fetch-extract', 'search'] as const;
export type TaskName = (typeof TASKS)[number];

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

/** Piscina entry point: runs `message.task` with the whole message as its payload. */
export default async function dispatch(message: { task?: unknown } & Record<string, unknown>): Promise<unknown> {
  const task = message?.task;
  if (typeof task !== 'string' || !(TASKS as readonly string[]).includes(task)) {
    throw new Error(`unknown worker task ${JSON.stringify(task)} (known: ${TASKS.join(', ')})`);
  }
  const mod = await loadTask(task as TaskName);
  return mod.default(message);
}
