/**
 * Cron job: every minute, flush the query-log queue and roll raw logged searches into UTC hour
 * buckets for every project (SPEC §8), purging raw entries past retention and moving the
 * 90-day suggestion window. All the logic is in `src/analytics/rollup.ts`; this file only
 * schedules it. Runs on the main thread (the rollup is a few indexed SQLite statements).
 *
 * Time comes from the injected clock, never from the cron tick, so tests call
 * {@link QueryLogRollupJob.runOnce} with a fake clock and never sleep.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { QueryLogService, RollupResult } from '../src/analytics/index.js';

export const QUERYLOG_ROLLUP_SCHEDULE = '* * * * *';

export interface QueryLogRollupJobDeps {
  analytics: QueryLogService;
  clock: () => number;
  onError?: (err: unknown) => void;
}

export interface QueryLogRollupJob {
  /** One pass for every project at `clock()`; returns the per-project results. */
  runOnce(): Map<string, RollupResult>;
  /** Stops the schedule (graceful shutdown). */
  stop(): Promise<void>;
}

/**
 * Creates the job; `schedule: false` (tests) creates it without starting node-cron.
 * Overlapping runs are impossible: a pass is synchronous and node-cron is told `noOverlap`.
 */
export function startQueryLogRollup(deps: QueryLogRollupJobDeps, opts: { schedule?: boolean } = {}): QueryLogRollupJob {
  const runOnce = (): Map<string, RollupResult> => deps.analytics.rollupAll(deps.clock());
  let task: ScheduledTask | null = null;
  if (opts.schedule !== false) {
    task = cron.schedule(
      QUERYLOG_ROLLUP_SCHEDULE,
      () => {
        try {
          runOnce();
        } catch (err) {
          deps.onError?.(err);
        }
      },
      { name: 'querylog-rollup', noOverlap: true, timezone: 'Etc/UTC' },
    );
  }
  return {
    runOnce,
    async stop() {
      if (task) await task.stop();
      task = null;
    },
  };
}
