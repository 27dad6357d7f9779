/**
 * The segment file's surface for other folders: its format and types (segment-format.ts), the
 * build (segment-write.ts) and merge (segment-merge.ts) stages and the postings blob
 * (postings.ts); the reader is segment-reader.ts. Files inside src/index import the stage
 * they need directly.
 */
export {
  FIELDS,
  NFIELDS,
  SEGMENT_FORMAT,
  hashWord,
  type SegmentEntry,
  type SegmentDelete,
  type SegmentInfo,
  type SegmentRow,
} from './segment-format.js';
export { writeSegment, type WriteOptions } from './segment-write.js';
export { mergeSegments, type MergeSource } from './segment-merge.js';
export { decodePostings, type Postings } from './postings.js';
