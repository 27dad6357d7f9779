/**
 * Starting and stopping one sitesift server (main thread).
 *
 * {@link startServer}: lock the data dir → first-start bootstrap (master key file, project
 * `default`, printed once) → build {@link Services} → listen. `close()` is the graceful
 * shutdown of SPEC §1: stop accepting, let in-flight requests finish, stop cron jobs and the
 * crawler, flush the query log and the indexes, stop the worker pool, release the lock.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { QueryLogOutbox, QueryLogService } from './analytics/index.js';
import { IndexRegistry, setThreadCacheShare } from './index/index.js';
import { type Config, componentLogger, createLogger, type Logger, createPool, runTask, planMemory } from './core/index.js';
import { createApp, createMetrics, startMetricsServer, type AppOptions, answerClientErrors } from './http/index.js';
import { createSearchExecutor, QueryEmbedder, SearchService, SuggestCache, SuggestService, warmerFor } from './search/index.js';
import { embedderSpec, ProjectRegistry } from './projects/index.js';
import { loadWordVectors, sharedWordVectors } from './text/index.js';
import type { Services } from './services.js';
import { CrawlService } from './crawl/index.js';
import { batchedPoolFetch } from './fetch/index.js';
import { SnapshotExporter, SnapshotNode } from './snapshot/index.js';
import { startExportJob, startGcJob, startMergeJob, startQueryLogRollup, startRecrawlJob, startSitemapImportJob } from '../jobs/index.js';

export interface StartOptions {
  /** Where the first-start banner goes (default stdout). */
  stdout?: Writable;
  /** Root logger; default `createLogger(config)` (JSON lines on stdout, asynchronous). Each part logs through its component child. */
  log?: Logger;
  clock?: () => number;
  /** Passed to {@link createApp} (tests add routes). */
  app?: AppOptions;
  /** Start cron jobs (default true; tests that drive jobs by hand pass false). */
  jobs?: boolean;
}

export interface RunningServer {
  /** `http://host:port` actually bound (port 0 → the chosen port). */
  url: string;
  /** `http://host:port` of the separate metrics listener (SITESIFT_METRICS_ADDRESS), or null. */
  metricsUrl: string | null;
  services: Services;
  /** Graceful shutdown; idempotent (later calls return the same promise). */
  close(): Promise<void>;
}

export const MASTER_KEY_FILE = 'master.key';
export const LOCK_FILE = 'sitesift.lock';
/** In-flight requests get this long before their connections are cut during shutdown. */
const DRAIN_MS = 8_000;

