/**
 * Stage: progress and reporting (main thread). Shows tasks as `GET /tasks/{taskId}` does,
 * counts a project's open work, and completes runs (site crawls and sitemap imports) once none
 * of their pages is open: a completed full crawl removes the pages it no longer reached, and
 * every completed run has its last pages published at once.
 *
 * Invariants:
 * - A run is completed once, when its last page task settles (or at start-up, for a run whose
 *   last page finished just before a crash).
 * - Only a full crawl removes pages: one stopped by maxPages or by cancelled pages removes
 *   nothing, and removal only touches pages the crawler itself wrote before the run ended.
 */
import type { WriteOp } from '../index/index.js';
import type { CrawlContext } from './context.js';
import { entryInfo, type OutcomeWriter } from './indexing.js';
import type { CrawlQueue, CrawlTask } from './queue.js';

/** A task as `GET /tasks/{taskId}` shows it. */
export interface TaskView {
  taskId: string;
  type: 'url' | 'append' | 'page' | 'crawl' | 'sitemap';
  state: 'queued' | 'running' | 'done' | 'failed';
  url?: string;
  indexStatus?: number;
  message?: string;
  createdAt: string;
  finishedAt?: string;
  /** Crawl and sitemap runs: page tasks queued by the run. */
  pagesQueued?: number;
}

/** Result of a sitemap import. */
export interface SitemapImportResult extends TaskView {
  /** URLs read from the sitemaps. */
  urls: number;
  /** URLs queued (new or changed lastmod, or without lastmod). */
  queued: number;
  /** Pages removed because they left the sitemaps (`removeMissing`). */
  removed: number;
  /** Sitemap files read (indexes included). */
  sitemaps: number;
  /** URLs listed more than once in the import (queued once). */
  duplicates: number;
  /** Files that could not be read: `<url>: <why>`. */
  errors: string[];
  /** What the import's limits cut short (empty when everything was read); also in the run's `message`. */
  cut: string[];
}

function iso(ms: number | null | undefined): string | undefined {
  return ms === null || ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * The public view of a queue row.
 *
 * @example ctx.body = taskView(queue.get(taskId)!);
 */
export function taskView(t: CrawlTask): TaskView {
  const v: TaskView = { taskId: t.id, type: t.type, state: t.state, createdAt: iso(t.createdAt)! };
  if (t.url) v.url = t.url;
  if (t.indexStatus !== null) v.indexStatus = t.indexStatus;
  if (t.message) v.message = t.message;
  if (t.finishedAt !== null && (t.state === 'done' || t.state === 'failed')) v.finishedAt = iso(t.finishedAt);
  if (t.type === 'crawl' || t.type === 'sitemap') v.pagesQueued = t.total;
  return v;
}

/** Task views, open-work counts and run completion. */
export class RunProgress {
  constructor(
    private readonly ctx: CrawlContext,
    private readonly writer: OutcomeWriter,
  ) {}

  /** A task of the project, or null. */
  getTask(siteId: string, taskId: string): TaskView | null {
    const t = this.ctx.queues.of(siteId).get(taskId);
    return t ? taskView(t) : null;
  }

  /** Queued or running page tasks of the project. */
  pending(siteId: string): number {
    return this.ctx.queues.existing(siteId)?.pending() ?? 0;
  }

  /** Completes `run` once none of its page tasks is open (a no-op for tasks that are not runs). */
  settle(siteId: string, q: CrawlQueue, run: CrawlTask | null): void {
    if (!run || (run.type !== 'crawl' && run.type !== 'sitemap')) return;
    if (q.hasOpenInRun(run.id)) return;
    const fresh = q.get(run.id);
    if (!fresh || fresh.state === 'done' || fresh.state === 'failed') return;
    if (fresh.type === 'sitemap') {
      q.setRunState(run.id, 'done');
      this.writer.publishNow(siteId);
      return;
    }
    q.setRunState(run.id, 'done', `Crawl finished: ${fresh.total} pages${fresh.truncated ? ' (incomplete: maxPages reached or pages cancelled; nothing removed)' : ''}`);
    if (!fresh.truncated) void this.removeUnreached(siteId, q, fresh).finally(() => this.writer.publishNow(siteId));
    else this.writer.publishNow(siteId);
  }

  /** Deletes the crawler's pages that the finished full crawl `run` did not reach. */
  private async removeUnreached(siteId: string, q: CrawlQueue, run: CrawlTask): Promise<void> {
    try {
      const index = await this.ctx.opts.indexOf(siteId);
      const gone = q.crawledUrls().filter((r) => r.runId !== run.id && !q.isSeen(run.id, r.url)).map((r) => r.url);
      const ops: WriteOp[] = [];
      for (const url of gone) {
        const e = entryInfo(index, url);
        if (e && e.source === 'crawler' && e.at <= (run.finishedAt ?? this.ctx.opts.clock())) ops.push({ op: 'delete', url });
      }
      if (ops.length) await index.write(ops);
      q.forget(gone);
      if (ops.length) {
        q.setRunState(run.id, 'done', `Crawl finished: ${run.total} pages, ${ops.length} pages no longer reached were removed`);
        this.ctx.log.info({ siteId, removed: ops.length }, 'crawl removed unreached pages');
      }
    } catch (err) {
      this.ctx.log.error({ err, siteId }, 'removing unreached pages failed');
    }
  }
}
