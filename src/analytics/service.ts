/**
 * The query log of every project (SPEC §6 query suggestions, §8 query log and reports):
 * `services.analytics`. Main thread only.
 *
 * Storage: one SQLite file per project, `<dataDir>/projects/<siteId>/querylog.db` (WAL), rather
 * than one shared analytics.db keyed by siteId, because (1) deleting a project deletes its
 * folder and with it the log, with no cross-project DELETE of millions of rows; (2) a project's
 * reports and rollups scan only its own rows and indexes need no siteId prefix; (3) SQLite has
 * one writer per file, so a large backfill or purge on one project never holds the write lock
 * of another; (4) the per-project folder is already the unit of backup.
 *
 * Write path: {@link QueryLogService.record} / {@link QueryLogService.recordEvent} normalise the
 * query, hash the visitor (memoised) and append the entry to the project's pending
 * {@link LogBatch} (src/analytics/batch.ts: numbers in typed arrays and an index into the
 * batch's distinct queries): never throws, never touches disk, and keeps no object per entry
 * alive until the hand-over (no entry object, no IP or user-agent string; one string per
 * distinct query). Why at once and not at the hand-over (sessions 5–7 deferred it): queued
 * entries live up to a second, so every scavenge of the main isolate copied them and promoted
 * them to the old generation; the normalisation and the memoised hash cost ≈ 0.2 µs. A
 * timer hands the batches over at least every second (and as soon as they hold
 * {@link QueryLogOptions.maxBatch} entries, on the next tick) to the query-log writer thread
 * (src/analytics/writer.ts, started by {@link QueryLogService.start}), which commits them at
 * once, one transaction per project: a crash loses at most the last second, a search never
 * waits for SQLite, and the inserts do not run on the main thread. Without the thread (not
 * started, or failed) the same batches are written on the main thread.
 *
 * A search node's forwarded batch ({@link QueryLogService.ingestBatch}) bypasses that queue: it
 * must be on disk before the primary acknowledges it, and counted once however often it is
 * sent, so each project's part is written at once on the main thread in one fsynced
 * transaction together with the batch id.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type AnalyticsSettings, badParam, DEFAULT_OPEN_PROJECTS } from '../core/index.js';
import { MAX_LOGGED_QUERY_CHARS, VisitorHasher, normaliseQuery } from './normalize.js';
import { SiteQueryLog, siteLogPageCaches } from './site-log.js';
import { LogBatch, QueryDictionary } from './batch.js';
import { LogWriterThread, type WriterBatch } from './writer.js';
import { rollupSite, type RollupOptions, type RollupResult } from './rollup.js';
import {
  noResultQueries,
  timechart,
  topQueries,
  type Interval,
  type NoResultQuery,
  type Timechart,
  type TopQuery,
} from './timechart.js';
import type { QuerySuggestion, SuggestionIndex } from './suggestions.js';
import { QUERY_EVENT_ACTIONS, type QueryEvent } from './events.js';

const SITE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Default {@link QueryLogOptions.maxBatch}: a second of logged searches at 10,000 a second, so
 * at the traffic one process serves the timer (every second), not the queue length, decides
 * the hand-over. Why not the 1,000 of before: every hand-over costs the main thread one
 * suggestion-index update per distinct query of the batch and the writer thread one commit, and
 * a larger batch repeats its queries more (in process, 20,000 searches over 1,260 queries:
 * 3.5–4.3 → 1.6–2.8 µs of main thread per logged search). The crash-loss bound is the
 * timer's period either way.
 */
export const DEFAULT_MAX_BATCH = 10_000;

/** A search to log, as the search route has it. */
export interface SearchLogEntry {
  /** The query as typed; normalised here. */
  query: string;
  /** `totalResults` of the answer (0 = "no results"). */
  results: number;
  /** The applied filters (the request's parsed `filters`), stored as JSON; omit or null for none. */
  filters?: unknown;
  /** Active sort key, '' or null for relevance. */
  sort?: string | null;
  /** Client IP and User-Agent: only hashed (with a daily salt), never stored. */
  ip?: string;
  userAgent?: string;
  /** Milliseconds since the epoch; defaults to the service clock. */
  at?: number;
  /** The visitor hash, when another process computed it (a search node's forwarded log). */
  visitor?: string;
}

