/**
 * One project's query-log database, `<dataDir>/projects/<siteId>/querylog.db` (better-sqlite3,
 * WAL). Main thread only; every method is synchronous and short (a batch insert, an indexed
 * range read). Owned by {@link QueryLogService}; nothing else opens the file.
 *
 * Tables (all times are UTC milliseconds since the epoch):
 * - `searches`      raw logged searches (normalised query, results, filters, sort, visitor hash);
 *                   purged after the retention period once rolled up.
 * - `events`        raw `search|select|abandon` events from `POST /sites/queries/log`.
 * - `hour_buckets`  rolled-up UTC hours: count and noResults (kept forever).
 * - `day_buckets`   sums of `hour_buckets` per UTC day (derived, kept in step by the rollup) so
 *                   a year by day/week/month reads 365 rows instead of 8,760.
 * - `dirty_hours`   closed hours that received late entries and must be re-rolled.
 * - `query_days`    searches per (UTC day, query) inside the 90-day suggestion window (clustered
 *                   by day: the writer's upserts of today stay on a few pages).
 * - `query_totals`  per query: searches in the window, last result count: the durable mirror
 *                   of the in-memory {@link SuggestionIndex}.
 * - `state`         `closed_through` (end of the last closed hour bucket), `window_start_day`,
 *                   `aggregated_through` (last `searches.id` in query_days/query_totals).
 * - `received_batches` ids of the search nodes' batches whose entries for this project are in
 *                   `searches`/`events`, written in the same transaction as those entries
 *                   ({@link SiteQueryLog.writeOnce}); kept {@link RECEIVED_BATCH_KEEP_MS}.
 *
 * Invariant: `query_totals.count` = Σ `query_days.count` for that query; both count exactly the
 * searches with `id` ≤ state `aggregated_through`; the in-memory index equals `query_totals`
 * plus the pending aggregates of later searches (written with a later batch, see
 * {@link AGGREGATE_EVERY_ROWS}, or counted again from the raw rows at the next open).
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PageCacheShare } from '../core/index.js';
import { SuggestionIndex } from './suggestions.js';
import { dayOf, floorHour } from './normalize.js';
import type { EventRow, LogBatch, SearchRow } from './batch.js';

/**
 * Background batches write their searches at once but their suggestion aggregates
 * (`query_days`, `query_totals`: one upsert per distinct query and per (day, query)) only once
 * this many counted searches are pending, or at the next `flush()` (the rollup job's, every
 * minute), window move, index load or close. Why: the upserts were most of the writer's cost,
 * and over a longer span a popular query is upserted once instead of once per batch. A crash
 * in between loses nothing: `aggregated_through` (the last `searches.id` counted) tells the
 * next open which raw rows to count again.
 */
export const AGGREGATE_EVERY_ROWS = 20_000;

/** Searches per multi-row INSERT (6 parameters each; SQLite allows 32,766 per statement). */
const INSERT_GROUP = 50;

