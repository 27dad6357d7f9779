import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryLogService } from '../../src/analytics/index.js';
import { startQueryLogRollup, QUERYLOG_ROLLUP_SCHEDULE } from '../../jobs/querylog-rollup.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 5, 1, 0, 0, 0);

t.test('the job flushes the queue and rolls every project at the injected time', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-job-'));
  const clock = { now: T0 + 5 * 60_000 };
  const analytics = new QueryLogService({ dataDir, clock: () => clock.now });
  const job = startQueryLogRollup({ analytics, clock: () => clock.now }, { schedule: false });
  t.teardown(async () => {
    await job.stop();
    analytics.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  t.equal(QUERYLOG_ROLLUP_SCHEDULE, '* * * * *', 'every minute');
  t.same([...job.runOnce().keys()], [], 'no project has a log yet');

  analytics.record('alpha', { query: 'a', results: 1, at: T0 + 10 * 60_000 });
  analytics.record('beta', { query: 'b', results: 0, at: T0 + 20 * 60_000 });
  analytics.record('beta', { query: 'b', results: 0, at: T0 + HOUR + 1 });
  t.equal(analytics.pending, 3);
  clock.now = T0 + 2 * HOUR + 3 * 60_000;
  const results = job.runOnce();
  t.equal(analytics.pending, 0, 'queued entries were written first');
  t.same([...results.keys()], ['alpha', 'beta']);
  t.equal(results.get('beta')!.closedThrough, T0 + 2 * HOUR);
  t.same(
    analytics.timechart('beta', T0 / 1000, (T0 + 2 * HOUR) / 1000, 'hour').buckets.map((b) => [b.count, b.noResults]),
    [
      [1, 1],
      [1, 1],
    ],
  );
  const again = job.runOnce();
  t.equal(again.get('alpha')!.hoursClosed, 0, 'a second run at the same time has nothing to do');
});

t.test('scheduled with node-cron and stoppable', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-job-'));
  const analytics = new QueryLogService({ dataDir, clock: () => T0 });
  const job = startQueryLogRollup({ analytics, clock: () => T0 });
  await job.stop();
  await job.stop();
  analytics.close();
  rmSync(dataDir, { recursive: true, force: true });
  t.pass('started and stopped without running or hanging');
});
