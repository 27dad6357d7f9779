/**
 * Public surface of the crawler (main thread): the service, and the per-project schedules of
 * the crawl jobs. Fetching and extracting one page is src/fetch, which the pool threads load
 * without this folder's queue and scheduler.
 */
export {
  CrawlService,
  taskView,
  TOP_TASK_TYPES,
  type CrawlLog,
  type CrawlServiceOptions,
  type ReindexReport,
  type SitemapImportResult,
  type TaskProgress,
  type TaskState,
  type TaskView,
  type TopTaskType,
} from './service.js';
export { ProjectSchedules, type ProjectJobDeps, type Scheduler, type ScheduleProjects } from './schedule.js';
