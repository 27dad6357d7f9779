/**
 * A search node's read-only indexes (main thread).
 *
 * {@link SegmentFiles} opens each segment file once per content hash, straight from the node's
 * blob cache (`<cacheDir>/blobs/<sha256>`), and shares it with every generation that lists it:
 * the reader and its per-row liveness columns are read once, not at every swap. Because the
 * path a search thread is given is the blob's, which is the same in every generation, the
 * threads' reader caches (src/search/remote.ts, keyed by path) keep their doc values, postings,
 * typo tries, BM25F values and result cards warm across swaps too. A swap that adds one small
 * segment thus opens one small file and re-derives the tombstones, nothing else.
 *
 * {@link NodeGeneration} is one project at one generation: the tombstones come from the same
 * liveness rule as on the primary (the highest seq of a URL wins). The first generation, and one
 * that dropped segments (a merge), derives them from scratch ({@link decideFromScratch}); a
 * generation that only adds segments to the previous one starts from the previous one's winners
 * and tombstones and applies the new rows, as the primary's commits do, so its cost follows the
 * change, not the project. Either way every segment's bitmap and the live total are checked
 * against the manifest (an incremental result that differs is derived again from scratch).
 * A generation is immutable once open; searches pin it like a primary's generation, and its
 * segments are released once it is retired and unpinned.
 */
import { AppError } from '../core/index.js';
import {
  NFIELDS,
  SegmentReader,
  pinnedSnapshot,
  decideFromScratch,
  readRowColumns,
  type IndexSnapshot,
  type LiveSegment,
  type ManifestSegment,
  type ProjectIndex,
  type RowColumns,
  type SegState,
  type WriteOp,
} from '../index/index.js';

/** A URL's winning op among a generation's segments (docId -1: a delete marker). */
interface Winner {
  seq: number;
  state: SegState;
  docId: number;
}

/** A segment as one generation sees it (its bitmap and sums are shared until changed). */
interface View {
  dead: Uint8Array;
  liveRows: number;
  liveCount: number;
  liveLengths: number[];
}

/** What the next generation may start from: winners and views, handed over once. */
interface Derived {
  winners: Map<string, Winner>;
  views: Map<SegState, View>;
}
import { sha256, type ProjectManifest } from './format.js';

/** One segment file, opened once, shared by every generation listing its hash. */
interface OpenSegment {
  hash: string;
  path: string;
  reader: SegmentReader;
  cols: RowColumns;
  /** The segment for the liveness rule (one object per file: winners point at it). */
  state: SegState;
  /** Generations holding it. */
  refs: number;
}

/**
 * The node's open segment files, by content hash.
 *
 * @example
 * const files = new SegmentFiles();
 * const gen = NodeGeneration.open(manifest, paths, files); // reuses what an earlier generation opened
 * gen.retire(); // once swapped out; its files close when its last pin goes
 */
export class SegmentFiles {
  private readonly open = new Map<string, OpenSegment>();
  /** Segment files opened since start (a file shared by two generations counts once). */
  opened = 0;

  /** The segment with content hash `hash` at `path`, opened on first use; one more reference. */
  acquire(hash: string, path: string, meta: ManifestSegment): OpenSegment {
    let s = this.open.get(hash);
    if (!s) {
      const reader = SegmentReader.open(path);
      let cols: RowColumns;
      try {
        cols = readRowColumns(path, meta.docCount);
      } catch (err) {
        reader.close();
        throw err;
      }
      this.opened++;
      s = { hash, path, reader, cols, state: { id: meta.id, path, meta, reader, ...cols, genRefs: 0 }, refs: 0 };
      this.open.set(hash, s);
    }
    s.refs++;
    return s;
  }

  /** One reference fewer; the file closes with its last one. */
  release(s: OpenSegment): void {
    if (--s.refs > 0) return;
    s.reader.close();
    this.open.delete(s.hash);
  }

  /** Hashes of the open files (the blob collector keeps them). */
  hashes(): Set<string> {
    return new Set(this.open.keys());
  }
}

/**
 * One project at one generation, read-only: what the search and suggest services need of a
 * {@link ProjectIndex} (pins), every write refused.
 */
