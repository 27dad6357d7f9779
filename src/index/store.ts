/**
 * The per-project segment store: the implementation of {@link ProjectIndex}, composed of the
 * write path's stages, each in its own file:
 *
 *   write-log.ts (durable, fsync'd log) → buffer.ts (acknowledged ops; flush to segment builds)
 *   → builds.ts (pool task, sealed file) → commit.ts (serial commit chain, the manifest's only
 *   writer) → generations.ts (published segments, tombstones, pinned snapshots)
 *   → merge.ts (merges the pure merge-policy.ts chooses) → gc.ts (unreferenced files)
 *
 * with live-view.ts holding the acknowledged view the reports read. This file opens the store
 * (recovery), wires the stages together and keeps the public API.
 *
 * Layout of `<dataDir>/projects/<siteId>/`: `wal/` (write log), `segments/<id>.seg` (immutable
 * SQLite files), `manifest.json` (the live segment list). See docs/STORAGE.md.
 *
 * Main thread; segment builds and merges run in the pool, file work of commits on libuv's
 * threadpool.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { AppError, type DocSource, type EmbedderSpec } from '../core/index.js';
import type {
  EntryListing,
  EntryListingQuery,
  FlushOptions,
  IndexSnapshot,
  IndexStats,
  ProjectIndex,
  SegmentSummary,
  WriteOp,
} from './contract.js';
import { DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_BUFFERED_DOCS, MIN_PART_DOCS, WriteBuffer } from './buffer.js';
import { SegmentBuilds } from './builds.js';
import { CommitChain } from './commit.js';
import { StoreContext, type IndexLogger } from './context.js';
import { fsyncDirAsync } from './files.js';
import { removeUnclaimedSegments, sweep } from './gc.js';
import { Generations, type DocMeta } from './generations.js';
import { LiveView } from './live-view.js';
import { readManifest } from './manifest.js';
import { Merges, MAX_SEGMENTS_DEFERRING_MERGES, MERGE_ON_FLUSH_SEGMENTS } from './merge.js';
import type { MergePolicyOptions } from './merge-policy.js';
import type { PausePoint, TaskPool } from './tasks.js';
import { WriteLog } from './write-log.js';

export { DEFAULT_MAX_BUFFERED_DOCS, MIN_PART_DOCS, MAX_SEGMENTS_DEFERRING_MERGES, MERGE_ON_FLUSH_SEGMENTS };
export type { IndexLogger, FlushOptions };

export interface SegmentStoreOptions {
  siteId: string;
  /** The project folder `<dataDir>/projects/<siteId>`. */
  dir: string;
  pool: TaskPool;
  /** Max time between acknowledgement and visibility (default 1000 ms). */
  refreshMs?: number;
  /** ms since the epoch; stamps `at` of every op (default Date.now). */
  clock?: () => number;
  log?: IndexLogger;
  /** Project default language, read at each build/merge (default 'en'). */
  defaultLanguage?: string | (() => string);
  /** The project's embedder, read at every build and merge (default: none). */
  embedder?: () => EmbedderSpec | null;
  mergePolicy?: Partial<MergePolicyOptions>;
  /**
   * Buffered (unpublished) URLs that trigger an early flush at half this size and make writers
   * wait for the running flush at this size (default 20 000). Bounds memory during bulk imports:
   * a build worker's memory grows with the documents it indexes. The size of a bulk flush is
   * the size of the segments an import makes (two per flush, see parallelBuilds): 10 000-document
   * flushes make about 20 segments per 100k documents, few enough that no merge has to run while
   * the import flows.
   */
  maxBufferedDocs?: number;
  /**
   * The same bound on the buffered documents' text (UTF-16 code units of url, title, content,
   * description, headings, keywords; default 128 Mi, about 20 000 documentation pages): a build
   * worker's memory grows with the text it indexes, and a few huge pages must not build as one
   * segment.
   */
  maxBufferedBytes?: number;
  /**
   * A flush of at least 2 × {@link MIN_PART_DOCS} upserts is built as up to this many segments
   * in parallel pool tasks, published by one commit (default 2: the pool's default thread
   * count on a 2-core machine).
   */
  parallelBuilds?: number;
  /**
   * Run the merge policy after a flush that leaves {@link MERGE_ON_FLUSH_SEGMENTS} or more
   * segments, not only when the merge job calls (default true).
   */
  mergeOnFlush?: boolean;
  /** Crash-test hook: stall at this point so a SIGKILL lands there. */
  pauseIn?: PausePoint;
  /** See BufferOptions.allocSeqs (a replace's staging store). */
  allocSeqs?: (n: number) => number;
  /** See BufferOptions.firstAtOf (a replace's staging store). */
  firstAtOf?: (url: string) => number | undefined;
  /** A replace with no staged write for this long is abandoned (default 15 minutes). */
  replaceIdleMs?: number;
}

