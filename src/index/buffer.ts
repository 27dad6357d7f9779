/**
 * Buffer stage of the segment store: acknowledges writes once the write log (write-log.ts) has
 * them durable, keeps them in an in-memory buffer (and the acknowledged view, live-view.ts),
 * and flushes the buffer: a flush builds the buffered ops into one or more segments in the
 * pool (builds.ts) and hands them to the commit chain (commit.ts), which publishes them.
 *
 * Main thread. Invariants:
 * - every acknowledged op with a seq above `committedSeq` is in the write log and in the buffer
 *   or the flush in progress (`building`); the buffer keeps at most one op per URL, the newest;
 * - flushes run one at a time; a failed flush gives its ops back to the buffer (newer buffered
 *   ops win) and publishes nothing, so the next flush retries them;
 * - the buffer holds no document bodies (the build task reads them from the write log), only
 *   what reports need, so its memory does not grow with the pages waiting to be published;
 * - writers wait for the running flush when the buffer is full (`maxBufferedDocs`,
 *   `maxBufferedBytes`), which bounds memory during bulk imports.
 */
import { AppError, type IndexOp, type PageDoc } from '../core/index.js';
import type { FlushOptions, WriteOp } from './contract.js';
import type { SegmentBuilds } from './builds.js';
import type { CommitChain } from './commit.js';
import type { StoreContext } from './context.js';
import type { DocMeta, Generations, SegState } from './generations.js';
import type { LiveView } from './live-view.js';
import type { SegmentDelete } from './segment-format.js';
import type { WriteLog } from './write-log.js';

/** A flush is split into parallel builds only when each part gets at least this many upserts. */
export const MIN_PART_DOCS = 500;

/** Default of `maxBufferedDocs`; the ingest routes hold writers at the same bound. */
export const DEFAULT_MAX_BUFFERED_DOCS = 20_000;

/** Default of `maxBufferedBytes` (128 Mi UTF-16 code units of text). */
export const DEFAULT_MAX_BUFFERED_BYTES = 128 * 1024 * 1024;

type Pending =
  | { op: 'upsert'; seq: number; at: number; firstAt: number; meta: DocMeta; bytes: number }
  | { op: 'delete'; seq: number; at: number; url: string };

function metaOf(doc: PageDoc): DocMeta {
  const m: DocMeta = { title: doc.title, documentType: doc.documentType, contentGroup: doc.contentGroup, source: doc.source };
  if (doc.message !== undefined) m.message = doc.message;
  return m;
}

/** Text size of a document (UTF-16 code units): what a segment build holds per document. */
function textBytes(doc: PageDoc): number {
  let n = doc.url.length + doc.title.length + doc.content.length + (doc.description?.length ?? 0);
  for (const h of doc.headings) n += h.length;
  for (const k of doc.keywords) n += k.length;
  return n;
}

