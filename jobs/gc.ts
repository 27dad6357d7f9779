/**
 * Cron job: every ten minutes, sweep every open project for files nobody references: segment
 * files no live or pinned generation lists (normally deleted the moment their last reader
 * releases them; the sweep catches failed unlinks) and write-log files already covered by a
 * committed segment. Main thread; the sweep itself is `SegmentStore.gc()`.
 */
import cron from 'node-cron';
import type { IndexRegistry } from '../src/index/index.js';
import type { Scheduler } from './merge.js';

export const GC_SCHEDULE = '*/10 * * * *';

export interface GcJob {
  /** One sweep over the open projects; resolves with the number of files removed. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

export function startGcJob(
  deps: { indexes: IndexRegistry; onError?: (siteId: string, err: unknown) => void },
  opts: { schedule?: boolean; scheduler?: Scheduler } = {},
): GcJob {
  const runOnce = async (): Promise<number> => {
    let removed = 0;
    for (const index of await deps.indexes.openProjects()) {
      try {
        removed += index.gc();
      } catch (err) {
        deps.onError?.(index.siteId, err);
      }
    }
    return removed;
  };
  const scheduler: Scheduler =
    opts.scheduler ?? ((expr, tick) => cron.schedule(expr, tick, { name: 'index-gc', noOverlap: true, timezone: 'Etc/UTC' }));
  const handle = opts.schedule === false ? null : scheduler(GC_SCHEDULE, () => void runOnce());
  return {
    runOnce,
    async stop() {
      await handle?.stop();
    },
  };
}
