/**
 * Generations stage of the segment store: the open segments, the current generation (which
 * segments are live and which of their rows are tombstones), the snapshots readers pin, and
 * the per-URL winners the liveness rule (contract.ts) derives from them.
 *
 * Main thread. Invariants:
 * - only the commit chain (commit.ts) installs a generation or changes `published`, and
 *   {@link Generations.recover} builds the first one at open;
 * - `published` maps each URL to its highest-seq op over the current generation's segments;
 *   every other row of that URL is dead in that generation;
 * - a generation's views are never changed once installed (commits copy the `dead` bitmaps they
 *   change), so a pinned snapshot sees the same rows until it is released;
 * - a segment is closed and its file deleted once no generation (current or pinned) lists it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError, type PageDoc } from '../core/index.js';
import { pinnedSnapshot, type IndexSnapshot, type LiveSegment, type SegmentSummary } from './contract.js';
import type { StoreContext } from './context.js';
import type { Manifest, ManifestSegment } from './manifest.js';
import { NFIELDS } from './segment-format.js';
import { SegmentReader, readRowColumns, type RowColumns } from './segment-reader.js';

/** One open segment file and its immutable per-row columns. */
export interface SegState extends RowColumns {
  id: string;
  path: string;
  meta: ManifestSegment;
  reader: SegmentReader;
  /** Generations (current or pinned) that list this segment. */
  genRefs: number;
}

/** A segment as one generation sees it; `dead` is shared between generations until changed. */
export interface SegView {
  state: SegState;
  dead: Uint8Array;
  liveRows: number;
  liveCount: number;
  liveLengths: number[];
}

export interface Generation {
  number: number;
  views: SegView[];
  totalDocs: number;
  totalLengths: number[];
  liveSegments: LiveSegment[];
  pins: number;
  retired: boolean;
}

/** The winning (highest-seq) op of a URL among published segments; docId -1 = delete marker. */
export interface Winner {
  seq: number;
  state: SegState;
  docId: number;
}

/** What reports need of a document: the stored row's small fields. */
export type DocMeta = Pick<PageDoc, 'title' | 'documentType' | 'contentGroup' | 'source' | 'message'>;

/** Live rows, live searchable rows and their per-field token lengths of `state` given `dead`. */
export function sumLengths(state: SegState, dead: Uint8Array): { liveRows: number; liveCount: number; liveLengths: number[] } {
  const liveLengths = new Array<number>(NFIELDS).fill(0);
  let liveRows = 0;
  let liveCount = 0;
  for (let i = 0; i < state.urls.length; i++) {
    if (dead[i]) continue;
    liveRows++;
    if (state.statuses[i] !== 200) continue;
    liveCount++;
    for (let f = 0; f < NFIELDS; f++) liveLengths[f]! += state.lengths[i * NFIELDS + f]!;
  }
  return { liveRows, liveCount, liveLengths };
}

/**
 * Every URL's winner (the highest seq wins) over `states` alone (into `winners`, which must
 * start empty), and each segment's view with the tombstones that follow: the generation those
 * segments make by themselves (at open, and when a replace swaps in a whole new set of
 * segments).
 */
export function decideFromScratch(states: readonly SegState[], winners = new Map<string, Winner>()): { winners: Map<string, Winner>; views: SegView[] } {
  const consider = (url: string, seq: number, state: SegState, docId: number) => {
    const w = winners.get(url);
    if (!w || w.seq < seq) winners.set(url, { seq, state, docId });
  };
  for (const s of states) {
    for (let i = 0; i < s.urls.length; i++) consider(s.urls[i]!, s.seqs[i]!, s, i);
    for (const d of s.deletes) consider(d.url, d.seq, s, -1);
  }
  const views: SegView[] = states.map((s) => {
    const dead = new Uint8Array(s.urls.length);
    for (let i = 0; i < s.urls.length; i++) {
      const w = winners.get(s.urls[i]!)!;
      if (w.state !== s || w.docId !== i) dead[i] = 1;
    }
    return { state: s, dead, ...sumLengths(s, dead) };
  });
  return { winners, views };
}

export class Generations {
  private readonly ctx: StoreContext;
  /** Every open segment: listed by the current or a pinned generation, or built and not yet published. */
  private readonly states = new Map<string, SegState>();
  /** url → its winner over the current generation's segments. */
  readonly published = new Map<string, Winner>();
  private gen!: Generation;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /** The generation new snapshots get. */
  get current(): Generation {
    return this.gen;
  }

  /**
   * At open: opens the manifest's segments, decides every URL's winner from scratch (the
   * highest seq wins), derives each segment's tombstones and installs the manifest's
   * generation. Returns the opened segments.
   */
  recover(manifest: Manifest): SegState[] {
    const states = manifest.segments.map((meta) => this.load(meta));
    // Decided straight into `published` (empty at open): no second map of every URL.
    const { views } = decideFromScratch(states, this.published);
    this.install(manifest.generation, views, []);
    return states;
  }

