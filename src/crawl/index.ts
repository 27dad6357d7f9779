/**
 * Public surface of the crawler folder: the service, the pool fetcher the server gives it, the
 * per-project schedules of the crawl jobs, the pure helpers other folders may use, and the page
 * fetch and extraction the pool threads run (workers/fetch-extract.ts, workers/warm-up.ts).
 */
export { batchedPoolFetch, type FetchPool } from './pool-fetch.js';
export { CrawlService, taskView, type CrawlLog, type CrawlServiceOptions, type SitemapImportResult, type TaskView } from './service.js';
export { ProjectSchedules, type ProjectJobDeps, type Scheduler, type ScheduleProjects } from './schedule.js';
export { normalizeUrl, resolveLink } from './url.js';
export { isPrivateAddress } from './address-guard.js';
export { fetchAndExtract, htmlPage, type FetchExtractResult, type FetchExtractTask } from './page.js';
export type { BatchMessage, FetchExtractBatch } from './pool-fetch.js';
export { pageDoc } from './indexing.js';
export { extractHtml } from './extract/html.js';
