import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { QueryLogService } from '../../src/analytics/service.js';
import { CLOSE_GRACE_MS } from '../../src/analytics/rollup.js';
import type { Interval } from '../../src/analytics/timechart.js';

// Buckets are UTC whatever the server's zone: run under a +05:45 zone to catch local-time math.
process.env.TZ = 'Asia/Kathmandu';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// A Sunday 22:00 UTC, near a day, week (Monday) and month (March 1) boundary.
const T0 = Date.UTC(2026, 1, 22, 22, 0, 0);

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface Logged {
  at: number;
  results: number;
}

function randomLog(seed: number, from: number, to: number, n: number): Logged[] {
  const r = rng(seed);
  const out: Logged[] = [];
  for (let i = 0; i < n; i++) {
    // Cluster some entries exactly on hour boundaries and the last millisecond before them.
    const base = from + Math.floor(r() * (to - from));
    const k = r();
    const at = k < 0.1 ? Math.floor(base / HOUR) * HOUR : k < 0.2 ? Math.floor(base / HOUR) * HOUR - 1 : base;
    out.push({ at: Math.max(from, at), results: r() < 0.3 ? 0 : 1 + Math.floor(r() * 50) });
  }
  return out.sort((a, b) => a.at - b.at);
}

/** Brute-force UTC buckets computed with Date's UTC getters only. */
function bruteForce(log: Logged[], startSec: number, endSec: number, interval: Interval) {
  const key = (ms: number): number => {
    const d = new Date(ms);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    const day = d.getUTCDate();
    if (interval === 'hour') return Date.UTC(y, m, day, d.getUTCHours());
    if (interval === 'day') return Date.UTC(y, m, day);
    if (interval === 'month') return Date.UTC(y, m, 1);
    const dow = (d.getUTCDay() + 6) % 7; // Monday = 0
    return Date.UTC(y, m, day - dow);
  };
  const first = key(startSec * 1000);
  const buckets = new Map<number, { count: number; noResults: number }>();
  for (let b = first; b < endSec * 1000; ) {
    buckets.set(b, { count: 0, noResults: 0 });
    const d = new Date(b);
    b =
      interval === 'hour' ? b + HOUR
      : interval === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
      : interval === 'week' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 7)
      : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  for (const e of log) {
    const b = buckets.get(key(e.at));
    if (b) {
      b.count++;
      if (e.results === 0) b.noResults++;
    }
  }
  return [...buckets].map(([ms, v]) => ({ timestamp: ms / 1000, ...v }));
}

interface Asserts {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  same: (...args: any[]) => boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  equal: (...args: any[]) => boolean;
}