/** The folder of a replace's staging store inside the project folder. */
export const REPLACE_DIR = 'replace';

/** What {@link SegmentStore.commitReplace} reports. */
export interface ReplaceResult {
  /** Searchable pages after the swap. */
  pages: number;
  /** Live URLs (any status) before the swap that the new index does not have. */
  removed: number;
  /** Writes made to the live index during the rebuild, applied to the new one too. */
  mirrored: number;
}

/** A bulk replace in progress: the staging store the file's pages go to. */
interface Replacement {
  id: string;
  staging: SegmentStore;
  /** Live writes made during the rebuild, applied to the staging store too (in flight). */
  mirrors: Set<Promise<unknown>>;
  mirrored: number;
  /** Set when a mirrored write failed: the staging store misses a live write, so no swap. */
  failed: Error | null;
  committing: boolean;
  idleTimer: NodeJS.Timeout | null;
}

/**
 * The segment store of one project. Create with {@link SegmentStore.open}; one instance per
 * project folder per process (the registry guarantees it).
 *
 * @example
 * const index = await SegmentStore.open({ siteId: 'docs', dir, pool });
 * const seq = await index.write([{ op: 'upsert', doc }]); // durable now
 * await index.waitSearchable(seq);                        // published now
 * const snap = index.acquire(); try { search(snap) } finally { snap.release() }
 */
export class SegmentStore implements ProjectIndex {
  readonly siteId: string;
  private readonly ctx: StoreContext;
  private readonly generations: Generations;
  private readonly commits: CommitChain;
  private readonly builds: SegmentBuilds;
  private readonly live = new LiveView();
  private readonly buffer: WriteBuffer;
  private readonly merges: Merges;
  private readonly wal: WriteLog;
  private readonly opts: SegmentStoreOptions;
  private replacing: Replacement | null = null;
  /** Set while a replace swaps: writes wait for it instead of landing in the old generation. */
  private swapGate: Promise<void> | null = null;

  private constructor(opts: SegmentStoreOptions, ctx: StoreContext, generations: Generations, commits: CommitChain, wal: WriteLog) {
    this.siteId = opts.siteId;
    this.opts = opts;
    this.ctx = ctx;
    this.generations = generations;
    this.commits = commits;
    this.wal = wal;
    this.builds = new SegmentBuilds(ctx, generations);
    this.buffer = new WriteBuffer(
      ctx,
      {
        refreshMs: opts.refreshMs ?? 1000,
        clock: opts.clock ?? Date.now,
        maxBufferedDocs: opts.maxBufferedDocs ?? DEFAULT_MAX_BUFFERED_DOCS,
        maxBufferedBytes: opts.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
        parallelBuilds: Math.max(1, opts.parallelBuilds ?? 2),
        ...(opts.allocSeqs ? { allocSeqs: opts.allocSeqs } : {}),
        ...(opts.firstAtOf ? { firstAtOf: opts.firstAtOf } : {}),
      },
      { wal, live: this.live, generations, builds: this.builds, commits, afterFlush: () => this.merges.afterFlush() },
    );
    this.merges = new Merges(
      ctx,
      { policy: opts.mergePolicy ?? {}, mergeOnFlush: opts.mergeOnFlush ?? true },
      { generations, builds: this.builds, commits, buffer: this.buffer },
    );
  }