/** Splits seq-ordered upserts into `parts` (≥ 1) contiguous runs of about equal text size. */
function splitBySize<T extends { bytes: number }>(items: T[], parts: number): T[][] {
  if (parts <= 1 || items.length === 0) return [items];
  const total = items.reduce((a, u) => a + u.bytes, 0);
  const out: T[][] = [];
  let cur: T[] = [];
  let acc = 0;
  for (const u of items) {
    cur.push(u);
    acc += u.bytes;
    if (out.length < parts - 1 && acc >= (total * (out.length + 1)) / parts) {
      out.push(cur);
      cur = [];
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The buffer's settings (SegmentStoreOptions with their defaults applied). */
export interface BufferOptions {
  refreshMs: number;
  clock: () => number;
  maxBufferedDocs: number;
  maxBufferedBytes: number;
  parallelBuilds: number;
  /**
   * Where seqs come from (default: this buffer's own counter). A replace's staging store draws
   * from the live store's counter, so its rows and the live ones share one seq order.
   */
  allocSeqs?: (n: number) => number;
  /** `firstAt` of a URL this buffer has never seen (a staging store inherits the live one's). */
  firstAtOf?: (url: string) => number | undefined;
}

/** The stages a buffer feeds and reads. */
export interface BufferStages {
  wal: WriteLog;
  live: LiveView;
  generations: Generations;
  builds: SegmentBuilds;
  commits: CommitChain;
  /** Called after every successful flush (the merge stage decides whether to merge). */
  afterFlush: () => void;
}

export class WriteBuffer {
  private readonly ctx: StoreContext;
  private readonly opts: BufferOptions;
  private readonly stages: BufferStages;
  private buffer = new Map<string, Pending>();
  /** Sum of `bytes` of the buffered upserts. */
  private bufferedBytes = 0;
  /** The ops of the flush in progress. */
  private building: Map<string, Pending> | null = null;
  /**
   * Whether the last flush took at least half a buffer (an early, size-triggered flush: a bulk
   * import is flowing) rather than what a refresh interval gathered.
   */
  private lastFlushBulk = false;
  private waiters: Waiter[] = [];
  private nextSeq = 1;
  /** Seq of the newest acknowledged op. */
  lastAckedSeq = 0;
  private refreshTimer: NodeJS.Timeout | null = null;
  private flushChain: Promise<void> = Promise.resolve();

  constructor(ctx: StoreContext, opts: BufferOptions, stages: BufferStages) {
    this.ctx = ctx;
    this.opts = opts;
    this.stages = stages;
  }

  /**
   * At open: buffers the write log's ops past `committedSeq` (those no published segment
   * holds) and flushes them; `maxSeq` is the highest seq the published segments hold. With
   * nothing to replay, the covered log files are deleted.
   */
  async recover(ops: readonly IndexOp[], maxSeq: number): Promise<void> {
    const committedSeq = this.stages.commits.committedSeq;
    this.lastAckedSeq = committedSeq;
    for (const op of ops) {
      maxSeq = Math.max(maxSeq, op.seq);
      if (op.seq > committedSeq) this.apply(op);
    }
    this.nextSeq = Math.max(maxSeq, committedSeq) + 1;
    if (this.buffer.size === 0) {
      this.stages.wal.deleteCovered(committedSeq);
      return;
    }
    try {
      await this.flush();
    } catch (err) {
      // The ops stay in the write log and the buffer; the next refresh retries.
      this.ctx.log?.error(`index ${this.ctx.siteId}: flush after recovery failed: ${(err as Error).message}`);
      this.scheduleRefresh();
    }
  }

  /**
   * Appends `ops` to the write log (one line, so all or nothing), fsyncs (shared with concurrent
   * writers), applies them to the acknowledged view and resolves with the last op's seq.
   * Duplicate URLs in one batch: the last wins (higher seq).
   */
  write(ops: WriteOp[]): Promise<number> {
    if (this.ctx.closed) return Promise.reject(this.ctx.closedError());
    if (ops.length === 0) return Promise.resolve(this.lastAckedSeq);
    // A malformed op must never reach the log: replaying it would fail at every start-up.
    for (const [i, op] of ops.entries()) {
      const ok = op?.op === 'upsert' ? typeof op.doc?.url === 'string' && typeof op.doc.status === 'number' : op?.op === 'delete' && typeof op.url === 'string';
      if (!ok) return Promise.reject(new AppError('invalid_document', `Write op ${i} is not a valid upsert or delete.`));
    }
    // Backpressure: when builds fall behind, writers wait for the flush in progress instead of
    // growing the in-memory buffer without bound.
    if (this.building && this.bufferFull(1)) {
      return this.flushChain.then(() => this.write(ops));
    }
    const seq = this.opts.allocSeqs ? this.opts.allocSeqs(ops.length) : this.allocSeqs(ops.length);
    const at = this.opts.clock();
    const lastSeq = seq + ops.length - 1;
    return this.stages.wal
      .append({ seq, at, ops }, () => {
        ops.forEach((op, i) => {
          this.apply(op.op === 'upsert' ? { op: 'upsert', seq: seq + i, at, doc: op.doc } : { op: 'delete', seq: seq + i, at, url: op.url });
        });
        if (this.waiters.some((w) => w.seq <= this.lastAckedSeq) || this.bufferFull(0.5)) this.flushSoon();
        else this.scheduleRefresh();
      })
      .then(() => lastSeq);
  }

  /** Reserves `n` consecutive seqs and returns the first. */
  allocSeqs(n: number): number {
    const seq = this.nextSeq;
    this.nextSeq += n;
    return seq;
  }

  /** Applies one durable op to the acknowledged view and the buffer (seq order). */
  private apply(op: IndexOp): void {
    const live = this.stages.live;
    const url = op.op === 'upsert' ? op.doc.url : op.url;
    const prev = live.get(url);
    this.dropBuffered(url);
    if (op.op === 'upsert') {
      const firstAt = prev ? prev.firstAt : (this.opts.firstAtOf?.(url) ?? op.at);
      live.set(url, { seq: op.seq, at: op.at, firstAt, status: op.doc.status });
      const bytes = textBytes(op.doc);
      this.bufferedBytes += bytes;
      this.buffer.set(url, { op: 'upsert', seq: op.seq, at: op.at, firstAt, meta: metaOf(op.doc), bytes });
    } else {
      if (prev) live.set(url, null);
      this.buffer.set(url, { op: 'delete', seq: op.seq, at: op.at, url });
    }
    this.lastAckedSeq = Math.max(this.lastAckedSeq, op.seq);
    live.touch(op.at);
  }

  /** Removes `url`'s op from the buffer, keeping {@link bufferedBytes} in step. */
  private dropBuffered(url: string): void {
    const p = this.buffer.get(url);
    if (!p) return;
    if (p.op === 'upsert') this.bufferedBytes -= p.bytes;
    this.buffer.delete(url);
  }

  /** Whether the buffer holds at least `fraction` of its bound (documents or text). */
  private bufferFull(fraction: number): boolean {
    return this.buffer.size >= this.opts.maxBufferedDocs * fraction || this.bufferedBytes >= this.opts.maxBufferedBytes * fraction;
  }

  /** Resolves once every op up to `seq` is published; triggers an early flush if needed. */
  waitSearchable(seq: number): Promise<void> {
    if (seq <= this.stages.commits.committedSeq) return Promise.resolve();
    if (this.ctx.closed) return Promise.reject(this.ctx.closedError());
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      if (seq <= this.lastAckedSeq) this.flushSoon();
    });
  }

  /** The report fields of `url`'s acknowledged, unpublished op: null for a delete, undefined when none is pending. */
  pendingDoc(url: string): DocMeta | null | undefined {
    const p = this.buffer.get(url) ?? this.building?.get(url);
    if (!p) return undefined;
    return p.op === 'upsert' ? p.meta : null;
  }

  /** Acknowledged ops not yet published (buffered or in the running flush). */
  get unpublished(): number {
    return this.buffer.size + (this.building?.size ?? 0);
  }

  /**
   * Whether segment builds are behind the writers (a bulk import is flowing): at least half a
   * buffer's worth of acknowledged documents is unpublished, in a running build or in the
   * buffer, or the last flush was a bulk one and documents arrived since.
   */
  backlogged(): boolean {
    if (this.lastFlushBulk && this.buffer.size > 0) return true;
    let docs = this.buffer.size;
    let bytes = this.bufferedBytes;
    if (this.building !== null) {
      docs += this.building.size;
      for (const p of this.building.values()) if (p.op === 'upsert') bytes += p.bytes;
    }
    return docs >= this.opts.maxBufferedDocs / 2 || bytes >= this.opts.maxBufferedBytes / 2;
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer || this.ctx.closed || this.buffer.size === 0) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.flush().catch((err: Error) => {
        this.ctx.log?.error(`index ${this.ctx.siteId}: refresh failed: ${err.message}`);
        this.scheduleRefresh();
      });
    }, this.opts.refreshMs);
    this.refreshTimer.unref();
  }

  private flushSoon(): void {
    this.flush().catch((err: Error) => this.ctx.log?.error(`index ${this.ctx.siteId}: flush failed: ${err.message}`));
  }

  /**
   * Publishes everything acknowledged so far (built in the pool, committed by the commit
   * chain). Flushes run one at a time; a call made while one runs waits for it and then
   * flushes what arrived meanwhile. `opts.minPartDocs` lowers the part size from which this
   * flush is built as parallel parts (default {@link MIN_PART_DOCS}): a caller that knows
   * nothing more is coming (a finished crawl) has every pool thread build its last documents.
   */
  flush(opts: FlushOptions = {}): Promise<void> {
    const p = this.flushChain.then(() => this.flushOnce(opts));
    this.flushChain = p.catch(() => undefined);
    return p;
  }

  private async flushOnce(opts: FlushOptions): Promise<void> {
    const { wal, generations, builds, commits } = this.stages;
    if (this.refreshTimer) {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = null;
    }
    // After close the write log alone keeps unflushed ops (replayed at the next open).
    if (this.buffer.size === 0 || this.ctx.closed) return;
    const upTo = this.lastAckedSeq;
    this.lastFlushBulk = this.bufferFull(0.5);
    const batch = this.buffer;
    const batchBytes = this.bufferedBytes;
    this.buffer = new Map();
    this.bufferedBytes = 0;
    this.building = batch;
    wal.rotate();
    // The worker reads the upserts from the write log by seq; only seqs cross threads.
    const upserts: Array<{ seq: number; firstAt: number; bytes: number }> = [];
    const deletes: SegmentDelete[] = [];
    for (const p of batch.values()) {
      if (p.op === 'upsert') upserts.push({ seq: p.seq, firstAt: p.firstAt, bytes: p.bytes });
      // A delete marker is only needed while some published row of the URL exists.
      else if (generations.hasPublishedRow(p.url)) deletes.push({ seq: p.seq, at: p.at, url: p.url });
    }
    upserts.sort((a, b) => a.seq - b.seq);
    const built: SegState[] = [];
    try {
      if (upserts.length > 0 || deletes.length > 0) {
        const logFiles = wal.filePaths();
        // A bulk flush is built as several segments at once (URLs are unique in the buffer, so
        // the parts are disjoint) and published by one commit: a build is the ingest
        // bottleneck, and the pool has a thread per core.
        const minPart = Math.max(1, opts.minPartDocs ?? MIN_PART_DOCS);
        const parts = splitBySize(upserts, Math.min(this.opts.parallelBuilds, Math.floor(upserts.length / minPart)));
        const results = await Promise.allSettled(
          parts.map((part, k) =>
            builds.run('', upTo, {
              task: 'build-segment',
              logFiles,
              seqs: part.map((u) => u.seq),
              firstAts: part.map((u) => u.firstAt),
              deletes: k === 0 ? deletes : [],
            }),
          ),
        );
        for (const r of results) if (r.status === 'fulfilled') built.push(r.value);
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      }
      await commits.commit(built, [], upTo);
    } catch (err) {
      // Built but not published (another part or the commit failed): close and delete.
      for (const st of built) generations.discard(st);
      this.giveBack(batch, batchBytes);
      this.settleWaiters(upTo, (w) => w.reject(err));
      throw err;
    }
    this.building = null;
    this.settleWaiters(commits.committedSeq, (w) => w.resolve());
    wal.deleteCovered(commits.committedSeq);
    this.scheduleRefresh();
    this.stages.afterFlush();
  }

  /** Puts the ops of a failed flush back in front of what was buffered meanwhile (newer ops win). */
  private giveBack(batch: Map<string, Pending>, batchBytes: number): void {
    const merged = new Map(batch);
    let bytes = batchBytes;
    for (const [url, p] of this.buffer) {
      const old = merged.get(url);
      if (old?.op === 'upsert') bytes -= old.bytes;
      merged.delete(url);
      merged.set(url, p);
      if (p.op === 'upsert') bytes += p.bytes;
    }
    this.buffer = merged;
    this.bufferedBytes = bytes;
    this.building = null;
  }

  /** Removes the waiters for seqs up to `seq` and settles each with `settle`. */
  private settleWaiters(seq: number, settle: (w: Waiter) => void): void {
    const due = this.waiters.filter((w) => w.seq <= seq);
    this.waiters = this.waiters.filter((w) => w.seq > seq);
    for (const w of due) settle(w);
  }

  /** Stops the refresh timer and fails every waiter (the store is closing). */
  close(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    this.settleWaiters(Infinity, (w) => w.reject(this.ctx.closedError()));
  }
}
