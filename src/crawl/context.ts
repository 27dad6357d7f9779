/**
 * What every stage of the crawler shares (main thread): the service options, the logger, the
 * per-project durable queues, and the crawler's lifecycle and cancellation state.
 *
 * Stages: task intake (./intake.ts) → dispatch under politeness (./dispatch.ts) → one task's
 * fetch and verdict (./fetching.ts) → link discovery (./discovery.ts) → index writes
 * (./indexing.ts) → run progress and task views (./progress.ts); ./service.ts composes them.
 *
 * Invariants: at most one open {@link CrawlQueue} per project and process, opened on use; a
 * queue with no queued or running task is closed once more than {@link MAX_IDLE_QUEUES} such
 * queues are open (least recently used first), so a server with thousands of projects keeps only
 * the queues with work open. Callers use a queue synchronously after taking it (`of`), never
 * across an `await`. A task id in {@link CrawlContext.cancelled} is running and must finish
 * without writing.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { ProjectIndex } from '../index/index.js';
import type { Settings } from '../core/index.js';
import type { Resolver, FetchExtractResult, FetchExtractTask, SitemapFileResult, SitemapFileTask } from '../fetch/index.js';
import { CrawlQueue } from './queue.js';
import type { SitemapLimits } from './sitemap.js';

/** Minimal logger (the platform's Logger fits). */
export interface CrawlLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything (the default). */
export const silentLog: CrawlLog = { info() {}, warn() {}, error() {} };

/** How a `CrawlService` is wired (src/server.ts wires the server's). */
export interface CrawlServiceOptions {
  dataDir: string;
  /** ms since the epoch. */
  clock: () => number;
  /** SITESIFT_CRAWLER_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** The project's settings; throws for an unknown project. */
  settingsOf: (siteId: string) => Settings;
  indexOf: (siteId: string) => Promise<ProjectIndex>;
  /** Runs one fetch-extract task: the pool in production, in-process in tests (nock). */
  runFetch: (task: FetchExtractTask) => Promise<FetchExtractResult>;
  /**
   * DNS for the address guard of the fetches made on this thread: robots.txt, and sitemaps
   * without `runSitemap` (pool threads use the system's).
   */
  resolver?: Resolver;
  /**
   * Fetches and parses one sitemap file: the pool task `read-sitemap` on a running server; by
   * default in process through `resolver` (tests).
   */
  runSitemap?: (task: SitemapFileTask) => Promise<SitemapFileResult>;
  /** Per-import limits of sitemap imports; unset fields keep `DEFAULT_SITEMAP_LIMITS`. */
  sitemapLimits?: Partial<SitemapLimits>;
  /**
   * Fetches (pool tasks) in flight over all projects (default 16). Pages whose fetch is back and
   * that wait for their index commit do not count, up to 4× this many tasks in all.
   */
  maxInFlight?: number;
  /** Attempts per task for 5xx / network errors (default 3) and the first backoff (default 30 s, doubling). */
  maxAttempts?: number;
  retryBaseMs?: number;
  /**
   * Pages of crawl and sitemap runs written between the index flushes the crawler asks for
   * itself, each built as parallel parts (default `RUN_FLUSH_PAGES` of ./indexing.ts).
   */
  runFlushPages?: number;
  log?: CrawlLog;
}

/** Queues without work kept open (the most recently used ones): reopening one costs a file open. */
export const MAX_IDLE_QUEUES = 16;

/** The durable crawl queues of the projects, one per project, opened on demand. */
export class ProjectQueues {
  /** Open queues, least recently used first. */
  private readonly open = new Map<string, CrawlQueue>();

  constructor(
    private readonly dataDir: string,
    private readonly clock: () => number,
    readonly maxIdle = MAX_IDLE_QUEUES,
  ) {}

  /** Queues open now (tests, `GET /admin/memory`). */
  get openCount(): number {
    return this.open.size;
  }

  private file(siteId: string): string {
    return path.join(this.dataDir, 'projects', siteId, 'crawl.db');
  }

  /** The project's queue, opened (and created) on first use. */
  of(siteId: string): CrawlQueue {
    let q = this.open.get(siteId);
    if (q) {
      this.open.delete(siteId);
    } else {
      q = new CrawlQueue(this.file(siteId), this.clock);
      if (this.open.size >= this.maxIdle) this.closeIdle(siteId);
    }
    this.open.set(siteId, q);
    return q;
  }

  /**
   * Closes idle queues (no queued or running task), least recently used first, until at most
   * {@link maxIdle} - 1 idle ones stay open; `except` is left alone. Queues with work stay open
   * whatever their number.
   */
  private closeIdle(except: string): void {
    let idle = 0;
    for (const q of this.open.values()) if (q.idle()) idle++;
    for (const [siteId, q] of this.open) {
      if (idle < this.maxIdle) break;
      if (siteId === except || !q.idle()) continue;
      q.close();
      this.open.delete(siteId);
      idle--;
    }
  }

  /** Closes the project's queue when it has no queued or running task (it reopens on its next use). */
  closeIfIdle(siteId: string): void {
    const q = this.open.get(siteId);
    if (q && q.idle()) {
      q.close();
      this.open.delete(siteId);
    }
  }

  /** The project's queue if it has one (open, or on disk); null without creating one. */
  existing(siteId: string): CrawlQueue | null {
    if (!this.open.has(siteId) && !existsSync(this.file(siteId))) return null;
    return this.of(siteId);
  }

  /** Projects with a queue file on disk (to resume after a restart). */
  onDisk(): string[] {
    const root = path.join(this.dataDir, 'projects');
    if (!existsSync(root)) return [];
    return readdirSync(root).filter((siteId) => existsSync(this.file(siteId)));
  }

  /** The open queues by project (a queue opened while iterating is visited too). */
  entries(): IterableIterator<[string, CrawlQueue]> {
    return this.open.entries();
  }

  /** The project's queue if it is open; null without opening one. */
  opened(siteId: string): CrawlQueue | null {
    return this.open.get(siteId) ?? null;
  }

  /** Closes and forgets one project's queue (if open). */
  drop(siteId: string): void {
    this.open.get(siteId)?.close();
    this.open.delete(siteId);
  }

  /** Closes every open queue. */
  closeAll(): void {
    for (const q of this.open.values()) q.close();
    this.open.clear();
  }
}

/** The state the stages share; owned by the `CrawlService` that builds it. */
export interface CrawlContext {
  readonly opts: CrawlServiceOptions;
  readonly log: CrawlLog;
  readonly queues: ProjectQueues;
  /** Running tasks whose URL was removed from the index: they finish without writing. */
  readonly cancelled: Set<string>;
  /** Page tasks finished since start, by index status (`failed` when none was recorded); read by metrics. */
  readonly outcomes: Map<string, number>;
  /** Between `start()` and `stop()`. */
  started: boolean;
  /** From `stop()` on: no task is handed out, none writes, none is retried. */
  stopped: boolean;
}
