/**
 * The crawler of a running server (main thread): URL pushes, site crawls and sitemap imports
 * feed one durable queue per project; a single dispatcher hands ready tasks to the worker pool
 * under per-host politeness, and every outcome is written to the project's index.
 *
 * This file composes the stages and owns the lifecycle; each stage lives in a file named after
 * it: ./intake.ts (queueing what is asked for) → ./dispatch.ts (when a task may start) →
 * ./fetching.ts (one task: rules, robots.txt, fetch, verdict) → ./discovery.ts (links and
 * canonical URLs queued) → ./indexing.ts (outcomes written, runs flushed) → ./progress.ts (task
 * views, run completion). ./context.ts holds what they share.
 *
 * Invariants:
 * - Every task ends `done` (an outcome was recorded) or `failed` (retries exhausted, cancelled,
 *   or an appended fetch that produced nothing); a restart re-runs tasks that were `running`.
 * - Control Panel rules apply to URL-only pages; appended content (JSON pages) never goes
 *   through them, and a crawl never turns a JSON-pushed page into a skipped entry.
 * - Newest write wins: a JSON push that lands after a crawl task was queued is never
 *   overwritten by that task.
 */
import { AppError, type PageDoc } from '../core/index.js';
import { readSitemapFile as readSitemapFileInProcess, systemResolver, type SitemapFileTask } from '../fetch/index.js';
import { ProjectQueues, silentLog, type CrawlContext, type CrawlServiceOptions } from './context.js';
import { Dispatcher } from './dispatch.js';
import { TaskRunner } from './fetching.js';
import { OutcomeWriter } from './indexing.js';
import { TaskIntake } from './intake.js';
import { HostGate } from './politeness.js';
import { RunProgress, taskView, type SitemapImportResult, type TaskView } from './progress.js';
import type { ReportedProgress, TaskState, TopTaskType } from './queue.js';
import { RobotsCache } from './robots.js';
import { DEFAULT_SITEMAP_LIMITS } from './sitemap.js';

export type { CrawlLog, CrawlServiceOptions } from './context.js';
export { allowedHostsOf } from './discovery.js';
export { appendFetched, RUN_FLUSH_MIN_PART_DOCS, RUN_FLUSH_PAGES } from './indexing.js';
export { taskView, type SitemapImportResult, type TaskProgress, type TaskView } from './progress.js';
export { TOP_TASK_TYPES, type TaskState, type TopTaskType } from './queue.js';

/** What a reindex task's client reports (`PATCH /tasks/{taskId}`); absent fields keep their value. */
export interface ReindexReport {
  found?: number;
  indexed?: number;
  failed?: number;
  state?: 'running' | 'done' | 'failed';
  message?: string;
}

/**
 * The crawler. One instance per server; see the module comment.
 *
 * @example
 * const crawl = new CrawlService({ dataDir, clock: Date.now, allowPrivate: false, settingsOf, indexOf, runFetch });
 * crawl.start();
 * const task = await crawl.pushUrl('docs', 'https://docs.example.org/intro.html');
 * await crawl.idle('docs');
 * crawl.getTask('docs', task.taskId); // { state: 'done', indexStatus: 200, … }
 * await crawl.stop();
 */
export class CrawlService {
  private readonly ctx: CrawlContext;
  private readonly writer: OutcomeWriter;
  private readonly progress: RunProgress;
  private readonly dispatcher: Dispatcher;
  private readonly intake: TaskIntake;

  constructor(opts: CrawlServiceOptions) {
    const ctx: CrawlContext = {
      opts,
      log: opts.log ?? silentLog,
      queues: new ProjectQueues(opts.dataDir, opts.clock),
      cancelled: new Set(),
      outcomes: new Map(),
      started: false,
      stopped: false,
    };
    const resolver = opts.resolver ?? systemResolver;
    const gate = new HostGate();
    const robots = new RobotsCache({ clock: opts.clock, resolver, allowPrivate: opts.allowPrivate });
    this.ctx = ctx;
    this.writer = new OutcomeWriter(ctx);
    this.progress = new RunProgress(ctx, this.writer);
    this.dispatcher = new Dispatcher(ctx, gate, new TaskRunner(ctx, gate, robots, this.writer, this.progress));
    const readSitemapFile = opts.runSitemap ?? ((task: SitemapFileTask) => readSitemapFileInProcess(task, resolver));
    const sitemapLimits = { ...DEFAULT_SITEMAP_LIMITS, ...opts.sitemapLimits };
    this.intake = new TaskIntake(ctx, readSitemapFile, sitemapLimits, this.progress, () => this.dispatcher.wake());
  }

  /** Opens the queues found on disk and resumes them (tasks that were running run again). */
  start(): void {
    const { ctx } = this;
    if (ctx.started) return;
    ctx.started = true;
    ctx.stopped = false;
    for (const siteId of ctx.queues.onDisk()) {
      try {
        ctx.opts.settingsOf(siteId);
        const q = ctx.queues.of(siteId);
        // A run whose last page finished just before a crash was never marked done.
        for (const run of q.activeRuns()) this.progress.settle(siteId, q, run);
        // Only queues with work stay open: a server with many projects holds no idle ones.
        q.commit();
        ctx.queues.closeIfIdle(siteId);
      } catch {
        // A project folder without a project (deleted while down): leave it alone.
      }
    }
    this.dispatcher.wake();
  }

  /**
   * Stops handing out tasks, waits up to `graceMs` for in-flight tasks, and closes the queues.
   * Tasks still running stay `running` on disk and run again after the next start.
   */
  async stop(graceMs = 5000): Promise<void> {
    this.ctx.stopped = true;
    await this.dispatcher.drain(graceMs);
    this.ctx.queues.closeAll();
    this.ctx.started = false;
    this.dispatcher.releaseIdleWaiters();
  }

