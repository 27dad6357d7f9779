/**
 * JSON indexing and removal routes (seed 4.2–4.5, SPEC §4). Main thread; thin: authenticate,
 * validate, call one operation of `src/ingest`, shape the answer.
 *
 * - `POST /sites/pageJson` — one page document (a JSON object).
 * - `POST /sites/pagesJson` — 1–100 page documents (a JSON array), all or nothing.
 *   Query: `token`, `refresh` (wait until searchable), `ignoreUndefinedFilters`.
 *   200 `{"status":"success","indexed":n}` once the write log holds the documents on disk, with
 *   `warnings: [{index, field, message}]` when something was left out of accepted entries.
 *   `appendPageContent: true` on any entry: the supplied documents are written as above and
 *   their URLs are queued for the crawler, which appends the fetched content (202 with
 *   `taskId`; `taskIds` for a batch); 501 `not_implemented` and nothing written when this
 *   server has no crawler.
 * - `replaceId` on `pageJson` / `pagesJson`: the pages go to that bulk replace's staging index
 *   only (searchable once the replace is committed).
 * - `POST /index/replace` starts a bulk replace (`{"status":"success","replaceId"}`),
 *   `POST /index/replace/commit?replaceId=…` swaps its staging index in (one manifest commit:
 *   pages not staged are gone), `DELETE /index/replace?replaceId=…` abandons it. Live writes
 *   made during a replace are applied to the live and the staging index (docs/STORAGE.md).
 * - `DELETE /index/documents` — `url` (exact, after the same canonicalisation as indexing) xor
 *   `urlPattern` (RE2 regular expression, searched in the whole URL). Also cancels queued
 *   crawls of the matching URLs. Optional `refresh=true` waits until the removal is visible.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { Type } from '@sinclair/typebox';
import { AppError, badParam, type PageDoc } from '../core/index.js';
import type { ProjectIndex } from '../index/index.js';
import {
  canonicalPageUrl,
  compileUrlPattern,
  crawlerOf,
  deleteByPattern,
  deleteByUrl,
  indexPages,
  PageBatchInput,
  PageDocumentInput,
  validateBatch,
  validatePage,
  wantsAppend,
  type CrawlHooks,
  type EntryWarning,
  type ValidateContext,
} from '../ingest/index.js';
import type { Services } from '../services.js';
import { requireProject } from './auth.js';
import { bodyLimit, readJson } from './body.js';
import { queryParam, readQuery } from './params.js';
import { success, type RouteSpec } from './openapi.js';
import { BoolParam, TokenParam } from './schemas.js';

const IndexQuery = Type.Object({
  token: Type.Optional(TokenParam),
  refresh: BoolParam(false, 'answer once the pages are searchable'),
  ignoreUndefinedFilters: BoolParam(false, 'drop filter values whose id the settings do not define instead of refusing the document'),
  replaceId: Type.Optional(Type.String({ description: 'Write into this bulk replace\'s staging index (POST /index/replace) instead of the live one.' })),
});
const DeleteQuery = Type.Object({
  token: Type.Optional(TokenParam),
  url: Type.Optional(Type.String({ description: 'The page to remove (canonicalised like indexing); give url or urlPattern.' })),
  urlPattern: Type.Optional(Type.String({ description: 'An RE2 regular expression searched in the whole URL.' })),
  refresh: BoolParam(false, 'answer once the removal is visible'),
});
const ReplaceQuery = Type.Object({ token: Type.Optional(TokenParam), replaceId: Type.String({ minLength: 1, description: 'From POST /index/replace.' }) });
const Warnings = Type.Optional(Type.Array(Type.Object({ index: Type.Integer({ minimum: 0 }), field: Type.String(), message: Type.String() }), { description: 'What was left out of accepted entries.' }));
const Indexed = { indexed: Type.Integer({ minimum: 0 }), warnings: Warnings };
const TaskId = Type.String({ pattern: '^t_[0-9a-f]{20}$' });

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'post', path: '/sites/pageJson', summary: 'Index one page document', auth: 'project', query: IndexQuery, body: PageDocumentInput,
    responses: { 200: success(Indexed), 202: success({ ...Indexed, taskId: TaskId }, 'appendPageContent: the crawler appends the fetched content') },
  },
  {
    method: 'post', path: '/sites/pagesJson', summary: 'Index 1–100 page documents, all or nothing', auth: 'project', query: IndexQuery, body: PageBatchInput,
    responses: { 200: success(Indexed), 202: success({ ...Indexed, taskId: TaskId, taskIds: Type.Array(TaskId) }, 'appendPageContent: the crawler appends the fetched content') },
  },
  {
    method: 'delete', path: '/index/documents', summary: 'Remove pages by URL or URL pattern', auth: 'project',
    query: DeleteQuery,
    responses: { 200: success({ deleted: Type.Integer({ minimum: 0 }) }) },
  },
  {
    method: 'post', path: '/index/replace', summary: 'Start a bulk replace: pages sent with its replaceId go to a staging index', auth: 'project', query: Type.Object({ token: Type.Optional(TokenParam) }),
    responses: { 200: success({ replaceId: Type.String() }) },
  },
  {
    method: 'post', path: '/index/replace/commit', summary: 'Swap the staging index in (pages not staged are gone)', auth: 'project', query: ReplaceQuery,
    responses: { 200: success({ pages: Type.Integer({ minimum: 0 }), removed: Type.Integer({ minimum: 0 }), mirrored: Type.Integer({ minimum: 0 }) }) },
  },
  { method: 'delete', path: '/index/replace', summary: 'Abandon a bulk replace', auth: 'project', query: ReplaceQuery, responses: { 200: success({}) } },
];

/** Registers the documents routes. */
export function register(router: Router, services: Services): void {
  router.post('/sites/pageJson', async (ctx) => {
    await indexRoute(ctx, services, false);
  });
  router.post('/sites/pagesJson', async (ctx) => {
    await indexRoute(ctx, services, true);
  });
  router.delete('/index/documents', async (ctx) => {
    await deleteRoute(ctx, services);
  });
  router.post('/index/replace', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const store = await services.indexes.getStore(siteId);
    ctx.body = { status: 'success', replaceId: await store.beginReplace() };
  });
  router.post('/index/replace/commit', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const replaceId = requiredReplaceId(ctx);
    const store = await services.indexes.getStore(siteId);
    ctx.body = { status: 'success', ...(await store.commitReplace(replaceId)) };
  });
  router.delete('/index/replace', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const replaceId = requiredReplaceId(ctx);
    const store = await services.indexes.getStore(siteId);
    await store.abortReplace(replaceId);
    ctx.body = { status: 'success' };
  });
}

