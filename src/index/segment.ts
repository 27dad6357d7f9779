/**
 * Segment file format (owner: search lead). STUB: signatures only, implementation in progress.
 * A segment is an immutable SQLite file written once by {@link writeSegment} (in a pool worker)
 * and read by {@link SegmentReader} on the main thread.
 */
import type { PageDoc } from '../types.js';

/** Searchable fields, in the order used by every per-field array. */
export const FIELDS = ['title', 'keywords', 'headings', 'url', 'content'] as const;
export const SEGMENT_FORMAT = 1;

/** An upsert as it goes into a segment. `firstAt` = when the URL was first indexed (ms). */
export interface SegmentEntry {
  seq: number;
  at: number;
  firstAt: number;
  doc: PageDoc;
}
/** A delete marker: shadows every row of `url` with a lower seq in any segment. */
export interface SegmentDelete {
  seq: number;
  at: number;
  url: string;
}
export interface SegmentInfo {
  format: number;
  /** Rows in `docs` (any status); docIds are 0..docCount-1. */
  docCount: number;
  /** Rows with status 200. */
  searchableCount: number;
  deleteCount: number;
  minSeq: number;
  maxSeq: number;
  bytes: number;
}
/** What liveness bookkeeping needs of each row. */
export interface SegmentRow {
  id: number;
  url: string;
  seq: number;
  at: number;
  firstAt: number;
  status: number;
  /** Token length of each FIELDS entry (all zero for non-200 rows). */
  lengths: number[];
}

export interface WriteOptions {
  /** Project default language (ISO 639-1) for docs with `language: null`. */
  defaultLanguage: string;
}

/**
 * Writes a new segment file at `path` (must not exist) holding `entries` and `deletes`
 * (the caller has already de-duplicated: at most one entry per URL). Synchronous; fsyncs and
 * closes in `journal_mode=DELETE` so the file is sealed when this returns.
 */
export function writeSegment(_path: string, _entries: SegmentEntry[], _deletes: SegmentDelete[], _opts: WriteOptions): SegmentInfo {
  throw new Error('not implemented yet');
}

/** Read-only view of one segment file. Open once per published segment; close when unreferenced. */
export class SegmentReader {
  readonly path: string;
  readonly info: SegmentInfo;
  private constructor(path: string, info: SegmentInfo) {
    this.path = path;
    this.info = info;
  }
  static open(_path: string): SegmentReader {
    throw new Error('not implemented yet');
  }
  /** Every row, in docId order. */
  rows(): SegmentRow[] {
    throw new Error('not implemented yet');
  }
  deletes(): SegmentDelete[] {
    throw new Error('not implemented yet');
  }
  /** The stored entry of one row. */
  entry(_id: number): SegmentEntry {
    throw new Error('not implemented yet');
  }
  close(): void {}
}