/** Length of the suggestion window in UTC days, today included (SPEC §6: "the last 90 days"). */
export const SUGGESTION_WINDOW_DAYS = 90;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS searches(
  id INTEGER PRIMARY KEY, at INTEGER NOT NULL, query TEXT NOT NULL, results INTEGER NOT NULL,
  filters TEXT, sort TEXT, visitor TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS searches_at ON searches(at, results, query);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY, at INTEGER NOT NULL, query TEXT NOT NULL, action TEXT NOT NULL,
  time_to_action INTEGER, link TEXT, position INTEGER, visitor TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_at ON events(at, action, query);
CREATE TABLE IF NOT EXISTS hour_buckets(
  hour INTEGER PRIMARY KEY, count INTEGER NOT NULL, no_results INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS day_buckets(
  day INTEGER PRIMARY KEY, count INTEGER NOT NULL, no_results INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dirty_hours(hour INTEGER PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS query_days(
  day INTEGER NOT NULL, query TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(day, query)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS query_totals(
  query TEXT PRIMARY KEY, count INTEGER NOT NULL, last_results INTEGER NOT NULL, last_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS received_batches(batch_id TEXT PRIMARY KEY, received_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS received_batches_at ON received_batches(received_at);
`;

/**
 * How long a project's log remembers a search node's batch id (30 days): a node retries a
 * batch for far less, and an id forgotten sooner could be counted again.
 */
export const RECEIVED_BATCH_KEEP_MS = 30 * 86_400_000;

/**
 * Files written before query_days was clustered by day (primary key (query, day) plus an index
 * on day): rebuilt once as (day, query). Why: the writer upserts today's rows on every batch;
 * keyed by query first they sat at random places of a table that grows with the log (90 days
 * of distinct queries), so each batch dirtied hundreds of pages (written to the WAL, then
 * checkpointed) — the part of logging's cost that grew with the log size. Keyed by day first,
 * today's rows are one contiguous run at the end of the table. One transaction: a crash leaves
 * the old table.
 */
function migrateQueryDays(db: Database.Database): void {
  const cols = db.prepare("SELECT name, pk FROM pragma_table_info('query_days')").all() as Array<{ name: string; pk: number }>;
  if (cols.length === 0 || cols.find((c) => c.name === 'day')?.pk === 1) return;
  db.transaction(() => {
    db.exec(`
      CREATE TABLE query_days_by_day(
        day INTEGER NOT NULL, query TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(day, query)) WITHOUT ROWID;
      INSERT INTO query_days_by_day(day, query, count) SELECT day, query, count FROM query_days ORDER BY day, query;
      DROP TABLE query_days;
      ALTER TABLE query_days_by_day RENAME TO query_days;`);
  })();
}

/** Options of a {@link SiteQueryLog}. */
export interface SiteQueryLogOptions {
  /**
   * Called before this connection writes searches, suggestion aggregates or moves the window
   * (main thread): the query-log writer thread commits what it was sent for this project and
   * its pending aggregates first, so ids and `aggregated_through` stay in order.
   */
  beforeWrite?: () => void;
}

/**
 * Inserts log rows and keeps the suggestion aggregates of the inserted searches pending until
 * {@link LogInserter.writePending}. Works on any connection to a query-log file: the main
 * thread's {@link SiteQueryLog}, and the query-log writer thread's own connection
 * (src/analytics/writer-thread.ts). Every method runs inside the caller's transaction.
 */
export class LogInserter {
  /**
   * Counted searches written to `searches` but not yet added to `query_days`/`query_totals`
   * (see {@link AGGREGATE_EVERY_ROWS}); `throughId` is the highest such `searches.id`.
   */
  readonly pending = { days: new Map<string, { query: string; day: number; n: number }>(), queries: new Map<string, { query: string; n: number; results: number; at: number }>(), rows: 0, throughId: 0 };
  private readonly insertSearch: Database.Statement;
  private readonly insertGroupStmt: Database.Statement;
  private readonly insertEvent: Database.Statement;
  private readonly addDay: Database.Statement;
  private readonly addTotal: Database.Statement;
  private readonly markDirty: Database.Statement;
  private readonly setThrough: Database.Statement;
  /** Parameters of one multi-row INSERT, reused for every group. */
  private readonly groupArgs: unknown[] = new Array(INSERT_GROUP * 6).fill(null);

  constructor(readonly db: Database.Database) {
    this.insertSearch = db.prepare('INSERT INTO searches(at, query, results, filters, sort, visitor) VALUES (?, ?, ?, ?, ?, ?)');
    this.insertGroupStmt = db.prepare(
      'INSERT INTO searches(at, query, results, filters, sort, visitor) VALUES ' + Array(INSERT_GROUP).fill('(?, ?, ?, ?, ?, ?)').join(', '),
    );
    this.insertEvent = db.prepare(
      'INSERT INTO events(at, query, action, time_to_action, link, position, visitor) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.addDay = db.prepare(
      'INSERT INTO query_days(day, query, count) VALUES (?, ?, ?) ON CONFLICT(day, query) DO UPDATE SET count = count + excluded.count',
    );
    this.addTotal = db.prepare(
      `INSERT INTO query_totals(query, count, last_results, last_at) VALUES (@query, @n, @results, @at)
       ON CONFLICT(query) DO UPDATE SET count = count + @n,
         last_results = CASE WHEN @at >= last_at THEN @results ELSE last_results END,
         last_at = MAX(last_at, @at)`,
    );
    this.markDirty = db.prepare('INSERT OR IGNORE INTO dirty_hours(hour) VALUES (?)');
    // Never backwards: two connections (main thread, writer thread) aggregate in turns, and a
    // stale watermark would make the next open count searches a second time.
    this.setThrough = db.prepare(
      "INSERT INTO state(key, value) VALUES ('aggregated_through', ?) ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)",
    );
  }

  /**
   * Inserts the searches and events of `batch` (oldest first) and counts the searches of the
   * suggestion window (from `windowStartDay`) into the pending aggregates, once per distinct
   * (query, day) of the batch; a search older than `closedThrough` (a closed hour bucket) marks
   * its hour dirty.
   */
  insert(batch: LogBatch, closedThrough: number | null, windowStartDay: number): void {
    // Searches go in as multi-row INSERTs of INSERT_GROUP rows (one statement call and one
    // VDBE run per group instead of per row), bound from one reused array; ids stay in row order.
    const { queries, visitors, query, visitor, at, results, extras } = batch;
    const args = this.groupArgs;
    let extra = 0;
    let row = 0;
    for (; row < batch.length; row++) {
      let filters: string | null = null;
      let sort: string | null = null;
      if (extra < extras.length && extras[extra]![0] === row) [, filters, sort] = extras[extra++]!;
      const t = at[row]!;
      const o = (row % INSERT_GROUP) * 6;
      args[o] = t;
      args[o + 1] = queries[query[row]!]!;
      args[o + 2] = results[row]!;
      args[o + 3] = filters;
      args[o + 4] = sort;
      args[o + 5] = visitors[visitor[row]!]!;
      if (o === (INSERT_GROUP - 1) * 6) this.pending.throughId = Number(this.insertGroupStmt.run(args).lastInsertRowid);
      // Entries that arrive after their hour was closed (pushed late, clock skew) re-open it.
      if (closedThrough !== null && t < closedThrough) this.markDirty.run(floorHour(t));
    }
    for (let o = 0; o < (row % INSERT_GROUP) * 6; o += 6) {
      this.pending.throughId = Number(this.insertSearch.run(args[o], args[o + 1], args[o + 2], args[o + 3], args[o + 4], args[o + 5]).lastInsertRowid);
    }
    // Only searches inside the window count for suggestions (an expired day never comes back).
    batch.forEachCounted(windowStartDay, true, (q, n, lastAt, lastResults) => this.addPending(q, lastAt, lastResults, n));
    for (const r of batch.events) this.insertEvent.run(r.at, r.query, r.action, r.timeToAction, r.link, r.position, r.visitor);
  }

  /** Counts `n` searches of the window (the latest at `at`, finding `results`), all of `at`'s UTC day, into the pending aggregates. */
  addPending(query: string, at: number, results: number, n = 1): void {
    const day = dayOf(at);
    const dayKey = `${day}\u0000${query}`;
    const d = this.pending.days.get(dayKey);
    if (d) d.n += n;
    else this.pending.days.set(dayKey, { query, day, n });
    const q = this.pending.queries.get(query);
    if (!q) this.pending.queries.set(query, { query, n, results, at });
    else {
      q.n += n;
      if (at >= q.at) {
        q.at = at;
        q.results = results;
      }
    }
    this.pending.rows += n;
  }

  /** Upserts the pending aggregates and moves `aggregated_through`; call inside a transaction. */
  writePending(): void {
    for (const d of this.pending.days.values()) this.addDay.run(d.day, d.query, d.n);
    for (const q of this.pending.queries.values()) this.addTotal.run(q);
    if (this.pending.throughId > 0) this.setThrough.run(this.pending.throughId);
    this.pending.days.clear();
    this.pending.queries.clear();
    this.pending.rows = 0;
  }
}

/**
 * The page caches of the open project logs of this thread together: up to 16 MiB each (the
 * writer's upserts into query_totals, one per distinct query per batch at random places, stay in
 * memory on a busy site), an equal part of the query log's share of the memory plan when many
 * projects are open (`QueryLogService`'s `pageCacheMb`); 32 MiB until it is set.
 */
export const siteLogPageCaches = new PageCacheShare(32 * 1024, 256, 16 * 1024);

export class SiteQueryLog {
  readonly db: Database.Database;
  /** End (ms, exclusive) of the last closed hour bucket; null before the first rollup. */
  closedThrough: number | null;
  /** First UTC day inside the suggestion window. */
  windowStartDay: number;
  private suggestions: SuggestionIndex | null = null;
  private readonly inserter: LogInserter;
  private readonly writeTx: (batch: LogBatch, aggregate: boolean) => void;
  private readonly writeOnceTx: (batchId: string, batch: LogBatch, now: number, keepMs: number) => boolean;
  /** See {@link SiteQueryLogOptions.beforeWrite}. */
  private readonly beforeWrite: () => void;

  /** Opens (creating if needed) the database at `file`; `now` seeds the suggestion window of a new file. */
  constructor(
    readonly siteId: string,
    readonly file: string,
    now: number,
    opts: SiteQueryLogOptions = {},
  ) {
    this.beforeWrite = opts.beforeWrite ?? (() => {});
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL under WAL survives a process crash; only an OS crash can lose the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    siteLogPageCaches.add(this.db);
    migrateQueryDays(this.db);
    this.db.exec(SCHEMA);
    // Files rolled up before day buckets existed: derive them once.
    if (
      this.db.prepare('SELECT 1 FROM day_buckets LIMIT 1').get() === undefined &&
      this.db.prepare('SELECT 1 FROM hour_buckets LIMIT 1').get() !== undefined
    ) {
      this.db.exec(
        'INSERT INTO day_buckets(day, count, no_results) SELECT (hour / 86400000) * 86400000, SUM(count), SUM(no_results) FROM hour_buckets GROUP BY 1',
      );
    }
    this.closedThrough = this.getState('closed_through');
    const start = this.getState('window_start_day');
    if (start === null) {
      this.windowStartDay = dayOf(now) - SUGGESTION_WINDOW_DAYS + 1;
      this.setState('window_start_day', this.windowStartDay);
    } else {
      this.windowStartDay = start;
    }
    this.inserter = new LogInserter(this.db);
    this.writeTx = this.db.transaction((batch: LogBatch, aggregate: boolean): void => {
      this.inserter.insert(batch, this.closedThrough, this.windowStartDay);
      if (aggregate || this.inserter.pending.rows >= AGGREGATE_EVERY_ROWS) this.inserter.writePending();
    });
    const received = this.db.prepare('SELECT 1 FROM received_batches WHERE batch_id = ?').pluck();
    const receive = this.db.prepare('INSERT INTO received_batches(batch_id, received_at) VALUES (?, ?)');
    const forget = this.db.prepare('DELETE FROM received_batches WHERE received_at < ?');
    this.writeOnceTx = this.db.transaction((batchId: string, batch: LogBatch, now: number, keepMs: number): boolean => {
      if (received.get(batchId) !== undefined) return false;
      receive.run(batchId, now);
      this.inserter.insert(batch, this.closedThrough, this.windowStartDay);
      // With the searches: the writer thread may move aggregated_through past them next.
      this.inserter.writePending();
      forget.run(now - keepMs);
      return true;
    });
    this.catchUpAggregates();
  }

  /**
   * Writes the pending aggregates now (one transaction). Before anything reads
   * `query_days`/`query_totals`: the window move, the suggestion index load, close.
   */
  writeAggregates(): void {
    // The writer thread's pending aggregates (older searches) go first: aggregated_through
    // must never pass a search that is not counted yet.
    this.beforeWrite();
    const pending = this.inserter.pending;
    if (pending.rows === 0 && pending.throughId <= (this.getState('aggregated_through') ?? 0)) return;
    this.db.transaction(() => this.inserter.writePending())();
  }

  /**
   * At open: searches committed after the last aggregate write (a crash between the two) are
   * counted into `query_days`/`query_totals` now, from the raw rows. Files from before the
   * watermark existed had their aggregates written with every batch: all of them count as done.
   */
  private catchUpAggregates(): void {
    const maxId = (this.db.prepare('SELECT MAX(id) FROM searches').pluck().get() as number | null) ?? 0;
    const through = this.getState('aggregated_through');
    if (through === null) {
      this.setState('aggregated_through', maxId);
      return;
    }
    if (maxId <= through) return;
    const rows = this.db
      .prepare('SELECT id, at, query, results FROM searches WHERE id > ? ORDER BY id')
      .raw()
      .iterate(through) as IterableIterator<[number, number, string, number]>;
    for (const [id, at, query, results] of rows) {
      if (dayOf(at) >= this.windowStartDay) this.inserter.addPending(query, at, results);
      this.inserter.pending.throughId = id;
    }
    this.writeAggregates();
  }

  getState(key: string): number | null {
    const row = this.db.prepare('SELECT value FROM state WHERE key = ?').get(key) as { value: number } | undefined;
    return row ? row.value : null;
  }

  setState(key: string, value: number): void {
    this.db.prepare('INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)').run(key, value);
  }

  /**
   * Writes one batch in one transaction, then mirrors the counted searches into memory. The
   * suggestion aggregates of the batch are written with it when `aggregate` is true or
   * {@link AGGREGATE_EVERY_ROWS} counted searches are pending, else with a later batch.
   */
  write(batch: LogBatch, aggregate = true): void {
    this.beforeWrite();
    this.writeTx(batch, aggregate);
    this.noteCounted(batch, this.windowStartDay);
  }

  /**
   * Writes a search node's batch `batchId` (this project's part of it) exactly once: the id and
   * the entries commit in one transaction, and an id this log already holds writes nothing.
   * The commit is synchronous=FULL (the WAL is fsynced), so once this returns the part survives
   * a process kill and an OS crash or power loss. Returns false when the part was already there.
   * Throws when the write fails (nothing of the part is then written).
   *
   * @example if (!log.writeOnce('b-7f3a…', batch, Date.now())) duplicates++;
   */
  writeOnce(batchId: string, batch: LogBatch, now: number, keepMs = RECEIVED_BATCH_KEEP_MS): boolean {
    this.beforeWrite();
    // Only this commit pays an fsync; the connection's own searches stay at NORMAL.
    this.db.pragma('synchronous = FULL');
    let fresh: boolean;
    try {
      fresh = this.writeOnceTx(batchId, batch, now, keepMs);
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
    if (fresh) this.noteCounted(batch, this.windowStartDay);
    return fresh;
  }

  /**
   * Mirrors the searches of `batch`, committed to `searches` (by this connection or the writer
   * thread), that count for suggestions (UTC day `windowStartDay` or later) into the in-memory
   * index, when it is loaded.
   */
  noteCounted(batch: LogBatch, windowStartDay: number): void {
    if (!this.suggestions) return;
    // One index update per distinct query of the batch (its searches, and the results of its
    // latest search: the same end state as one update per search) rather than per search:
    // each update re-ranks up to 30 cached prefix lists on the main thread, and visitors
    // repeat popular queries within a batch (a second of traffic). In process, a batch of
    // 5,000 searches over 1,169 titles on a 76k-query index: 0.9–1.1 → 0.4–0.46 µs per search.
    const index = this.suggestions;
    batch.forEachCounted(windowStartDay, false, (query, n, lastAt, lastResults) => index.add(query, n, lastResults, lastAt));
  }

  /**
   * The in-memory suggestion index, loaded from `query_totals` on first use and moved to the
   * window of `now` (expiring days that fell out of it).
   */
  suggestionIndex(now: number): SuggestionIndex {
    this.expireWindow(now);
    if (!this.suggestions) {
      // The index mirrors query_totals: pending aggregates must be in it first.
      this.writeAggregates();
      const index = new SuggestionIndex();
      index.load(
        this.db
          .prepare('SELECT query, count, last_results, last_at FROM query_totals')
          .raw()
          .iterate() as IterableIterator<[string, number, number, number]>,
      );
      this.suggestions = index;
    }
    return this.suggestions;
  }

  /**
   * Moves the suggestion window so it ends today (UTC day of `now`): subtracts the searches of
   * days that fell out from `query_totals` and the in-memory index, in one transaction.
   * Returns the number of expired (query, day) rows. Idempotent; cheap when the day is unchanged.
   */
  expireWindow(now: number): number {
    const newStart = dayOf(now) - SUGGESTION_WINDOW_DAYS + 1;
    if (newStart <= this.windowStartDay) return 0;
    // Subtracting reads query_days: the pending counts (possibly of the expiring days) first.
    this.writeAggregates();
    const expired = this.db.transaction(() => {
      const gone = this.db
        .prepare('SELECT query, SUM(count) AS n FROM query_days WHERE day < ? GROUP BY query')
        .raw()
        .all(newStart) as Array<[string, number]>;
      const sub = this.db.prepare('UPDATE query_totals SET count = count - ? WHERE query = ?');
      for (const [query, n] of gone) sub.run(n, query);
      this.db.prepare('DELETE FROM query_totals WHERE count <= 0').run();
      this.db.prepare('DELETE FROM query_days WHERE day < ?').run(newStart);
      this.setState('window_start_day', newStart);
      return gone;
    })();
    this.windowStartDay = newStart;
    if (this.suggestions) {
      for (const [query, n] of expired) this.suggestions.subtract(query, n);
      if (expired.length > 0) this.suggestions.compact();
    }
    return expired.length;
  }

  close(): void {
    if (!this.db.open) return;
    this.writeAggregates();
    siteLogPageCaches.delete(this.db);
    this.db.close();
  }
}
