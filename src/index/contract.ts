/**
 * The contract between the segment store (src/index), the search engine (src/search) and the
 * routes. Declarations only.
 *
 * Liveness rule (the whole tombstone design in one sentence): for every URL, the operation
 * with the highest `seq` across all published segments wins; a segment row whose URL has a
 * newer op anywhere (a newer upsert, or a delete marker) is dead (a tombstone). Tombstone sets
 * are therefore derived, never stored: at open they are rebuilt from the segments' `(url, seq)`
 * columns, and every commit updates them copy-on-write so each manifest generation has its own
 * immutable view.
 */
import type { DocSource, PageDoc } from '../core/index.js';
import type { SegmentReader } from './segment-reader.js';

/** An operation as a caller submits it; the index assigns `seq` and `at`. */
export type WriteOp = { op: 'upsert'; doc: PageDoc } | { op: 'delete'; url: string };

/** One published segment as a reader sees it in one generation. */
export interface LiveSegment {
  id: string;
  reader: SegmentReader;
  /** dead[docId] === 1 when the row is a tombstone in this generation (docIds are dense 0..n-1). */
  dead: Uint8Array;
  /** Number of live searchable (status 200) rows. */
  liveCount: number;
  /** Sum over live searchable rows of each field's token length, indexed like FIELDS. */
  liveLengths: number[];
}

/** A pinned manifest generation. Must be released; files stay on disk until every pin is gone. */
export interface IndexSnapshot {
  generation: number;
  segments: LiveSegment[];
  /** Live searchable documents over all segments. */
  totalDocs: number;
  /** Sum of live token lengths per field over all segments (avgdl = lengths[f] / totalDocs). */
  totalLengths: number[];
  release(): void;
}

/**
 * An {@link IndexSnapshot} of `fields` whose `release()` runs `onRelease` the first time only
 * (a second release of one pin must not unpin another's).
 *
 * @example
 * this.pins++;
 * return pinnedSnapshot({ generation, segments, totalDocs, totalLengths }, () => this.pins--);
 */
export function pinnedSnapshot(fields: Omit<IndexSnapshot, 'release'>, onRelease: () => void): IndexSnapshot {
  let released = false;
  return {
    ...fields,
    release: () => {
      if (released) return;
      released = true;
      onRelease();
    },
  };
}

export interface IndexStats {
  /** Searchable entries (status 200), including acknowledged but not yet published ones. */
  pages: number;
  /** Entry counts per status class: '4XX', '5XX', '8XX' (and '3XX'). */
  byClass: Record<string, number>;
  pending: number;
  lastUpdated: string | null;
}

/** Query of {@link ProjectIndex.listEntries} (the `indexedContent` report). */
export interface EntryListingQuery {
  /** Substring the URL must contain. */
  urlContains?: string;
  /** An index status code (`404`, `'200'`) or a class (`'4XX'`). */
  status?: number | string;
  /** A DocumentType, e.g. `'PDF'` (case-insensitive). */
  contentType?: string;
  /** Default 0. */
  offset?: number;
  /** Default 50 (the route validates the 1000 maximum). */
  limit?: number;
}

/** One live entry as `indexedContent` shows it. Dates are ISO strings. */
export interface EntryListingRow {
  url: string;
  title: string;
  contentType: string;
  status: number;
  message?: string;
  /** '' when the page belongs to no group. */
  contentGroup: string;
  source: DocSource;
  /** When the URL was first indexed (kept across re-indexing; reset by a delete). */
  indexedAt: string;
  /** When its current version was written. */
  updatedAt: string;
}

export interface EntryListing {
  /** Matching live entries before offset/limit. */
  total: number;
  /** Sorted by URL. */
  rows: EntryListingRow[];
}

/** One segment of the current generation (admin/status output, tests). */
export interface SegmentSummary {
  id: string;
  file: string;
  docCount: number;
  /** Rows that are tombstones in the current generation. */
  deadCount: number;
  deleteCount: number;
  liveSearchable: number;
  bytes: number;
  minSeq: number;
  maxSeq: number;
}

/** How {@link ProjectIndex.flush} builds what it flushes. */
export interface FlushOptions {
  /** Build the flush as parallel parts once each gets at least this many upserts (default `MIN_PART_DOCS`, src/index/buffer.ts). */
  minPartDocs?: number;
}

/** The per-project store. All methods run on the main thread; builds/merges run in the pool. */
export interface ProjectIndex {
  readonly siteId: string;
  /**
   * Appends ops to the write log and fsyncs before resolving (durable = acknowledged).
   * Resolves with the seq of the last op. Never partially applies: all or nothing.
   */
  write(ops: WriteOp[]): Promise<number>;
  /** Resolves when everything up to `seq` is published (searchable). */
  waitSearchable(seq: number): Promise<void>;
  /** Whether `url` has a live entry (any status), including acknowledged unpublished writes. */
  has(url: string): boolean;
  /** Every live URL (any status), including acknowledged unpublished writes. */
  urls(): Iterable<string>;
  /**
   * The newest live op of `url` (any status, including acknowledged unpublished writes), or
   * null when the URL has no live entry. The crawler uses it for "newest write wins" (a JSON
   * push after a crawl was queued stays JSON-sourced) and to never remove JSON-pushed pages.
   * Implemented by SegmentStore (one map lookup, plus one stored-row read for `source` when
   * the entry is published); optional only so test doubles may omit it.
   */
  entryOf?(url: string): { seq: number; source: DocSource; status: number; at: number } | null;
  /** Pins the current generation for one search. */
  acquire(): IndexSnapshot;
  /**
   * The current generation's number (what {@link acquire} would pin), without pinning it: for
   * checking that an answer computed on a generation is still current.
   */
  readonly generation: number;
  stats(): IndexStats;
  /**
   * Runs the merge policy until it selects nothing (background, one merge at a time per
   * project); `full` merges everything into one segment, dropping all tombstones.
   */
  merge(opts?: { full?: boolean }): Promise<void>;
  /** Flushes the buffer into a segment now (tests, shutdown, the end of a crawl run). */
  flush(opts?: FlushOptions): Promise<void>;
  /**
   * Deletes every live URL (published or only acknowledged) matching `predicate` in one
   * durable batch; resolves with how many it removed (DELETE by `urlPattern`).
   */
  deleteWhere(predicate: (url: string) => boolean): Promise<number>;
  /** Live entries (any status, including acknowledged unpublished ones) for `indexedContent`. */
  listEntries(query?: EntryListingQuery): EntryListing;
  /** Segments of the current generation with their tombstone counts. */
  segments(): SegmentSummary[];
  /** Removes unreferenced segment files and covered write-log files; returns how many. */
  gc(): number;
  close(): Promise<void>;
  /**
   * The last failure of background embedding (the HTTP embedder down), or null. Optional so
   * test doubles may omit it.
   */
  embedError?(): string | null;
}
