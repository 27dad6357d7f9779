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
import type { PageDoc } from '../types.js';
import type { SegmentReader } from './segment.js';

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

export interface IndexStats {
  /** Searchable entries (status 200), including acknowledged but not yet published ones. */
  pages: number;
  /** Entry counts per status class: '4XX', '5XX', '8XX' (and '3XX'). */
  byClass: Record<string, number>;
  pending: number;
  lastUpdated: string | null;
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
  /** Pins the current generation for one search. */
  acquire(): IndexSnapshot;
  stats(): IndexStats;
  /** Forces a merge; `full` merges everything into one segment. */
  merge(opts?: { full?: boolean }): Promise<void>;
  /** Flushes the buffer into a segment now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
