/**
 * Stage: task intake (main thread). Turns the crawler's entry points — a pushed URL
 * (`POST /index/documents?url=`, also with appended JSON content), a site crawl (`POST
 * /sites/crawl`, the recrawl schedule), a sitemap import (`POST /sites/sitemap`, the sitemap
 * schedule) and the cancellation of deleted URLs — into tasks of the project's durable queue,
 * then wakes the dispatcher.
 *
 * Invariants:
 * - A task id is committed to the queue before it is returned (a client may ask for it at once).
 * - One site crawl per project at a time: starting another returns the running one.
 * - A URL push already queued is returned instead of queued twice (appends always queue).
 * - Sitemap removals touch only pages the sitemap brought in, and only after a whole read (no
 *   errors, nothing cut by a limit, at least one URL).
 */
import { AppError, badParam, type PageDoc } from '../core/index.js';
import type { WriteOp } from '../index/index.js';
import { isHttpUrl, normalizeUrl, type SitemapFileResult, type SitemapFileTask } from '../fetch/index.js';
import type { CrawlContext } from './context.js';
import { enqueueRunPage } from './discovery.js';
import { baseSeqOf, entryInfo } from './indexing.js';
import { taskView, type RunProgress, type SitemapImportResult, type TaskView } from './progress.js';
import { readSitemaps, type SitemapLimits } from './sitemap.js';

/** Queues the work the crawler is asked for. */
export class TaskIntake {
  constructor(
    private readonly ctx: CrawlContext,
    private readonly readSitemapFile: (task: SitemapFileTask) => Promise<SitemapFileResult>,
    private readonly sitemapLimits: SitemapLimits,
    private readonly progress: RunProgress,
    private readonly wake: () => void,
  ) {}

  private assertRunning(): void {
    if (this.ctx.stopped) throw new AppError('overloaded', 'The crawler is shutting down; try again in a moment.', undefined, undefined, { 'Retry-After': '5' });
  }

  /** See `CrawlService.pushUrl`. */
  async pushUrl(siteId: string, rawUrl: string, opts: { appendTo?: PageDoc } = {}): Promise<TaskView> {
    this.assertRunning();
    this.ctx.opts.settingsOf(siteId); // unknown project → throws
    if (!isHttpUrl(rawUrl)) throw badParam('url', `"url" must be an absolute http(s) URL, got ${JSON.stringify(rawUrl)}.`);
    // The URL is the identity: keep the pushed spelling for appends (it is the JSON page's URL).
    const url = opts.appendTo ? opts.appendTo.url : (normalizeUrl(rawUrl) ?? rawUrl);
    // The index first: a queue is used only synchronously once taken (src/crawl/context.ts).
    const index = await this.ctx.opts.indexOf(siteId);
    const q = this.ctx.queues.of(siteId);
    if (!opts.appendTo) {
      const existing = q.queuedFor(url, 'url');
      if (existing) return taskView(existing);
    }
    const task = q.add({ type: opts.appendTo ? 'append' : 'url', origin: 'url', url, baseSeq: baseSeqOf(index, url), appendTo: opts.appendTo ?? null });
    q.commit(); // the task id is acknowledged to the client
    this.wake();
    return taskView(task);
  }

  /** See `CrawlService.startSiteCrawl`. */
  async startSiteCrawl(siteId: string): Promise<TaskView> {
    this.assertRunning();
    const s = this.ctx.opts.settingsOf(siteId).crawler;
    if (!s.rootUrls.length) throw badParam('rootUrls', 'The project has no crawler.rootUrls; set them in the settings before starting a crawl.');
    const index = await this.ctx.opts.indexOf(siteId);
    const q = this.ctx.queues.of(siteId);
    const active = q.activeRuns().find((r) => r.type === 'crawl');
    if (active) return taskView(active);
    const run = q.add({ type: 'crawl', origin: 'crawl', url: s.rootUrls[0], state: 'running' });
    for (const root of s.rootUrls) enqueueRunPage(q, index, run, root, 0, 'crawl', s.maxPages);
    this.progress.settle(siteId, q, q.get(run.id));
    q.commit();
    this.wake();
    return taskView(q.get(run.id)!);
  }