  /**
   * Opens a segment file of `segments/` (published, or sealed by a build and about to be).
   * `rows`: its liveness columns as the pool thread that sealed it read them (tasks.ts
   * `SealedSegment`); read from the file when absent or not of the file's row count.
   */
  load(meta: ManifestSegment, rows?: RowColumns): SegState {
    const p = path.join(this.ctx.segDir, meta.file);
    if (!fs.existsSync(p)) throw new AppError('internal', `Segment ${meta.file} of index ${this.ctx.siteId} is listed in the manifest but missing.`);
    const reader = SegmentReader.open(p);
    let cols: RowColumns;
    try {
      cols = rows && rows.urls.length === reader.info.docCount ? rows : readRowColumns(p, reader.info.docCount);
    } catch (err) {
      reader.close();
      throw err;
    }
    const s: SegState = { id: meta.id, path: p, meta, reader, ...cols, genRefs: 0 };
    this.states.set(s.id, s);
    return s;
  }

  /**
   * Makes `views` the current generation `number` and applies the winner `changes` (null: the
   * URL leaves `published`). Called by the commit chain once the manifest listing the views is
   * durable; the previous generation is retired when nobody pins it.
   */
  install(number: number, views: SegView[], changes: ReadonlyArray<[string, Winner | null]>): void {
    for (const [url, w] of changes) {
      if (w) this.published.set(url, w);
      else this.published.delete(url);
    }
    const totalLengths = new Array<number>(NFIELDS).fill(0);
    let totalDocs = 0;
    for (const v of views) {
      totalDocs += v.liveCount;
      for (let f = 0; f < NFIELDS; f++) totalLengths[f]! += v.liveLengths[f]!;
    }
    const liveSegments: LiveSegment[] = views.map((v) => ({
      id: v.state.id,
      reader: v.state.reader,
      dead: v.dead,
      liveCount: v.liveCount,
      liveLengths: v.liveLengths,
    }));
    for (const v of views) v.state.genRefs++;
    const old = this.gen as Generation | undefined;
    this.gen = { number, views, totalDocs, totalLengths, liveSegments, pins: 0, retired: false };
    if (old) this.maybeRetire(old);
  }

  /** Pins the current generation: its segment files stay until {@link unpin}. */
  pin(): Generation {
    const g = this.gen;
    g.pins++;
    this.pinned++;
    return g;
  }

  /** Pins held on any generation, current or older (the registry closes only unpinned stores). */
  pinned = 0;

  unpin(g: Generation): void {
    g.pins--;
    this.pinned--;
    this.maybeRetire(g);
  }

  /** A snapshot of the current generation for one search; `release()` is idempotent. */
  acquire(): IndexSnapshot {
    const g = this.pin();
    return pinnedSnapshot({ generation: g.number, segments: g.liveSegments, totalDocs: g.totalDocs, totalLengths: g.totalLengths }, () => this.unpin(g));
  }

  /** Per-segment sizes and tombstone counts of the current generation. */
  summaries(): SegmentSummary[] {
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

  /** Whether `url`'s winner is a row (not a delete marker) of a published segment. */
  hasPublishedRow(url: string): boolean {
    return (this.published.get(url)?.docId ?? -1) >= 0;
  }

  /** The small fields of `url`'s published row (one stored-row read), or null. */
  docOf(url: string): DocMeta | null {
    const w = this.published.get(url);
    if (!w || w.docId < 0) return null;
    return w.state.reader.meta(w.docId);
  }

  /** The document type of `url`'s published row, or null. */
  documentTypeOf(url: string): string | null {
    const w = this.published.get(url);
    if (!w || w.docId < 0) return null;
    // docValues() is loaded once per segment and shared with the search engine.
    return w.state.reader.docValues().docType[w.docId] ?? null;
  }

  /** File names of every open segment (gc keeps them). */
  files(): Set<string> {
    const out = new Set<string>();
    for (const s of this.states.values()) out.add(path.basename(s.path));
    return out;
  }

  /** Forgets a segment that was built and opened but never published, and deletes its file. */
  discard(st: SegState): void {
    if (st.genRefs === 0) this.drop(st);
  }

  /** Closes a segment that was opened but never published, keeping its file. */
  forget(st: SegState): void {
    if (st.genRefs !== 0) return;
    this.states.delete(st.id);
    st.reader.close();
  }

  /** Closes every segment reader (the store is closing); files stay. */
  close(): void {
    for (const s of this.states.values()) s.reader.close();
    this.states.clear();
  }

  /** Drops a generation nobody uses; a segment no generation lists is closed and deleted. */
  private maybeRetire(g: Generation): void {
    if (g === this.gen || g.pins > 0 || g.retired) return;
    g.retired = true;
    for (const v of g.views) if (--v.state.genRefs === 0) this.drop(v.state);
  }

  private drop(st: SegState): void {
    this.states.delete(st.id);
    st.reader.close();
    // After close() the folder may be gone or reused (drop/reopen): leave files alone.
    if (!this.ctx.closed) fs.rmSync(st.path, { force: true });
  }
}
