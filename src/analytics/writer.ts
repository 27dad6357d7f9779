/**
 * Main-thread side of the query-log writer thread (src/analytics/writer-thread.ts): sends
 * batches of log rows to be committed there, and waits for them synchronously when the main
 * thread itself is about to write to a query log (flush, rollup, window move, close).
 *
 * Why a thread: the SQLite inserts of logged searches cost ≈ 11–13 µs each on the thread that
 * answers every request (≈ 9 % of a cached search); on their own thread they run beside it.
 * Crash safety is unchanged: the service still hands its queue over at least every second, and
 * the thread commits each batch as soon as it arrives (a crash loses what was not committed
 * yet, at most the last second).
 *
 * Main thread only. If the thread cannot start or dies, {@link LogWriterThread.alive} turns
 * false and the service writes on the main thread again; batches in flight at that moment are
 * reported through `onError` as lost.
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { startThread } from '../core/index.js';
import type { LogBatch } from './batch.js';
import type { WriterReply, WriterRequest, WriterSiteResult } from './writer-thread.js';

/**
 * The writer thread's name in /proc on Linux (`comm`, at most 15 bytes): `top -H` and the
 * benchmarks' per-thread CPU show its work apart from Node's other threads (all `node`).
 */
export const WRITER_THREAD_NAME = 'sitesift-qlog';

/** Longest synchronous wait for the thread (a stuck disk): then the caller goes on. */
const SYNC_TIMEOUT_MS = 30_000;

/** A batch sent to the thread, per project (oldest first). */
export interface WriterBatch {
  siteId: string;
  file: string;
  batch: LogBatch;
}

export interface LogWriterThreadOptions {
  /**
   * A batch of one project was committed by the thread; `windowStartDay` is the suggestion
   * window it counted searches from. Main thread, in send order.
   */
  onWritten: (siteId: string, batch: LogBatch, windowStartDay: number) => void;
  onError: (err: unknown, context: string) => void;
}

export class LogWriterThread {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  /** [0]: seq of the last request the thread answered. */
  private readonly done = new Int32Array(new SharedArrayBuffer(4));
  private seq = 0;
  /** Requests not answered yet, with the batches of a `write` (their rows, for `onWritten`). */
  private readonly inflight = new Map<number, { req: WriterRequest; sites?: WriterBatch[]; since?: number | null }>();
  /** Whether batches were sent since the last `aggregate` request (pending aggregates there). */
  private wrote = false;
  private dead = false;
  private idleWaiters: Array<() => void> = [];
  /** Batches committed by the thread (tests, status). */
  batches = 0;

