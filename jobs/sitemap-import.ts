/**
 * Cron job: import each project's sitemaps on its `crawler.sitemapSchedule` (default daily),
 * for projects that list `crawler.sitemapUrls`. Schedules follow settings changes without a
 * restart. The import itself is `CrawlService.importSitemaps` (src/crawl/intake.ts): only URLs
 * whose lastmod changed (or that have none) are queued; `removeMissing` drops pages that left.
 *
 * Tests inject `scheduler` and call the captured tick, so they never sleep.
 */
import { ProjectSchedules, type CrawlService, type ProjectJobDeps } from '../src/crawl/index.js';

export interface SitemapImportJobDeps extends ProjectJobDeps {
  crawl: Pick<CrawlService, 'importSitemaps'>;
}

/** Starts the per-project sitemap schedules; `stop()` them at shutdown. */
export function startSitemapImportJob({ crawl, ...deps }: SitemapImportJobDeps): ProjectSchedules {
  return new ProjectSchedules({
    ...deps,
    name: 'sitemap-import',
    expressionOf: (s) => (s.crawler.sitemapUrls.length && s.crawler.sitemapSchedule ? s.crawler.sitemapSchedule : null),
    run: (siteId) => crawl.importSitemaps(siteId),
  });
}
