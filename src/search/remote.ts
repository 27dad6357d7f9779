/**
 * Searching on search threads (SPEC §0: searches read immutable segments listed in a manifest).
 *
 * The main thread pins a manifest generation (`index.acquire()`), describes it as a
 * {@link SnapshotSpec} — segment file paths, each segment's tombstone bitmap in shared memory,
 * live counts and lengths — and hands the spec, the settings and the validated parameters to a
 * search thread. The thread opens the segment files read-only itself (readers are cached per file
 * and reused across generations, so their vocabularies, typo tries and postings caches stay
 * warm), runs the same {@link search} the main thread would, and sends back the response already
 * serialised as JSON. The main thread keeps its pin until the answer arrives, so no file the
 * thread reads can be removed meanwhile. Results are identical to a main-thread search by
 * construction (same code, same segment files, same tombstones); tests compare the two.
 *
 * Hand-off (src/search/executor.ts {@link ThreadSearchExecutor}, thread `workers/search.ts`): plain
 * `worker_threads` messages, one search in flight per thread. A task names its settings by id
 * and its generation by owner and number; the settings object and the {@link SnapshotSpec} are
 * sent only the first time a thread gets them (they are cloned with every message otherwise).
 * A thread that no longer holds them (it closed an idle generation, or keeps only the newest
 * settings) answers {@link SearchReply} `missing`, and the main thread sends the task again with
 * both. The answer's JSON is a string (one memcpy to clone).
 *
 * This file holds the thread side ({@link SearchThreadState}) and the pure conversions both
 * sides share.
 */
import { existsSync } from 'node:fs';
import { type IndexSnapshot, type LiveSegment, SegmentReader } from '../index/index.js';
import { AppError, type ErrorCode, type Settings } from '../core/index.js';
import { search, type SearchParams, type SearchResponse } from './results.js';
import { warmVocabulary } from './expand.js';

/** One segment of a pinned generation, as sent to a search thread. */
export interface SegmentSpec {
  id: string;
  path: string;
  /** Tombstones of this generation, over a SharedArrayBuffer (shared, never copied per call). */
  dead: Uint8Array;
  liveCount: number;
  liveLengths: number[];
}

/** A pinned generation as a search thread needs it. */
export interface SnapshotSpec {
  /** Distinguishes project indexes that may reuse generation numbers (delete + re-create). */
  owner: number;
  generation: number;
  segments: SegmentSpec[];
  totalDocs: number;
  totalLengths: number[];
}

/** What the main thread asks a search thread (one message). */
export interface SearchRequest {
  /** Matches the reply to its request. */
  id: number;
  /** The settings object's id on the main thread (src/search/object-id.ts): one per version. */
  settingsId: number;
  /** Sent when the thread may not hold `settingsId` yet. */
  settings?: Settings;
  owner: number;
  generation: number;
  /** Sent when the thread may not hold this generation yet. */
  snapshot?: SnapshotSpec;
  params: SearchParams;
  /**
   * Not a search: load what the first search of this generation would (see
   * {@link warmSnapshot}) and answer {@link WARMED}. `fp`: the embedder fingerprint whose
   * vectors to load, null for none.
   */
  warm?: { fp: string | null };
}

/** The answer to a {@link SearchRequest} with `warm`. */
export const WARMED: RemoteSearchResult = { json: 'null', totalResults: 0, sortingOptions: [], activeFilterOptions: [] };

/** A search thread's reply to {@link SearchRequest} `id`. */
export type SearchReply =
  | { id: number; result: RemoteSearchResult }
  /** The thread lacks the settings or the generation the request named: send them. */
  | { id: number; missing: true }
  /**
   * A failure: a client error the search itself found (`code`: an {@link AppError} code, such
   * as the unknown page of a similar-pages request), else a bug.
   */
  | { id: number; error: { message: string; stack?: string; code?: ErrorCode; field?: string } };

/**
 * A search thread's answer: the response as JSON plus what the route reads of it. Parameters
 * are validated by the route before a search starts; the one client error a search finds
 * itself is an {@link AppError} (sent back with its code), anything else thrown is a bug and
 * reaches the client as a 500.
 */
export interface RemoteSearchResult {
  json: string;
  totalResults: number;
  sortingOptions: string[];
  activeFilterOptions: Array<Record<string, unknown>>;
}

// ---------------------------------------------------------------- main-thread side helpers

const sharedDead = new WeakMap<Uint8Array, Uint8Array>();

/**
 * The tombstone bitmap in shared memory. Bitmaps of published generations are immutable (the
 * store copies on write), so one shared copy per bitmap object is made once and reused.
 */
