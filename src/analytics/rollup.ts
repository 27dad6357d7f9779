/**
 * Rolls a project's raw logged searches into UTC hour buckets (SPEC §8). Called by the
 * `jobs/querylog-rollup.ts` cron job every minute, on the main thread, with an injected `now`.
 *
 * Guarantees:
 * - Idempotent: a bucket is always recomputed from the raw rows of its hour (delete + insert),
 *   never incremented, so running twice changes nothing.
 * - Remembers the last closed bucket (`state.closed_through`) and backfills every hour between
 *   it and now after downtime, one day of hours per transaction.
 * - Crash-safe: each chunk's buckets and its `closed_through` commit in one transaction; a kill
 *   mid-rollup leaves the previous consistent state and the next run redoes the chunk.
 * - An hour is closed only {@link CLOSE_GRACE_MS} after it ends, so entries still in the
 *   writer's 1-second queue land before; anything later marks its hour dirty and it is re-rolled.
 * - Retention: raw searches/events older than `retentionDays` are deleted, but never a search
 *   whose hour is not closed yet; hour buckets are kept forever.
 * The open hours (from `closed_through` to now) are answered from raw rows at query time
 * (see `timechart.ts`), so a logged search is in the chart as soon as the writer flushed it.
 */
import type { Statement } from 'better-sqlite3';
import { DAY_MS, HOUR_MS, floorHour } from './normalize.js';
import type { SiteQueryLog } from './site-log.js';

/** How long after its end an hour is closed (must exceed the writer's flush interval). */
export const CLOSE_GRACE_MS = 2 * 60_000;
/** Hours rolled per transaction during a backfill. */
const CHUNK_HOURS = 24;

export interface RollupOptions {
  /** Raw entries older than this many days are purged (settings.analytics.retentionDays, default 365). */
  retentionDays?: number;
  /** Test hook: called inside each chunk's transaction after its buckets are written. */
  onChunk?: (chunkStart: number, chunkEnd: number) => void;
}

export interface RollupResult {
  /** End (ms, exclusive) of the last closed hour after this run, or null when nothing was ever logged. */
  closedThrough: number | null;
  /** Hours closed by this run (backfill included). */
  hoursClosed: number;
  /** Already-closed hours recomputed because late entries arrived. */
  dirtyHours: number;
  purgedSearches: number;
  purgedEvents: number;
  /** (query, day) rows that left the suggestion window. */
  expiredQueryDays: number;
}

/** The statements of {@link rawHourCounts}, prepared once per open log (time charts call it per request). */
const hourCounts = new WeakMap<SiteQueryLog, { first: Statement; last: Statement; count: Statement }>();

function hourCountStatements(log: SiteQueryLog): { first: Statement; last: Statement; count: Statement } {
  let s = hourCounts.get(log);
  if (!s) {
    const db = log.db;
    s = {
      first: db.prepare('SELECT MIN(at) FROM searches WHERE at >= ? AND at < ?').pluck(),
      last: db.prepare('SELECT MAX(at) FROM searches WHERE at >= ? AND at < ?').pluck(),
      count: db.prepare('SELECT COUNT(*), SUM(results = 0) FROM searches WHERE at >= ? AND at < ?').raw(),
    };
    hourCounts.set(log, s);
  }
  return s;
}

/**
 * Counts per hour of [from, to) computed from raw rows: hour start (ms) → [count, noResults],
 * in hour order, hours without rows left out (the rollup's recount and the time chart's open
 * hours). One range count per hour on the `searches_at` index (at, results, …), from the hour
 * of the range's first row to that of its last, not one `GROUP BY at / HOUR_MS` over the
 * range: SQLite cannot tell that the hour expression follows the index order and sorted every
 * row first. The recount of a 1,000,000-entry backfill blocked the main
 * thread for ≈ 160–190 ms that way.
 */
export function rawHourCounts(log: SiteQueryLog, from: number, to: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  if (!(to > from)) return out;
  const stmt = hourCountStatements(log);
  const first = stmt.first.get(from, to) as number | null;
  if (first === null) return out;
  const last = stmt.last.get(from, to) as number;
  for (let hour = floorHour(first); hour <= last; hour += HOUR_MS) {
    const [n, z] = stmt.count.get(Math.max(hour, from), Math.min(hour + HOUR_MS, to)) as [number, number | null];
    if (n > 0) out.push([hour, n, z ?? 0]);
  }
  return out;
}

