/**
 * Public surface of the segment store: the contract routes and the search engine read
 * (snapshots, live segments, write operations), the per-project registry, the segment format
 * and its reader, the pool tasks that build and merge segments, and the engine cache budgets.
 * Imports src/core and src/text only.
 *
 * @example
 * const snapshot = (await registry.get(siteId)).acquire();
 * try { … snapshot.segments … } finally { snapshot.release(); }
 */
export type { EntryListingQuery, EntryListingRow, IndexSnapshot, LiveSegment, ProjectIndex, WriteOp } from './contract.js';
export { pinnedSnapshot } from './contract.js';
export { IndexRegistry } from './registry.js';
export { DEFAULT_MAX_BUFFERED_DOCS } from './store.js';
export { engineCacheBudget, engineCacheUsed, evictByClock, inPostingsScope, postingsPool, readerPageCaches, scratchFloat64, setSearchMemoryMb, setThreadCacheShare, threadCacheUsage } from './budgets.js';
export type { ClockEntry, ThreadCacheUsage } from './budgets.js';
export { NFIELDS, hashWord, mergeSegments, writeSegment } from './segment.js';
export type { Postings, SegmentEntry, SegmentInfo } from './segment.js';
export { SegmentReader, readRowColumns } from './segment-reader.js';
export type { ResultCard, RowColumns, SegmentVectors } from './segment-reader.js';
export { allocRowVectors, vectorMemoryOptions } from './vector-memory.js';
export type { RowVectorBlock } from './vector-memory.js';
export { decideFromScratch } from './generations.js';
export type { SegState } from './generations.js';
export { runBuildSegment, runMergeSegments } from './tasks.js';
export type { SealedSegment } from './tasks.js';
export type { BuildSegmentTask, MergeSegmentsTask } from './tasks.js';
export { MANIFEST_FORMAT, writeManifest } from './manifest.js';
export type { Manifest, ManifestSegment } from './manifest.js';
export type { TaskPool } from './tasks.js';
