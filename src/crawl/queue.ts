/**
 * The durable crawl queue of one project: `<dataDir>/projects/<siteId>/crawl.db` (better-sqlite3,
 * WAL, main thread only). Holds every crawl task with its state, the seen-set of site crawls,
 * the ledger of what the crawler wrote (for removals) and the sitemap lastmod memory.
 *
 * Invariants: a task is `queued`, `running`, `done` or `failed`; only `queued` tasks with
 * `next_at <= now` are handed out; on open every `running` task goes back to `queued` (the
 * process died while it ran), which is what makes a restart resume the crawl.
 *
 * Group commit: every change joins one transaction that is committed {@link GROUP_COMMIT_MS}
 * after it was opened, so the four or five state changes of each page (running, links seen and
 * queued, ledger, finished) of every page finishing in that window cost one commit instead of
 * one each (a commit per event-loop turn would still be one per page: results arrive one
 * message, one turn, at a time). Reads see the open transaction. What a client is told about (a task id
 * in a 202) is committed first with {@link CrawlQueue.commit}; anything else lost in a crash
 * between a change and its commit is a task that runs again (pages are idempotent).
 *
 * Ready tasks are served from memory ({@link CrawlQueue.ready}): every queued URL push and
 * append, and a window of the oldest queued pages read from SQLite in chunks; the scheduler asks
 * after every finished page, and the SELECT costs more than the rest of a page's bookkeeping.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PageCacheShare, type PageDoc } from '../core/index.js';

export type TaskType = 'url' | 'append' | 'page' | 'crawl' | 'sitemap' | 'reindex';
/** The tasks a client asked for (and `GET /tasks` lists); `page` tasks belong to a run. */
export const TOP_TASK_TYPES = ['url', 'append', 'crawl', 'sitemap', 'reindex'] as const;
export type TopTaskType = (typeof TOP_TASK_TYPES)[number];
export type TaskState = 'queued' | 'running' | 'done' | 'failed';
/** Why a task exists: a URL push, a site crawl, a sitemap import, or a client's bulk import (`reindex`). */
export type TaskOrigin = 'url' | 'crawl' | 'sitemap' | 'reindex';

/**
 * What a `reindex` task's client reported: documents read, acknowledged, rejected. The server
 * runs nothing for these tasks; `sitesift index` writes through `POST /sites/pagesJson` and
 * reports its counts (`PATCH /tasks/{taskId}`).
 */
export interface ReportedProgress {
  found: number;
  indexed: number;
  failed: number;
}

/** A page count of a run: page tasks by state and index status. */
export interface RunPageCount {
  state: TaskState;
  indexStatus: number | null;
  n: number;
}

/** One row of the queue. Run tasks (`crawl`, `sitemap`) group the page tasks they created. */
export interface CrawlTask {
  id: string;
  type: TaskType;
  origin: TaskOrigin;
  url: string | null;
  state: TaskState;
  attempts: number;
  nextAt: number;
  createdAt: number;
  finishedAt: number | null;
  indexStatus: number | null;
  message: string | null;
  depth: number;
  runId: string | null;
  /** The URL's newest index seq when the task was queued (newest-write-wins check). */
  baseSeq: number;
  appendTo: PageDoc | null;
  /** Run tasks: page tasks created so far. */
  total: number;
  /** Run tasks: maxPages stopped the crawl early (no removal of unreached pages then). */
  truncated: boolean;
  /** `reindex` tasks: the counts their client reported. */
  reported: ReportedProgress | null;
}

interface Row {
  n: number;
  id: string;
  type: TaskType;
  origin: TaskOrigin;
  url: string | null;
  state: TaskState;
  attempts: number;
  next_at: number;
  created_at: number;
  finished_at: number | null;
  index_status: number | null;
  message: string | null;
  depth: number;
  run_id: string | null;
  base_seq: number;
  append_to: string | null;
  total: number;
  truncated: number;
  progress: string | null;
}