/** Reads `<dataDir>/master.key` (trimmed) or null when absent. */
export function readMasterKeyFile(dataDir: string): string | null {
  try {
    const key = readFileSync(path.join(dataDir, MASTER_KEY_FILE), 'utf8').trim();
    return key === '' ? null : key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The data dir is locked by a live sitesift process. `sitesift serve` prints its message as
 * one line and exits 1 without a stack: this is an operator's situation, not a bug.
 */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data directory ${dataDir} is in use by another sitesift process (pid ${pid}); stop it or use another SITESIFT_DATA_DIR`);
    this.name = 'DataDirInUseError';
  }
}

/**
 * Takes the data-dir lock (`sitesift.lock` holding the owner's pid) so two servers never
 * open one data dir. A lock whose pid is gone (crash, `kill -9`) is taken over.
 * Returns the release function.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
        throw new DataDirInUseError(dataDir, pid);
      }
      unlinkSync(file);
    }
  }
  throw new Error(`could not lock data directory ${dataDir}`);
}

/** A master key: `ssm_` + 32 random bytes in base64url. */
export function generateMasterKey(): string {
  return 'ssm_' + randomBytes(32).toString('base64url');
}

/**
 * Starts a server for `config`. Rejects (nothing left open) when the data dir is locked or a
 * component fails to open.
 */
export async function startServer(config: Readonly<Config>, opts: StartOptions = {}): Promise<RunningServer> {
  const root = opts.log ?? createLogger(config);
  const log = componentLogger(root, 'server');
  const indexLog = componentLogger(root, 'index');
  const analyticsLog = componentLogger(root, 'analytics');
  const jobsLog = componentLogger(root, 'jobs');
  const clock = opts.clock ?? Date.now;
  const stdout = opts.stdout ?? process.stdout;
  const cleanups: Array<() => unknown> = [];
  const undo = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        log.error({ err }, 'cleanup after failed start');
      }
    }
  };

  mkdirSync(config.dataDir, { recursive: true });
  // "Empty" = nothing but (maybe) dotfiles: the first start of this data dir.
  const fresh = readdirSync(config.dataDir).every((f) => f.startsWith('.'));
  cleanups.push(lockDataDir(config.dataDir));

  try {
    // ---- master key: env/flag, else the key file, else generate one (first start).
    let masterKey = config.masterKey ?? readMasterKeyFile(config.dataDir);
    let generatedKey = false;
    if (masterKey === null) {
      masterKey = generateMasterKey();
      const keyPath = path.join(config.dataDir, MASTER_KEY_FILE);
      writeFileSync(keyPath, masterKey + '\n', { mode: 0o600, flag: 'wx' });
      chmodSync(keyPath, 0o600); // the umask may have widened the mode on creation
      generatedKey = true;
    }
    const cfg: Readonly<Config> = Object.freeze({ ...config, masterKey });

    const projects = ProjectRegistry.open(cfg.dataDir, { clock, log });
    cleanups.push(() => projects.close());
    // A read-only search node gets its projects from the snapshot, so only a primary bootstraps one.
    const firstProject = fresh && generatedKey && cfg.role === 'primary' ? projects.createProject('default', 'Default project') : null;

    // The built-in embedder's word vectors (make embeddings); without them, projects using it search lexically.
    const wordVectors = cfg.wordVectors !== 'none' && existsSync(cfg.wordVectors) ? cfg.wordVectors : null;
    if (!wordVectors && cfg.wordVectors !== 'none') log.warn({ file: cfg.wordVectors }, 'word vectors missing (run make embeddings): the built-in embedder is off, its projects search lexically');
    // Loaded once here and shared with the pool threads that embed pages (one copy in the process).
    if (wordVectors) {
      try {
        loadWordVectors(wordVectors);
      } catch (err) {
        log.warn({ file: wordVectors, err: (err as Error).message }, 'word vectors unreadable: projects using the built-in embedder search lexically');
      }
    }
    // Warm threads (workers/warm-up.ts): started now and kept, so a crawl never runs on cold code.
    const pool = createPool({ workers: cfg.workers, nice: cfg.workerNice, warmUp: true, shared: { wordVectors: sharedWordVectors() } });
    cleanups.push(() => pool.destroy());
    // One memory budget (src/core/memory.ts): each thread and cache gets its share of it.
    const memory = planMemory(cfg);
    if (memory.main.search === null) setThreadCacheShare({ engineMb: memory.main.readersMb / 2, pageCacheMb: memory.main.readersMb / 2 });
    const executor = createSearchExecutor(cfg.searchThreads, memory.main.search ?? memory.searchThreads.share!, cfg.openProjects);
    cleanups.push(() => executor.close());

    const embedderOf = (siteId: string) => (projects.hasProject(siteId) ? embedderSpec(projects.getSettings(siteId).search.semantic, wordVectors) : null);

    // ---- stores owned by other folders -------------------------------------------------
    // At most cfg.openProjects indexes and query logs stay open; the crawler's projects stay
    // open while it has tasks for them (it holds their index across fetches).
    let crawlRef: CrawlService | null = null;
    const indexes = new IndexRegistry({
      maxOpen: cfg.openProjects,
      inUse: (siteId) => (crawlRef?.pending(siteId) ?? 0) > 0,
      dataDir: cfg.dataDir,
      pool,
      refreshMs: cfg.refreshMs,
      clock,
      log: { info: (m) => indexLog.info(m), warn: (m) => indexLog.warn(m), error: (m) => indexLog.error(m) },
      defaultLanguage: (siteId) => (projects.hasProject(siteId) ? projects.getSettings(siteId).search.language : 'en'),
      embedder: embedderOf,
      ...(cfg.testPauseIn === 'build' || cfg.testPauseIn === 'merge' || cfg.testPauseIn === 'commit' || cfg.testPauseIn === 'manifest' ? { pauseIn: cfg.testPauseIn } : {}),
    });
    cleanups.push(() => indexes.closeAll());
    // A search node (any server given a primary) forwards its query log through a durable outbox.
    let outbox: QueryLogOutbox | null = null;
    if (cfg.primaryUrl !== null) {
      if (cfg.nodeKey === null) log.warn({ primaryUrl: cfg.primaryUrl }, 'SITESIFT_PRIMARY_URL is set but SITESIFT_NODE_KEY is not: the query log stays on this node');
      else {
        const box = new QueryLogOutbox({ dataDir: cfg.dataDir, primaryUrl: cfg.primaryUrl, nodeKey: cfg.nodeKey, intervalMs: cfg.queryLogPushMs, log });
        outbox = box;
        cleanups.push(() => box.close());
      }
    }
    const analytics = new QueryLogService({
      ...(outbox ? { forward: (entry) => outbox.add(entry) } : {}),
      dataDir: cfg.dataDir,
      clock,
      settingsOf: (siteId) => (projects.hasProject(siteId) ? projects.getSettings(siteId).analytics : undefined),
      maxOpenSites: cfg.openProjects,
      pageCacheMb: memory.main.queryLogMb,
      onError: (err, context) => analyticsLog.error({ err, context }, 'query log failure'),
    });
    cleanups.push(() => analytics.close());
    const crawl = new CrawlService({
      dataDir: cfg.dataDir,
      clock,
      allowPrivate: cfg.crawlerAllowPrivate,
      settingsOf: (siteId) => projects.getSettings(siteId),
      indexOf: (siteId) => indexes.get(siteId),
      // Pages go to the pool in batches, one per thread, fetched concurrently (src/fetch/pool-fetch.ts).
      runFetch: batchedPoolFetch(pool, { threads: cfg.workers }),
      // Each sitemap file is fetched and parsed in the pool (workers/read-sitemap.ts).
      runSitemap: (task) => runTask(pool, 'read-sitemap', { ...task }),
      sitemapLimits: {
        maxDepth: cfg.sitemapMaxDepth,
        maxFiles: cfg.sitemapMaxFiles,
        maxUrls: cfg.sitemapMaxUrls,
        maxBytes: cfg.sitemapMaxMb * 1024 * 1024,
        timeoutMs: cfg.sitemapTimeoutMs,
      },
      log: componentLogger(root, 'crawl'),
    });
    crawlRef = crawl;
    cleanups.push(() => crawl.stop());

    // The routes' one way to search: each service pins its snapshot and owns its answer cache.
    // A search node answers from its snapshot (src/snapshot/node.ts) instead of its own indexes.
    const queryEmbedder = new QueryEmbedder();
    const node =
      cfg.role === 'search'
        ? new SnapshotNode({
            source: cfg.snapshot!,
            cacheDir: path.join(cfg.dataDir, 'snapshot'),
            executor,
            pollMs: cfg.snapshotPollMs,
            searchCacheBytes: Math.floor(memory.main.searchAnswersMb * 1024 * 1024),
            log,
            clock,
            wordVectors,
            queryEmbedder,
          })
        : null;
    if (node) {
      projects.serveFrom(node.overlay);
      cleanups.push(() => node.close());
    }
    const sources = { projects, indexes, executor, embedderOf, queryEmbedder };
    cleanups.push(() => warmerFor(sources).stop());
    const search = node?.search ?? new SearchService(sources, Math.floor(memory.main.searchAnswersMb * 1024 * 1024));
    const suggest =
      node?.suggest ??
      new SuggestService(
        { ...sources, querySuggestions: (siteId, query, o) => analytics.querySuggestions(siteId, query, o) },
        new SuggestCache(8192, Math.floor(memory.main.suggestAnswersMb * 1024 * 1024)),
      );
    const exporter =
      cfg.role === 'primary'
        ? new SnapshotExporter({
            projects,
            indexes,
            suggestionRows: (siteId) => analytics.suggestionStamp(siteId).rows(),
            clock,
            log,
            pauseAt: cfg.testPauseIn === 'export-blob' || cfg.testPauseIn === 'export-index' ? cfg.testPauseIn : null,
          })
        : null;

    const services: Services = { config: cfg, log: root, clock, pool, projects, indexes, analytics, crawl, search, suggest, exporter, node, memory, executor };

    // Deleting a project removes all its data (SPEC §7): index, query log, crawl queue.
    projects.onDelete(async (siteId) => {
      crawl.dropSite(siteId);
      await indexes.drop(siteId);
      analytics.dropSite(siteId);
    });

    // ---- background work
    analytics.start();
    outbox?.start();
    if (cfg.role === 'primary') crawl.start();
    if (opts.jobs !== false) {
      const rollup = startQueryLogRollup({ analytics, clock, onError: (err) => jobsLog.error({ err }, 'query log rollup failed') });
      cleanups.push(() => rollup.stop());
      const onIndexError = (siteId: string, err: unknown) => jobsLog.error({ err, siteId }, 'index maintenance failed');
      const merges = startMergeJob({ indexes, onError: onIndexError });
      cleanups.push(() => merges.stop());
      const gc = startGcJob({ indexes, onError: onIndexError });
      cleanups.push(() => gc.stop());
      if (cfg.role === 'primary') {
        // Per-project sitemap imports and recrawls on their settings' cron expressions.
        const onCrawlError = (siteId: string, err: unknown) => jobsLog.error({ err, siteId }, 'crawl schedule failed');
        const sitemaps = startSitemapImportJob({ crawl, projects, onError: onCrawlError });
        cleanups.push(() => sitemaps.stop());
        const recrawls = startRecrawlJob({ crawl, projects, onError: onCrawlError });
        cleanups.push(() => recrawls.stop());
        if (exporter && cfg.exportSchedule && cfg.exportOut) {
          const exports = startExportJob({
            exporter,
            schedule: cfg.exportSchedule,
            out: cfg.exportOut,
            pruneGraceMs: cfg.exportPruneGraceMs,
            onError: (err) => jobsLog.error({ err }, 'scheduled export failed'),
          });
          cleanups.push(() => exports.stop());
        }
      }
    }

    // ---- HTTP
    const metrics = createMetrics(services);
    const app = createApp(services, { ...opts.app, metrics });
    const server = http.createServer(app.callback());
    // Slow clients must not hold a socket forever; generous enough for 10 MiB uploads.
    server.requestTimeout = 120_000;
    server.headersTimeout = 30_000;
    // An idle keep-alive connection stays open longer than the proxies in front of a server keep
    // theirs (nginx's upstream keepalive_timeout is 60 s): with Node's 5 s, a proxy or client
    // could send a request on a socket the server had just closed and get a reset (ECONNRESET,
    // a 502 from nginx). Clients read the advertised `Keep-Alive: timeout=65`.
    server.keepAliveTimeout = 65_000;
    // Malformed HTTP gets the JSON error body too, and floods of it one log line a minute.
    answerClientErrors(server, componentLogger(root, 'http'), clock);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(cfg.port, cfg.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    node?.start();
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const url = `http://${host}:${addr.port}`;
    let metricsUrl: string | null = null;
    if (cfg.metricsAddress) {
      try {
        const ms = await startMetricsServer(metrics, cfg.metricsAddress.host, cfg.metricsAddress.port);
        cleanups.push(() => ms.close());
        metricsUrl = ms.url;
      } catch (err) {
        server.close();
        throw err;
      }
    }
    log.info({ url, ...(metricsUrl ? { metricsUrl } : {}), dataDir: cfg.dataDir, role: cfg.role, workers: cfg.workers, searchThreads: cfg.searchThreads }, 'listening');
    log.info({ memory }, 'memory plan');

    if (firstProject) {
      stdout.write(banner(url, cfg.dataDir, masterKey, firstProject.key.token));
    } else if (generatedKey) {
      stdout.write(
        `\nsitesift: generated a new master key (shown once; also saved in ${path.join(cfg.dataDir, MASTER_KEY_FILE)}, mode 0600):\n  ${masterKey}\n\n`,
      );
    }

    let closing: Promise<void> | null = null;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        log.info({}, 'shutting down');
        await new Promise<void>((resolve) => {
          const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
          cut.unref();
          server.close(() => {
            clearTimeout(cut);
            resolve();
          });
          server.closeIdleConnections();
        });
        await undo();
        log.info({}, 'stopped');
        log.flush();
      })();
      return closing;
    };
    return { url, metricsUrl, services, close };
  } catch (err) {
    await undo();
    throw err;
  }
}

function banner(url: string, dataDir: string, masterKey: string, token: string): string {
  const doc = JSON.stringify({ url: 'https://example.com/hello', title: 'Hello sitesift', content: 'My first indexed page.' });
  return [
    '',
    'sitesift: first start — credentials below are shown ONCE; store them now.',
    `  master key : ${masterKey}`,
    `               (saved in ${path.join(dataDir, MASTER_KEY_FILE)}, mode 0600; admin API and CLI)`,
    `  project    : default`,
    `  API key    : ${token}`,
    '',
    '  Index a page, then search it:',
    // refresh=true: the push answers once the page is searchable, so the next line finds it.
    `  curl -X POST '${url}/sites/pageJson?token=${token}&refresh=true' -H 'Content-Type: application/json' -d '${doc}'`,
    `  curl '${url}/sites?site=default&query=hello'`,
    '',
    '',
  ].join('\n');
}

/** True when `dataDir` has a master key file (used by the CLI to find credentials). */
export function hasMasterKeyFile(dataDir: string): boolean {
  return existsSync(path.join(dataDir, MASTER_KEY_FILE));
}
