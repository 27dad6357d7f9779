/**
 * The objects a running server is made of, built once by `src/server.ts` and passed down
 * explicitly (no module-level singletons). Each member is owned by one folder.
 */
import type { Piscina } from 'piscina';
import type { Config, Logger, MemoryPlan } from './core/index.js';
import type { ProjectRegistry } from './projects/index.js';
import type { IndexRegistry } from './index/index.js';
import type { QueryLogService } from './analytics/index.js';
import type { CrawlService } from './crawl/index.js';
import type { SearchExecutor, SearchService, SuggestService } from './search/index.js';
import type { SnapshotExporter, SnapshotNode } from './snapshot/index.js';

export interface Services {
  config: Config;
  log: Logger;
  /** Milliseconds since the epoch; injected so jobs and tests control time. */
  clock: () => number;
  pool: Piscina;
  projects: ProjectRegistry;
  indexes: IndexRegistry;
  analytics: QueryLogService;
  crawl: CrawlService;
  /** Answers `GET /sites`: pins a generation, consults its answer cache, searches. */
  search: SearchService;
  /** Answers `GET /sites/suggest` the same way, with its own cache. */
  suggest: SuggestService;
  /** Writes snapshots (`POST /admin/export`, the scheduled export); null on a search node. */
  exporter: SnapshotExporter | null;
  /** A search node's snapshot (what it serves, its health); null on a primary. */
  node: SnapshotNode | null;
  /** The split of the memory budget (src/core/memory.ts), made once at start. */
  memory: MemoryPlan;
  /** Where searches run (`GET /admin/memory` asks its threads what their caches hold). */
  executor: SearchExecutor;
}
