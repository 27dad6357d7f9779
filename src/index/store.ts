/**
 * The per-project segment store: the implementation of {@link ProjectIndex}.
 *
 * Layout of `<dataDir>/projects/<siteId>/`: `wal/` (write log), `segments/<id>.seg` (immutable
 * SQLite files), `manifest.json` (the live segment list). See docs/STORAGE.md.
 *
 * Threads: everything here runs on the main thread. Segment builds and merges run in the pool;
 * only {@link SegmentStore} publishes their result, in a serial commit step (rename the sealed
 * file, compute tombstones copy-on-write, write the manifest atomically, swap the generation).
 * The commit's file work (renames, fsyncs) runs on libuv's threadpool, so the main thread keeps
 * serving meanwhile; commits are chained (one in flight, in call order), and a commit reads
 * and changes the in-memory state only while it holds the chain, so two never interleave.
 *
 * Invariants:
 * - every op with seq <= `committedSeq` is in a published segment (or provably unneeded: a
 *   delete of a URL no segment holds); every acknowledged op with a larger seq is in the write
 *   log and in `buffer`/`building`;
 * - `published` maps each URL to its highest-seq op over the current generation's segments;
 *   every other row of that URL is dead in that generation (contract.ts liveness rule);
 * - `live` maps each URL with a live entry (acknowledged view: published overlaid by pending).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import type { DocSource, IndexOp, PageDoc } from '../types.js';
import type {
  EntryListing,
  EntryListingQuery,
  EntryListingRow,
  FlushOptions,
  IndexSnapshot,
  IndexStats,
  LiveSegment,
  ProjectIndex,
  SegmentSummary,
  WriteOp,
} from './contract.js';
import { readManifest, writeManifest, fsyncDirAsync, safeReaddir, type Manifest, type ManifestSegment, MANIFEST_FORMAT } from './manifest.js';
import { selectMerges, type MergePolicyOptions } from './merge-policy.js';
import { FIELDS, type SegmentDelete, type SegmentInfo } from './segment-format.js';
import { SegmentReader, readRowColumns, type RowColumns } from './segment-reader.js';
import { stallForever, type BuildSegmentTask, type PausePoint, type TaskPool } from './tasks.js';
import { WriteLog } from './write-log.js';

const F = FIELDS.length;

/** A flush is split into parallel builds only when each part gets at least this many upserts. */
export const MIN_PART_DOCS = 500;

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

/**
 * Segment count up to which policy merges yield to segment builds that are behind (a bulk
 * import is flowing). A merge re-copies every row and rebuilds FTS5 over every merged document
 * (≈0.27 ms of CPU per document against ≈0.55 for its build), and during an import it takes a
 * pool thread the builds need, so merging while the import flows costs import rate; deferred,
 * the same merges run once the import stops. Bounded: every open segment costs each search
 * thread a reader with its own vocabulary and page cache (measured before the reader caches
 * were capped: 70 segments at the end of a 100k import took the first searches to +660 MB RSS).
 */
export const MAX_SEGMENTS_DEFERRING_MERGES = 32;

/**
 * A flush that leaves this many segments or more runs the merge policy at once (unless builds
 * are behind) instead of waiting for the merge job's minute tick.
 */
export const MERGE_ON_FLUSH_SEGMENTS = 16;

/** Default of {@link SegmentStoreOptions.maxBufferedDocs}; the ingest routes hold writers at the same bound. */
export const DEFAULT_MAX_BUFFERED_DOCS = 20_000;

/** The few logger methods the store uses; compatible with console and most loggers. */
export interface IndexLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

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
  mergePolicy?: Partial<MergePolicyOptions>;
  /**
   * Buffered (unpublished) URLs that trigger an early flush at half this size and make writers
   * wait for the running flush at this size (default 20 000). Bounds memory during bulk imports.
   * The size of a bulk flush is the size of the segments an import makes (two per flush, see
   * parallelBuilds): 10 000-document flushes make ~20 segments per 100k documents, few enough
   * that no merge has to run while the import flows (a merge re-copies rows and rebuilds FTS5:
   * ≈0.27 ms of CPU per merged document). Measured peak of one writeSegment over the
   * documentation corpus: +51 MB for 1 250 documents, +77 MB for 2 500, +90 MB for 5 000.
   */
  maxBufferedDocs?: number;
  /**
   * The same bound on the buffered documents' text (UTF-16 code units of url, title, content,
   * description, headings, keywords; default 128 Mi, about 20 000 pages of the documentation
   * corpus): a build worker's memory grows with the text it indexes, and a few huge pages must
   * not build as one segment.
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
}

/** Options of {@link SegmentStore.flush}. */
export type { FlushOptions };

/** One published segment file and its immutable per-row columns. */
interface SegState extends RowColumns {
  id: string;
  path: string;
  meta: ManifestSegment;
  reader: SegmentReader;
  /** Generations (current or pinned) that list this segment. */
  genRefs: number;
}

/** A segment as one generation sees it; `dead` is shared between generations until changed. */
interface SegView {
  state: SegState;
  dead: Uint8Array;
  liveRows: number;
  liveCount: number;
  liveLengths: number[];
}

interface Generation {
  number: number;
  views: SegView[];
  totalDocs: number;
  totalLengths: number[];
  liveSegments: LiveSegment[];
  pins: number;
  retired: boolean;
}

/** The winning (highest-seq) op of a URL among published segments; docId -1 = delete marker. */
interface Winner {
  seq: number;
  state: SegState;
  docId: number;
}