export function sharedBitmap(dead: Uint8Array): Uint8Array {
  if (dead.buffer instanceof SharedArrayBuffer) return dead;
  let s = sharedDead.get(dead);
  if (!s) {
    s = new Uint8Array(new SharedArrayBuffer(Math.max(1, dead.length))).subarray(0, dead.length);
    s.set(dead);
    sharedDead.set(dead, s);
  }
  return s;
}

/** Describes a pinned snapshot for a search thread (main thread). */
export function snapshotSpec(snap: IndexSnapshot, owner: number): SnapshotSpec {
  return {
    owner,
    generation: snap.generation,
    segments: snap.segments.map((s) => ({
      id: s.id,
      path: s.reader.path,
      dead: sharedBitmap(s.dead),
      liveCount: s.liveCount,
      liveLengths: s.liveLengths,
    })),
    totalDocs: snap.totalDocs,
    totalLengths: snap.totalLengths,
  };
}

// ---------------------------------------------------------------- search-thread side

/** How long a search thread keeps an unused generation (and its readers) open, unless it is the newest of its project ({@link ThreadSnapshots.sweep}). */
export const IDLE_SNAPSHOT_MS = 30_000;
/** Generations kept per project index (a slow search may still use an older one). */
const SNAPSHOTS_PER_OWNER = 3;

interface CachedReader {
  reader: SegmentReader;
  refs: number;
}

interface CachedSnapshot {
  key: string;
  owner: number;
  snap: IndexSnapshot;
  paths: string[];
  usedAt: number;
}

/**
 * The thread's open generations and segment readers. Readers are shared by every cached
 * generation that lists their file and closed when the last one is dropped.
 */
export class ThreadSnapshots {
  private readonly readers = new Map<string, CachedReader>();
  private readonly snapshots = new Map<string, CachedSnapshot>();
  private readonly owners = new Map<number, object>();

  /**
   * @param maxSnapshots generations kept open at once (SITESIFT_OPEN_PROJECTS): past it the
   * least recently searched is closed, so many projects searched in turn hold a bounded
   * number of segment files open, not every one searched in the last {@link IDLE_SNAPSHOT_MS}.
   */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxSnapshots = Infinity,
  ) {}

  /** The open snapshot of `owner`'s `generation`, if this thread holds it. */
  find(owner: number, generation: number): IndexSnapshot | undefined {
    const key = `${owner}:${generation}`;
    const hit = this.snapshots.get(key);
    if (!hit) return undefined;
    hit.usedAt = this.now();
    // Most recently used last (Map order).
    this.snapshots.delete(key);
    this.snapshots.set(key, hit);
    return hit.snap;
  }

  /** The snapshot for `spec`, opened on first use. */
  get(spec: SnapshotSpec): IndexSnapshot {
    const hit = this.find(spec.owner, spec.generation);
    if (hit) return hit;
    const key = `${spec.owner}:${spec.generation}`;
    const segments: LiveSegment[] = [];
    const paths: string[] = [];
    try {
      for (const s of spec.segments) {
        let r = this.readers.get(s.path);
        if (!r) this.readers.set(s.path, (r = { reader: SegmentReader.open(s.path), refs: 0 }));
        r.refs++;
        paths.push(s.path);
        segments.push({ id: s.id, reader: r.reader, dead: s.dead, liveCount: s.liveCount, liveLengths: s.liveLengths });
      }
    } catch (e) {
      this.unref(paths);
      throw e;
    }
    const snap: IndexSnapshot = {
      generation: spec.generation,
      segments,
      totalDocs: spec.totalDocs,
      totalLengths: spec.totalLengths,
      release() {},
    };
    this.snapshots.set(key, { key, owner: spec.owner, snap, paths, usedAt: this.now() });
    // Keep the newest few generations of this owner.
    const mine = [...this.snapshots.values()].filter((c) => c.key.startsWith(`${spec.owner}:`));
    for (const old of mine.slice(0, Math.max(0, mine.length - SNAPSHOTS_PER_OWNER))) this.drop(old);
    // Least recently searched first (Map order); the one just opened is last.
    for (const old of this.snapshots.values()) {
      if (this.snapshots.size <= this.maxSnapshots || old.snap === snap) break;
      this.drop(old);
    }
    return snap;
  }

  /** The per-project cache owner object the search service keys its caches by. */
  owner(id: number): object {
    let o = this.owners.get(id);
    if (!o) this.owners.set(id, (o = {}));
    return o;
  }

  /**
   * Closes generations unused for {@link IDLE_SNAPSHOT_MS}, except the newest this thread holds
   * of each project index while every one of its segment files still exists; returns how many
   * were dropped.
   *
   * Why the newest is kept: reopening a segment reloads its doc values, vectors and vocabulary
   * (over a second at ~100k pages), so a site searched less often than every
   * {@link IDLE_SNAPSHOT_MS} would otherwise answer every search cold. Why the files are
   * checked: a merge retires segments and the main thread deletes their files once no
   * generation it knows lists them; a thread holding them open would keep their disk space
   * taken. A generation whose files all exist lists only segments that are still live (or
   * pinned), so keeping it holds nothing the index no longer uses. The number of projects kept
   * stays bounded by `maxSnapshots`.
   */
  sweep(): number {
    const cutoff = this.now() - IDLE_SNAPSHOT_MS;
    const newest = new Map<number, CachedSnapshot>();
    for (const c of this.snapshots.values()) {
      const n = newest.get(c.owner);
      if (!n || c.snap.generation > n.snap.generation) newest.set(c.owner, c);
    }
    let dropped = 0;
    for (const c of [...this.snapshots.values()]) {
      if (c.usedAt > cutoff) continue;
      if (newest.get(c.owner) === c && c.paths.every((p) => existsSync(p))) continue;
      this.drop(c);
      dropped++;
    }
    return dropped;
  }

  /** Open segment files (tests). */
  openFiles(): string[] {
    return [...this.readers.keys()];
  }

  /** Closes everything. */
  close(): void {
    for (const c of [...this.snapshots.values()]) this.drop(c);
  }

  private drop(c: CachedSnapshot): void {
    this.snapshots.delete(c.key);
    this.unref(c.paths);
  }

  private unref(paths: string[]): void {
    for (const p of paths) {
      const r = this.readers.get(p);
      if (!r) continue;
      if (--r.refs <= 0) {
        r.reader.close();
        this.readers.delete(p);
      }
    }
  }
}