function setup(t: { teardown(fn: () => void): void }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-rollup-'));
  const clock = { now: T0 };
  const svc = new QueryLogService({ dataDir, clock: () => clock.now });
  t.teardown(() => {
    svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { svc, dataDir, clock };
}

function buckets(dataDir: string): Array<[number, number, number]> {
  const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
  const rows = db.prepare('SELECT hour, count, no_results FROM hour_buckets ORDER BY hour').raw().all() as Array<[number, number, number]>;
  db.close();
  return rows;
}

function checkAll(t: Asserts, svc: QueryLogService, log: Logged[], startSec: number, endSec: number, what: string) {
  for (const interval of ['hour', 'day', 'week', 'month'] as const) {
    const chart = svc.timechart('docs', startSec, endSec, interval);
    const expected = bruteForce(log, startSec, endSec, interval);
    t.same(chart.buckets, expected, `${what}: ${interval} buckets equal the brute-force count`);
    t.equal(chart.total, expected.reduce((s, b) => s + b.count, 0), `${what}: ${interval} total`);
  }
}

t.test('rollup every few minutes while logging matches a brute-force count', async (t) => {
  const { svc, dataDir, clock } = setup(t);
  const end = T0 + 10 * DAY;
  const log = randomLog(1, T0, end, 3000);
  let i = 0;
  // Advance the clock in irregular steps; log what happened meanwhile, flush, run the job.
  const r = rng(7);
  while (clock.now < end + 2 * HOUR) {
    clock.now += Math.floor(r() * 40 * 60_000) + 1000;
    while (i < log.length && log[i]!.at <= clock.now) svc.record('docs', { query: 'q' + (i % 13), results: log[i]!.results, at: log[i++]!.at });
    svc.flush();
    svc.rollup('docs', clock.now);
  }
  const startSec = T0 / 1000 - 3600;
  const endSec = end / 1000 + 3600;
  checkAll(t, svc, log, startSec, endSec, 'incremental');
  // Stored closed buckets alone also match (no help from the raw open-hour path).
  const closed = buckets(dataDir);
  const expectedHours = bruteForce(log, startSec, endSec, 'hour').filter((b) => b.count > 0);
  t.same(
    closed.map(([h, n, z]) => ({ timestamp: h / 1000, count: n, noResults: z })),
    expectedHours,
    'hour_buckets rows equal the brute-force non-empty hours',
  );

  const before = buckets(dataDir);
  const again = svc.rollup('docs', clock.now);
  t.equal(again.hoursClosed, 0, 'nothing left to close');
  t.same(buckets(dataDir), before, 'idempotent: a second run at the same time changes nothing');
  svc.rollup('docs', clock.now + 3 * HOUR);
  t.same(buckets(dataDir), before, 'idempotent: later runs without new entries change nothing');
});

t.test('backfill after a simulated week of downtime', async (t) => {
  const { svc, dataDir, clock } = setup(t);
  const log = randomLog(2, T0, T0 + 7 * DAY, 2000);
  // The job ran once at T0, then the server logged but the job was down for a week.
  svc.rollup('docs', T0 + CLOSE_GRACE_MS);
  for (const [i, e] of log.entries()) svc.record('docs', { query: 'q' + (i % 5), results: e.results, at: e.at });
  svc.flush();
  clock.now = T0 + 7 * DAY + 30 * 60_000;
  const res = svc.rollup('docs', clock.now);
  t.equal(res.closedThrough, T0 + 7 * DAY, 'closed through the last full hour');
  t.equal(res.hoursClosed, 7 * 24, 'one run backfilled every hour of the week');
  checkAll(t, svc, log, T0 / 1000, (T0 + 7 * DAY) / 1000, 'backfill');
  t.equal(buckets(dataDir).reduce((s, b) => s + b[1], 0), log.length);
});

t.test('an hour closes only after the grace period; the open hour is counted from raw rows', async (t) => {
  const { svc, clock } = setup(t);
  svc.rollup('docs', T0 + CLOSE_GRACE_MS);
  svc.record('docs', { query: 'a', results: 0, at: T0 + 59 * 60_000 });
  svc.flush();
  let chart = svc.timechart('docs', T0 / 1000, T0 / 1000 + 3600, 'hour');
  t.same(chart.buckets, [{ timestamp: T0 / 1000, count: 1, noResults: 1 }], 'visible right after the flush, before any rollup');
  clock.now = T0 + HOUR + CLOSE_GRACE_MS - 1;
  t.equal(svc.rollup('docs', clock.now).hoursClosed, 0, 'not closed inside the grace period');
  // An entry queued just before the hour ended is flushed late but before closing.
  svc.record('docs', { query: 'b', results: 3, at: T0 + HOUR - 1 });
  svc.flush();
  clock.now = T0 + HOUR + CLOSE_GRACE_MS;
  t.equal(svc.rollup('docs', clock.now).hoursClosed, 1);
  chart = svc.timechart('docs', T0 / 1000, T0 / 1000 + 3600, 'hour');
  t.same(chart.buckets, [{ timestamp: T0 / 1000, count: 2, noResults: 1 }]);

  // A very late entry (e.g. pushed by a search node) re-opens its closed hour.
  svc.record('docs', { query: 'c', results: 0, at: T0 + 10 * 60_000 });
  svc.flush();
  const res = svc.rollup('docs', clock.now + 60_000);
  t.equal(res.dirtyHours, 1, 'the late hour is re-rolled');
  chart = svc.timechart('docs', T0 / 1000, T0 / 1000 + 3600, 'hour');
  t.same(chart.buckets, [{ timestamp: T0 / 1000, count: 3, noResults: 2 }]);
});

t.test('retention purges raw entries but keeps the buckets', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ret-'));
  const clock = { now: T0 };
  const svc = new QueryLogService({ dataDir, clock: () => clock.now, settingsOf: () => ({ retentionDays: 30 }) });
  t.teardown(() => {
    svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  svc.record('docs', { query: 'ancient', results: 2, at: T0 - 40 * DAY });
  svc.record('docs', { query: 'recent', results: 0, at: T0 - 2 * DAY });
  svc.recordEvent('docs', { query: 'ancient', action: 'abandon', at: T0 - 40 * DAY });
  svc.flush();
  const res = svc.rollup('docs', T0 + CLOSE_GRACE_MS);
  t.equal(res.purgedSearches, 1);
  t.equal(res.purgedEvents, 1);
  const chart = svc.timechart('docs', (T0 - 41 * DAY) / 1000, T0 / 1000, 'month');
  t.equal(chart.total, 2, 'the purged search still counts in its bucket');
  const top = svc.topQueries('docs', { start: (T0 - 41 * DAY) / 1000, end: T0 / 1000 }, 10);
  t.same(top.map((q) => q.query), ['recent'], 'reports read raw entries: only within retention');
});

t.test('killed in the middle of a rollup: the next run finishes it correctly', async (t) => {
  const { svc, dataDir } = setup(t);
  const log = randomLog(3, T0, T0 + 5 * DAY, 1500);
  svc.rollup('docs', T0 + CLOSE_GRACE_MS);
  for (const e of log) svc.record('docs', { query: 'k', results: e.results, at: e.at });
  svc.close();

  // The child backfills 5 days (5 chunks of 24 h) and SIGKILLs itself inside the 3rd chunk's transaction.
  const child = join(dataDir, 'child.mts');
  const serviceUrl = pathToFileURL(join(import.meta.dirname, '../../src/analytics/service.ts')).href;
  writeFileSync(
    child,
    `import { QueryLogService } from ${JSON.stringify(serviceUrl)};
const now = ${T0 + 5 * DAY + 10 * 60_000};
const svc = new QueryLogService({ dataDir: ${JSON.stringify(dataDir)}, clock: () => now });
let chunks = 0;
svc.rollup('docs', now, { onChunk: () => { if (++chunks === 3) process.kill(process.pid, 'SIGKILL'); } });
console.log('not killed');
`,
  );
  const out = spawnSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  t.equal(out.signal, 'SIGKILL', 'the child died mid-rollup: ' + out.stderr);

  const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
  const closed = db.prepare("SELECT value FROM state WHERE key = 'closed_through'").pluck().get();
  const maxHour = db.prepare('SELECT MAX(hour) FROM hour_buckets').pluck().get() as number;
  db.close();
  t.equal(closed, T0 + 2 * DAY, 'the two committed chunks survived, the third rolled back');
  t.ok(maxHour < T0 + 2 * DAY, 'no bucket of the killed chunk was kept');

  const again = new QueryLogService({ dataDir, clock: () => T0 + 5 * DAY + 10 * 60_000 });
  t.teardown(() => again.close());
  const res = again.rollup('docs');
  t.equal(res.hoursClosed, 3 * 24, 'the restart resumed at the last closed bucket');
  const chart = again.timechart('docs', T0 / 1000, (T0 + 5 * DAY) / 1000, 'hour');
  t.same(chart.buckets, bruteForce(log, T0 / 1000, (T0 + 5 * DAY) / 1000, 'hour'), 'buckets equal the brute-force count');
});