function toTask(r: Row): CrawlTask {
  return {
    id: r.id,
    type: r.type,
    origin: r.origin,
    url: r.url,
    state: r.state,
    attempts: r.attempts,
    nextAt: r.next_at,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
    indexStatus: r.index_status,
    message: r.message,
    depth: r.depth,
    runId: r.run_id,
    baseSeq: r.base_seq,
    appendTo: r.append_to ? (JSON.parse(r.append_to) as PageDoc) : null,
    total: r.total,
    truncated: r.truncated === 1,
    reported: r.progress ? (JSON.parse(r.progress) as ReportedProgress) : null,
  };
}

/** Fields of a new task. */
export interface NewTask {
  type: TaskType;
  origin: TaskOrigin;
  url?: string | null;
  depth?: number;
  runId?: string | null;
  baseSeq?: number;
  appendTo?: PageDoc | null;
  state?: TaskState;
}

/**
 * How long the group transaction stays open (ms): the window whose changes a crash may lose
 * (those tasks run again). Long enough to share a commit between the pages of a busy crawl.
 */
export const GROUP_COMMIT_MS = 25;

/** Runs `commit` later; the default waits {@link GROUP_COMMIT_MS}. Tests inject their own. */
export type CommitScheduler = (commit: () => void) => void;

const defaultCommitScheduler: CommitScheduler = (commit) => {
  setTimeout(commit, GROUP_COMMIT_MS);
};

/** A queued task in the in-memory ready view; `out` once it left `queued` (lazy removal). */
interface ReadyEntry {
  n: number;
  task: CrawlTask;
  out: boolean;
}

/** Queued pages read per refill of the in-memory window. */
const WINDOW_CHUNK = 512;

/** A random task id (`t_` + 20 hex chars): unguessable across projects. */
function newTaskId(): string {
  return 't_' + randomBytes(10).toString('hex');
}

/**
 * Page caches of the open crawl queues together (part of the main thread's base in the memory
 * plan, src/core/memory.ts): 8 MiB, at most 1 MiB each; only queues with work stay open
 * (src/crawl/context.ts), so a few share it.
 */
const queuePageCaches = new PageCacheShare(8 * 1024, 128, 1024);

/**
 * One project's crawl queue; see the module comment.
 *
 * @example
 * const q = new CrawlQueue(path.join(dataDir, 'projects', siteId, 'crawl.db'), Date.now);
 * const task = q.add({ type: 'url', origin: 'url', url });
 * q.commit(); // before the task id is acknowledged
 * for (const t of q.ready(Date.now(), 16)) q.setRunning(t.id);
 */
export class CrawlQueue {
  readonly db: Database.Database;
  private readonly clock: () => number;
  private readonly stmts = new Map<string, Database.Statement>();
  /** Whether this queue opened the group transaction that the scheduled commit closes. */
  private grouped = false;
  /** Counts groups, so a scheduled commit of an earlier group does nothing. */
  private groupNo = 0;
  private readonly scheduleCommit: CommitScheduler;
  /**
   * In-memory ready view (null = not loaded; rebuilt from SQLite when a task goes back to
   * `queued`, which may put it anywhere in the order). `pushes`: every queued url/append task;
   * `pages`: every queued page task with n <= `pagesMaxN` (a window over the oldest), and all of
   * them when `pagesComplete`. Both in n order; `byId` finds an entry to mark it `out`.
   */
  private pushes: ReadyEntry[] | null = null;
  private pages: ReadyEntry[] | null = null;
  private pagesHead = 0;
  private pagesMaxN = 0;
  private pagesComplete = false;
  private readonly byId = new Map<string, ReadyEntry>();
  /**
   * The seen-set of runs in memory (loaded from `seen` on first use): a page links to dozens
   * of pages that are almost all seen already, and a Set answers without touching SQLite.
   */
  private readonly seenByRun = new Map<string, Set<string>>();

