/**
 * The query-log writer thread (a `worker_threads` Worker started by {@link LogWriterThread} in
 * src/analytics/writer.ts): commits the batches of logged searches and events the main thread
 * sends, so the SQLite inserts (≈ 11–13 µs per logged search) no longer run on the thread that
 * answers requests.
 *
 * One connection per project's `querylog.db` (opened on first use: the main thread has already
 * opened the file, created its tables and counted any searches left unaggregated by a crash).
 * Each batch is one transaction per project that first reads `closed_through` and
 * `window_start_day` from the `state` table, so it is ordered with the main thread's rollups
 * and window moves by SQLite's write lock whichever commits first. The suggestion aggregates
 * of the searches written here stay pending in this thread ({@link LogInserter}) until
 * {@link AGGREGATE_EVERY_ROWS} accumulate or the main thread asks (`aggregate`, `close`).
 *
 * Protocol (over the MessagePort sent in `workerData.port`): every request carries a `seq`,
 * strictly increasing; the answer `{seq, results}` is posted first, then the shared counter
 * `workerData.done[0]` is set to `seq` and notified, so the main thread can also wait for an
 * answer synchronously (Atomics.wait + receiveMessageOnPort).
 */
import { writeFileSync } from 'node:fs';
import { workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { PageCacheShare } from '../core/index.js';
import { AGGREGATE_EVERY_ROWS, LogInserter } from './site-log.js';
import { LogBatch, type WireBatch } from './batch.js';

/** Requests of the writer thread. */
export type WriterRequest =
  /** One project's searches and events in columns (src/analytics/batch.ts: no object per search on either side). */
  | { type: 'write'; seq: number; sites: Array<{ siteId: string; file: string; batch: WireBatch }> }
  /** Writes the pending suggestion aggregates of `siteIds` (all open ones when absent). */
  | { type: 'aggregate'; seq: number; siteIds?: string[] }
  /** Writes the pending aggregates of `siteId` and closes its connection. */
  | { type: 'close'; seq: number; siteId: string };

/** Per project: the window start the batch counted suggestions from, or the failure. */
export interface WriterSiteResult {
  siteId: string;
  windowStartDay?: number;
  error?: string;
}

export interface WriterReply {
  seq: number;
  results: WriterSiteResult[];
}

interface OpenLog {
  db: Database.Database;
  inserter: LogInserter;
  state: Database.Statement;
  write: (batch: LogBatch) => number;
  aggregate: () => void;
  /** Whether searches were written since the last aggregate write. */
  dirty: boolean;
}

const logs = new Map<string, OpenLog>();
/** Page caches of this thread's connections together: 16 MiB, at most 8 MiB each. */
const writerPageCaches = new PageCacheShare(16 * 1024, 256, 8 * 1024);

function open(file: string): OpenLog {
  let log = logs.get(file);
  if (log) return log;
  const db = new Database(file, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  // Same durability as the main connection: a process crash loses no commit.
  db.pragma('synchronous = NORMAL');
  // The main thread's rollup or window move may hold the write lock for a moment.
  db.pragma('busy_timeout = 10000');
  // The writer's connections share one page cache budget, part of its base in the memory plan.
  writerPageCaches.add(db);
  const inserter = new LogInserter(db);
  const state = db.prepare('SELECT value FROM state WHERE key = ?').pluck();
  const write = db.transaction((batch: LogBatch): number => {
    const closed = (state.get('closed_through') as number | undefined) ?? null;
    const windowStartDay = state.get('window_start_day') as number;
    inserter.insert(batch, closed, windowStartDay);
    log!.dirty = true;
    if (inserter.pending.rows >= AGGREGATE_EVERY_ROWS) {
      inserter.writePending();
      log!.dirty = false;
    }
    return windowStartDay;
  });
  const aggregate = db.transaction(() => {
    inserter.writePending();
    log!.dirty = false;
  });
  log = { db, inserter, state, write, aggregate, dirty: false };
  logs.set(file, log);
  return log;
}

const files = new Map<string, string>();

function handle(req: WriterRequest): WriterSiteResult[] {
  const results: WriterSiteResult[] = [];
  const attempt = (siteId: string, fn: () => Partial<WriterSiteResult> | void) => {
    try {
      results.push({ siteId, ...(fn() ?? {}) });
    } catch (err) {
      results.push({ siteId, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    }
  };
  if (req.type === 'write') {
    for (const s of req.sites) {
      files.set(s.siteId, s.file);
      attempt(s.siteId, () => ({ windowStartDay: open(s.file).write(new LogBatch(s.batch)) }));
    }
  } else if (req.type === 'aggregate') {
    for (const siteId of req.siteIds ?? [...files.keys()]) {
      const file = files.get(siteId);
      const log = file === undefined ? undefined : logs.get(file);
      if (log?.dirty) attempt(siteId, () => log.aggregate());
    }
  } else if (req.type === 'close') {
    const file = files.get(req.siteId);
    const log = file === undefined ? undefined : logs.get(file);
    if (log) {
      if (log.dirty) attempt(req.siteId, () => log.aggregate());
      writerPageCaches.delete(log.db);
      log.db.close();
      logs.delete(file!);
    }
    files.delete(req.siteId);
  }
  return results;
}

const { port, done, name } = workerData as { port: MessagePort; done: Int32Array; name: string };
// This thread's name in /proc (Linux `comm`): Node names all its threads `node`, so without it
// per-thread CPU readings (`top -H`, the benchmarks' /proc columns) cannot tell the writer's
// SQLite work from V8's and libuv's threads. Written through /proc/thread-self, which is the
// thread that opens it (a synchronous write runs on this thread). Cosmetic: ignored elsewhere.
try {
  writeFileSync('/proc/thread-self/comm', name);
} catch {
  // Not Linux.
}
port.on('message', (req: WriterRequest) => {
  const reply: WriterReply = { seq: req.seq, results: handle(req) };
  port.postMessage(reply);
  Atomics.store(done, 0, req.seq);
  Atomics.notify(done, 0);
});