  /**
   * Opens (or creates) a project's store: reads the manifest, deletes crash leftovers (temp
   * manifests, unlisted segment files), rebuilds tombstones from the segments, replays the write
   * log past `committedSeq` and flushes it. Main thread.
   */
  static async open(opts: SegmentStoreOptions): Promise<SegmentStore> {
    const ctx = new StoreContext(opts);
    fs.mkdirSync(ctx.segDir, { recursive: true });
    // A replace that did not reach its commit is abandoned: the live index never saw it.
    fs.rmSync(path.join(ctx.dir, REPLACE_DIR), { recursive: true, force: true });
    const manifest = readManifest(ctx.dir);
    // Unlisted = a build or merge that never committed (or a file a crash kept from gc).
    removeUnclaimedSegments(ctx.segDir, new Set(manifest.segments.map((s) => s.file)));
    const generations = new Generations(ctx);
    const states = generations.recover(manifest);
    const commits = new CommitChain(ctx, generations);
    commits.committedSeq = manifest.committedSeq;
    const { log: wal, ops, skipped } = WriteLog.open(path.join(ctx.dir, 'wal'));
    if (skipped > 0) ctx.log?.warn(`index ${ctx.siteId}: ignored ${skipped} torn or corrupt write-log line(s) (never acknowledged)`);
    const store = new SegmentStore(opts, ctx, generations, commits, wal);
    let maxSeq = 0;
    for (const s of states) {
      maxSeq = Math.max(maxSeq, s.meta.maxSeq);
      for (let i = 0; i < s.ats.length; i++) store.live.touch(s.ats[i]!);
      for (const d of s.deletes) store.live.touch(d.at);
    }
    for (const [url, w] of generations.published) {
      if (w.docId < 0) continue;
      const s = w.state;
      store.live.set(url, { seq: w.seq, at: s.ats[w.docId]!, firstAt: s.firstAts[w.docId]!, status: s.statuses[w.docId]! });
    }
    await store.buffer.recover(ops, maxSeq);
    return store;
  }

  // ------------------------------------------------------------------ writes

  /**
   * Appends `ops` to the write log (one line, so all or nothing), fsyncs (shared with concurrent
   * writers), applies them to the acknowledged view and resolves with the last op's seq.
   * Duplicate URLs in one batch: the last wins (higher seq).
   */
  write(ops: WriteOp[]): Promise<number> {
    if (this.swapGate) return this.track(this.swapGate.then(() => this.write(ops)));
    const r = this.replacing;
    if (!r) return this.track(this.buffer.write(ops));
    return this.track(this.writeBoth(r, ops));
  }

  /**
   * During a replace a live write goes to the live index (searches see it now) and to the
   * staging store (so the swap keeps it). Both are durable before it is acknowledged. A
   * failed staging write fails the replace, never the live write.
   */
  private async writeBoth(r: Replacement, ops: WriteOp[]): Promise<number> {
    const mirror = r.staging.write(ops).then(
      () => void r.mirrored++,
      (err: Error) => {
        r.failed ??= err;
        this.ctx.log?.error(`index ${this.siteId}: a write during replace ${r.id} could not be staged; the replace will be refused: ${err.message}`);
      },
    );
    r.mirrors.add(mirror);
    void mirror.finally(() => r.mirrors.delete(mirror));
    const [seq] = await Promise.all([this.buffer.write(ops), mirror]);
    return seq;
  }

  // ------------------------------------------------------------------ bulk replace

