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
import { Type } from '@sinclair/typebox';
import { Nullable, badParam, DOCUMENT_TYPES } from '../core/index.js';
import { indexedContent, indexStatus, parseStatusFilter, type ContentQuery } from '../ingest/index.js';
import type { Services } from '../services.js';
import { requireProject } from './auth.js';
import { crawlHooks, projectIndex } from './documents.js';
import { readQuery } from './params.js';
import { success, type RouteSpec } from './openapi.js';
import { DocumentTypeSchema, IsoTime, TokenParam } from './schemas.js';

/** Largest `limit` of `indexedContent`. */
export const MAX_LISTING_LIMIT = 1000;

/** Query parameters of `GET /sites/indexedContent`: documented and read (`readQuery`) from this declaration. */
const ContentListQuery = Type.Object({
  token: Type.Optional(TokenParam),
  url: Type.Optional(Type.String({ description: 'Substring the URL must contain (case-sensitive).' })),
  contentType: Type.Optional(Type.Union(DOCUMENT_TYPES.map((t) => Type.Literal(t)), { description: 'A document type, any case.' })),
  status: Type.Optional(Type.String({ description: 'An index status code 100–999 (200, 404, 801) or a class (4XX).' })),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_LISTING_LIMIT, default: 50 }),
});

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/sites/indexStatus', summary: 'Counts of the index by status', auth: 'project', query: Type.Object({ token: Type.Optional(TokenParam) }),
    responses: {
      200: success({
        pages: Type.Integer({ minimum: 0 }),
        '4XX': Type.Integer({ minimum: 0 }),
        '5XX': Type.Integer({ minimum: 0 }),
        '8XX': Type.Integer({ minimum: 0 }),
        pending: Type.Integer({ minimum: 0 }),
        lastUpdated: Nullable(IsoTime),
      }),
    },
  },
  {
    method: 'get', path: '/sites/indexedContent', summary: 'Every indexed entry of any status, by URL', auth: 'project',
    query: ContentListQuery,
    responses: {
      200: success({
        total: Type.Integer({ minimum: 0 }),
        offset: Type.Integer({ minimum: 0 }),
        limit: Type.Integer({ minimum: 1 }),
        pages: Type.Array(
          Type.Object({
            url: Type.String(),
            title: Type.String(),
            contentType: DocumentTypeSchema,
            status: Type.Integer(),
            message: Type.Optional(Type.String()),
            contentGroup: Type.String(),
            source: Type.String(),
            indexedAt: IsoTime,
            updatedAt: IsoTime,
          }),
        ),
      }),
    },
  },
];

/** Registers the reports routes. */
export function register(router: Router, services: Services): void {
  router.get('/sites/indexStatus', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const index = await projectIndex(services, siteId);
    ctx.body = { status: 'success', ...indexStatus(index, crawlPending(services, siteId)) };
  });

  router.get('/sites/indexedContent', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const { offset, limit, url, contentType, status } = readQuery(ctx, ContentListQuery);
    const q: ContentQuery = { offset, limit };
    if (url) q.url = url;
    if (contentType) q.contentType = contentType;
    if (status) {
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