export class NodeGeneration implements ProjectIndex {
  readonly siteId: string;
  readonly generation: number;
  private readonly segs: OpenSegment[];
  private readonly live: LiveSegment[];
  private readonly totalDocs: number;
  private readonly totalLengths: number[];
  /** Handed to the next generation (once); null after that. */
  private derived: Derived | null;
  /** How this generation's tombstones were derived (tests, diagnostics). */
  readonly derivation: 'scratch' | 'incremental';
  private pins = 0;
  private retired = false;
  private closed = false;

  private constructor(
    siteId: string,
    generation: number,
    segs: OpenSegment[],
    live: LiveSegment[],
    totalDocs: number,
    totalLengths: number[],
    derived: Derived,
    derivation: 'scratch' | 'incremental',
    private readonly files: SegmentFiles,
  ) {
    this.siteId = siteId;
    this.generation = generation;
    this.segs = segs;
    this.live = live;
    this.totalDocs = totalDocs;
    this.totalLengths = totalLengths;
    this.derived = derived;
    this.derivation = derivation;
  }

  /**
   * Opens the manifest's generation from the verified blob files `paths` (in manifest order),
   * derives its tombstones (from `previous`, the project's current generation, when the new one
   * only adds segments to it) and checks them and the live total against the manifest; throws
   * (having released what it took) when they differ.
   */
  static open(m: ProjectManifest, paths: readonly string[], files: SegmentFiles, previous: NodeGeneration | null = null): NodeGeneration {
    const segs: OpenSegment[] = [];
    try {
      m.segments.forEach((s, i) => segs.push(files.acquire(s.sha256, paths[i]!, { id: s.id, file: s.file, docCount: s.docCount, searchableCount: s.searchableCount, deleteCount: s.deleteCount, minSeq: s.minSeq, maxSeq: s.maxSeq, bytes: s.bytes })));
      const states = segs.map((o) => o.state);
      // The previous generation's winners are taken (and changed): it never needs them again.
      const base = previous?.derived ?? null;
      if (previous) previous.derived = null;
      let derivation: 'scratch' | 'incremental' = 'scratch';
      let derived: Derived | null = base ? applyAdded(base, states) : null;
      if (derived && checkViews(m, states, derived.views) === null) derivation = 'incremental';
      else {
        derived = fromScratch(states);
        const bad = checkViews(m, states, derived.views);
        if (bad !== null) throw new Error(bad);
      }
      const totalLengths = new Array<number>(NFIELDS).fill(0);
      let totalDocs = 0;
      const live: LiveSegment[] = states.map((st, i) => {
        const v = derived.views.get(st)!;
        totalDocs += v.liveCount;
        for (let f = 0; f < NFIELDS; f++) totalLengths[f]! += v.liveLengths[f]!;
        return { id: m.segments[i]!.id, reader: st.reader, dead: v.dead, liveCount: v.liveCount, liveLengths: v.liveLengths };
      });
      if (totalDocs !== m.totalDocs) throw new Error(`${totalDocs} live documents, the manifest says ${m.totalDocs}`);
      return new NodeGeneration(m.siteId, m.generation, segs, live, totalDocs, totalLengths, derived, derivation, files);
    } catch (err) {
      for (const s of segs) files.release(s);
      throw err;
    }
  }

  acquire(): IndexSnapshot {
    this.pins++;
    return pinnedSnapshot({ generation: this.generation, segments: this.live, totalDocs: this.totalDocs, totalLengths: this.totalLengths }, () => {
      this.pins--;
      this.maybeClose();
    });
  }

  /** No search pins this generation. */
  idle(): boolean {
    return this.pins === 0;
  }

  /** Swapped out: its segments are released once the last pin goes (at once when idle). */
  retire(): void {
    this.retired = true;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (!this.retired || this.pins > 0 || this.closed) return;
    this.closed = true;
    for (const s of this.segs) this.files.release(s);
  }

  stats(): { pages: number; byClass: Record<string, number>; pending: number; lastUpdated: string | null } {
    return { pages: this.totalDocs, byClass: {}, pending: 0, lastUpdated: null };
  }