  /**
   * Starts a bulk replace: a staging index beside the live one (`replace/` in the project
   * folder) that {@link writeReplace} fills while searches keep using the live index. Writes
   * to the live index until the swap are applied to the staging index too. One replace at a
   * time per project (409 `conflict`). Returns the replace id.
   *
   * @example
   * const id = await store.beginReplace();
   * await store.writeReplace(id, pages.map((doc) => ({ op: 'upsert', doc })));
   * await store.commitReplace(id); // one manifest commit: exactly the staged pages are live
   */
  async beginReplace(): Promise<string> {
    if (this.ctx.closed) throw this.ctx.closedError();
    if (this.replacing || this.swapGate) throw new AppError('conflict', `A replace of "${this.siteId}" is already running; commit or abort it first.`);
    const id = randomUUID();
    const dir = path.join(this.ctx.dir, REPLACE_DIR);
    fs.rmSync(dir, { recursive: true, force: true });
    const o = this.opts;
    const staging = await SegmentStore.open({
      siteId: o.siteId,
      dir,
      pool: o.pool,
      refreshMs: Math.max(o.refreshMs ?? 1000, 5000),
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.log ? { log: o.log } : {}),
      ...(o.defaultLanguage !== undefined ? { defaultLanguage: o.defaultLanguage } : {}),
      ...(o.mergePolicy ? { mergePolicy: o.mergePolicy } : {}),
      ...(o.maxBufferedDocs ? { maxBufferedDocs: o.maxBufferedDocs } : {}),
      ...(o.maxBufferedBytes ? { maxBufferedBytes: o.maxBufferedBytes } : {}),
      ...(o.parallelBuilds ? { parallelBuilds: o.parallelBuilds } : {}),
      allocSeqs: (n) => this.buffer.allocSeqs(n),
      firstAtOf: (url) => this.live.get(url)?.firstAt,
    });
    if (this.replacing || this.ctx.closed) {
      await staging.close({ flush: false });
      throw new AppError('conflict', `A replace of "${this.siteId}" is already running; commit or abort it first.`);
    }
    this.replacing = { id, staging, mirrors: new Set(), mirrored: 0, failed: null, committing: false, idleTimer: null };
    this.touchReplace(this.replacing);
    this.ctx.log?.info(`index ${this.siteId}: replace ${id} started`);
    return id;
  }

  /** The replace in progress with this id, or 404 `not_found`. */
  private replacement(id: string): Replacement {
    const r = this.replacing;
    if (!r || r.id !== id || r.committing) throw new AppError('not_found', `No replace "${id}" is running for "${this.siteId}" (it was committed, aborted or abandoned after being idle).`, 'replaceId');
    return r;
  }

  private touchReplace(r: Replacement): void {
    if (r.idleTimer) clearTimeout(r.idleTimer);
    r.idleTimer = setTimeout(() => {
      if (this.replacing !== r || r.committing) return;
      this.ctx.log?.warn(`index ${this.siteId}: replace ${r.id} abandoned after ${this.opts.replaceIdleMs ?? 900_000} ms without a write`);
      void this.abortReplace(r.id).catch(() => undefined);
    }, this.opts.replaceIdleMs ?? 900_000);
    r.idleTimer.unref();
  }

  /**
   * Writes ops into the replace's staging index only (durable when it resolves; not searchable
   * until {@link commitReplace}). Same rules as {@link write}: all or nothing, newest wins.
   */
  async writeReplace(id: string, ops: WriteOp[]): Promise<number> {
    const r = this.replacement(id);
    this.touchReplace(r);
    return this.track(r.staging.write(ops));
  }

  /** The staging index's acknowledged view (pending count for backpressure, tests). */
  replaceStats(id: string): IndexStats {
    return this.replacement(id).staging.stats();
  }

  /**
   * Swaps the staging index in. Writes wait (they are not refused) while the swap runs: the
   * live and staging buffers are published, the staging segments move into `segments/`, and
   * one manifest commit makes them the whole index. Pages not staged are gone; a search pins
   * either the old generation or the new one, never a mix and never an empty index between.
   */
  async commitReplace(id: string): Promise<ReplaceResult> {
    const r = this.replacement(id);
    r.committing = true;
    if (r.idleTimer) clearTimeout(r.idleTimer);
    let open!: () => void;
    this.swapGate = new Promise<void>((resolve) => (open = resolve));
    const before = new Set(this.live.urls());
    const stagingDir = path.join(this.ctx.dir, REPLACE_DIR);
    try {
      // Live writes admitted before the gate finish on both sides first.
      while (r.mirrors.size > 0) await Promise.allSettled([...r.mirrors]);
      if (r.failed) throw new AppError('internal', `Replace ${id} failed: a write made during it could not be staged (${r.failed.message}). The live index is unchanged; run the replace again.`);
      return await this.track(
        this.merges.exclusive(async () => {
          await this.buffer.flush();
          await r.staging.flush();
          await r.staging.merges.settled();
          const metas = r.staging.generations.current.views.map((v) => v.state.meta);
          await r.staging.close({ flush: false });
          for (const m of metas) this.builds.inFlight.add(m.file);
          try {
            for (const m of metas) await fs.promises.rename(path.join(stagingDir, 'segments', m.file), path.join(this.ctx.segDir, m.file));
            await fsyncDirAsync(this.ctx.segDir);
            const maxSeq = metas.reduce((a, m) => Math.max(a, m.maxSeq), 0);
            await this.commits.replaceAll(metas, Math.max(this.buffer.lastAckedSeq, maxSeq));
          } finally {
            for (const m of metas) this.builds.inFlight.delete(m.file);
          }
          this.rebuildLiveView();
          this.wal.deleteCovered(this.commits.committedSeq);
          let removed = 0;
          for (const url of before) if (!this.live.has(url)) removed++;
          const result = { pages: this.live.stats(0).pages, removed, mirrored: r.mirrored };
          this.ctx.log?.info(`index ${this.siteId}: replace ${id} committed (${result.pages} pages, ${removed} removed, ${r.mirrored} live writes carried over)`);
          return result;
        }),
      );
    } catch (err) {
      await r.staging.close({ flush: false }).catch(() => undefined);
      throw err;
    } finally {
      if (this.replacing === r) this.replacing = null;
      this.swapGate = null;
      open();
      fs.rmSync(stagingDir, { recursive: true, force: true });
    }
  }

  /** Abandons a replace: the staging index is deleted, the live index is untouched. */
  async abortReplace(id: string): Promise<void> {
    const r = this.replacement(id);
    r.committing = true;
    if (r.idleTimer) clearTimeout(r.idleTimer);
    this.replacing = null;
    while (r.mirrors.size > 0) await Promise.allSettled([...r.mirrors]);
    await r.staging.close({ flush: false });
    fs.rmSync(path.join(this.ctx.dir, REPLACE_DIR), { recursive: true, force: true });
    this.ctx.log?.info(`index ${this.siteId}: replace ${id} aborted`);
  }

  /** Whether a replace is running (the registry keeps such a store open). */
  get replaceRunning(): boolean {
    return this.replacing !== null || this.swapGate !== null;
  }

  /** The acknowledged view from the published winners (after a replace swapped them all). */
  private rebuildLiveView(): void {
    const lastUpdated = this.live.lastUpdatedAt;
    this.live.clear();
    for (const [url, w] of this.generations.published) {
      if (w.docId < 0) continue;
      const s = w.state;
      this.live.set(url, { seq: w.seq, at: s.ats[w.docId]!, firstAt: s.firstAts[w.docId]!, status: s.statuses[w.docId]! });
    }
    this.live.touch(Math.max(lastUpdated, this.opts.clock?.() ?? Date.now()));
  }

  /** Resolves once every op up to `seq` is published; triggers an early flush if needed. */
  waitSearchable(seq: number): Promise<void> {
    return this.track(this.buffer.waitSearchable(seq));
  }

  /** Calls in flight (writes, waits, flushes, merges): see {@link idle}. */
  private inFlight = 0;

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight++;
    const done = () => void this.inFlight--;
    p.then(done, done);
    return p;
  }

  /**
   * Whether nothing uses the store now: no pinned snapshot, nothing acknowledged but
   * unpublished, no write, wait, flush or merge in flight. The index registry closes only idle
   * stores when it bounds how many are open.
   */
  idle(): boolean {
    return this.inFlight === 0 && this.buffer.unpublished === 0 && this.generations.pinned === 0 && !this.replaceRunning;
  }

  /**
   * Deletes every live URL (acknowledged, published or not) for which `predicate` is true,
   * as one durable batch. Resolves with the number of URLs removed.
   */
  async deleteWhere(predicate: (url: string) => boolean): Promise<number> {
    if (this.swapGate) {
      await this.swapGate;
      return this.deleteWhere(predicate);
    }
    const urls: string[] = [];
    for (const url of this.live.urls()) if (predicate(url)) urls.push(url);
    // During a replace the staged pages that match go too (the removal applies to both).
    const r = this.replacing;
    if (r) {
      const stagedOnly: WriteOp[] = [];
      for (const url of r.staging.urls()) if (!this.live.has(url) && predicate(url)) stagedOnly.push({ op: 'delete', url });
      if (stagedOnly.length > 0) await this.writeReplace(r.id, stagedOnly);
    }
    if (urls.length === 0) return 0;
    await this.write(urls.map((url) => ({ op: 'delete', url })));
    return urls.length;
  }

  /**
   * Publishes everything acknowledged so far as new segments (built in the pool, committed in
   * the commit chain); see WriteBuffer.flush.
   */
  flush(opts: FlushOptions = {}): Promise<void> {
    return this.track(this.buffer.flush(opts));
  }

  // ------------------------------------------------------------------ the acknowledged view

  has(url: string): boolean {
    return this.live.has(url);
  }

  /**
   * The newest live op of `url` (acknowledged view), or null. `source` comes from the buffered
   * doc or one stored-row read, so this is cheap per URL but not meant for scans.
   */
  entryOf(url: string): { seq: number; source: DocSource; status: number; at: number } | null {
    const st = this.live.get(url);
    if (!st) return null;
    return { seq: st.seq, source: this.docOf(url)?.source ?? 'api', status: st.status, at: st.at };
  }

  urls(): Iterable<string> {
    return this.live.urls();
  }

  stats(): IndexStats {
    return this.live.stats(this.buffer.unpublished);
  }

  /**
   * Lists live entries (any status, published or only acknowledged) for `indexedContent`,
   * sorted by URL. Filters: `urlContains` (substring), `status` (a code like 404 or a class
   * like '4XX'), `contentType` (a DocumentType such as 'PDF').
   */
  listEntries(q: EntryListingQuery = {}): EntryListing {
    return this.live.list(
      q,
      (url) => this.docOf(url),
      (url) => {
        const p = this.buffer.pendingDoc(url);
        return p !== undefined ? (p?.documentType ?? null) : this.generations.documentTypeOf(url);
      },
    );
  }

  /** The report fields of `url`'s newest op: the buffered one, else its published row. */
  private docOf(url: string): DocMeta | null {
    const p = this.buffer.pendingDoc(url);
    return p !== undefined ? p : this.generations.docOf(url);
  }

  // ------------------------------------------------------------------ readers

  /** Pins the current generation; the caller must `release()` it (idempotent). */
  acquire(): IndexSnapshot {
    return this.generations.acquire();
  }

  get generation(): number {
    return this.generations.current.number;
  }

  /** Per-segment sizes and tombstone counts of the current generation (admin, tests, policy). */
  segments(): SegmentSummary[] {
    return this.generations.summaries();
  }

  /** The manifest generation readers currently get and the highest published seq. */
  get position(): { generation: number; committedSeq: number; lastAckedSeq: number } {
    return { generation: this.generations.current.number, committedSeq: this.commits.committedSeq, lastAckedSeq: this.buffer.lastAckedSeq };
  }

  // ------------------------------------------------------------------ merges / gc / close

  /**
   * Merges segments in the background (pool) and commits the result. `full` merges every
   * segment into one (dropping all tombstones and delete markers); otherwise the merge policy
   * chooses, repeatedly, until it selects nothing. At most one merge runs per project; writes
   * and searches never wait for it.
   */
  merge(opts: { full?: boolean } = {}): Promise<void> {
    return this.track(this.merges.merge(opts));
  }

  /** Whether a merge of this project is running now (metrics). */
  get merging(): boolean {
    return this.merges.running;
  }

  /** Whether the merge policy would merge something now (cheap; used by the merge job). */
  mergeDue(): boolean {
    return this.merges.due();
  }

  /** The last failure of background embedding, or null (see Merges.lastEmbedError). */
  embedError(): string | null {
    return this.merges.lastEmbedError();
  }

  /**
   * Deletes files nobody needs: segment files not listed by any generation in use (left by a
   * failed unlink or a crash) except builds in flight, and write-log files covered by
   * `committedSeq`. Returns how many files it removed. Referenced segments are removed
   * automatically when their last pin is released; this is the sweep behind it.
   */
  gc(): number {
    if (this.ctx.closed) return 0;
    return sweep(this.ctx.segDir, this.generations.files(), this.builds.inFlight, this.wal, this.commits.committedSeq);
  }

  /**
   * Flushes what is buffered (so a restart needs no replay), then closes the write log and
   * every segment reader. A merge in flight is abandoned (its temp file is removed at the next
   * open). Pinned snapshots must not be used after close. `flush: false` skips the flush
   * (the project is about to be deleted); the flush is given at most `timeoutMs` (5000).
   */
  async close(opts: { flush?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (this.ctx.closed) return;
    if (this.replacing && !this.replacing.committing) await this.abortReplace(this.replacing.id).catch(() => undefined);
    if (opts.flush !== false) {
      // Bounded, so that shutdown finishes in seconds: what is not flushed in time is still in
      // the write log and replayed at the next open.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), opts.timeoutMs ?? 5000)));
      try {
        const outcome = await Promise.race([this.flush().then(() => 'flushed' as const), timeout]);
        if (outcome === 'timeout') this.ctx.log?.warn(`index ${this.siteId}: flush on close timed out; the write log keeps the ops`);
      } catch (err) {
        this.ctx.log?.warn(`index ${this.siteId}: flush on close failed, the write log keeps the ops: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
    if (this.ctx.closed) return;
    this.ctx.closed = true;
    this.buffer.close();
    await this.wal.close();
    this.generations.close();
  }
}