/** A validated event (see `parseQueryEvent`) plus the request's visitor identity. */
export interface QueryEventEntry extends QueryEvent {
  ip?: string;
  userAgent?: string;
  at?: number;
  visitor?: string;
}

/**
 * One logged search or event as a search node forwards it to the primary: the visitor is
 * already hashed (no IP or user agent leaves the node), the query is as typed.
 */
export type ForwardedLogEntry =
  | { kind: 'search'; site: string; at: number; query: string; results: number; filters: unknown; sort: string | null; visitor: string }
  | ({ kind: 'event'; site: string; at: number; visitor: string } & QueryEvent);

export interface QuerySuggestionOptions {
  /** `maxQuerySuggestions`: 0–10. */
  max: number;
  /** settings.suggest.minSearches (≥ 1). */
  minSearches: number;
  /** Milliseconds since the epoch; defaults to the service clock. Decides the 90-day window. */
  now?: number;
}

export interface QueryLogOptions {
  dataDir: string;
  /** Milliseconds since the epoch (injected; tests drive time). */
  clock: () => number;
  /**
   * The project's analytics settings (retention); defaults apply when absent. When this option
   * is given and answers `undefined`, the project is taken as deleted: the writer drops its
   * entries instead of re-creating its folder (a search that was in flight during deletion).
   */
  settingsOf?: (siteId: string) => AnalyticsSettings | undefined;
  /** Called with write/rollup failures (the queue never throws at callers). */
  onError?: (err: unknown, context: string) => void;
  /** Timer period of the writer, default 1000 ms (the crash-loss bound). */
  flushIntervalMs?: number;
  /** Queue length that triggers an early flush, default {@link DEFAULT_MAX_BATCH}. */
  maxBatch?: number;
  /**
   * Typed forms plus normalised queries a project's {@link QueryDictionary} remembers before it
   * starts over with the next batch, default 50,000 (`DEFAULT_MAX_DICTIONARY`).
   */
  maxDictionary?: number;
  /** Queue length beyond which new entries are dropped (disk stuck), default 100,000. */
  maxQueue?: number;
  /**
   * Background writes (timer, early flush) commit at most this many entries per event-loop
   * turn, default 250, and continue on the next turn: requests run in between, so a busy
   * second's batch never stalls the main thread for its whole write (≈ 15–60 ms per 1,000
   * searches on a large log). {@link QueryLogService.flush} still writes everything at once.
   */
  writeChunk?: number;
  /**
   * {@link QueryLogService.start} starts the writer thread (default true); false keeps every
   * write on the main thread.
   */
  writerThread?: boolean;
  /**
   * Most project logs kept open (SITESIFT_OPEN_PROJECTS, default {@link DEFAULT_OPEN_PROJECTS}):
   * past it the least recently used is written out and closed (its writer-thread connection
   * too) and reopened on its next use. Every use of a log is synchronous, so closing one between
   * two calls is always safe.
   */
  maxOpenSites?: number;
  /**
   * Page caches of the open project logs together, MiB (the query log's share of the memory
   * plan, src/core/memory.ts); each log gets an equal part, at most 16 MiB. Default 32.
   */
  pageCacheMb?: number;
  /**
   * Called with every search and event this service takes (a search node's outbox,
   * src/analytics/outbox.ts), after the visitor is hashed. Must not throw or block.
   */
  forward?: (entry: ForwardedLogEntry) => void;
}

/** Range arguments of the reports: UNIX seconds, validated by the route (start < end). */
export interface ReportRange {
  start: number;
  end: number;
}

export class QueryLogService {
  private readonly sitesOpen = new Map<string, SiteQueryLog>();
  /** Entries not handed over yet, per project, in record order. */
  private batches = new Map<string, LogBatch>();
  /** Per project, the queries its batches take their indexes from (see {@link QueryDictionary}). */
  private readonly dictionaries = new Map<string, QueryDictionary>();
  /** Entries in {@link batches}. */
  private queued = 0;
  private readonly hasher = new VisitorHasher();
  private timer: NodeJS.Timeout | null = null;
  private flushScheduled = false;
  private closed = false;
  private writer: LogWriterThread | null = null;
  /** Entries dropped because the queue was full (exposed for status/metrics). */
  dropped = 0;
  /** When the oldest entry of {@link batches} was queued (null while none is). */
  private oldestQueuedAt: number | null = null;

