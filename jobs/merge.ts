/**
 * Cron job: every minute, run the merge policy over every open project. The merges
 * themselves run in the worker pool; each project's store commits its own results and never
 * runs two merges at once, so a slow merge simply makes the next tick's call for that project
 * wait behind it. The logic lives in `src/index/merge.ts` / `merge-policy.ts`; this file only
 * schedules it.
 *
 * Tests pass their own `scheduler` (or `schedule: false` and call {@link MergeJob.runOnce}),
 * so they never sleep.
 */
import cron from 'node-cron';
import type { IndexRegistry } from '../src/index/index.js';

export const MERGE_SCHEDULE = '* * * * *';

/** Registers `tick` to run on `expression`; returns a stopper. node-cron by default. */
export type Scheduler = (expression: string, tick: () => void) => { stop(): void | Promise<void> };

export const cronScheduler: Scheduler = (expression, tick) =>
  cron.schedule(expression, tick, { name: 'merge-segments', noOverlap: true, timezone: 'Etc/UTC' });

export interface MergeJobDeps {
  indexes: IndexRegistry;
  onError?: (siteId: string, err: unknown) => void;
}

export interface MergeJob {
  /** One pass: policy merges for every open project; resolves with the sites that merged. */
  runOnce(): Promise<string[]>;
  stop(): Promise<void>;
}

export function startMergeJob(deps: MergeJobDeps, opts: { schedule?: boolean; scheduler?: Scheduler } = {}): MergeJob {
  let running: Promise<string[]> | null = null;
  let stopped = false;
  const pass = async (): Promise<string[]> => {
    const merged: string[] = [];
    for (const index of await deps.indexes.openProjects()) {
      if (stopped) break;
      if (!index.mergeDue()) continue;
      try {
        await index.merge();
        merged.push(index.siteId);
      } catch (err) {
        deps.onError?.(index.siteId, err);
      }
    }
    return merged;
  };
  // A tick while the previous pass still runs joins it instead of queueing another.
  const runOnce = (): Promise<string[]> => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };
  const handle = opts.schedule === false ? null : (opts.scheduler ?? cronScheduler)(MERGE_SCHEDULE, () => void runOnce());
  return {
    runOnce,
    // Does not wait for a merge in flight: closing the stores abandons it (its temp file is
    // removed at the next open), so shutdown stays fast.
    async stop() {
      stopped = true;
      await handle?.stop();
    },
  };
}
