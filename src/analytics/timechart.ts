/**
 * The query time chart (SPEC §8) and the search reports, read from one project's query log.
 * Main thread; every read is an indexed range scan.
 *
 * Buckets are UTC: hours, days (00:00 UTC), ISO weeks (Monday 00:00 UTC) and calendar months.
 * Every bucket that overlaps [start, end) is returned, zeros included, with its whole count
 * (a bucket is never cut at `start`/`end`). Closed time comes from `day_buckets`/`hour_buckets`;
 * hours not closed yet by the rollup are counted from the raw rows, so a search is visible as soon as
 * the writer flushed it (≤ 1 s), well inside the 60 s the SPEC allows.
 */
import { DAY_MS, HOUR_MS, floorHour } from './normalize.js';
import { rawHourCounts } from './rollup.js';
import type { SiteQueryLog } from './site-log.js';

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface TimechartBucket {
  /** Bucket start, UNIX seconds. */
  timestamp: number;
  count: number;
  noResults: number;
}

export interface Timechart {
  /** As requested, UNIX seconds. */
  start: number;
  end: number;
  interval: Interval;
  total: number;
  buckets: TimechartBucket[];
}

/** Start (ms) of the UTC bucket of `interval` containing `ms`. */
export function bucketStart(ms: number, interval: Interval): number {
  switch (interval) {
    case 'hour':
      return floorHour(ms);
    case 'day':
      return Math.floor(ms / DAY_MS) * DAY_MS;
    case 'week': {
      const day = Math.floor(ms / DAY_MS);
      // Day 0 (1970-01-01) was a Thursday: Monday-based weekday = (day + 3) mod 7.
      return (day - (((day + 3) % 7) + 7) % 7) * DAY_MS;
    }
    case 'month': {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
  }
}

/** Start (ms) of the bucket after the one starting at `start`. */
export function nextBucket(start: number, interval: Interval): number {
  switch (interval) {
    case 'hour':
      return start + HOUR_MS;
    case 'day':
      return start + DAY_MS;
    case 'week':
      return start + 7 * DAY_MS;
    case 'month': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

/** Number of buckets of `interval` overlapping [startMs, endMs). */
export function bucketCount(startMs: number, endMs: number, interval: Interval): number {
  switch (interval) {
    case 'hour':
      return (bucketStart(endMs - 1, 'hour') - bucketStart(startMs, 'hour')) / HOUR_MS + 1;
    case 'day':
      return (bucketStart(endMs - 1, 'day') - bucketStart(startMs, 'day')) / DAY_MS + 1;
    case 'week':
      return (bucketStart(endMs - 1, 'week') - bucketStart(startMs, 'week')) / (7 * DAY_MS) + 1;
    case 'month': {
      const a = new Date(startMs);
      const b = new Date(endMs - 1);
      return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() + 1;
    }
  }
}

/** Default interval: hour for ranges up to 2 days, day beyond (SPEC §8). */
export function defaultInterval(startSec: number, endSec: number): Interval {
  return endSec - startSec <= 2 * 86_400 ? 'hour' : 'day';
}

/**
 * Counts over [from, to) (ms; `from` aligned to `unit`), as rows [start, count, noResults]
 * sorted by start, each row inside one `unit` (so inside one output bucket):
 * - with unit `day`: closed whole days from `day_buckets`, then the closed hours of the day
 *   holding `closed_through` from `hour_buckets`;
 * - with unit `hour`: closed hours from `hour_buckets`;
 * - then, for both, hours not closed yet counted from the raw rows.
 */
function counts(log: SiteQueryLog, from: number, to: number, unit: 'hour' | 'day'): Array<[number, number, number]> {
  const closed = log.closedThrough ?? from;
  const out: Array<[number, number, number]> = [];
  const closedEnd = Math.min(to, closed);
  const read = (sql: string, a: number, b: number) => {
    if (b > a) for (const row of log.db.prepare(sql).raw().all(a, b) as Array<[number, number, number]>) out.push(row);
  };
  let hoursFrom = from;
  if (unit === 'day') {
    const fullDaysEnd = Math.max(from, Math.floor(closedEnd / DAY_MS) * DAY_MS);
    read('SELECT day, count, no_results FROM day_buckets WHERE day >= ? AND day < ? ORDER BY day', from, fullDaysEnd);
    hoursFrom = fullDaysEnd;
  }
  read('SELECT hour, count, no_results FROM hour_buckets WHERE hour >= ? AND hour < ? ORDER BY hour', hoursFrom, closedEnd);
  for (const row of rawHourCounts(log, Math.max(from, closed), to)) out.push(row);
  return out;
}

/**
 * The time chart of one project. `startSec`/`endSec` are validated by the caller
 * (start < end, bucket count within limits).
 */
export function timechart(log: SiteQueryLog, startSec: number, endSec: number, interval: Interval): Timechart {
  const startMs = startSec * 1000;
  const endMs = endSec * 1000;
  const first = bucketStart(startMs, interval);
  const buckets: TimechartBucket[] = [];
  const starts: number[] = [];
  for (let b = first; b < endMs; b = nextBucket(b, interval)) {
    starts.push(b);
    buckets.push({ timestamp: b / 1000, count: 0, noResults: 0 });
  }
  const last = starts.length ? nextBucket(starts[starts.length - 1]!, interval) : first;
  let total = 0;
  let i = 0;
  // Rows arrive sorted, each inside one bucket (UTC weeks and months are whole UTC days).
  for (const [at, n, z] of counts(log, first, last, interval === 'hour' ? 'hour' : 'day')) {
    while (i + 1 < starts.length && at >= starts[i + 1]!) i++;
    const bucket = buckets[i]!;
    bucket.count += n;
    bucket.noResults += z;
    total += n;
  }
  return { start: startSec, end: endSec, interval, total, buckets };
}

export interface TopQuery {
  query: string;
  count: number;
  /** Mean result count of the query's searches in the range, rounded to 2 decimals. */
  averageResults: number;
  /** Select events for the query divided by its searches in the range, at most 1, 4 decimals. */
  selectRate: number;
}

/** Most frequent queries over [startSec, endSec): ties by query text. */
export function topQueries(log: SiteQueryLog, startSec: number, endSec: number, limit: number): TopQuery[] {
  const rows = log.db
    .prepare(
      `SELECT query, COUNT(*) AS n, AVG(results) AS avg FROM searches WHERE at >= ? AND at < ?
       GROUP BY query ORDER BY n DESC, query ASC LIMIT ?`,
    )
    .raw()
    .all(startSec * 1000, endSec * 1000, limit) as Array<[string, number, number]>;
  if (rows.length === 0) return [];
  const selects = new Map<string, number>();
  const sel = log.db.prepare(
    `SELECT COUNT(*) FROM events WHERE at >= ? AND at < ? AND action = 'select' AND query = ?`,
  );
  for (const [query] of rows) selects.set(query, sel.pluck().get(startSec * 1000, endSec * 1000, query) as number);
  return rows.map(([query, n, avg]) => ({
    query,
    count: n,
    averageResults: Math.round(avg * 100) / 100,
    selectRate: Math.round(Math.min(1, (selects.get(query) ?? 0) / n) * 10_000) / 10_000,
  }));
}

export interface NoResultQuery {
  query: string;
  count: number;
  /** UNIX seconds of the last search of this query that found nothing. */
  lastSearched: number;
}

/** Queries that found nothing over [startSec, endSec), most frequent first. */
export function noResultQueries(log: SiteQueryLog, startSec: number, endSec: number, limit: number): NoResultQuery[] {
  const rows = log.db
    .prepare(
      `SELECT query, COUNT(*) AS n, MAX(at) AS last FROM searches WHERE at >= ? AND at < ? AND results = 0
       GROUP BY query ORDER BY n DESC, query ASC LIMIT ?`,
    )
    .raw()
    .all(startSec * 1000, endSec * 1000, limit) as Array<[string, number, number]>;
  return rows.map(([query, n, last]) => ({ query, count: n, lastSearched: Math.floor(last / 1000) }));
}
