/**
 * Public surface of the crawler folder for the main thread: the service, the pool fetcher the
 * server gives it, the per-project schedules of the crawl jobs, and the pure helpers other
 * folders may use. (Pool workers import the worker-side modules, ./page.ts and ./pool-fetch.ts,
 * directly: this surface would load the main-thread queue into every thread.)
 */
export { batchedPoolFetch, type FetchPool } from './pool-fetch.js';
export { CrawlService, taskView, type CrawlLog, type CrawlServiceOptions, type SitemapImportResult, type TaskView } from './service.js';
export { ProjectSchedules, type ProjectJobDeps, type Scheduler, type ScheduleProjects } from './schedule.js';
export { normalizeUrl, resolveLink } from './url.js';
export { isPrivateAddress } from './address-guard.js';