  /** Forgets a deleted project's queue (its folder is removed by the index registry). */
  dropSite(siteId: string): void {
    const q = this.ctx.queues.opened(siteId);
    if (!q) return;
    for (const id of q.runningMatching(() => true)) this.ctx.cancelled.add(id);
    this.ctx.queues.drop(siteId);
    this.writer.forget(siteId);
  }

  /**
   * Queues one URL (`POST /index/documents?url=`), or — with `appendTo` — the fetch whose text
   * is appended to that JSON page (`appendPageContent`). Call it after the JSON write resolved.
   * Throws for an unknown project, a URL that is not absolute http(s), or while stopping.
   */
  pushUrl(siteId: string, rawUrl: string, opts: { appendTo?: PageDoc } = {}): Promise<TaskView> {
    return this.intake.pushUrl(siteId, rawUrl, opts);
  }

  /** A task of the project, or null. */
  getTask(siteId: string, taskId: string): TaskView | null {
    return this.progress.getTask(siteId, taskId);
  }

  /**
   * A page of the project's tasks, newest first, with their progress (`GET /tasks`).
   *
   * @example crawl.listTasks('docs', { type: 'crawl', state: 'running', offset: 0, limit: 50 })
   */
  listTasks(siteId: string, filter: { state?: TaskState; type?: TopTaskType; offset: number; limit: number }): { total: number; tasks: TaskView[] } {
    return this.progress.listTasks(siteId, filter);
  }

  /**
   * Records a bulk import (`sitesift index`) as a `reindex` task, running, so that it is listed
   * with the crawler's tasks; its client reports its counts with {@link reportReindex}.
   * `source` names what is imported (shown as the task's message).
   */
  createReindexTask(siteId: string, source?: string): TaskView {
    this.ctx.opts.settingsOf(siteId); // unknown project → throws
    const q = this.ctx.queues.of(siteId);
    const task = q.add({ type: 'reindex', origin: 'reindex', state: 'running' });
    q.report(task.id, { found: 0, indexed: 0, failed: 0 }, undefined, source ? `Bulk import of ${source}` : 'Bulk import');
    q.commit(); // the task id is acknowledged to the client
    return taskView(q.get(task.id)!);
  }

  /**
   * Stores a reindex task's reported counts and state. Null for an id that is not the
   * project's; 409 `conflict` for a task the crawler runs, or one already done or failed.
   */
  reportReindex(siteId: string, taskId: string, report: ReindexReport): TaskView | null {
    const q = this.ctx.queues.existing(siteId);
    const t = q?.get(taskId);
    if (!q || !t) return null;
    if (t.type !== 'reindex') throw new AppError('conflict', `Task ${taskId} is a ${t.type} task; only reindex tasks take reported progress (the crawler updates its own).`, 'taskId');
    if (t.state === 'done' || t.state === 'failed') throw new AppError('conflict', `Task ${taskId} is already ${t.state}.`, 'state');
    const before: ReportedProgress = t.reported ?? { found: 0, indexed: 0, failed: 0 };
    const next: ReportedProgress = { found: report.found ?? before.found, indexed: report.indexed ?? before.indexed, failed: report.failed ?? before.failed };
    q.report(taskId, next, report.state, report.message);
    q.commit();
    return taskView(q.get(taskId)!);
  }

  /** Queued or running page tasks of the project (`pending` of indexStatus). */
  pending(siteId: string): number {
    return this.progress.pending(siteId);
  }

  /**
   * Page tasks finished since the server started, by index status (`"200"`, `"404"`, `"801"`;
   * `"failed"` for a task that ended without one): the crawl's fetches by status, for metrics.
   */
  fetchOutcomes(): ReadonlyMap<string, number> {
    return this.ctx.outcomes;
  }

  /** Queued or running page tasks of every project whose queue is open (metrics). */
  queueDepths(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [siteId, q] of this.ctx.queues.entries()) out.set(siteId, q.pending());
    return out;
  }

  /** {@link pending} under the name the reports route looks for. */
  pendingCount(siteId: string): number {
    return this.progress.pending(siteId);
  }

  /**
   * Cancels queued crawls whose URL matches (deleting pages cancels their crawls); running ones
   * finish without writing. Returns how many were cancelled.
   */
  cancel(siteId: string, predicate: (url: string) => boolean): number {
    return this.intake.cancel(siteId, predicate);
  }

  /**
   * Starts a site crawl (`POST /sites/crawl`, recrawl schedule): breadth-first from `rootUrls`
   * within the allowed hosts to `maxDepth` / `maxPages`. A crawl already running is returned
   * instead of starting a second one.
   */
  startSiteCrawl(siteId: string): Promise<TaskView> {
    return this.intake.startSiteCrawl(siteId);
  }

  /**
   * Imports the project's sitemaps now (`POST /sites/sitemap`, the sitemap schedule): queues
   * URLs that are new, whose lastmod changed, or that have no lastmod; with `removeMissing`
   * removes sitemap pages that left the sitemaps (only after a read without errors).
   */
  importSitemaps(siteId: string): Promise<SitemapImportResult> {
    return this.intake.importSitemaps(siteId);
  }

  /**
   * Resolves when the project (or every project) has no task ready now and none running —
   * tasks waiting for a later retry do not count. For tests and the benchmark.
   */
  idle(siteId?: string): Promise<void> {
    return this.dispatcher.idle(siteId);
  }

  /** Runs the scheduler now (after enqueueing, and when a test advanced its clock). */
  wake(): void {
    this.dispatcher.wake();
  }
}