/**
 * Loads what the first search of `snap` reads from each segment, so that search does not wait
 * for it: the segment's doc values, its typo and prefix lookups, and its vectors of embedder
 * `fp` (when given). At ~100k pages that is about a second of work per segment, paid after a
 * merge or a restart by whichever visitor searched first.
 */
export function warmSnapshot(snap: IndexSnapshot, fp: string | null): void {
  for (const seg of snap.segments) {
    seg.reader.docValues();
    warmVocabulary(seg);
    if (fp) seg.reader.vectors(fp);
  }
}

/** Runs {@link search} and serialises its answer (any thread: the main thread uses it too). */
export function searchAnswer(snap: IndexSnapshot, settings: Settings, params: SearchParams, owner: object): RemoteSearchResult {
  const body: SearchResponse = search(snap, settings, params, owner);
  return { json: JSON.stringify(body), totalResults: body.totalResults, sortingOptions: body.sortingOptions, activeFilterOptions: body.activeFilterOptions };
}

/** Settings versions a search thread keeps (projects × versions in use at once). */
const SETTINGS_KEPT = 64;

/**
 * A search thread's state: its open generations and the settings versions it was sent. Answers
 * {@link SearchRequest}s (search thread; tests run it on the main thread).
 */
export class SearchThreadState {
  readonly snapshots: ThreadSnapshots;
  private readonly settings = new Map<number, Settings>();

  /** `maxSnapshots`: see {@link ThreadSnapshots}. */
  constructor(now: () => number = Date.now, maxSnapshots = Infinity) {
    this.snapshots = new ThreadSnapshots(now, maxSnapshots);
  }

  /** Runs one request; never throws (a failure is an `error` reply). */
  handle(req: SearchRequest): SearchReply {
    try {
      let settings = req.settings;
      if (settings) {
        if (!this.settings.has(req.settingsId) && this.settings.size >= SETTINGS_KEPT) this.settings.delete(this.settings.keys().next().value!);
        this.settings.set(req.settingsId, settings);
      } else settings = this.settings.get(req.settingsId);
      const snap = req.snapshot ? this.snapshots.get(req.snapshot) : this.snapshots.find(req.owner, req.generation);
      if (!settings || !snap) return { id: req.id, missing: true };
      if (req.warm) {
        warmSnapshot(snap, req.warm.fp);
        return { id: req.id, result: WARMED };
      }
      return { id: req.id, result: searchAnswer(snap, settings, req.params, this.snapshots.owner(req.owner)) };
    } catch (e) {
      if (e instanceof AppError) return { id: req.id, error: { message: e.message, code: e.code, ...(e.field ? { field: e.field } : {}) } };
      const err = e instanceof Error ? e : new Error(String(e));
      return { id: req.id, error: { message: err.message, stack: err.stack } };
    }
  }

  /** Closes generations unused for {@link IDLE_SNAPSHOT_MS}. */
  sweep(): number {
    return this.snapshots.sweep();
  }

  close(): void {
    this.snapshots.close();
  }
}