function requiredReplaceId(ctx: Context): string {
  const id = queryParam(ctx, 'replaceId');
  if (id === undefined || id === '') throw badParam('replaceId', 'Name the replace in "replaceId" (from POST /index/replace).');
  return id;
}

/** The project's index; the registry opens it on first use. */
export async function projectIndex(services: Services, siteId: string): Promise<ProjectIndex> {
  return services.indexes.get(siteId);
}

/** The crawler's hooks, or undefined while this server runs without a crawler. */
export function crawlHooks(services: Services): CrawlHooks | undefined {
  return crawlerOf((services as { crawl?: unknown }).crawl);
}

async function indexRoute(ctx: Context, services: Services, batch: boolean): Promise<void> {
  const siteId = requireProject(ctx, services);
  const { refresh, ignoreUndefinedFilters } = readQuery(ctx, IndexQuery);
  const body = await readJson(ctx, { maxBytes: bodyLimit(services) });
  const warnings: EntryWarning[] = [];
  const vctx: ValidateContext = {
    settings: services.projects.getSettings(siteId),
    ignoreUndefinedFilters,
    defaultSource: 'api',
    warnings,
  };
  const docs = batch ? validateBatch(body, vctx) : [validatePage(body, vctx)];

  // Which URLs asked for append mode: per URL the last entry decides, as it is the one written.
  const appendByUrl = new Map<string, boolean>();
  for (const entry of batch ? (body as unknown[]) : [body]) {
    const url = canonicalOf(entry);
    if (url !== undefined) appendByUrl.set(url, wantsAppend(entry));
  }
  const appendUrls = [...appendByUrl].filter(([, append]) => append).map(([url]) => url);
  const crawl = crawlHooks(services);
  if (appendUrls.length > 0 && typeof crawl?.pushUrl !== 'function') {
    throw new AppError(
      'not_implemented',
      'appendPageContent=true needs the crawler, which this server does not run; send the full content with appendPageContent=false.',
      'appendPageContent',
    );
  }

  const replaceId = queryParam(ctx, 'replaceId');
  if (replaceId !== undefined && replaceId !== '') {
    if (appendUrls.length > 0) throw new AppError('invalid_parameter', 'appendPageContent=true cannot be combined with replaceId.', 'appendPageContent');
    const store = await services.indexes.getStore(siteId);
    await store.writeReplace(replaceId, docs.map((doc) => ({ op: 'upsert', doc })));
    ctx.body = { status: 'success', indexed: docs.length, ...(warnings.length > 0 ? { warnings } : {}) };
    return;
  }
  const index = await projectIndex(services, siteId);
  const { indexed } = await indexPages(index, docs, { refresh });
  // What was left out of accepted entries; absent when nothing was.
  const warned = warnings.length > 0 ? { warnings } : {};
  if (appendUrls.length === 0) {
    ctx.body = { status: 'success', indexed, ...warned };
    return;
  }
  const byUrl = new Map<string, PageDoc>(docs.map((d) => [d.url, d]));
  const taskIds: string[] = [];
  for (const url of appendUrls) {
    const task = await crawl!.pushUrl!(siteId, url, { appendTo: byUrl.get(url)! });
    taskIds.push(task.taskId);
  }
  ctx.status = 202;
  ctx.body = batch ? { status: 'success', indexed, taskId: taskIds[0], taskIds, ...warned } : { status: 'success', indexed, taskId: taskIds[0], ...warned };
}

