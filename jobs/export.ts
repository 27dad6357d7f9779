/**
 * Cron job: the scheduled export (primary only). On `SITESIFT_EXPORT_SCHEDULE` (UTC) every
 * project is exported to `SITESIFT_EXPORT_OUT`, as `sitesift export --all` would; an export
 * writes only the files that changed, so a frequent schedule stays cheap. Main thread.
 */
import cron from 'node-cron';
import type { ExportResult, SnapshotExporter } from '../src/snapshot/index.js';
import type { Scheduler } from './merge.js';

export interface ExportJob {
  /** One export of every project now. */
  runOnce(): Promise<ExportResult>;
  stop(): Promise<void>;
}

/**
 * @example
 * const job = startExportJob({ exporter, schedule: '*\/5 * * * *', out: '/srv/export', pruneGraceMs: 3_600_000 });
 */
export function startExportJob(
  deps: { exporter: SnapshotExporter; schedule: string; out: string; pruneGraceMs: number; onError?: (err: unknown) => void },
  opts: { scheduler?: Scheduler } = {},
): ExportJob {
  if (!cron.validate(deps.schedule)) throw new Error(`SITESIFT_EXPORT_SCHEDULE "${deps.schedule}" is not a cron expression`);
  const runOnce = () => deps.exporter.run({ siteIds: null, out: deps.out, pruneGraceMs: deps.pruneGraceMs });
  const scheduler: Scheduler =
    opts.scheduler ?? ((expr, tick) => cron.schedule(expr, tick, { name: 'snapshot-export', noOverlap: true, timezone: 'Etc/UTC' }));
  const handle = scheduler(deps.schedule, () => {
    runOnce().catch((err: unknown) => deps.onError?.(err));
  });
  return {
    runOnce,
    async stop() {
      await handle.stop();
    },
  };
}