  /** Prepared once per SQL text: preparing per call costs more than the queries themselves. */
  private q(sql: string): Database.Statement {
    let st = this.stmts.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.stmts.set(sql, st);
    }
    return st;
  }

  /** `scheduleCommit`: when the group transaction is committed (default: {@link GROUP_COMMIT_MS} later). */
  constructor(file: string, clock: () => number, opts: { scheduleCommit?: CommitScheduler } = {}) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.clock = clock;
    this.scheduleCommit = opts.scheduleCommit ?? defaultCommitScheduler;
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    queuePageCaches.add(this.db);
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS tasks (
        n INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        origin TEXT NOT NULL,
        url TEXT,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        index_status INTEGER,
        message TEXT,
        depth INTEGER NOT NULL DEFAULT 0,
        run_id TEXT,
        base_seq INTEGER NOT NULL DEFAULT 0,
        append_to TEXT,
        total INTEGER NOT NULL DEFAULT 0,
        truncated INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS tasks_queue ON tasks(state, type, n);
      CREATE INDEX IF NOT EXISTS tasks_wake ON tasks(state, next_at);
      CREATE INDEX IF NOT EXISTS tasks_run ON tasks(run_id, state);
      CREATE INDEX IF NOT EXISTS tasks_url ON tasks(url, state);
      -- URLs a site crawl has queued or reached (normalised and canonical forms).
      CREATE TABLE IF NOT EXISTS seen (run_id TEXT NOT NULL, url TEXT NOT NULL, PRIMARY KEY (run_id, url)) WITHOUT ROWID;
      -- What the crawler last wrote per URL and why (removal after full crawls / sitemap imports).
      CREATE TABLE IF NOT EXISTS ledger (url TEXT PRIMARY KEY, origin TEXT NOT NULL, run_id TEXT) WITHOUT ROWID;
      -- Last import's lastmod per sitemap URL.
      CREATE TABLE IF NOT EXISTS sitemap_urls (url TEXT PRIMARY KEY, lastmod TEXT, import_id TEXT NOT NULL) WITHOUT ROWID;
      -- The task list (GET /tasks): the tasks clients asked for, newest first, without walking their pages.
      CREATE INDEX IF NOT EXISTS tasks_top ON tasks(type, n) WHERE type <> 'page';
    `);
    // Queues made before reindex tasks existed have no column for their reported counts.
    const columns = this.db.pragma('table_info(tasks)') as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'progress')) this.db.exec('ALTER TABLE tasks ADD COLUMN progress TEXT');
    // A task that was running when the process died runs again (a reindex task is its client's
    // to finish: the server runs nothing for it).
    this.q(`UPDATE tasks SET state='queued' WHERE state='running' AND type <> 'reindex'`).run();
  }

  /** Joins (or opens) the group transaction before a change; see the module comment. */
  private change(): void {
    if (this.grouped || this.db.inTransaction) return;
    this.db.exec('BEGIN IMMEDIATE');
    this.grouped = true;
    const no = ++this.groupNo;
    this.scheduleCommit(() => {
      if (this.groupNo === no) this.commit();
    });
  }

  /** Commits the open group now (before acknowledging a task to a client; on close). */
  commit(): void {
    if (!this.grouped) return;
    this.grouped = false;
    if (this.db.open && this.db.inTransaction) this.db.exec('COMMIT');
  }

  // ------------------------------------------------------------ in-memory ready view

  /** A queued page-level task is in the view from now on (add). */
  private viewAdd(n: number, task: CrawlTask): void {
    if (task.state !== 'queued') return;
    if (task.type === 'url' || task.type === 'append') {
      if (!this.pushes) return; // loaded from SQLite, with this task, on first use
      const e = { n, task, out: false };
      this.pushes.push(e);
      this.byId.set(task.id, e);
    } else if (task.type === 'page' && this.pages && this.pagesComplete) {
      // Outside a complete window the task is on disk past pagesMaxN and is read in a refill.
      const e = { n, task, out: false };
      this.pages.push(e);
      this.pagesMaxN = n;
      this.byId.set(task.id, e);
    }
  }

  /** A task left `queued` (running, finished, cancelled). */
  private viewRemove(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    e.out = true;
    this.byId.delete(id);
  }

  /** A task went back to `queued` with a new `next_at`: its place is anywhere, so read again. */
  private viewReset(): void {
    this.pushes = null;
    this.pages = null;
    this.pagesHead = 0;
    this.pagesMaxN = 0;
    this.pagesComplete = false;
    this.byId.clear();
  }

  private entry(r: Row): ReadyEntry {
    const e = { n: r.n, task: toTask(r), out: false };
    this.byId.set(e.task.id, e);
    return e;
  }

  private pushList(): ReadyEntry[] {
    if (!this.pushes) {
      this.pushes = (this.q(`SELECT * FROM tasks INDEXED BY tasks_queue WHERE state = 'queued' AND type IN ('url','append') ORDER BY n`).all() as Row[]).map((r) => this.entry(r));
    }
    return this.pushes;
  }

  /** Reads the next chunk of queued pages after the window; false when there are none. */
  private refillPages(): boolean {
    if (!this.pages) {
      this.pages = [];
      this.pagesHead = 0;
      this.pagesMaxN = 0;
      this.pagesComplete = false;
    }
    if (this.pagesComplete) return false;
    const rows = this.q(`SELECT * FROM tasks INDEXED BY tasks_queue WHERE state = 'queued' AND type = 'page' AND n > ? ORDER BY n LIMIT ?`).all(this.pagesMaxN, WINDOW_CHUNK) as Row[];
    for (const r of rows) this.pages.push(this.entry(r));
    if (rows.length) this.pagesMaxN = rows[rows.length - 1]!.n;
    this.pagesComplete = rows.length < WINDOW_CHUNK;
    return rows.length > 0;
  }

  /** Adds a task; returns it. */
  add(t: NewTask): CrawlTask {
    const id = newTaskId();
    const now = this.clock();
    const task: CrawlTask = {
      id,
      type: t.type,
      origin: t.origin,
      url: t.url ?? null,
      state: t.state ?? 'queued',
      attempts: 0,
      nextAt: now,
      createdAt: now,
      finishedAt: null,
      indexStatus: null,
      message: null,
      depth: t.depth ?? 0,
      runId: t.runId ?? null,
      baseSeq: t.baseSeq ?? 0,
      appendTo: t.appendTo ?? null,
      total: 0,
      truncated: false,
      reported: null,
    };
    this.change();
    const r = this.q(
      `INSERT INTO tasks (id, type, origin, url, state, next_at, created_at, depth, run_id, base_seq, append_to)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(id, task.type, task.origin, task.url, task.state, now, now, task.depth, task.runId, task.baseSeq, t.appendTo ? JSON.stringify(t.appendTo) : null);
    this.viewAdd(Number(r.lastInsertRowid), task);
    return { ...task };
  }

  /** The task with this id, or null. */
  get(id: string): CrawlTask | null {
    const r = this.q(`SELECT * FROM tasks WHERE id = ?`).get(id) as Row | undefined;
    return r ? toTask(r) : null;
  }

  /** A queued task of `type` for `url`, if any (URL pushes reuse it instead of queueing twice). */
  queuedFor(url: string, type: TaskType): CrawlTask | null {
    const r = this.q(`SELECT * FROM tasks WHERE url = ? AND type = ? AND state = 'queued' ORDER BY n LIMIT 1`).get(url, type) as Row | undefined;
    return r ? toTask(r) : null;
  }

  /**
   * Queued page-level tasks ready at `now`, oldest first: URL pushes and appends before pages of
   * crawl/sitemap runs (a push should not wait behind a 10,000-page crawl). Run tasks are never
   * `queued`. Both scans walk the (state, type, n) index, so the cost is the limit, not the queue.
   */
  ready(now: number, limit: number): CrawlTask[] {
    const out: CrawlTask[] = [];
    if (limit <= 0) return out;
    const pushes = this.pushList();
    let lead = 0;
    for (let i = 0; i < pushes.length && out.length < limit; i++) {
      const e = pushes[i]!;
      if (e.out) {
        if (i === lead) lead++;
      } else if (e.task.nextAt <= now) out.push({ ...e.task });
    }
    // Entries that left the queue at the front are dropped for good.
    if (lead > 0) pushes.splice(0, lead);
    if (!this.pages) this.refillPages();
    for (let i = this.pagesHead; out.length < limit; i++) {
      if (i >= this.pages!.length && !this.refillPages()) break;
      const e = this.pages![i]!;
      if (e.out) {
        if (i === this.pagesHead) this.pagesHead++;
      } else if (e.task.nextAt <= now) out.push({ ...e.task });
    }
    if (this.pagesHead > 1024) {
      this.pages = this.pages!.slice(this.pagesHead);
      this.pagesHead = 0;
    }
    return out;
  }

  /** Whether any task of this queue is running. */
  anyRunning(): boolean {
    return this.q(`SELECT 1 FROM tasks WHERE state = 'running' AND type IN ('url','append','page') LIMIT 1`).get() !== undefined;
  }

  /** Earliest `next_at` among queued page tasks in the future, or null. */
  nextWakeAt(now: number): number | null {
    const r = this.q(`SELECT MIN(next_at) AS t FROM tasks WHERE state = 'queued' AND next_at > ?`).get(now) as { t: number | null };
    return r.t;
  }

  /** Hands a queued task out: `running`, one more attempt counted. */
  setRunning(id: string): void {
    this.viewRemove(id);
    this.change();
    this.q(`UPDATE tasks SET state = 'running', attempts = attempts + 1 WHERE id = ?`).run(id);
  }

  /** Puts a task back for a later attempt. */
  retryAt(id: string, at: number, message: string): void {
    this.viewReset();
    this.change();
    this.q(`UPDATE tasks SET state = 'queued', next_at = ?, message = ? WHERE id = ?`).run(at, message, id);
  }


  /** Ends a task with its index status (null when nothing was recorded) and message. */
  finish(id: string, state: 'done' | 'failed', indexStatus: number | null, message: string | null): void {
    this.viewRemove(id);
    this.change();
    this.q(`UPDATE tasks SET state = ?, index_status = ?, message = ?, finished_at = ? WHERE id = ?`).run(state, indexStatus, message, this.clock(), id);
  }

  /** Marks a run task running/done. */
  setRunState(id: string, state: TaskState, message?: string): void {
    this.change();
    this.q(`UPDATE tasks SET state = ?, message = COALESCE(?, message), finished_at = CASE WHEN ? IN ('done','failed') THEN ? ELSE finished_at END WHERE id = ?`).run(
      state,
      message ?? null,
      state,
      this.clock(),
      id,
    );
    // A finished run queues nothing more; its seen-set is read from SQLite if needed again.
    if (state === 'done' || state === 'failed') this.seenByRun.delete(id);
  }


  /**
   * A page of the project's top-level tasks (URL pushes, appends, crawl and sitemap runs,
   * reindex tasks), newest first, with the count of all that match.
   */
  listTop(filter: { state?: TaskState; type?: TopTaskType; offset: number; limit: number }): { total: number; tasks: CrawlTask[] } {
    const where = [filter.type ? 'type = ?' : `type IN (${TOP_TASK_TYPES.map((t) => `'${t}'`).join(',')})`];
    const args: unknown[] = filter.type ? [filter.type] : [];
    if (filter.state) {
      where.push('state = ?');
      args.push(filter.state);
    }
    const sql = `FROM tasks INDEXED BY tasks_top WHERE type <> 'page' AND ${where.join(' AND ')}`;
    const total = (this.q(`SELECT COUNT(*) AS c ${sql}`).get(...args) as { c: number }).c;
    const rows = this.q(`SELECT * ${sql} ORDER BY n DESC LIMIT ? OFFSET ?`).all(...args, filter.limit, filter.offset) as Row[];
    return { total, tasks: rows.map(toTask) };
  }

  /** The page tasks of each run by state and index status. */
  runPageCounts(runIds: string[]): Map<string, RunPageCount[]> {
    const out = new Map<string, RunPageCount[]>(runIds.map((id) => [id, []]));
    const st = this.q(`SELECT state, index_status AS indexStatus, COUNT(*) AS n FROM tasks WHERE run_id = ? GROUP BY state, index_status`);
    for (const id of runIds) out.set(id, st.all(id) as RunPageCount[]);
    return out;
  }

  /** Stores what a reindex task's client reported (counts, and optionally its new state and message). */
  report(id: string, reported: ReportedProgress, state?: TaskState, message?: string): void {
    this.change();
    this.q(`UPDATE tasks SET progress = ? WHERE id = ?`).run(JSON.stringify(reported), id);
    if (state !== undefined || message !== undefined) this.setRunState(id, state ?? this.get(id)!.state, message);
  }

  /** Whether a page task of the run is not finished yet (cheaper than counting them). */
  hasOpenInRun(runId: string): boolean {
    return this.q(`SELECT 1 FROM tasks WHERE run_id = ? AND state IN ('queued','running') LIMIT 1`).get(runId) !== undefined;
  }

  /** Runs (crawl/sitemap) that are still running. */
  activeRuns(): CrawlTask[] {
    return (this.q(`SELECT * FROM tasks WHERE type IN ('crawl','sitemap') AND state IN ('queued','running')`).all() as Row[]).map(toTask);
  }

  private seenSet(runId: string): Set<string> {
    let set = this.seenByRun.get(runId);
    if (!set) {
      set = new Set((this.q(`SELECT url FROM seen WHERE run_id = ?`).all(runId) as Array<{ url: string }>).map((r) => r.url));
      this.seenByRun.set(runId, set);
    }
    return set;
  }

  /** Marks `url` seen by run `runId`; false when it already was. */
  markSeen(runId: string, url: string): boolean {
    const set = this.seenSet(runId);
    if (set.has(url)) return false;
    set.add(url);
    this.change();
    this.q(`INSERT OR IGNORE INTO seen (run_id, url) VALUES (?, ?)`).run(runId, url);
    return true;
  }

  /** Whether run `runId` has seen `url` (queued or reached it). */
  isSeen(runId: string, url: string): boolean {
    const set = this.seenByRun.get(runId);
    if (set) return set.has(url);
    return this.q(`SELECT 1 FROM seen WHERE run_id = ? AND url = ?`).get(runId, url) !== undefined;
  }

  /** Counts a page task against the run's maxPages; false (and marks truncation) when full. */
  takeRunSlot(runId: string, maxPages: number): boolean {
    this.change();
    const r = this.q(`UPDATE tasks SET total = total + 1 WHERE id = ? AND total < ?`).run(runId, maxPages);
    if (r.changes === 0) {
      this.q(`UPDATE tasks SET truncated = 1 WHERE id = ?`).run(runId);
      return false;
    }
    return true;
  }

  /** Marks a run as incomplete (pages cancelled): it must not remove unreached pages. */
  markTruncated(runId: string): void {
    this.change();
    this.q(`UPDATE tasks SET truncated = 1 WHERE id = ?`).run(runId);
  }


  /** Records the crawler's latest write of `url`. */
  record(url: string, origin: TaskOrigin, runId: string | null): void {
    this.change();
    this.q(`INSERT INTO ledger (url, origin, run_id) VALUES (?, ?, ?) ON CONFLICT(url) DO UPDATE SET origin = excluded.origin, run_id = excluded.run_id`).run(url, origin, runId);
  }

  /** Removes URLs from the ledger (they were deleted from the index, or are gone). */
  forget(urls: string[]): void {
    const del = this.q(`DELETE FROM ledger WHERE url = ?`);
    this.change();
    this.db.transaction(() => urls.forEach((u) => del.run(u)))();
  }

  /** Ledger rows written by site crawls. */
  crawledUrls(): Array<{ url: string; runId: string | null }> {
    return (this.q(`SELECT url, run_id AS runId FROM ledger WHERE origin = 'crawl'`).all() as Array<{ url: string; runId: string | null }>);
  }

  /** Queued or running page tasks (indexStatus `pending`). */
  pending(): number {
    return (this.q(`SELECT COUNT(*) AS c FROM tasks WHERE state IN ('queued','running') AND type IN ('url','append','page')`).get() as { c: number }).c;
  }

  /** Cancels queued page tasks whose URL matches; returns their ids. */
  cancelQueued(predicate: (url: string) => boolean, message: string): string[] {
    const rows = this.q(`SELECT id, url FROM tasks WHERE state = 'queued' AND type IN ('url','append','page')`).all() as Array<{ id: string; url: string }>;
    const hit = rows.filter((r) => r.url && predicate(r.url)).map((r) => r.id);
    const upd = this.q(`UPDATE tasks SET state = 'failed', message = ?, finished_at = ? WHERE id = ?`);
    const now = this.clock();
    this.change();
    this.db.transaction(() => hit.forEach((id) => upd.run(message, now, id)))();
    for (const id of hit) this.viewRemove(id);
    return hit;
  }

  /** Running page tasks whose URL matches (the service drops their results). */
  runningMatching(predicate: (url: string) => boolean): string[] {
    const rows = this.q(`SELECT id, url FROM tasks WHERE state = 'running' AND type IN ('url','append','page')`).all() as Array<{ id: string; url: string }>;
    return rows.filter((r) => r.url && predicate(r.url)).map((r) => r.id);
  }

  /** The lastmod of every URL of the last sitemap import (null: the sitemap gave none). */
  sitemapLastmods(): Map<string, string | null> {
    const rows = this.q(`SELECT url, lastmod FROM sitemap_urls`).all() as Array<{ url: string; lastmod: string | null }>;
    return new Map(rows.map((r) => [r.url, r.lastmod]));
  }

  /** Stores this import's URLs; returns the URLs of earlier imports that are gone now. */
  saveSitemapUrls(importId: string, entries: Array<{ url: string; lastmod: string | null }>, prune = true): string[] {
    const up = this.q(
      `INSERT INTO sitemap_urls (url, lastmod, import_id) VALUES (?, ?, ?) ON CONFLICT(url) DO UPDATE SET lastmod = excluded.lastmod, import_id = excluded.import_id`,
    );
    this.change();
    return this.db.transaction(() => {
      for (const e of entries) up.run(e.url, e.lastmod, importId);
      // A partial read (errors) must not make every unread URL look removed.
      if (!prune) return [];
      const gone = (this.q(`SELECT url FROM sitemap_urls WHERE import_id <> ?`).all(importId) as Array<{ url: string }>).map((r) => r.url);
      this.q(`DELETE FROM sitemap_urls WHERE import_id <> ?`).run(importId);
      return gone;
    })();
  }

  /** Whether no task of any kind is queued or running (the queue may be closed until its next use). */
  idle(): boolean {
    return this.q(`SELECT 1 FROM tasks WHERE state IN ('queued','running') LIMIT 1`).get() === undefined;
  }

  /** Commits the open group and closes the database. */
  close(): void {
    this.commit();
    queuePageCaches.delete(this.db);
    this.db.close();
  }
}