function canonicalOf(entry: unknown): string | undefined {
  const u = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>).url : undefined;
  if (typeof u !== 'string') return undefined;
  const c = canonicalPageUrl(u.trim());
  return 'url' in c ? c.url : undefined;
}

async function deleteRoute(ctx: Context, services: Services): Promise<void> {
  const siteId = requireProject(ctx, services);
  const { url, urlPattern, refresh } = readQuery(ctx, DeleteQuery);
  const hasUrl = url !== undefined && url !== '';
  const hasPattern = urlPattern !== undefined && urlPattern !== '';
  if (hasUrl === hasPattern) {
    throw badParam(
      hasUrl ? 'urlPattern' : 'url',
      hasUrl
        ? 'Give either "url" or "urlPattern", not both.'
        : 'Give the page to remove in "url" (an absolute URL) or the pages in "urlPattern" (a regular expression).',
    );
  }
  const crawl = crawlHooks(services);
  if (hasUrl) {
    const c = canonicalPageUrl(url!.trim());
    if ('problem' in c) throw badParam('url', `Parameter "url" ${c.problem}.`);
    const index = await projectIndex(services, siteId);
    const deleted = await deleteByUrl(index, c.url, { refresh, crawl, siteId });
    ctx.body = { status: 'success', deleted };
    return;
  }
  const matcher = compileUrlPattern(urlPattern!, 'urlPattern');
  try {
    const index = await projectIndex(services, siteId);
    const deleted = await deleteByPattern(index, matcher, { refresh, crawl, siteId });
    ctx.body = { status: 'success', deleted };
  } finally {
    matcher.dispose();
  }
}