  /** See `CrawlService.importSitemaps`. */
  async importSitemaps(siteId: string): Promise<SitemapImportResult> {
    this.assertRunning();
    const s = this.ctx.opts.settingsOf(siteId).crawler;
    if (!s.sitemapUrls.length) throw badParam('sitemapUrls', 'The project has no crawler.sitemapUrls; set them in the settings before importing.');
    const read = await readSitemaps(s.sitemapUrls, {
      userAgent: s.userAgent,
      timeoutMs: s.timeoutMs,
      allowPrivate: this.ctx.opts.allowPrivate,
      limits: this.sitemapLimits,
      readFile: this.readSitemapFile,
      clock: this.ctx.opts.clock,
    });
    const index = await this.ctx.opts.indexOf(siteId);
    const q = this.ctx.queues.of(siteId);
    const run = q.add({ type: 'sitemap', origin: 'sitemap', url: s.sitemapUrls[0], state: 'running' });
    const previous = q.sitemapLastmods();
    let queued = 0;
    q.db.transaction(() => {
      for (const e of read.entries) {
        const before = previous.get(e.url);
        const changed = e.lastmod === null || before === undefined || before !== e.lastmod;
        if (!changed) continue;
        if (enqueueRunPage(q, index, run, e.url, 0, 'sitemap', Number.MAX_SAFE_INTEGER)) queued++;
      }
    })();
    // Only a whole read says which URLs left: not one with errors or cut by a limit, and not one
    // that found no URL at all (an emptied or broken sitemap must not remove the site).
    const complete = read.errors.length === 0 && read.complete && read.entries.length > 0;
    const gone = q.saveSitemapUrls(run.id, read.entries, complete);
    let removed = 0;
    if (s.removeMissing && gone.length) {
      const ops: WriteOp[] = [];
      for (const url of gone) {
        const e = entryInfo(index, url);
        // Only pages the sitemap brought in: never JSON pushes, never site-crawl finds.
        if (e && e.source === 'sitemap') ops.push({ op: 'delete', url });
      }
      if (ops.length) {
        await index.write(ops);
        q.forget(ops.map((o) => (o as { url: string }).url));
        q.cancelQueued((u) => gone.includes(u), 'Cancelled: the URL left the sitemap');
      }
      removed = ops.length;
    }
    const summary =
      `${read.entries.length} URLs read from ${read.sitemaps} sitemaps, ${queued} queued, ${removed} removed` +
      (read.duplicates ? `, ${read.duplicates} duplicates` : '') +
      (read.errors.length ? `, ${read.errors.length} errors` : '') +
      (read.cut.length ? `; cut: ${read.cut.join('; ')}` : '');
    q.setRunState(run.id, 'running', summary);
    this.progress.settle(siteId, q, q.get(run.id));
    q.commit();
    this.wake();
    const fields = { siteId, sitemaps: read.sitemaps, urls: read.entries.length, queued, removed, duplicates: read.duplicates, errors: read.errors.length };
    if (read.cut.length) this.ctx.log.warn({ ...fields, complete: read.complete, cut: read.cut }, 'sitemap import cut');
    else this.ctx.log.info(fields, 'sitemap import');
    return {
      ...taskView(q.get(run.id)!),
      urls: read.entries.length,
      queued,
      removed,
      sitemaps: read.sitemaps,
      duplicates: read.duplicates,
      errors: read.errors,
      cut: read.cut,
    };
  }

  /** See `CrawlService.cancel`. */
  cancel(siteId: string, predicate: (url: string) => boolean): number {
    const q = this.ctx.queues.existing(siteId);
    if (!q) return 0;
    const ids = q.cancelQueued(predicate, 'Cancelled: the URL was removed from the index');
    for (const id of q.runningMatching(predicate)) this.ctx.cancelled.add(id);
    // Cancelling the last open pages of a run completes the run.
    const runs = new Set(ids.map((id) => q.get(id)?.runId).filter((r): r is string => !!r));
    for (const runId of runs) {
      // Pages behind a cancelled page were never reached: this crawl is not a full one.
      q.markTruncated(runId);
      this.progress.settle(siteId, q, q.get(runId));
    }
    q.commit();
    return ids.length;
  }
}