  segments(): never {
    throw readOnly();
  }
  write(_ops: WriteOp[]): Promise<number> {
    return Promise.reject(readOnly());
  }
  waitSearchable(): Promise<void> {
    return Promise.resolve();
  }
  has(): boolean {
    throw readOnly();
  }
  urls(): Iterable<string> {
    throw readOnly();
  }
  merge(): Promise<void> {
    return Promise.reject(readOnly());
  }
  flush(): Promise<void> {
    return Promise.reject(readOnly());
  }
  deleteWhere(): Promise<number> {
    return Promise.reject(readOnly());
  }
  listEntries(): never {
    throw readOnly();
  }
  gc(): number {
    return 0;
  }
  async close(): Promise<void> {
    this.retire();
  }
}

function readOnly(): AppError {
  return new AppError('method_not_allowed', 'This is a read-only search node: send writes to the primary.');
}

/** Every URL's winner and every segment's tombstones over `states` alone (the primary's rule). */
function fromScratch(states: SegState[]): Derived {
  const { winners, views } = decideFromScratch(states);
  return { winners, views: new Map(views.map((v) => [v.state, { dead: v.dead, liveRows: v.liveRows, liveCount: v.liveCount, liveLengths: v.liveLengths }])) };
}

/**
 * `base` (a generation's winners and views) with the segments of `states` it lacks applied, as
 * a commit applies a flush on the primary: each new row or delete marker beats the URL's winner
 * when its seq is higher (the old winner's row becomes a tombstone, in a copy of its segment's
 * bitmap: the previous generation keeps its own), else the new row is the tombstone. Null when
 * `states` lacks a segment of `base` (a merge dropped it): then only from scratch will do.
 */
function applyAdded(base: Derived, states: SegState[]): Derived | null {
  const listed = new Set(states);
  for (const st of base.views.keys()) if (!listed.has(st)) return null;
  const winners = base.winners;
  const views = new Map<SegState, View>();
  for (const [st, v] of base.views) views.set(st, v);
  const copied = new Set<SegState>();
  const kill = (st: SegState, docId: number) => {
    let v = views.get(st)!;
    if (!copied.has(st)) {
      v = { ...v, dead: v.dead.slice(), liveLengths: v.liveLengths.slice() };
      views.set(st, v);
      copied.add(st);
    }
    if (v.dead[docId]) return;
    v.dead[docId] = 1;
    v.liveRows--;
    if (st.statuses[docId] !== 200) return;
    v.liveCount--;
    for (let f = 0; f < NFIELDS; f++) v.liveLengths[f]! -= st.lengths[docId * NFIELDS + f]!;
  };
  const consider = (url: string, seq: number, st: SegState, docId: number) => {
    const w = winners.get(url);
    if (!w || w.seq < seq) {
      if (w && w.docId >= 0) kill(w.state, w.docId);
      winners.set(url, { seq, state: st, docId });
    } else if (docId >= 0) kill(st, docId);
  };
  for (const st of states) {
    if (views.has(st)) continue;
    const liveLengths = new Array<number>(NFIELDS).fill(0);
    let liveCount = 0;
    for (let i = 0; i < st.urls.length; i++) {
      if (st.statuses[i] !== 200) continue;
      liveCount++;
      for (let f = 0; f < NFIELDS; f++) liveLengths[f]! += st.lengths[i * NFIELDS + f]!;
    }
    views.set(st, { dead: new Uint8Array(st.urls.length), liveRows: st.urls.length, liveCount, liveLengths });
    copied.add(st);
    for (let i = 0; i < st.urls.length; i++) consider(st.urls[i]!, st.seqs[i]!, st, i);
    for (const d of st.deletes) consider(d.url, d.seq, st, -1);
  }
  return { winners, views };
}

/** Null when every segment's tombstones hash as the manifest says, else why not. */
function checkViews(m: ProjectManifest, states: SegState[], views: Map<SegState, View>): string | null {
  for (let i = 0; i < states.length; i++) {
    const want = m.segments[i]!;
    if (sha256(views.get(states[i]!)!.dead) !== want.deadSha256) return `segment ${want.id}: tombstones differ from the primary's`;
  }
  return null;
}
