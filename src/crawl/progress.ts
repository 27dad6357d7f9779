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
import type { CrawlQueue, CrawlTask, RunPageCount, TaskState, TopTaskType } from './queue.js';

/**
 * How far a task got, in pages (documents for `reindex`). `fetched` counts the pages that are
 * finished, whatever their outcome, so `fetched = indexed + Σ skipped + failed` and
 * `found − fetched` pages are still queued or running.
 */
export interface TaskProgress {
  /** Pages the task queued (a URL push: 1; reindex: documents its client read). */
  found: number;
  /** Pages finished (an outcome recorded, or failed). */
  fetched: number;
  /** Pages written with index status 200 (searchable). */
  indexed: number;
  /** Pages finished with another index status, by status (`{"404":2,"801":1}`). */
  skipped: Record<string, number>;
  /** Pages that failed: retries exhausted, cancelled, nothing to append; reindex: rejected documents. */
  failed: number;
}

/** A task as `GET /tasks/{taskId}` and `GET /tasks` show it. */
export interface TaskView {
  taskId: string;
  type: 'url' | 'append' | 'page' | 'crawl' | 'sitemap' | 'reindex';
  state: 'queued' | 'running' | 'done' | 'failed';
  url?: string;
  indexStatus?: number;
  message?: string;
  createdAt: string;
  finishedAt?: string;
  /** Crawl and sitemap runs: page tasks queued by the run. */
  pagesQueued?: number;
  /** Every task but the pages of a run: how far it got. */
  progress?: TaskProgress;
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

/** The progress of a run from its page counts. */
function progressOfPages(found: number, pages: RunPageCount[]): TaskProgress {
  const p: TaskProgress = { found, fetched: 0, indexed: 0, skipped: {}, failed: 0 };
  for (const c of pages) {
    if (c.state === 'failed') p.failed += c.n;
    else if (c.state !== 'done') continue;
    else if (c.indexStatus === 200) p.indexed += c.n;
    else {
      const k = c.indexStatus === null ? 'none' : String(c.indexStatus);
      p.skipped[k] = (p.skipped[k] ?? 0) + c.n;
    }
    p.fetched += c.n;
  }
  return p;
}

/**
 * The progress of a task: a run from its pages' counts (`pages`, from
 * `CrawlQueue.runPageCounts`), a URL push or append from its own outcome, a reindex task from
 * what its client reported. Undefined for the pages of a run.
 */
export function progressOf(t: CrawlTask, pages?: RunPageCount[]): TaskProgress | undefined {
  if (t.type === 'crawl' || t.type === 'sitemap') return progressOfPages(t.total, pages ?? []);
  if (t.type === 'url' || t.type === 'append') return progressOfPages(1, [{ state: t.state, indexStatus: t.indexStatus, n: 1 }]);
  if (t.type === 'reindex') {
    const r = t.reported ?? { found: 0, indexed: 0, failed: 0 };
    return { found: r.found, fetched: r.indexed + r.failed, indexed: r.indexed, skipped: {}, failed: r.failed };
  }
  return undefined;
}

function iso(ms: number | null | undefined): string | undefined {
  return ms === null || ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * The public view of a queue row.
 *
 * @example ctx.body = taskView(queue.get(taskId)!);
 */
export function taskView(t: CrawlTask, pages?: RunPageCount[]): TaskView {
  const v: TaskView = { taskId: t.id, type: t.type, state: t.state, createdAt: iso(t.createdAt)! };
  if (t.url) v.url = t.url;
  if (t.indexStatus !== null) v.indexStatus = t.indexStatus;
  if (t.message) v.message = t.message;
  if (t.finishedAt !== null && (t.state === 'done' || t.state === 'failed')) v.finishedAt = iso(t.finishedAt);
  if (t.type === 'crawl' || t.type === 'sitemap') v.pagesQueued = t.total;
  const progress = progressOf(t, pages);
  if (progress) v.progress = progress;
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
    const q = this.ctx.queues.of(siteId);
    const t = q.get(taskId);
    if (!t) return null;
    return taskView(t, t.type === 'crawl' || t.type === 'sitemap' ? q.runPageCounts([t.id]).get(t.id) : undefined);
  }

  /**
   * A page of the project's tasks (`GET /tasks`): URL pushes, appends, crawl and sitemap runs
   * and reindex tasks, newest first, each with its progress; `total` counts every match.
   */
  listTasks(siteId: string, filter: { state?: TaskState; type?: TopTaskType; offset: number; limit: number }): { total: number; tasks: TaskView[] } {
    const q = this.ctx.queues.existing(siteId);
    if (!q) return { total: 0, tasks: [] };
    const { total, tasks } = q.listTop(filter);
    const counts = q.runPageCounts(tasks.filter((t) => t.type === 'crawl' || t.type === 'sitemap').map((t) => t.id));
    return { total, tasks: tasks.map((t) => taskView(t, counts.get(t.id))) };
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
