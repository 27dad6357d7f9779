/**
 * The cron jobs the server starts (src/server.ts): segment merges, file garbage collection,
 * query-log rollup, scheduled recrawls and sitemap imports. Each returns a handle to stop it.
 */
export { startExportJob } from './export.js';
export type { ExportJob } from './export.js';
export { startGcJob } from './gc.js';
export { startMergeJob } from './merge.js';
export { startQueryLogRollup } from './querylog-rollup.js';
export { startRecrawlJob } from './recrawl.js';
export { startSitemapImportJob } from './sitemap-import.js';
