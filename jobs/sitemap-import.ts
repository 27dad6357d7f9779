/**
 * Cron job: import each project's sitemaps on its `crawler.sitemapSchedule` (default daily),
 * for projects that list `crawler.sitemapUrls`. Schedules follow settings changes without a
 * restart. The import itself is `CrawlService.importSitemaps` (src/crawl/intake.ts): only URLs
 * whose lastmod changed (or that have none) are queued; `removeMissing` drops pages that left.
 *
 * Tests inject `scheduler` and call the captured tick, so they never sleep.
 */
import type { CrawlService } from '../src/crawl/service.js';
import { ProjectSchedules, type ScheduleProjects, type Scheduler } from '../src/crawl/schedule.js';

export interface SitemapImportJobDeps {
  crawl: Pick<CrawlService, 'importSitemaps'>;
  projects: ScheduleProjects;
  onError?: (siteId: string, err: unknown) => void;
  scheduler?: Scheduler;
}

/** Starts the per-project sitemap schedules; `stop()` them at shutdown. */
export function startSitemapImportJob(deps: SitemapImportJobDeps): ProjectSchedules {
  return new ProjectSchedules({
    name: 'sitemap-import',
    projects: deps.projects,
    expressionOf: (s) => (s.crawler.sitemapUrls.length && s.crawler.sitemapSchedule ? s.crawler.sitemapSchedule : null),
    run: (siteId) => deps.crawl.importSitemaps(siteId),
    ...(deps.onError ? { onError: deps.onError } : {}),
    ...(deps.scheduler ? { scheduler: deps.scheduler } : {}),
  });
}