  constructor(private readonly opts: QueryLogOptions) {
    if (opts.pageCacheMb !== undefined) siteLogPageCaches.setTotalKb(Math.floor(opts.pageCacheMb * 1024));
  }

  /** What the query log holds in memory against its share (`GET /admin/memory`). */
  memoryUsage(): { pageCaches: { budgetMb: number; connections: number; eachKb: number }; queuedEntries: number; dropped: number } {
    return {
      pageCaches: { budgetMb: Math.round((siteLogPageCaches.budgetKb / 1024) * 10) / 10, connections: siteLogPageCaches.size, eachKb: siteLogPageCaches.perConnectionKb },
      queuedEntries: this.queued,
      dropped: this.dropped,
    };
  }

  /**
   * Starts the writer thread and the periodic hand-over to it (server start), and warms every
   * project's suggestion index, one project per event-loop turn, so the first
   * `/sites/suggest` after a restart does not pay the load. Tests usually call {@link flush}
   * instead.
   */
  start(): void {
    if (this.timer) return;
    if (this.opts.writerThread !== false && !this.closed) {
      try {
        this.writer = new LogWriterThread({
          onWritten: (siteId, batch, windowStartDay) => this.written(siteId, batch, windowStartDay),
          onError: (err, context) => this.opts.onError?.(err, context),
        });
      } catch (err) {
        this.opts.onError?.(err, 'querylog.writer-thread');
      }
    }
    this.timer = setInterval(() => this.drain(), this.opts.flushIntervalMs ?? 1000);
    this.timer.unref();
    const warm = (ids: string[]): void => {
      const siteId = ids.shift();
      if (siteId === undefined || this.closed) return;
      try {
        this.site(siteId).suggestionIndex(this.opts.clock());
      } catch (err) {
        this.opts.onError?.(err, `querylog.warm ${siteId}`);
      }
      setImmediate(() => warm(ids)).unref();
    };
    // Only as many as stay open: warming more would close the first ones again.
    setImmediate(() => warm(this.sites().slice(0, this.opts.maxOpenSites ?? DEFAULT_OPEN_PROJECTS))).unref();
  }

  /**
   * Queues one logged search (call it only when the search's `log` parameter is true).
   * Never throws, never blocks: normalises the query (once per distinct typed form while the
   * project's {@link QueryDictionary} holds it), hashes the visitor (memoised) and appends a
   * few numbers to the project's pending batch.
   *
   * @example services.analytics.record(siteId, { query, results: totalResults, filters, sort, ip: ctx.ip, userAgent: ctx.get('user-agent') })
   */
  record(siteId: string, entry: SearchLogEntry): void {
    try {
      const typed = String(entry.query ?? '');
      // A query typed the same way before (in this or an earlier batch of the project, see
      // QueryDictionary): its index, without normalising it again (a batch only exists for a
      // valid, open project; the queue bound still applies).
      let batch = this.batches.get(siteId) ?? null;
      let q: number | undefined;
      if (batch !== null && typed.length <= MAX_LOGGED_QUERY_CHARS) {
        if (this.closed || !this.takesMore()) return;
        q = batch.typedQuery(typed);
      }
      if (q === undefined) {
        const query = normaliseQuery(typed);
        if (query === '') return;
        batch = this.batchOf(siteId);
        if (batch === null) return;
        q = batch.internQuery(query, typed.length <= MAX_LOGGED_QUERY_CHARS ? typed : undefined);
      }
      const at = entry.at ?? this.opts.clock();
      const results = Number.isFinite(entry.results) && entry.results > 0 ? Math.floor(entry.results) : 0;
      const filters =
        entry.filters === undefined || entry.filters === null ||
        (Array.isArray(entry.filters) && entry.filters.length === 0)
          ? null
          : JSON.stringify(entry.filters);
      const sort = entry.sort ? String(entry.sort) : null;
      const visitor = entry.visitor ?? this.hasher.hash(siteId, entry.ip, entry.userAgent, at);
      batch!.addSearchOf(at, q, results, filters, sort, visitor);
      this.queuedOne();
      this.opts.forward?.({ kind: 'search', site: siteId, at, query: typed, results, filters: entry.filters ?? null, sort, visitor });
    } catch (err) {
      this.opts.onError?.(err, 'querylog.record');
    }
  }

