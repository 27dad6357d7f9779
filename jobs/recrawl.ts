/**
 * Cron job: re-crawl each project's site on its `crawler.recrawlSchedule` (null = never), for
 * projects with `crawler.rootUrls`. Schedules follow settings changes without a restart. The
 * crawl is `CrawlService.startSiteCrawl` (a crawl still running is not doubled); a finished
 * full crawl removes the crawler pages it no longer reached.
 */
import { ProjectSchedules, type CrawlService, type ProjectJobDeps } from '../src/crawl/index.js';

export interface RecrawlJobDeps extends ProjectJobDeps {
  crawl: Pick<CrawlService, 'startSiteCrawl'>;
}

/** Starts the per-project recrawl schedules; `stop()` them at shutdown. */
export function startRecrawlJob({ crawl, ...deps }: RecrawlJobDeps): ProjectSchedules {
  return new ProjectSchedules({
    ...deps,
    name: 'recrawl',
    expressionOf: (s) => (s.crawler.rootUrls.length && s.crawler.recrawlSchedule ? s.crawler.recrawlSchedule : null),
    run: (siteId) => crawl.startSiteCrawl(siteId),
  });
}