  constructor(private readonly opts: LogWriterThreadOptions) {
    const { port1, port2 } = new MessageChannel();
    const workerData = { port: port2, done: this.done, name: WRITER_THREAD_NAME };
    this.worker = startThread(import.meta.url, './writer-thread', { workerData, transferList: [port2] });
    this.port = port1;
    this.port.on('message', (reply: WriterReply) => this.settle(reply));
    // Neither keeps an idle process alive (close() syncs before the service lets go); the port
    // is referenced while requests are in flight, so their answers are handled.
    this.port.unref();
    this.worker.unref();
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      if (!this.dead) this.fail(new Error(`query-log writer thread exited with code ${code}`));
    });
  }

  /** False once the thread failed: callers write on the main thread instead. */
  get alive(): boolean {
    return !this.dead;
  }

  /** The thread's V8 young-generation cap in MB (tests, status). */
  get youngGenerationMb(): number {
    return this.worker.resourceLimits?.maxYoungGenerationSizeMb ?? 0;
  }

  /** Requests not answered yet. */
  get pending(): number {
    return this.inflight.size;
  }

  /** Resolves once every request sent so far is answered (or the thread failed). */
  idle(): Promise<void> {
    if (this.inflight.size === 0 || this.dead) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Sends one batch per project; returns at once (the thread commits it). `since`: when the
   * oldest of their entries was recorded ({@link inFlightEntries}).
   */
  write(sites: WriterBatch[], since: number | null = null): void {
    if (sites.length === 0) return;
    this.send({ type: 'write', seq: 0, sites: sites.map((b) => ({ siteId: b.siteId, file: b.file, batch: b.batch.toWire() })) }, sites, since);
    this.wrote = true;
  }

  /** Entries sent and not committed yet, and when the oldest of them was recorded. */
  inFlightEntries(): { entries: number; oldestAt: number | null } {
    let entries = 0;
    let oldestAt: number | null = null;
    for (const p of this.inflight.values()) {
      if (!p.sites) continue;
      for (const s of p.sites) entries += s.batch.entries;
      if (p.since != null && (oldestAt === null || p.since < oldestAt)) oldestAt = p.since;
    }
    return { entries, oldestAt };
  }

  /**
   * Waits until the thread has committed everything sent so far and written its pending
   * suggestion aggregates (of `siteId`, or every project), handling the answers on the way.
   * Synchronous: the main thread is about to write to the same files itself.
   */
  sync(siteId?: string): void {
    if (this.dead) return;
    if (this.wrote) {
      this.send({ type: 'aggregate', seq: 0, ...(siteId === undefined ? {} : { siteIds: [siteId] }) });
      if (siteId === undefined) this.wrote = false;
    }
    this.waitAll();
  }

  /** Commits and closes the thread's connection to a project's log (before the main thread closes or deletes it). */
  closeSite(siteId: string): void {
    if (this.dead) return;
    this.send({ type: 'close', seq: 0, siteId });
    this.waitAll();
  }

  /** Syncs, then stops the thread. */
  close(): void {
    this.sync();
    this.dead = true;
    void this.worker.terminate();
  }

  private send(req: WriterRequest, sites?: WriterBatch[], since?: number | null): void {
    req.seq = ++this.seq;
    if (this.inflight.size === 0) this.port.ref();
    this.inflight.set(req.seq, { req, ...(sites ? { sites, since } : {}) });
    this.port.postMessage(req);
  }

  private waitAll(): void {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    while (this.inflight.size > 0 && !this.dead) {
      const last = Atomics.load(this.done, 0);
      // Answers already posted are read here; their listener would only run later.
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) this.settle(m.message as WriterReply);
      if (this.inflight.size === 0) break;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.opts.onError(new Error(`query-log writer thread did not answer within ${SYNC_TIMEOUT_MS} ms`), 'querylog.sync');
        return;
      }
      // Sleeps until the thread answers another request (or 10 ms: an answer counted in
      // `done` may reach the port a moment after the counter moves).
      Atomics.wait(this.done, 0, last, Math.min(left, 10));
    }
  }

  private settle(reply: WriterReply): void {
    const pending = this.inflight.get(reply.seq);
    if (!pending) return;
    this.inflight.delete(reply.seq);
    const bySite = new Map<string, WriterSiteResult>(reply.results.map((r) => [r.siteId, r]));
    if (pending.sites) this.batches++;
    for (const r of reply.results) if (r.error !== undefined) this.opts.onError(new Error(r.error), `querylog.flush ${r.siteId}`);
    if (pending.sites) {
      for (const s of pending.sites) {
        const r = bySite.get(s.siteId);
        if (r?.windowStartDay !== undefined) this.opts.onWritten(s.siteId, s.batch, r.windowStartDay);
      }
    }
    if (this.inflight.size === 0) this.wake();
  }

  private wake(): void {
    this.port.unref();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private fail(err: unknown): void {
    if (this.dead) return;
    this.dead = true;
    this.opts.onError(err, 'querylog.writer-thread');
    for (const { sites } of this.inflight.values()) {
      if (sites) for (const s of sites) this.opts.onError(new Error(`${s.batch.length + s.batch.events.length} log entries lost with the writer thread`), `querylog.flush ${s.siteId}`);
    }
    this.inflight.clear();
    this.wake();
  }
}
