/**
 * Crawl routes (seed 4.1, SPEC §4, §7). Main thread; thin: validate → one CrawlService call.
 *
 * - `POST /index/documents?url=` → 202 `{"status":"success","url","taskId"}`: the crawler fetches
 *   the URL under the project's Control Panel rules.
 * - `GET /tasks/{taskId}` → `{"status":"success","taskId","type","state","url"?,"indexStatus"?,
 *   "message"?,"createdAt","finishedAt"?}`; 404 `not_found` for a task of another project.
 * - `POST /sites/crawl` → 202 the crawl run's task (a running crawl is returned, not doubled).
 * - `POST /sites/sitemap` → 202 the import's task plus `urls`, `queued`, `removed`, `errors`.
 */
import type Router from '@koa/router';
import { AppError } from '../core/index.js';
import type { Services } from '../services.js';
import { requireProject } from './auth.js';
import { parseUrlParam } from './params.js';

/** Registers the crawl routes. */
export function register(router: Router, services: Services): void {
  router.post('/index/documents', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const url = parseUrlParam(ctx, 'url');
    const task = await services.crawl.pushUrl(siteId, url);
    ctx.status = 202;
    ctx.body = { status: 'success', url: task.url ?? url, taskId: task.taskId };
  });

  router.get('/tasks/:taskId', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const id = String(ctx.params.taskId ?? '');
    const task = /^t_[0-9a-f]{20}$/.test(id) ? services.crawl.getTask(siteId, id) : null;
    if (!task) throw new AppError('not_found', `No task "${id}" in this project; use the taskId a crawl call returned.`, 'taskId');
    ctx.body = { status: 'success', ...task };
  });

  router.post('/sites/crawl', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const task = await services.crawl.startSiteCrawl(siteId);
    ctx.status = 202;
    ctx.body = { status: 'success', ...task };
  });

  router.post('/sites/sitemap', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const result = await services.crawl.importSitemaps(siteId);
    ctx.status = 202;
    ctx.body = { status: 'success', ...result };
  });
}
