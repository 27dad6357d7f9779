/**
 * Index report routes (seed 4.9, 4.10, SPEC §4). Main thread; thin.
 *
 * - `GET /sites/indexStatus` → `{"status":"success","pages","4XX","5XX","8XX","pending","lastUpdated"}`.
 * - `GET /sites/indexedContent` → `{"status":"success","total","offset","limit","pages":[…]}` with
 *   filters `url` (substring, case-sensitive), `contentType` (a document type, case-insensitive),
 *   `status` (a code such as `200`/`404`/`801`, or a class such as `4XX`), `offset` (≥ 0, default 0)
 *   and `limit` (1–1000, default 50). Values out of range are 400s naming the parameter.
 */
import type Router from '@koa/router';
import { badParam, DOCUMENT_TYPES, type DocumentType } from '../core/index.js';
import { indexedContent, indexStatus, parseStatusFilter, type ContentQuery } from '../ingest/index.js';
import type { Services } from '../services.js';
import { requireProject } from './auth.js';
import { crawlHooks, projectIndex } from './documents.js';
import { parseIntParam, queryParam } from './params.js';

/** Largest `limit` of `indexedContent`. */
export const MAX_LISTING_LIMIT = 1000;

/** Registers the reports routes. */
export function register(router: Router, services: Services): void {
  router.get('/sites/indexStatus', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const index = await projectIndex(services, siteId);
    ctx.body = { status: 'success', ...indexStatus(index, crawlPending(services, siteId)) };
  });

  router.get('/sites/indexedContent', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const q: ContentQuery = {
      offset: parseIntParam(ctx, 'offset', { min: 0, default: 0 }),
      limit: parseIntParam(ctx, 'limit', { min: 1, max: MAX_LISTING_LIMIT, default: 50 }),
    };
    const url = queryParam(ctx, 'url');
    if (url !== undefined && url !== '') q.url = url;
    const contentType = queryParam(ctx, 'contentType');
    if (contentType !== undefined && contentType !== '') {
      const t = contentType.trim().toUpperCase();
      if (!(DOCUMENT_TYPES as readonly string[]).includes(t)) {
        throw badParam('contentType', `Parameter "contentType" must be one of ${DOCUMENT_TYPES.join(', ')}, got "${contentType}".`);
      }
      q.contentType = t as DocumentType;
    }
    const status = queryParam(ctx, 'status');
    if (status !== undefined && status !== '') {
      const parsed = parseStatusFilter(status);
      if (!parsed) {
        throw badParam('status', `Parameter "status" must be an index status from 100 to 999 (such as 200, 404 or 801) or a class such as 4XX, got "${status}".`);
      }
      q.status = parsed.min === parsed.max ? parsed.min : `${Math.floor(parsed.min / 100)}XX`;
    }
    const index = await projectIndex(services, siteId);
    const { total, pages } = indexedContent(index, q);
    ctx.body = { status: 'success', total, offset: q.offset, limit: q.limit, pages };
  });
}

/** URLs the crawler still has queued for the project; 0 without a crawler. */
function crawlPending(services: Services, siteId: string): number {
  const crawl = crawlHooks(services);
  return typeof crawl?.pendingCount === 'function' ? crawl.pendingCount(siteId) : 0;
}