  /** Queues one validated suggestion event (`POST /sites/queries/log`). Never throws, never blocks. */
  recordEvent(siteId: string, event: QueryEventEntry): void {
    try {
      const query = normaliseQuery(String(event.query ?? ''));
      if (query === '') return;
      const batch = this.batchOf(siteId);
      if (batch === null) return;
      const at = event.at ?? this.opts.clock();
      const visitor = event.visitor ?? this.hasher.hash(siteId, event.ip, event.userAgent, at);
      batch.events.push({
        kind: 'event',
        at,
        query,
        action: event.action,
        timeToAction: event.timeToAction ?? null,
        link: event.link ?? null,
        position: event.position ?? null,
        visitor,
      });
      this.queuedOne();
      if (this.opts.forward) {
        const fwd: ForwardedLogEntry = { kind: 'event', site: siteId, at, visitor, query: String(event.query), action: event.action };
        if (event.timeToAction !== undefined) fwd.timeToAction = event.timeToAction;
        if (event.link !== undefined) fwd.link = event.link;
        if (event.position !== undefined) fwd.position = event.position;
        this.opts.forward(fwd);
      }
    } catch (err) {
      this.opts.onError?.(err, 'querylog.recordEvent');
    }
  }

  /** The pending batch of a project, or null when the entry is not taken (closed, invalid id, queue full). */
  private batchOf(siteId: string): LogBatch | null {
    if (this.closed || !SITE_ID.test(siteId) || !this.takesMore()) return null;
    let batch = this.batches.get(siteId);
    if (!batch) {
      let dictionary = this.dictionaries.get(siteId);
      if (!dictionary || dictionary.full) this.dictionaries.set(siteId, (dictionary = new QueryDictionary(this.opts.maxDictionary)));
      this.batches.set(siteId, (batch = new LogBatch(undefined, dictionary)));
    }
    return batch;
  }

  /** Whether the queue takes one more entry; counts the entry as dropped when it is full. */
  private takesMore(): boolean {
    if (this.queued < (this.opts.maxQueue ?? 100_000)) return true;
    this.dropped++;
    return false;
  }

  private queuedOne(): void {
    this.queued++;
    if (this.queued === 1) this.oldestQueuedAt = this.opts.clock();
    if (this.queued >= (this.opts.maxBatch ?? DEFAULT_MAX_BATCH) && !this.flushScheduled) {
      this.flushScheduled = true;
      // Next macrotask: after the current request has been answered.
      setImmediate(() => this.drain());
    }
  }

  /** Takes every pending batch (oldest entries first within each project). */
  private takeAll(): Map<string, LogBatch> {
    const all = this.batches;
    this.batches = new Map();
    this.queued = 0;
    this.oldestQueuedAt = null;
    return all;
  }