interface UrlState {
  seq: number;
  at: number;
  firstAt: number;
  status: number;
}

/**
 * What reports need of an acknowledged, unpublished upsert. The document itself stays in the
 * write log (the build task reads it from there), so the main thread's memory does not grow
 * with the size of the pages waiting to be published.
 */
type DocMeta = Pick<PageDoc, 'title' | 'documentType' | 'contentGroup' | 'source' | 'message'>;

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

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}XX`;
}

function sumLengths(state: SegState, dead: Uint8Array): { liveRows: number; liveCount: number; liveLengths: number[] } {
  const liveLengths = new Array<number>(F).fill(0);
  let liveRows = 0;
  let liveCount = 0;
  for (let i = 0; i < state.urls.length; i++) {
    if (dead[i]) continue;
    liveRows++;
    if (state.statuses[i] !== 200) continue;
    liveCount++;
    for (let f = 0; f < F; f++) liveLengths[f]! += state.lengths[i * F + f]!;
  }
  return { liveRows, liveCount, liveLengths };
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
  private readonly dir: string;
  private readonly segDir: string;
  private readonly pool: TaskPool;
  private readonly refreshMs: number;
  private readonly clock: () => number;
  private readonly log: IndexLogger | undefined;
  private readonly defaultLanguage: () => string;
  private readonly mergePolicy: Partial<MergePolicyOptions>;
  private readonly pauseIn: PausePoint | undefined;
  private readonly maxBufferedDocs: number;
  private readonly maxBufferedBytes: number;
  private readonly parallelBuilds: number;
  private readonly mergeOnFlush: boolean;
  private mergeQueued = false;
  private wal!: WriteLog;

  private gen!: Generation;
  private readonly states = new Map<string, SegState>();
  private readonly published = new Map<string, Winner>();
  private readonly live = new Map<string, UrlState>();
  private readonly statusCounts = new Map<number, number>();
  private buffer = new Map<string, Pending>();
  /** Sum of `bytes` of the buffered upserts. */
  private bufferedBytes = 0;
  private building: Map<string, Pending> | null = null;
  /**
   * Whether the last flush took at least half a buffer (an early, size-triggered flush: a bulk
   * import is flowing) rather than what a refresh interval gathered.
   */
  private lastFlushBulk = false;
  private waiters: Waiter[] = [];
  /** Temp files of builds/merges in flight: gc must not touch them. */
  private readonly inFlight = new Set<string>();

  private nextSeq = 1;
  private lastAckedSeq = 0;
  private committedSeq = 0;
  private lastUpdatedAt = 0;
  private refreshTimer: NodeJS.Timeout | null = null;
  private flushChain: Promise<void> = Promise.resolve();
  private mergeChain: Promise<void> = Promise.resolve();
  /** Commits in flight, in order: a commit starts when the previous one has finished. */
  private commitChain: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(opts: SegmentStoreOptions) {
    this.siteId = opts.siteId;
    this.dir = opts.dir;
    this.segDir = path.join(opts.dir, 'segments');
    this.pool = opts.pool;
    this.refreshMs = opts.refreshMs ?? 1000;
    this.clock = opts.clock ?? Date.now;
    this.log = opts.log;
    const lang = opts.defaultLanguage ?? 'en';
    this.defaultLanguage = typeof lang === 'function' ? lang : () => lang;
    this.mergePolicy = opts.mergePolicy ?? {};
    this.pauseIn = opts.pauseIn;
    this.maxBufferedDocs = opts.maxBufferedDocs ?? DEFAULT_MAX_BUFFERED_DOCS;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 128 * 1024 * 1024;
    this.parallelBuilds = Math.max(1, opts.parallelBuilds ?? 2);
    this.mergeOnFlush = opts.mergeOnFlush ?? true;
  }

  /**
   * Opens (or creates) a project's store: reads the manifest, deletes crash leftovers (temp
   * manifests, unlisted segment files), rebuilds tombstones from the segments, replays the write
   * log past `committedSeq` and flushes it. Main thread.
   */
  static async open(opts: SegmentStoreOptions): Promise<SegmentStore> {
    const store = new SegmentStore(opts);
    await store.recover();
    return store;
  }

  // ------------------------------------------------------------------ open / recovery

  private async recover(): Promise<void> {
    fs.mkdirSync(this.segDir, { recursive: true });
    const manifest = readManifest(this.dir);
    const listed = new Set(manifest.segments.map((s) => s.file));
    for (const name of safeReaddir(this.segDir)) {
      // Unlisted = a build or merge that never committed (or a file a crash kept from gc).
      if (!listed.has(name)) fs.rmSync(path.join(this.segDir, name), { force: true });
    }
    const states: SegState[] = [];
    for (const meta of manifest.segments) states.push(this.loadState(meta));

    // Liveness from scratch: the highest seq per URL wins.
    for (const s of states) {
      for (let i = 0; i < s.urls.length; i++) this.considerWinner(s.urls[i]!, s.seqs[i]!, s, i);
      for (const d of s.deletes) this.considerWinner(d.url, d.seq, s, -1);
    }
    const views: SegView[] = states.map((s) => {
      const dead = new Uint8Array(s.urls.length);
      for (let i = 0; i < s.urls.length; i++) {
        const w = this.published.get(s.urls[i]!)!;
        if (w.state !== s || w.docId !== i) dead[i] = 1;
      }
      return { state: s, dead, ...sumLengths(s, dead) };
    });
    for (const s of states) {
      for (let i = 0; i < s.ats.length; i++) this.lastUpdatedAt = Math.max(this.lastUpdatedAt, s.ats[i]!);
      for (const d of s.deletes) this.lastUpdatedAt = Math.max(this.lastUpdatedAt, d.at);
    }
    for (const [url, w] of this.published) {
      const s = w.state;
      if (w.docId < 0) continue;
      const st: UrlState = { seq: w.seq, at: s.ats[w.docId]!, firstAt: s.firstAts[w.docId]!, status: s.statuses[w.docId]! };
      this.setLive(url, st);
    }
    this.committedSeq = manifest.committedSeq;
    this.lastAckedSeq = manifest.committedSeq;
    let maxSeq = manifest.committedSeq;
    for (const s of states) maxSeq = Math.max(maxSeq, s.meta.maxSeq);
    this.installGeneration(this.makeGeneration(manifest.generation, views));

    const { log, ops, skipped } = WriteLog.open(path.join(this.dir, 'wal'));
    this.wal = log;
    if (skipped > 0) this.log?.warn(`index ${this.siteId}: ignored ${skipped} torn or corrupt write-log line(s) (never acknowledged)`);
    for (const op of ops) {
      maxSeq = Math.max(maxSeq, op.seq);
      if (op.seq > this.committedSeq) this.apply(op);
    }
    this.nextSeq = maxSeq + 1;
    if (this.buffer.size > 0) {
      try {
        await this.flush();
      } catch (err) {
        // The ops stay in the write log and the buffer; the next refresh retries.
        this.log?.error(`index ${this.siteId}: flush after recovery failed: ${(err as Error).message}`);
        this.scheduleRefresh();
      }
    } else {
      this.wal.deleteCovered(this.committedSeq);
    }
  }

  private loadState(meta: ManifestSegment): SegState {
    const p = path.join(this.segDir, meta.file);
    if (!fs.existsSync(p)) throw new AppError('internal', `Segment ${meta.file} of index ${this.siteId} is listed in the manifest but missing.`);
    const reader = SegmentReader.open(p);
    let cols: RowColumns;
    try {
      cols = readRowColumns(p, reader.info.docCount);
    } catch (err) {
      reader.close();
      throw err;
    }
    const s: SegState = { id: meta.id, path: p, meta, reader, ...cols, genRefs: 0 };
    this.states.set(s.id, s);
    return s;
  }

  private considerWinner(url: string, seq: number, state: SegState, docId: number): void {
    const w = this.published.get(url);
    if (!w || w.seq < seq) this.published.set(url, { seq, state, docId });
  }

  // ------------------------------------------------------------------ write path

  /**
   * Appends `ops` to the write log (one line, so all or nothing), fsyncs (shared with concurrent
   * writers), applies them to the acknowledged view and resolves with the last op's seq.
   * Duplicate URLs in one batch: the last wins (higher seq).
   */
  write(ops: WriteOp[]): Promise<number> {
    if (this.closed) return Promise.reject(new AppError('internal', `Index ${this.siteId} is closed.`));
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
    const seq = this.nextSeq;
    this.nextSeq += ops.length;
    const at = this.clock();
    const lastSeq = seq + ops.length - 1;
    return this.wal
      .append({ seq, at, ops }, () => {
        ops.forEach((op, i) => {
          this.apply(op.op === 'upsert' ? { op: 'upsert', seq: seq + i, at, doc: op.doc } : { op: 'delete', seq: seq + i, at, url: op.url });
        });
        if (this.waiters.some((w) => w.seq <= this.lastAckedSeq) || this.bufferFull(0.5)) this.flushSoon();
        else this.scheduleRefresh();
      })
      .then(() => lastSeq);
  }

  /** Applies one durable op to the acknowledged view and the buffer (seq order). */
  private apply(op: IndexOp): void {
    const url = op.op === 'upsert' ? op.doc.url : op.url;
    const prev = this.live.get(url);
    if (op.op === 'upsert') {
      const firstAt = prev ? prev.firstAt : op.at;
      this.setLive(url, { seq: op.seq, at: op.at, firstAt, status: op.doc.status });
      this.dropBuffered(url);
      const bytes = textBytes(op.doc);
      this.bufferedBytes += bytes;
      this.buffer.set(url, { op: 'upsert', seq: op.seq, at: op.at, firstAt, meta: metaOf(op.doc), bytes });
    } else {
      if (prev) this.setLive(url, null);
      this.dropBuffered(url);
      this.buffer.set(url, { op: 'delete', seq: op.seq, at: op.at, url });
    }
    this.lastAckedSeq = Math.max(this.lastAckedSeq, op.seq);
    this.lastUpdatedAt = Math.max(this.lastUpdatedAt, op.at);
  }

  /** Removes `url`'s op from the buffer, keeping {@link bufferedBytes} in step. */
  private dropBuffered(url: string): void {
    const p = this.buffer.get(url);
    if (!p) return;
    if (p.op === 'upsert') this.bufferedBytes -= p.bytes;
    this.buffer.delete(url);
  }

  /** Whether the buffer is big enough to flush now rather than at the next refresh. */
  private bufferFull(fraction: number): boolean {
    return this.buffer.size >= this.maxBufferedDocs * fraction || this.bufferedBytes >= this.maxBufferedBytes * fraction;
  }

  private setLive(url: string, st: UrlState | null): void {
    const prev = this.live.get(url);
    if (prev) this.statusCounts.set(prev.status, (this.statusCounts.get(prev.status) ?? 1) - 1);
    if (st) {
      this.live.set(url, st);
      this.statusCounts.set(st.status, (this.statusCounts.get(st.status) ?? 0) + 1);
    } else {
      this.live.delete(url);
    }
  }

  /** Resolves once every op up to `seq` is published; triggers an early flush if needed. */
  waitSearchable(seq: number): Promise<void> {
    if (seq <= this.committedSeq) return Promise.resolve();
    if (this.closed) return Promise.reject(new AppError('internal', `Index ${this.siteId} is closed.`));
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      if (seq <= this.lastAckedSeq) this.flushSoon();
    });
  }

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
    return this.live.keys();
  }

  stats(): IndexStats {
    const byClass: Record<string, number> = { '3XX': 0, '4XX': 0, '5XX': 0, '8XX': 0 };
    for (const [status, n] of this.statusCounts) {
      if (n === 0 || status === 200) continue;
      const c = statusClass(status);
      byClass[c] = (byClass[c] ?? 0) + n;
    }
    return {
      pages: this.statusCounts.get(200) ?? 0,
      byClass,
      pending: this.buffer.size + (this.building?.size ?? 0),
      lastUpdated: this.lastUpdatedAt > 0 ? new Date(this.lastUpdatedAt).toISOString() : null,
    };
  }

  /**
   * Deletes every live URL (acknowledged, published or not) for which `predicate` is true,
   * as one durable batch. Resolves with the number of URLs removed.
   */
  async deleteWhere(predicate: (url: string) => boolean): Promise<number> {
    const urls: string[] = [];
    for (const url of this.live.keys()) if (predicate(url)) urls.push(url);
    if (urls.length === 0) return 0;
    await this.write(urls.map((url) => ({ op: 'delete', url })));
    return urls.length;
  }

  /**
   * Lists live entries (any status, published or only acknowledged) for `indexedContent`,
   * sorted by URL. Filters: `urlContains` (substring), `status` (a code like 404 or a class
   * like '4XX'), `contentType` (a DocumentType such as 'PDF').
   */
  listEntries(q: EntryListingQuery = {}): EntryListing {
    const offset = q.offset ?? 0;
    const limit = q.limit ?? 50;
    const statusFilter = q.status === undefined || q.status === null ? null : String(q.status).toUpperCase();
    const typeFilter = q.contentType ? q.contentType.toUpperCase() : null;
    const matches: string[] = [];
    for (const [url, st] of this.live) {
      if (q.urlContains && !url.includes(q.urlContains)) continue;
      if (statusFilter !== null) {
        const ok = statusFilter.endsWith('XX') ? statusClass(st.status) === statusFilter : String(st.status) === statusFilter;
        if (!ok) continue;
      }
      if (typeFilter !== null && this.documentTypeOf(url) !== typeFilter) continue;
      matches.push(url);
    }
    matches.sort();
    const rows: EntryListingRow[] = [];
    for (const url of matches.slice(offset, offset + limit)) {
      const st = this.live.get(url)!;
      const doc = this.docOf(url);
      rows.push({
        url,
        title: doc?.title ?? '',
        contentType: doc?.documentType ?? 'HTML',
        status: st.status,
        ...(doc?.message !== undefined ? { message: doc.message } : {}),
        contentGroup: doc?.contentGroup ?? '',
        source: doc?.source ?? 'api',
        indexedAt: new Date(st.firstAt).toISOString(),
        updatedAt: new Date(st.at).toISOString(),
      });
    }
    return { total: matches.length, rows };
  }

  private pendingOf(url: string): Pending | undefined {
    return this.buffer.get(url) ?? this.building?.get(url);
  }

  private docOf(url: string): DocMeta | null {
    const p = this.pendingOf(url);
    if (p) return p.op === 'upsert' ? p.meta : null;
    const w = this.published.get(url);
    if (!w || w.docId < 0) return null;
    return w.state.reader.entry(w.docId).doc;
  }

  private documentTypeOf(url: string): string | null {
    const p = this.pendingOf(url);
    if (p) return p.op === 'upsert' ? p.meta.documentType : null;
    const w = this.published.get(url);
    if (!w || w.docId < 0) return null;
    // docValues() is loaded once per segment and shared with the search engine.
    return w.state.reader.docValues().docType[w.docId] ?? null;
  }

  // ------------------------------------------------------------------ readers

  /** Pins the current generation; the caller must `release()` it (idempotent). */
  acquire(): IndexSnapshot {
    const g = this.gen;
    g.pins++;
    let released = false;
    return {
      generation: g.number,
      segments: g.liveSegments,
      totalDocs: g.totalDocs,
      totalLengths: g.totalLengths,
      release: () => {
        if (released) return;
        released = true;
        g.pins--;
        this.maybeRetire(g);
      },
    };
  }

  get generation(): number {
    return this.gen.number;
  }

  /** Per-segment sizes and tombstone counts of the current generation (admin, tests, policy). */
  segments(): SegmentSummary[] {
    return this.gen.views.map((v) => ({
      id: v.state.id,
      file: v.state.meta.file,
      docCount: v.state.meta.docCount,
      deadCount: v.state.meta.docCount - v.liveRows,
      deleteCount: v.state.meta.deleteCount,
      liveSearchable: v.liveCount,
      bytes: v.state.meta.bytes,
      minSeq: v.state.meta.minSeq,
      maxSeq: v.state.meta.maxSeq,
    }));
  }

  /** The manifest generation readers currently get and the highest published seq. */
  get position(): { generation: number; committedSeq: number; lastAckedSeq: number } {
    return { generation: this.gen.number, committedSeq: this.committedSeq, lastAckedSeq: this.lastAckedSeq };
  }

  private makeGeneration(number: number, views: SegView[]): Generation {
    const totalLengths = new Array<number>(F).fill(0);
    let totalDocs = 0;
    for (const v of views) {
      totalDocs += v.liveCount;
      for (let f = 0; f < F; f++) totalLengths[f]! += v.liveLengths[f]!;
    }
    const liveSegments: LiveSegment[] = views.map((v) => ({
      id: v.state.id,
      reader: v.state.reader,
      dead: v.dead,
      liveCount: v.liveCount,
      liveLengths: v.liveLengths,
    }));
    return { number, views, totalDocs, totalLengths, liveSegments, pins: 0, retired: false };
  }

  private installGeneration(g: Generation): void {
    for (const v of g.views) v.state.genRefs++;
    const old = this.gen as Generation | undefined;
    this.gen = g;
    if (old) this.maybeRetire(old);
  }

  /** Drops a generation nobody uses; a segment no generation lists is closed and deleted (GC). */
  private maybeRetire(g: Generation): void {
    if (g === this.gen || g.pins > 0 || g.retired) return;
    g.retired = true;
    for (const v of g.views) {
      if (--v.state.genRefs > 0) continue;
      this.states.delete(v.state.id);
      v.state.reader.close();
      // After close() the folder may be gone or reused (drop/reopen): leave files alone.
      if (!this.closed) fs.rmSync(v.state.path, { force: true });
    }
  }

  // ------------------------------------------------------------------ flush (refresh)

  private scheduleRefresh(): void {
    if (this.refreshTimer || this.closed || this.buffer.size === 0) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.flush().catch((err: Error) => {
        this.log?.error(`index ${this.siteId}: refresh failed: ${err.message}`);
        this.scheduleRefresh();
      });
    }, this.refreshMs);
    this.refreshTimer.unref();
  }

  private flushSoon(): void {
    this.flush().catch((err: Error) => this.log?.error(`index ${this.siteId}: flush failed: ${err.message}`));
  }

  /**
   * Publishes everything acknowledged so far as one new segment (built in the pool, committed
   * here). Flushes run one at a time; a call made while one runs waits for it and then flushes
   * what arrived meanwhile. `opts.minPartDocs` lowers the part size from which this flush is
   * built as parallel parts (default {@link MIN_PART_DOCS}): a caller that knows nothing more
   * is coming (a finished crawl) has both pool threads build its last documents.
   */
  flush(opts: FlushOptions = {}): Promise<void> {
    const p = this.flushChain.then(() => this.flushOnce(opts));
    this.flushChain = p.catch(() => undefined);
    return p;
  }

  private async flushOnce(opts: FlushOptions = {}): Promise<void> {
    if (this.refreshTimer) {
      clearTimeout(this.refreshTimer);
      this.refreshTimer = null;
    }
    // After close the write log alone keeps unflushed ops (replayed at the next open).
    if (this.buffer.size === 0 || this.closed) return;
    const upTo = this.lastAckedSeq;
    this.lastFlushBulk = this.bufferFull(0.5);
    const batch = this.buffer;
    const batchBytes = this.bufferedBytes;
    this.buffer = new Map();
    this.bufferedBytes = 0;
    this.building = batch;
    this.wal.rotate();
    // The worker reads the upserts from the write log by seq; only seqs cross threads.
    const upserts: Array<{ seq: number; firstAt: number; bytes: number }> = [];
    const deletes: SegmentDelete[] = [];
    for (const p of batch.values()) {
      if (p.op === 'upsert') upserts.push({ seq: p.seq, firstAt: p.firstAt, bytes: p.bytes });
      // A delete marker is only needed while some published row of the URL exists.
      else if ((this.published.get(p.url)?.docId ?? -1) >= 0) deletes.push({ seq: p.seq, at: p.at, url: p.url });
    }
    upserts.sort((a, b) => a.seq - b.seq);
    const built: SegState[] = [];
    try {
      if (upserts.length > 0 || deletes.length > 0) {
        const logFiles = this.wal.filePaths();
        // A bulk flush is built as several segments at once (URLs are unique in the buffer, so
        // the parts are disjoint) and published by one commit: a build is the ingest
        // bottleneck, and the pool has a thread per core.
        const minPart = Math.max(1, opts.minPartDocs ?? MIN_PART_DOCS);
        const parts = splitBySize(upserts, Math.min(this.parallelBuilds, Math.floor(upserts.length / minPart)));
        const results = await Promise.allSettled(
          parts.map((part, k) => {
            const id = `${String(upTo).padStart(12, '0')}-${randomBytes(4).toString('hex')}`;
            const task: Omit<BuildSegmentTask, 'path' | 'defaultLanguage' | 'pauseIn'> = {
              task: 'build-segment',
              logFiles,
              seqs: part.map((u) => u.seq),
              firstAts: part.map((u) => u.firstAt),
              deletes: k === 0 ? deletes : [],
            };
            return this.buildAndSeal(id, task);
          }),
        );
        for (const r of results) if (r.status === 'fulfilled') built.push(r.value);
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      }
      await this.commit(built, [], upTo);
    } catch (err) {
      // Built but not published (another part or the commit failed): close and delete.
      for (const st of built) if (st.genRefs === 0) this.discard(st);
      // Nothing was published: give the ops back to the buffer (newer buffered ops win).
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
      const failed = this.waiters.filter((w) => w.seq <= upTo);
      this.waiters = this.waiters.filter((w) => w.seq > upTo);
      for (const w of failed) w.reject(err);
      throw err;
    }
    this.building = null;
    const done = this.waiters.filter((w) => w.seq <= this.committedSeq);
    this.waiters = this.waiters.filter((w) => w.seq > this.committedSeq);
    for (const w of done) w.resolve();
    this.wal.deleteCovered(this.committedSeq);
    this.scheduleRefresh();
    this.mergeAfterFlush();
  }

  /**
   * Once a flush leaves {@link MERGE_ON_FLUSH_SEGMENTS} or more segments, runs the merge
   * policy right away instead of waiting for the merge job's minute tick: a bulk import
   * otherwise ended with 35–52 segments, and every open segment costs each search thread a
   * reader. Below that count merges stay with the job. While builds are behind (the import
   * still flows) nothing starts here: the flush that publishes the import's last documents
   * starts the merges. One queued run at a time.
   */
  private mergeAfterFlush(): void {
    if (!this.mergeOnFlush || this.mergeQueued || this.closed) return;
    if (this.gen.views.length < MERGE_ON_FLUSH_SEGMENTS || !this.mergeDue()) return;
    this.mergeQueued = true;
    this.merge()
      .catch((err: Error) => this.log?.error(`index ${this.siteId}: merge after flush failed: ${err.message}`))
      .finally(() => (this.mergeQueued = false));
  }

  /** Forgets a segment that was built and opened but never published, and deletes its file. */
  private discard(st: SegState): void {
    this.states.delete(st.id);
    st.reader.close();
    if (!this.closed) fs.rmSync(st.path, { force: true });
  }

  /**
   * Runs a build/merge task in the pool writing `<id>.seg.tmp`, then renames it into place and
   * opens it. The file is sealed (fsynced, closed) by writeSegment before the task returns.
   * Both names stay in {@link inFlight} until the segment is a known state: the rename and the
   * directory fsync are awaited, and gc may run in between.
   */
  private async buildAndSeal(id: string, task: object): Promise<SegState> {
    const file = `${id}.seg`;
    const tmp = path.join(this.segDir, `${file}.tmp`);
    this.inFlight.add(`${file}.tmp`);
    this.inFlight.add(file);
    let info: SegmentInfo;
    try {
      info = (await this.pool.run({
        ...task,
        path: tmp,
        defaultLanguage: this.defaultLanguage(),
        ...(this.pauseIn ? { pauseIn: this.pauseIn } : {}),
      })) as SegmentInfo;
      if (this.closed) throw new AppError('internal', `Index ${this.siteId} closed during a segment build.`);
      await fs.promises.rename(tmp, path.join(this.segDir, file));
      await fsyncDirAsync(this.segDir);
      if (this.closed) throw new AppError('internal', `Index ${this.siteId} closed during a segment build.`);
      const meta: ManifestSegment = {
        id,
        file,
        docCount: info.docCount,
        searchableCount: info.searchableCount,
        deleteCount: info.deleteCount,
        minSeq: info.minSeq,
        maxSeq: info.maxSeq,
        bytes: info.bytes,
      };
      return this.loadState(meta);
    } catch (err) {
      // Never listed by a manifest: neither name is needed.
      fs.rmSync(tmp, { force: true });
      fs.rmSync(path.join(this.segDir, file), { force: true });
      throw err;
    } finally {
      this.inFlight.delete(`${file}.tmp`);
      this.inFlight.delete(file);
    }
  }

  // ------------------------------------------------------------------ commit (serial)

  /**
   * Publishes `added` (a flush or merge result) and unpublishes `removed` (merge sources) as
   * one new generation, after every commit called before it. Resolves once the new manifest is
   * durable and the generation installed; `committedSeq` never moves back (a merge passes the
   * value it saw before a flush's commit that finished first).
   */
  private commit(added: SegState[], removed: SegState[], committedSeq: number): Promise<void> {
    const p = this.commitChain.then(() => this.commitNow(added, removed, committedSeq));
    this.commitChain = p.catch(() => undefined);
    return p;
  }

  /**
   * One commit, holding the chain: tombstones are computed on copies of the current
   * generation, the manifest is written (off the main thread), and only then is in-memory
   * state changed, so a failed manifest write changes nothing. Nothing else changes the
   * generation or `published` while the write is awaited (only commits do).
   */
  private async commitNow(added: SegState[], removed: SegState[], seqArg: number): Promise<void> {
    if (this.closed) throw new AppError('internal', `Index ${this.siteId} is closed.`);
    const committedSeq = Math.max(seqArg, this.committedSeq);
    const prev = this.gen;
    const removedSet = new Set(removed);
    const views = new Map<SegState, SegView>();
    for (const v of prev.views) if (!removedSet.has(v.state)) views.set(v.state, { ...v });
    const copied = new Set<SegState>();
    const kill = (state: SegState, docId: number) => {
      const v = views.get(state);
      if (!v) return;
      if (!copied.has(state)) {
        // Copy-on-write: generations still pinned keep seeing the old bitmap and sums.
        v.dead = v.dead.slice();
        v.liveLengths = v.liveLengths.slice();
        copied.add(state);
      }
      if (v.dead[docId]) return;
      v.dead[docId] = 1;
      v.liveRows--;
      if (state.statuses[docId] === 200) {
        v.liveCount--;
        for (let f = 0; f < F; f++) v.liveLengths[f]! -= state.lengths[docId * F + f]!;
      }
    };
    const changes: Array<[string, Winner | null]> = [];
    // Winners decided in this commit (several added segments of one flush see each other's).
    const decided = new Map<string, Winner>();
    for (const seg of added) {
      const n = seg.urls.length;
      const view: SegView = { state: seg, dead: new Uint8Array(n), liveRows: 0, liveCount: 0, liveLengths: [] };
      views.set(seg, view);
      copied.add(seg);
      const repointOrWin = (url: string, seq: number, docId: number): boolean => {
        const w = decided.get(url) ?? this.published.get(url);
        if (!w || w.seq < seq) {
          if (w && w.docId >= 0) kill(w.state, w.docId);
          const win = { seq, state: seg, docId };
          decided.set(url, win);
          changes.push([url, win]);
          return true;
        }
        // A merge copy of the winning row (same seq) takes over from its source.
        if (w.seq === seq && removedSet.has(w.state)) {
          const win = { seq, state: seg, docId };
          decided.set(url, win);
          changes.push([url, win]);
          return true;
        }
        return false;
      };
      for (let i = 0; i < n; i++) if (!repointOrWin(seg.urls[i]!, seg.seqs[i]!, i)) view.dead[i] = 1;
      for (const d of seg.deletes) repointOrWin(d.url, d.seq, -1);
    }
    // After every added segment is placed: a later one may have killed rows of an earlier one.
    for (const seg of added) {
      const view = views.get(seg)!;
      Object.assign(view, sumLengths(seg, view.dead));
    }
    // Delete markers a merge dropped (no older row left anywhere): the URL leaves `published`.
    const addedUrls = new Set(added.flatMap((seg) => seg.deletes.map((d) => d.url)));
    for (const s of removed) {
      for (const d of s.deletes) {
        const w = this.published.get(d.url);
        if (w && w.state === s && w.docId < 0 && !addedUrls.has(d.url)) changes.push([d.url, null]);
      }
    }
    const nextViews = [...views.values()];
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      generation: prev.number + 1,
      committedSeq,
      segments: nextViews.map((v) => v.state.meta),
    };
    if (this.pauseIn === 'commit' && added.length > 0) stallForever('commit');
    await writeManifest(this.dir, manifest, this.pauseIn === 'manifest' ? () => stallForever('manifest') : undefined);
    // Closed meanwhile: the manifest is durable (the next open reads it), but the readers the
    // new generation would use are closed.
    if (this.closed) throw new AppError('internal', `Index ${this.siteId} closed during a commit.`);
    for (const [url, w] of changes) {
      if (w) this.published.set(url, w);
      else this.published.delete(url);
    }
    this.committedSeq = committedSeq;
    this.installGeneration(this.makeGeneration(manifest.generation, nextViews));
  }

  // ------------------------------------------------------------------ merges

  /**
   * Merges segments in the background (pool) and commits the result. `full` merges every
   * segment into one (dropping all tombstones and delete markers); otherwise the merge policy
   * chooses, repeatedly, until it selects nothing. At most one merge runs per project; writes
   * and searches never wait for it.
   */
  merge(opts: { full?: boolean } = {}): Promise<void> {
    const p = this.mergeChain.then(() => this.mergeNow(opts.full === true));
    this.mergeChain = p.catch(() => undefined);
    return p;
  }

  /** Whether the merge policy would merge something now (cheap; used by the merge job). */
  mergeDue(): boolean {
    return !this.buildsBehind() && this.selectMerges().length > 0;
  }

  /**
   * Whether segment builds are behind the writers (a bulk import is flowing): at least half a
   * buffer's worth of acknowledged documents is unpublished, in a running build or in the
   * buffer, or the last flush was a bulk one and documents arrived since. Policy merges wait
   * then (the flush that catches up — the import's last, smaller flush — or the next merge job
   * tick tries again): on a small machine a merge takes the CPU and the pool thread the builds
   * need, and the builds are what held-back writers wait for. Bounded by
   * {@link MAX_SEGMENTS_DEFERRING_MERGES}, so a never-ending import cannot grow the segment
   * count without limit.
   */
  private buildsBehind(): boolean {
    if (this.gen.views.length >= MAX_SEGMENTS_DEFERRING_MERGES) return false;
    if (this.lastFlushBulk && this.buffer.size > 0) return true;
    let docs = this.buffer.size;
    let bytes = this.bufferedBytes;
    if (this.building !== null) {
      docs += this.building.size;
      for (const p of this.building.values()) if (p.op === 'upsert') bytes += p.bytes;
    }
    return docs >= this.maxBufferedDocs / 2 || bytes >= this.maxBufferedBytes / 2;
  }

  private selectMerges(): string[][] {
    return selectMerges(
      this.gen.views.map((v) => ({
        id: v.state.id,
        bytes: v.state.meta.bytes,
        docCount: v.state.meta.docCount,
        deadCount: v.state.meta.docCount - v.liveRows,
        deleteCount: v.state.meta.deleteCount,
      })),
      this.mergePolicy,
    );
  }

  private async mergeNow(full: boolean): Promise<void> {
    if (full) {
      const views = this.gen.views;
      const needed = views.length > 1 || views.some((v) => v.liveRows < v.state.urls.length || v.state.deletes.length > 0);
      if (needed && !this.closed) await this.mergeSegments(views.map((v) => v.state.id));
      return;
    }
    // Bounded: each round shrinks the segment count or rewrites a tombstone-heavy segment.
    for (let round = 0; round < 100 && !this.closed; round++) {
      if (this.buildsBehind()) return;
      const selected = this.selectMerges()[0];
      if (!selected) return;
      await this.mergeSegments(selected);
    }
  }

  private async mergeSegments(ids: string[]): Promise<void> {
    const g = this.gen;
    const idSet = new Set(ids);
    const sources = g.views.filter((v) => idSet.has(v.state.id));
    if (sources.length !== ids.length || sources.length === 0) return;
    // Pin the generation: the source files must outlive the worker reading them.
    g.pins++;
    try {
      const sourceStates = new Set(sources.map((v) => v.state));
      const taskSources = sources.map((v) => {
        const liveIds: number[] = [];
        for (let i = 0; i < v.dead.length; i++) if (!v.dead[i]) liveIds.push(i);
        return { path: v.state.path, liveIds };
      });
      // Keep a winning delete marker only if an older row of its URL lives outside the merge.
      const candidates = new Map<string, SegmentDelete>();
      for (const v of sources) {
        for (const d of v.state.deletes) {
          const w = this.published.get(d.url);
          if (w && w.state === v.state && w.docId < 0) candidates.set(d.url, d);
        }
      }
      const keep: SegmentDelete[] = [];
      if (candidates.size > 0) {
        const needed = new Set<string>();
        for (const v of g.views) {
          if (sourceStates.has(v.state)) continue;
          const s = v.state;
          for (let i = 0; i < s.urls.length; i++) {
            const d = candidates.get(s.urls[i]!);
            if (d && s.seqs[i]! < d.seq) needed.add(d.url);
          }
        }
        for (const url of needed) keep.push(candidates.get(url)!);
      }
      const liveTotal = taskSources.reduce((a, s) => a + s.liveIds.length, 0);
      let state: SegState | null = null;
      const started = performance.now();
      if (liveTotal > 0 || keep.length > 0) {
        const id = `m${String(this.committedSeq).padStart(12, '0')}-${randomBytes(4).toString('hex')}`;
        state = await this.buildAndSeal(id, { task: 'merge-segments', sources: taskSources, deletes: keep });
      }
      if (this.closed) return;
      // Sources still present? (Only merges remove segments and merges are serial, so yes.)
      await this.commit(state ? [state] : [], [...sourceStates], this.committedSeq);
      // What a merge cost and when it ran (during an import or after) is what tuning the merge
      // scheduling needs to see.
      this.log?.info(
        `index ${this.siteId}: merged ${sources.length} segments (${liveTotal} live rows) in ${Math.round(performance.now() - started)} ms; ` +
          `${this.gen.views.length} segments, ${this.buffer.size + (this.building?.size ?? 0)} documents unpublished`,
      );
    } finally {
      g.pins--;
      this.maybeRetire(g);
    }
  }

  // ------------------------------------------------------------------ gc / close

  /**
   * Deletes files nobody needs: segment files not listed by any generation in use (left by a
   * failed unlink or a crash) except builds in flight, and write-log files covered by
   * `committedSeq`. Returns how many files it removed. Referenced segments are removed
   * automatically when their last pin is released; this is the sweep behind it.
   */
  gc(): number {
    if (this.closed) return 0;
    const known = new Set<string>();
    for (const s of this.states.values()) known.add(path.basename(s.path));
    let removed = 0;
    for (const name of safeReaddir(this.segDir)) {
      // SQLite's side files of an in-flight build (`<tmp>-journal`) belong to it too.
      if (known.has(name) || this.inFlight.has(name) || this.inFlight.has(name.replace(/-(journal|wal|shm)$/, ''))) continue;
      fs.rmSync(path.join(this.segDir, name), { force: true });
      removed++;
    }
    return removed + this.wal.deleteCovered(this.committedSeq);
  }

  /**
   * Flushes what is buffered (so a restart needs no replay), then closes the write log and
   * every segment reader. A merge in flight is abandoned (its temp file is removed at the next
   * open). Pinned snapshots must not be used after close. `flush: false` skips the flush
   * (the project is about to be deleted); the flush is given at most `timeoutMs` (5000).
   */
  async close(opts: { flush?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    if (opts.flush !== false) {
      // Bounded: shutdown must finish in seconds (SPEC §1); what is not flushed in time is
      // still in the write log and replayed at the next open.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), opts.timeoutMs ?? 5000)));
      try {
        const outcome = await Promise.race([this.flush().then(() => 'flushed' as const), timeout]);
        if (outcome === 'timeout') this.log?.warn(`index ${this.siteId}: flush on close timed out; the write log keeps the ops`);
      } catch (err) {
        this.log?.warn(`index ${this.siteId}: flush on close failed, the write log keeps the ops: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
    if (this.closed) return;
    this.closed = true;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    for (const w of this.waiters) w.reject(new AppError('internal', `Index ${this.siteId} was closed.`));
    this.waiters = [];
    await this.wal.close();
    for (const s of this.states.values()) s.reader.close();
    this.states.clear();
  }
}
