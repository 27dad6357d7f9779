/**
 * Public surface of snapshots: exporting a primary's projects as content-addressed files
 * (export.ts), serving them read-only on a search node (node.ts), restoring a project from
 * them (restore.ts), and the format (format.ts). docs/DEPLOY.md describes the design.
 */
export { DEFAULT_PRUNE_GRACE_MS, SnapshotExporter } from './export.js';
export type { ExportRequest, ExportResult, ExportSources, ProjectExport } from './export.js';
export { SnapshotNode } from './node.js';
export type { PollResult, SnapshotNodeOptions } from './node.js';
export { restoreProject } from './restore.js';
export type { RestoreOptions, RestoreResult } from './restore.js';
export { INDEX_FILE, SNAPSHOT_FORMAT, blobPath, latestPath, manifestPath, parseIndex, parseManifest, sha256 } from './format.js';
export type { ManifestPointer, ProjectManifest, SnapshotIndex, SnapshotKey, SnapshotSegment } from './format.js';
export { isUrl, openSource, openTarget } from './location.js';
export type { SnapshotSource, SnapshotTarget } from './location.js';
