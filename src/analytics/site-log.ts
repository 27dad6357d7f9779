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
 * - `state`         `closed_through` (end of the last closed hour bucket), `window_start_day`.
 *
 * Invariant: `query_totals.count` = Σ `query_days.count` for that query, and the in-memory
 * index equals `query_totals` after every committed write batch or expiry.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SuggestionIndex } from './suggestions.js';
import { dayOf, floorHour } from './normalize.js';

/** Length of the suggestion window in UTC days, today included (SPEC §6: "the last 90 days"). */
export const SUGGESTION_WINDOW_DAYS = 90;

/** A search as the writer stores it (already normalised and anonymised). */
export interface SearchRow {
  kind: 'search';
  at: number;
  query: string;
  results: number;
  /** JSON text of the applied filters, or null. */
  filters: string | null;
  sort: string | null;
  visitor: string;
}

/** A suggestion/result event as the writer stores it. */
export interface EventRow {
  kind: 'event';
  at: number;
  query: string;
  action: 'search' | 'select' | 'abandon';
  timeToAction: number | null;
  link: string | null;
  position: number | null;
  visitor: string;
}

export type LogRow = SearchRow | EventRow;

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
`;

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

export class SiteQueryLog {
  readonly db: Database.Database;
  /** End (ms, exclusive) of the last closed hour bucket; null before the first rollup. */
  closedThrough: number | null;
  /** First UTC day inside the suggestion window. */
  windowStartDay: number;
  private suggestions: SuggestionIndex | null = null;

  private readonly stmt: {
    insertSearch: Database.Statement;
    insertEvent: Database.Statement;
    addDay: Database.Statement;
    addTotal: Database.Statement;
    markDirty: Database.Statement;
    setState: Database.Statement;
  };
  private readonly writeTx: (rows: LogRow[]) => SearchRow[];

  /** Opens (creating if needed) the database at `file`; `now` seeds the suggestion window of a new file. */
  constructor(
    readonly siteId: string,
    readonly file: string,
    now: number,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL under WAL survives a process crash; only an OS crash can lose the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    // 16 MB of page cache instead of SQLite's 2 MB: the writer's upserts into query_totals (one
    // per distinct query per batch, at random places) stay in memory on a busy site.
    this.db.pragma('cache_size = -16384');
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
    this.stmt = {
      insertSearch: this.db.prepare(
        'INSERT INTO searches(at, query, results, filters, sort, visitor) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      insertEvent: this.db.prepare(
        'INSERT INTO events(at, query, action, time_to_action, link, position, visitor) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      addDay: this.db.prepare(
        'INSERT INTO query_days(day, query, count) VALUES (?, ?, ?) ON CONFLICT(day, query) DO UPDATE SET count = count + excluded.count',
      ),
      addTotal: this.db.prepare(
        `INSERT INTO query_totals(query, count, last_results, last_at) VALUES (@query, @n, @results, @at)
         ON CONFLICT(query) DO UPDATE SET count = count + @n,
           last_results = CASE WHEN @at >= last_at THEN @results ELSE last_results END,
           last_at = MAX(last_at, @at)`,
      ),
      markDirty: this.db.prepare('INSERT OR IGNORE INTO dirty_hours(hour) VALUES (?)'),
      setState: this.db.prepare('INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)'),
    };
    this.writeTx = this.db.transaction((rows: LogRow[]): SearchRow[] => {
      const counted: SearchRow[] = [];
      // Popular queries repeat within a batch: one upsert per (query, day) and per query.
      const perDay = new Map<string, { query: string; day: number; n: number }>();
      const perQuery = new Map<string, { query: string; n: number; results: number; at: number }>();
      for (const r of rows) {
        if (r.kind === 'search') {
          this.stmt.insertSearch.run(r.at, r.query, r.results, r.filters, r.sort, r.visitor);
          // Entries that arrive after their hour was closed (pushed late, clock skew) re-open it.
          if (this.closedThrough !== null && r.at < this.closedThrough) {
            this.stmt.markDirty.run(floorHour(r.at));
          }
          // Only searches inside the window count for suggestions (an expired day never comes back).
          const day = dayOf(r.at);
          if (day >= this.windowStartDay) {
            const dayKey = `${day}\u0000${r.query}`;
            const d = perDay.get(dayKey);
            if (d) d.n++;
            else perDay.set(dayKey, { query: r.query, day, n: 1 });
            const q = perQuery.get(r.query);
            if (!q) perQuery.set(r.query, { query: r.query, n: 1, results: r.results, at: r.at });
            else {
              q.n++;
              if (r.at >= q.at) {
                q.at = r.at;
                q.results = r.results;
              }
            }
            counted.push(r);
          }
        } else {
          this.stmt.insertEvent.run(r.at, r.query, r.action, r.timeToAction, r.link, r.position, r.visitor);
        }
      }
      for (const d of perDay.values()) this.stmt.addDay.run(d.day, d.query, d.n);
      for (const q of perQuery.values()) this.stmt.addTotal.run(q);
      return counted;
    });
  }

  getState(key: string): number | null {
    const row = this.db.prepare('SELECT value FROM state WHERE key = ?').get(key) as { value: number } | undefined;
    return row ? row.value : null;
  }

  setState(key: string, value: number): void {
    this.db.prepare('INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)').run(key, value);
  }

  /** Writes one batch in one transaction, then mirrors the counted searches into memory. */
  write(rows: LogRow[]): void {
    const counted = this.writeTx(rows);
    if (this.suggestions) for (const r of counted) this.suggestions.add(r.query, 1, r.results, r.at);
  }

  /**
   * The in-memory suggestion index, loaded from `query_totals` on first use and moved to the
   * window of `now` (expiring days that fell out of it).
   */
  suggestionIndex(now: number): SuggestionIndex {
    this.expireWindow(now);
    if (!this.suggestions) {
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
    const expired = this.db.transaction(() => {
      const gone = this.db
        .prepare('SELECT query, SUM(count) AS n FROM query_days WHERE day < ? GROUP BY query')
        .raw()
        .all(newStart) as Array<[string, number]>;
      const sub = this.db.prepare('UPDATE query_totals SET count = count - ? WHERE query = ?');
      for (const [query, n] of gone) sub.run(n, query);
      this.db.prepare('DELETE FROM query_totals WHERE count <= 0').run();
      this.db.prepare('DELETE FROM query_days WHERE day < ?').run(newStart);
      this.stmt.setState.run('window_start_day', newStart);
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
    if (this.db.open) this.db.close();
  }
}
