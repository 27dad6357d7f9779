/**
 * A search node's query-log outbox: every search and `POST /sites/queries/log` event the node
 * takes is appended to `<dataDir>/querylog-outbox.db` (SQLite, WAL) before the request is
 * answered, and pushed in batches to the primary's `POST /cluster/querylog`, authenticated with
 * a node key created on the primary (`sitesift nodes create`).
 *
 * Delivery is at-least-once from here and counted once on the primary: a batch's id is chosen
 * and stored with its rows before the first attempt, so every retry of the batch carries the same
 * id, and the primary ignores an id it has already counted. While the primary is unreachable (or
 * refuses), pushes back off exponentially up to {@link MAX_BACKOFF_MS} and the rows wait on disk:
 * a node that is down or cut off for an hour loses nothing it acknowledged (a crash loses at
 * most what the OS had not written, since WAL with synchronous=NORMAL survives a process kill).
 *
 * Main thread: {@link QueryLogOutbox.add} is one prepared INSERT (a few µs); the push runs on a
 * timer with fetch.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { ForwardedLogEntry } from './service.js';

/** Longest wait between two attempts while the primary is unreachable. */
export const MAX_BACKOFF_MS = 60_000;

export interface OutboxOptions {
  dataDir: string;
  /** The primary's base URL (SITESIFT_PRIMARY_URL). */
  primaryUrl: string;
  /** The node key (SITESIFT_NODE_KEY). */
  nodeKey: string;
  /** Milliseconds between pushes while all is well (SITESIFT_QUERYLOG_PUSH_MS, default 2000). */
  intervalMs?: number;
  /** Entries per batch (default 500). */
  batchSize?: number;
  /** First retry delay after a failure (default 1000 ms), doubled per failure up to {@link MAX_BACKOFF_MS}. */
  retryMs?: number;
  fetch?: typeof fetch;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

/** What a push did (tests, status). */
export type PushOutcome = { sent: number; batchId: string } | { sent: 0; idle: true } | { sent: 0; error: string };

export class QueryLogOutbox {
  private readonly db: Database.Database;
  private readonly opts: OutboxOptions;
  private readonly insert: Database.Statement;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private pushing: Promise<PushOutcome> | null = null;
  private stopped = false;
  /** Batches the primary acknowledged since start (tests, status). */
  delivered = 0;

  constructor(opts: OutboxOptions) {
    this.opts = opts;
    mkdirSync(opts.dataDir, { recursive: true });
    this.db = new Database(path.join(opts.dataDir, 'querylog-outbox.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec('CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, entry TEXT NOT NULL, batch_id TEXT)');
    this.db.exec('CREATE INDEX IF NOT EXISTS outbox_batch ON outbox (batch_id)');
    this.insert = this.db.prepare('INSERT INTO outbox (entry) VALUES (?)');
  }

  /** Appends one entry (durable against a process kill when it returns). Never throws. */
  add(entry: ForwardedLogEntry): void {
    try {
      this.insert.run(JSON.stringify(entry));
    } catch (err) {
      this.opts.log?.warn({ err }, 'query-log outbox: could not queue an entry');
    }
  }

  /** Entries waiting for the primary's acknowledgement. */
  get pending(): number {
    return (this.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get() as number) ?? 0;
  }

  /** Starts the push loop (every `intervalMs`, backing off after failures). */
  start(): void {
    if (this.timer || this.stopped) return;
    this.schedule(this.opts.intervalMs ?? 2000);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.pushOnce().then((r) => {
        const more = 'batchId' in r && r.sent >= (this.opts.batchSize ?? 500);
        const wait = 'error' in r ? Math.min(MAX_BACKOFF_MS, (this.opts.retryMs ?? 1000) * 2 ** Math.min(this.failures - 1, 16)) : more ? 0 : (this.opts.intervalMs ?? 2000);
        this.schedule(wait);
      });
    }, ms);
    this.timer.unref();
  }

  /**
   * Sends one batch: the batch left unacknowledged by an earlier attempt (same id), else up to
   * `batchSize` new entries under a new id stored with them first. Resolves with what happened;
   * never rejects. One push at a time.
   */
  pushOnce(): Promise<PushOutcome> {
    this.pushing ??= this.push().finally(() => (this.pushing = null));
    return this.pushing;
  }

  private async push(): Promise<PushOutcome> {
    const batchId = this.claimBatch();
    if (batchId === null) return { sent: 0, idle: true };
    const rows = this.db.prepare('SELECT entry FROM outbox WHERE batch_id = ? ORDER BY id').pluck().all(batchId) as string[];
    const body = `{"batchId":${JSON.stringify(batchId)},"entries":[${rows.join(',')}]}`;
    try {
      const res = await (this.opts.fetch ?? fetch)(new URL('/cluster/querylog', this.opts.primaryUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.opts.nodeKey}` },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
    } catch (err) {
      this.failures++;
      const error = (err as Error).message;
      if (this.failures === 1 || this.failures % 10 === 0) {
        this.opts.log?.warn({ batchId, entries: rows.length, failures: this.failures, err: error }, 'query-log push to the primary failed; retrying with backoff');
      }
      return { sent: 0, error };
    }
    if (this.failures > 0) this.opts.log?.info({ failures: this.failures }, 'query-log push to the primary works again');
    this.failures = 0;
    this.db.prepare('DELETE FROM outbox WHERE batch_id = ?').run(batchId);
    this.delivered++;
    return { sent: rows.length, batchId };
  }

  /** The id of the batch to send: an unacknowledged one, else a new one over the oldest entries. */
  private claimBatch(): string | null {
    const open = this.db.prepare('SELECT batch_id FROM outbox WHERE batch_id IS NOT NULL ORDER BY id LIMIT 1').pluck().get() as string | undefined;
    if (open) return open;
    const ids = this.db.prepare('SELECT id FROM outbox WHERE batch_id IS NULL ORDER BY id LIMIT ?').pluck().all(this.opts.batchSize ?? 500) as number[];
    if (ids.length === 0) return null;
    const batchId = randomUUID();
    this.db.prepare('UPDATE outbox SET batch_id = ? WHERE batch_id IS NULL AND id <= ?').run(batchId, ids[ids.length - 1]);
    return batchId;
  }

  /** Stops the loop and closes the file (after a push in flight settles). */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pushing;
    this.db.close();
  }
}
