/**
 * Pool task `merge-segments` (worker thread): copies the rows that were live at merge start
 * out of the source segments (plus the delete markers still needed) into one new segment file
 * and returns its {@link SealedSegment} (its info and its rows' liveness columns). The main thread commits it; writes that arrive meanwhile
 * have higher seqs, so the liveness rule makes the merged copies dead without coordination.
 * Payload: {@link MergeSegmentsTask}.
 */
import { runMergeSegments, type MergeSegmentsTask, type SealedSegment } from '../src/index/index.js';

export default function mergeSegments(payload: MergeSegmentsTask): Promise<SealedSegment> {
  return runMergeSegments(payload);
}