/**
 * Replaces the hour buckets of [from, to) by a recount of the raw rows, then the day buckets of
 * the days they touch by a sum of their hours. Caller holds a transaction.
 */
function rebuildBuckets(log: SiteQueryLog, from: number, to: number): void {
  log.db.prepare('DELETE FROM hour_buckets WHERE hour >= ? AND hour < ?').run(from, to);
  const ins = log.db.prepare('INSERT INTO hour_buckets(hour, count, no_results) VALUES (?, ?, ?)');
  for (const [hour, n, z] of rawHourCounts(log, from, to)) ins.run(hour, n, z);
  const dayFrom = Math.floor(from / DAY_MS) * DAY_MS;
  const dayTo = Math.ceil(to / DAY_MS) * DAY_MS;
  log.db.prepare('DELETE FROM day_buckets WHERE day >= ? AND day < ?').run(dayFrom, dayTo);
  log.db
    .prepare(
      `INSERT INTO day_buckets(day, count, no_results)
       SELECT (hour / ${DAY_MS}) * ${DAY_MS}, SUM(count), SUM(no_results) FROM hour_buckets
       WHERE hour >= ? AND hour < ? GROUP BY 1`,
    )
    .run(dayFrom, dayTo);
}

/** Runs one rollup pass for one project at time `now` (ms). See the module comment. */
export function rollupSite(log: SiteQueryLog, now: number, opts: RollupOptions = {}): RollupResult {
  const db = log.db;
  const closeUntil = floorHour(now - CLOSE_GRACE_MS);
  let from = log.closedThrough;
  if (from === null) {
    // First run: start at the oldest raw entry's hour (nothing before it can exist).
    const oldest = db.prepare('SELECT MIN(at) AS m FROM searches').get() as { m: number | null };
    from = oldest.m === null ? closeUntil : Math.min(floorHour(oldest.m), closeUntil);
  }
  let hoursClosed = 0;
  const setClosed = db.prepare("INSERT OR REPLACE INTO state(key, value) VALUES ('closed_through', ?)");
  if (log.closedThrough === null && from === closeUntil) {
    setClosed.run(closeUntil);
    log.closedThrough = closeUntil;
  }
  while (from < closeUntil) {
    const chunkStart = from;
    const chunkEnd = Math.min(closeUntil, from + CHUNK_HOURS * HOUR_MS);
    db.transaction(() => {
      rebuildBuckets(log, chunkStart, chunkEnd);
      // Late entries for hours in this chunk are covered by this recount.
      db.prepare('DELETE FROM dirty_hours WHERE hour >= ? AND hour < ?').run(chunkStart, chunkEnd);
      setClosed.run(chunkEnd);
      opts.onChunk?.(chunkStart, chunkEnd);
    })();
    log.closedThrough = chunkEnd;
    hoursClosed += (chunkEnd - chunkStart) / HOUR_MS;
    from = chunkEnd;
  }

  const dirty = db.transaction(() => {
    const hours = db.prepare('SELECT hour FROM dirty_hours').pluck().all() as number[];
    for (const h of hours) rebuildBuckets(log, h, h + HOUR_MS);
    db.prepare('DELETE FROM dirty_hours').run();
    return hours.length;
  })();

  let purgedSearches = 0;
  let purgedEvents = 0;
  const retentionDays = opts.retentionDays ?? 365;
  if (retentionDays > 0 && log.closedThrough !== null) {
    const cutoff = now - retentionDays * DAY_MS;
    // Never drop a raw search its bucket has not absorbed yet.
    const searchCutoff = Math.min(floorHour(cutoff), log.closedThrough);
    db.transaction(() => {
      purgedSearches = db.prepare('DELETE FROM searches WHERE at < ?').run(searchCutoff).changes;
      purgedEvents = db.prepare('DELETE FROM events WHERE at < ?').run(cutoff).changes;
    })();
  }

  const expiredQueryDays = log.expireWindow(now);
  return { closedThrough: log.closedThrough, hoursClosed, dirtyHours: dirty, purgedSearches, purgedEvents, expiredQueryDays };
}
