/**
 * Cron job: re-crawl each project's site on its `crawler.recrawlSchedule` (null = never), for
 * projects with `crawler.rootUrls`. Schedules follow settings changes without a restart. The
 * crawl is `CrawlService.startSiteCrawl` (a crawl still running is not doubled); a finished
 * full crawl removes the crawler pages it no longer reached.
 */
import type { CrawlService } from '../src/crawl/service.js';
import { ProjectSchedules, type ScheduleProjects, type Scheduler } from '../src/crawl/schedule.js';

export interface RecrawlJobDeps {
  crawl: Pick<CrawlService, 'startSiteCrawl'>;
  projects: ScheduleProjects;
  onError?: (siteId: string, err: unknown) => void;
  scheduler?: Scheduler;
}

/** Starts the per-project recrawl schedules; `stop()` them at shutdown. */
export function startRecrawlJob(deps: RecrawlJobDeps): ProjectSchedules {
  return new ProjectSchedules({
    name: 'recrawl',
    projects: deps.projects,
    expressionOf: (s) => (s.crawler.rootUrls.length && s.crawler.recrawlSchedule ? s.crawler.recrawlSchedule : null),
    run: (siteId) => deps.crawl.startSiteCrawl(siteId),
    ...(deps.onError ? { onError: deps.onError } : {}),
    ...(deps.scheduler ? { scheduler: deps.scheduler } : {}),
  });
}