  /**
   * Background write: the oldest {@link QueryLogOptions.writeChunk} entries now, the rest on
   * the following event-loop turns (one chunk per turn) until the queue is empty.
   */
  private drain(): void {
    this.flushScheduled = false;
    if (this.queued === 0 || this.closed) return;
    if (this.writer?.alive) {
      const since = this.oldestQueuedAt;
      this.handOver(this.takeAll(), since);
      return;
    }
    // Without the thread: at most one chunk per turn, projects in the order they were queued.
    let budget = Math.max(1, this.opts.writeChunk ?? 250);
    const chunk = new Map<string, LogBatch>();
    for (const [siteId, batch] of this.batches) {
      if (budget === 0) break;
      const n = Math.min(budget, batch.entries);
      if (n === batch.entries) this.batches.delete(siteId);
      chunk.set(siteId, n === batch.entries ? batch : batch.take(n));
      budget -= n;
      this.queued -= n;
    }
    if (this.queued === 0) this.oldestQueuedAt = null;
    // Suggestion aggregates follow later (site-log.ts, AGGREGATE_EVERY_ROWS).
    this.write(chunk, false);
    if (this.queued > 0) {
      this.flushScheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /**
   * Sends `batch` to the writer thread, one batch per project. The main connection of each
   * project is opened first (creating the file, counting what a crash left unaggregated), so
   * the thread only ever appends to a file the main thread has prepared.
   */
  private handOver(bySite: Map<string, LogBatch>, since: number | null): void {
    const sites: WriterBatch[] = [];
    for (const [siteId, logBatch] of bySite) {
      try {
        if (!this.sitesOpen.has(siteId) && this.opts.settingsOf && this.opts.settingsOf(siteId) === undefined) continue;
        sites.push({ siteId, file: this.site(siteId).file, batch: logBatch });
      } catch (err) {
        this.opts.onError?.(err, `querylog.flush ${siteId}`);
      }
    }
    this.writer!.write(sites, since);
    // A project whose log was closed during this hand-over (more projects than stay open) is
    // closed in the writer thread too once the batch is written, so the thread stays bounded.
    for (const s of sites) if (!this.sitesOpen.has(s.siteId)) this.writer!.closeSite(s.siteId);
  }

  /** The writer thread committed `batch` of `siteId`: mirror its counted searches in memory. */
  private written(siteId: string, batch: LogBatch, windowStartDay: number): void {
    this.sitesOpen.get(siteId)?.noteCounted(batch, windowStartDay);
  }

  /** The writer thread, when started: whether it runs and how many batches it committed (tests, status). */
  get writerThread(): { alive: boolean; batches: number; inFlight: number; youngGenerationMb: number } | null {
    return this.writer ? { alive: this.writer.alive, batches: this.writer.batches, inFlight: this.writer.pending, youngGenerationMb: this.writer.youngGenerationMb } : null;
  }

  /** Resolves when the writer thread has answered every batch handed over so far (tests). */
  writerIdle(): Promise<void> {
    return this.writer ? this.writer.idle() : Promise.resolve();
  }

  /** Entries waiting for the writer. */
  get pending(): number {
    return this.queued;
  }

  /**
   * The query log's lag: entries recorded but not committed yet (queued here or in flight to
   * the writer thread) and when the oldest of them was recorded (null when there are none).
   * Read by the metrics scrape.
   */
  backlog(): { entries: number; oldestAt: number | null } {
    const inFlight = this.writer?.inFlightEntries() ?? { entries: 0, oldestAt: null };
    const a = inFlight.oldestAt;
    const b = this.queued > 0 ? this.oldestQueuedAt : null;
    return { entries: this.queued + inFlight.entries, oldestAt: a === null ? b : b === null ? a : Math.min(a, b) };
  }

  /**
   * Takes batch `batchId` a search node forwarded (the primary's `POST /cluster/querylog`),
   * exactly once per project: each project's part (its entries, with their own times and
   * visitor hashes) is written at once on this thread, in one transaction with the batch id
   * ({@link SiteQueryLog.writeOnce}, fsynced), and a part whose project log already holds the
   * id is skipped. So a batch sent again after a lost answer or a crash of this process, at
   * any point, counts once. Entries of unknown projects, without a query or malformed are
   * skipped. The primary's own searches keep their queue and writer thread.
   *
   * Throws when a project's part cannot be written (the parts written before it stay, and a
   * retry skips them): the caller must not acknowledge the batch then.
   *
   * @returns `accepted`: entries written now; `parts`: projects the batch had entries for;
   * `duplicateParts`: of those, the ones already written by an earlier delivery.
   * @example const { accepted, parts, duplicateParts } = services.analytics.ingestBatch(batchId, entries);
   */
  ingestBatch(batchId: string, entries: readonly ForwardedLogEntry[]): { accepted: number; parts: number; duplicateParts: number } {
    const bySite = new Map<string, LogBatch>();
    for (const e of entries) {
      const site = e?.site;
      if (typeof site !== 'string' || !SITE_ID.test(site)) continue;
      if (typeof e.query !== 'string' || typeof e.at !== 'number' || !Number.isFinite(e.at)) continue;
      // Hashes are hex; a newline would break a batch's joined visitors (batch.ts).
      if (typeof e.visitor !== 'string' || e.visitor === '' || e.visitor.length > 200 || e.visitor.includes('\n')) continue;
      const query = normaliseQuery(e.query);
      if (query === '') continue;
      let batch = bySite.get(site);
      if (!batch) {
        if (this.opts.settingsOf && this.opts.settingsOf(site) === undefined) continue;
        bySite.set(site, (batch = new LogBatch()));
      }
      if (e.kind === 'search') {
        const results = Number.isFinite(e.results) && e.results > 0 ? Math.floor(e.results) : 0;
        const filters = e.filters === undefined || e.filters === null || (Array.isArray(e.filters) && e.filters.length === 0) ? null : JSON.stringify(e.filters);
        batch.addSearch(e.at, query, results, filters, e.sort ? String(e.sort) : null, e.visitor);
      } else if (e.kind === 'event') {
        const action = typeof e.action === 'string' ? (e.action.toLowerCase() as QueryEvent['action']) : null;
        if (action === null || !(QUERY_EVENT_ACTIONS as readonly string[]).includes(action)) continue;
        batch.events.push({
          kind: 'event',
          at: e.at,
          query,
          action,
          timeToAction: typeof e.timeToAction === 'number' && Number.isFinite(e.timeToAction) ? e.timeToAction : null,
          link: typeof e.link === 'string' ? e.link : null,
          position: typeof e.position === 'number' && Number.isFinite(e.position) ? e.position : null,
          visitor: e.visitor,
        });
      }
    }
    const now = this.opts.clock();
    let accepted = 0;
    let duplicateParts = 0;
    let parts = 0;
    for (const [siteId, batch] of bySite) {
      if (batch.empty) continue;
      parts++;
      if (this.site(siteId).writeOnce(batchId, batch, now)) accepted += batch.entries;
      else duplicateParts++;
    }
    return { accepted, parts, duplicateParts };
  }

  /**
   * Writes every queued entry now, with every project's pending suggestion aggregates: one
   * transaction per project. Synchronous (tests, shutdown, the rollup job every minute). A
   * failing project loses its batch (reported through `onError`), others still commit.
   */
  flush(): void {
    this.flushScheduled = false;
    // What the writer thread was sent commits first (older ids, and its pending aggregates).
    this.writer?.sync();
    if (this.queued > 0) this.write(this.takeAll(), true);
    // Suggestion aggregates still pending from background writes (any project).
    for (const [siteId, log] of this.sitesOpen) {
      try {
        log.writeAggregates();
      } catch (err) {
        this.opts.onError?.(err, `querylog.flush ${siteId}`);
      }
    }
  }

  /**
   * Writes `batch` (oldest first): one transaction per project; failures go to `onError`.
   * `aggregate`: also write every project's pending suggestion aggregates.
   */
  private write(bySite: Map<string, LogBatch>, aggregate: boolean): void {
    for (const [siteId, logBatch] of bySite) {
      try {
        if (!this.sitesOpen.has(siteId) && this.opts.settingsOf && this.opts.settingsOf(siteId) === undefined) continue;
        this.site(siteId).write(logBatch, aggregate);
      } catch (err) {
        this.opts.onError?.(err, `querylog.flush ${siteId}`);
      }
    }
  }

  /**
   * `querySuggestions` of `GET /sites/suggest` (SPEC §6): up to `max` earlier logged queries
   * that start with the typed text or have a word starting with it, searched at least
   * `minSearches` times in the last 90 UTC days (today included), whose most recent search
   * returned results; most searched first, ties alphabetical.
   * Synchronous, in memory; the first call per project loads the aggregate from disk.
   *
   * @example services.analytics.querySuggestions('docs', 'pg d', { max: 3, minSearches: 2 }) // [{query:'pg dump'}]
   */
  querySuggestions(siteId: string, typed: string, opts: QuerySuggestionOptions): QuerySuggestion[] {
    if (!Number.isInteger(opts.max) || opts.max < 0 || opts.max > 10) {
      throw badParam('maxQuerySuggestions', 'maxQuerySuggestions must be an integer from 0 to 10.');
    }
    const t = normaliseQuery(typed);
    if (opts.max === 0 || t === '') return [];
    const now = opts.now ?? this.opts.clock();
    return this.suggestionStamp(siteId, now).lookup(t, opts.max, Math.max(1, opts.minSearches));
  }

  /**
   * The suggestion index {@link querySuggestions} reads for `siteId` at `now` (the clock by
   * default), moved to the window of `now` first: with its {@link SuggestionIndex.version}, a
   * stamp of everything `querySuggestions` depends on besides its arguments. While the object
   * and its version are the same, the same arguments give the same suggestions.
   */
  suggestionStamp(siteId: string, now = this.opts.clock()): SuggestionIndex {
    return this.site(siteId).suggestionIndex(now);
  }

  /** The time chart (SPEC §8) over [start, end) UNIX seconds; arguments validated by the route. */
  timechart(siteId: string, start: number, end: number, interval: Interval): Timechart {
    return timechart(this.site(siteId), start, end, interval);
  }

  /** `GET /sites/queries/top`: most frequent queries in the range (raw entries, so within retention). */
  topQueries(siteId: string, range: ReportRange, limit: number): TopQuery[] {
    return topQueries(this.site(siteId), range.start, range.end, limit);
  }

  /** `GET /sites/queries/noResults`: most frequent queries that found nothing in the range. */
  noResultQueries(siteId: string, range: ReportRange, limit: number): NoResultQuery[] {
    return noResultQueries(this.site(siteId), range.start, range.end, limit);
  }

  /** One rollup pass for one project at `now` (defaults to the clock), retention from settings. */
  rollup(siteId: string, now = this.opts.clock(), extra: Omit<RollupOptions, 'retentionDays'> = {}): RollupResult {
    const retentionDays = this.opts.settingsOf?.(siteId)?.retentionDays ?? 365;
    return rollupSite(this.site(siteId), now, { ...extra, retentionDays });
  }

  /**
   * Flushes the queue, then rolls up every project that has a query log on disk. Failures are
   * reported per project and do not stop the others. Used by the cron job.
   */
  rollupAll(now = this.opts.clock()): Map<string, RollupResult> {
    this.flush();
    const out = new Map<string, RollupResult>();
    for (const siteId of this.sites()) {
      try {
        out.set(siteId, this.rollup(siteId, now));
      } catch (err) {
        this.opts.onError?.(err, `querylog.rollup ${siteId}`);
      }
    }
    return out;
  }

  /** Projects with a query log (open or on disk). */
  sites(): string[] {
    const ids = new Set(this.sitesOpen.keys());
    const dir = join(this.opts.dataDir, 'projects');
    if (existsSync(dir)) {
      for (const name of readdirSync(dir)) {
        if (SITE_ID.test(name) && existsSync(join(dir, name, 'querylog.db'))) ids.add(name);
      }
    }
    return [...ids].sort();
  }

  /**
   * Forgets a project before its folder is deleted: drops its queued entries and closes its
   * database. Call this from project deletion (otherwise a pending flush could recreate the file).
   */
  dropSite(siteId: string): void {
    this.queued -= this.batches.get(siteId)?.entries ?? 0;
    this.batches.delete(siteId);
    this.dictionaries.delete(siteId);
    this.writer?.closeSite(siteId);
    this.sitesOpen.get(siteId)?.close();
    this.sitesOpen.delete(siteId);
  }

  /** Flushes and closes everything (graceful shutdown). Later records are ignored. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
    this.writer?.close();
    this.writer = null;
    this.closed = true;
    for (const log of this.sitesOpen.values()) log.close();
    this.sitesOpen.clear();
  }

  /** The open log of a project (opening/creating it). Exposed for tests and the rollup job. */
  site(siteId: string): SiteQueryLog {
    let log = this.sitesOpen.get(siteId);
    if (log) {
      // Most recently used last (Map order): eviction takes from the front.
      this.sitesOpen.delete(siteId);
      this.sitesOpen.set(siteId, log);
    } else {
      if (!SITE_ID.test(siteId)) throw badParam('site', 'site is not a valid site ID.');
      log = new SiteQueryLog(siteId, join(this.opts.dataDir, 'projects', siteId, 'querylog.db'), this.opts.clock(), {
        // The writer thread commits this project's batches and aggregates before this connection writes.
        beforeWrite: () => this.writer?.sync(siteId),
      });
      this.sitesOpen.set(siteId, log);
      this.evict(siteId);
    }
    return log;
  }

  /** Projects whose log is open now (tests, status). */
  get openSites(): number {
    return this.sitesOpen.size;
  }

  /** Closes the least recently used logs (never `keep`) until at most the bound is open. */
  private evict(keep: string): void {
    const max = Math.max(1, this.opts.maxOpenSites ?? DEFAULT_OPEN_PROJECTS);
    for (const [siteId, log] of this.sitesOpen) {
      if (this.sitesOpen.size <= max) break;
      if (siteId === keep) continue;
      this.sitesOpen.delete(siteId);
      try {
        // The writer thread commits what it was sent and closes its connection first; what is
        // still queued for the project reopens the log at the next hand-over.
        this.writer?.closeSite(siteId);
        log.close();
      } catch (err) {
        this.opts.onError?.(err, `querylog.close ${siteId}`);
      }
    }
  }
}
