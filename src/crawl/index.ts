/**
 * Public surface of the crawler folder: the service, its factory for a running server, and
 * the pure helpers other folders may use.
 */
import type { Piscina } from 'piscina';
import type { Config } from '../config.js';
import type { IndexRegistry } from '../index/registry.js';
import type { ProjectRegistry } from '../projects/registry.js';
import { batchedPoolFetch } from './pool-fetch.js';
import { CrawlService, type CrawlLog } from './service.js';

export { batchedPoolFetch, type FetchPool } from './pool-fetch.js';
export { CrawlService, taskView, type TaskView, type SitemapImportResult, type CrawlServiceOptions } from './service.js';
export { normalizeUrl, resolveLink } from './url.js';
export { isPrivateAddress } from './address-guard.js';

/**
 * Builds the server's crawler: fetches run in the Piscina pool (`workers/fetch-extract.ts`),
 * settings come from the project registry, pages go to the project's index. Call `start()`
 * once the server is up and `stop()` before the pool is destroyed.
 */
export function createCrawlService(deps: {
  config: Pick<Config, 'dataDir' | 'crawlerAllowPrivate' | 'workers'>;
  clock: () => number;
  pool: Piscina;
  projects: Pick<ProjectRegistry, 'getSettings'>;
  indexes: Pick<IndexRegistry, 'get'>;
  log?: CrawlLog;
}): CrawlService {
  return new CrawlService({
    dataDir: deps.config.dataDir,
    clock: deps.clock,
    allowPrivate: deps.config.crawlerAllowPrivate,
    settingsOf: (siteId) => deps.projects.getSettings(siteId),
    indexOf: (siteId) => deps.indexes.get(siteId),
    runFetch: batchedPoolFetch(deps.pool, { threads: deps.config.workers }),
    // Fetches wait on the network and finished pages wait for their index commit: enough tasks
    // per thread that the pool always has the next page queued (per-host limits still apply).
    maxInFlight: Math.max(16, deps.config.workers * 8),
    ...(deps.log ? { log: deps.log } : {}),
  });
}
