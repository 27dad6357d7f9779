/**
 * Crawl routes (seed 4.1, SPEC §4, §7). Main thread; thin: validate → one CrawlService call.
 *
 * - `POST /index/documents?url=` → 202 `{"status":"success","url","taskId"}`: the crawler fetches
 *   the URL under the project's Control Panel rules.
 * - `GET /tasks/{taskId}` → `{"status":"success","taskId","type","state","url"?,"indexStatus"?,
 *   "message"?,"createdAt","finishedAt"?,"progress"?}`; 404 `not_found` for a task of another project.
 * - `GET /tasks?state=&type=&offset=&limit=` → `{"status":"success","total","offset","limit","tasks"}`:
 *   the project's URL pushes, appends, crawl and sitemap runs and reindex tasks, newest first.
 * - `POST /tasks` `{"type":"reindex","source"?}` → 201 a running reindex task (a bulk import
 *   the client runs); `PATCH /tasks/{taskId}` `{"found"?,"indexed"?,"failed"?,"state"?,"message"?}`
 *   → the task with the counts its client reported (reindex tasks only, else 409 `conflict`).
 * - `POST /sites/crawl` → 202 the crawl run's task (a running crawl is returned, not doubled).
 * - `POST /sites/sitemap` → 202 the import's task plus `urls`, `queued`, `removed`, `errors`.
 */
import type Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import { AppError, Nullable } from '../core/index.js';
import { TOP_TASK_TYPES, type ReindexReport, type TaskState } from '../crawl/index.js';
import type { Services } from '../services.js';
import { requireProject } from './auth.js';
import { bodyLimit, readJson } from './body.js';
import { parseIntValue, readQuery } from './params.js';

const TASK_STATES: readonly TaskState[] = ['queued', 'running', 'done', 'failed'];
/** Largest `limit` of the task list (the same as `indexedContent`'s). */
const MAX_TASK_LIMIT = 1000;
const TASK_ID = /^t_[0-9a-f]{20}$/;

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('invalid_json', 'The request body must be a JSON object.', 'body');
  return body as Record<string, unknown>;
}

function optionalText(body: Record<string, unknown>, field: string, max: number): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) throw new AppError('invalid_parameter', `"${field}" must be a string of at most ${max} characters.`, field);
  return v;
}

/** The fields of a reindex report (`PATCH /tasks/{taskId}`); unknown fields are a 400. */
function reindexReport(body: Record<string, unknown>): ReindexReport {
  const out: ReindexReport = {};
  for (const k of Object.keys(body)) {
    if (!['found', 'indexed', 'failed', 'state', 'message'].includes(k)) throw new AppError('invalid_parameter', `Unknown field "${k}"; a report has found, indexed, failed, state and message.`, k);
  }
  for (const k of ['found', 'indexed', 'failed'] as const) {
    if (body[k] !== undefined && typeof body[k] !== 'number') throw new AppError('invalid_parameter', `"${k}" must be an integer ≥ 0.`, k);
    const n = parseIntValue(body[k], k, { min: 0 });
    if (n !== undefined) out[k] = n;
  }
  if (body.state !== undefined) {
    if (body.state !== 'running' && body.state !== 'done' && body.state !== 'failed') throw new AppError('invalid_parameter', '"state" must be running, done or failed.', 'state');
    out.state = body.state;
  }
  const message = optionalText(body, 'message', 2000);
  if (message !== undefined) out.message = message;
  return out;
}
import { success, type RouteSpec } from './openapi.js';
import { TaskProps, TokenParam } from './schemas.js';

const ProjectQuery = Type.Object({ token: Type.Optional(TokenParam) });
/** Query parameters, documented and read (`readQuery`) from these declarations. */
const PushQuery = Type.Object({ token: Type.Optional(TokenParam), url: Type.String({ format: 'uri', description: 'An absolute http(s) URL.' }) });
const TasksQuery = Type.Object({
  token: Type.Optional(TokenParam),
  state: Type.Optional(Type.Union(TASK_STATES.map((x) => Type.Literal(x)), { description: 'Any case.' })),
  type: Type.Optional(Type.Union(TOP_TASK_TYPES.map((x) => Type.Literal(x)), { description: 'Any case.' })),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_TASK_LIMIT, default: 50 }),
});
const Task = success(TaskProps);

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'post', path: '/index/documents', summary: 'Crawl one URL under the project\'s crawler rules', auth: 'project',
    query: PushQuery,
    responses: { 202: success({ url: Type.String(), taskId: TaskProps.taskId }) },
  },
  {
    method: 'get', path: '/tasks', summary: "The project's URL pushes, appends, crawl and sitemap runs and reindex tasks, newest first", auth: 'project',
    query: TasksQuery,
    responses: { 200: success({ total: Type.Integer({ minimum: 0 }), offset: Type.Integer({ minimum: 0 }), limit: Type.Integer({ minimum: 1 }), tasks: Type.Array(Type.Object(TaskProps)) }) },
  },
  {
    method: 'post', path: '/tasks', summary: 'Start a reindex task (a bulk import the client runs and reports on)', auth: 'project', query: ProjectQuery,
    body: Type.Object({ type: Type.Literal('reindex'), source: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) }, { additionalProperties: false }),
    responses: { 201: Task },
  },
  { method: 'get', path: '/tasks/:taskId', summary: 'A task', auth: 'project', query: ProjectQuery, responses: { 200: Task } },
  {
    method: 'patch', path: '/tasks/:taskId', summary: "Report a reindex task's counts (its client only)", auth: 'project', query: ProjectQuery,
    body: Type.Object(
      {
        found: Type.Optional(Type.Integer({ minimum: 0 })),
        indexed: Type.Optional(Type.Integer({ minimum: 0 })),
        failed: Type.Optional(Type.Integer({ minimum: 0 })),
        state: Type.Optional(Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')])),
        message: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
      },
      { additionalProperties: false },
    ),
    responses: { 200: Task },
  },
  { method: 'post', path: '/sites/crawl', summary: 'Crawl the site from its root URLs (a running crawl is returned, not doubled)', auth: 'project', query: ProjectQuery, responses: { 202: Task } },
  {
    method: 'post', path: '/sites/sitemap', summary: 'Import the sitemaps now', auth: 'project', query: ProjectQuery,
    responses: {
      202: success({
        ...TaskProps,
        urls: Type.Integer({ minimum: 0 }),
        queued: Type.Integer({ minimum: 0 }),
        removed: Type.Integer({ minimum: 0 }),
        sitemaps: Type.Integer({ minimum: 0 }),
        duplicates: Type.Integer({ minimum: 0 }),
        errors: Type.Array(Type.String()),
        cut: Type.Array(Type.String()),
      }),
    },
  },
];

/** Registers the crawl routes. */
export function register(router: Router, services: Services): void {
  router.post('/index/documents', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const { url } = readQuery(ctx, PushQuery);
    const task = await services.crawl.pushUrl(siteId, url);
    ctx.status = 202;
    ctx.body = { status: 'success', url: task.url ?? url, taskId: task.taskId };
  });

  router.get('/tasks', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const { state, type, offset, limit } = readQuery(ctx, TasksQuery);
    const filter = { state, type, offset, limit };
    const { total, tasks } = services.crawl.listTasks(siteId, filter);
    ctx.body = { status: 'success', total, offset: filter.offset, limit: filter.limit, tasks };
  });

  router.post('/tasks', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const body = objectBody(await readJson(ctx, { maxBytes: bodyLimit(services) }));
    for (const k of Object.keys(body)) {
      if (k !== 'type' && k !== 'source') throw new AppError('invalid_parameter', `Unknown field "${k}"; a new task has "type" and "source".`, k);
    }
    if (body.type !== 'reindex') throw new AppError('invalid_parameter', '"type" must be "reindex": crawl, sitemap and URL tasks are started by their own routes.', 'type');
    const source = optionalText(body, 'source', 500);
    ctx.status = 201;
    ctx.body = { status: 'success', ...services.crawl.createReindexTask(siteId, source) };
  });

  router.get('/tasks/:taskId', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const id = String(ctx.params.taskId ?? '');
    const task = TASK_ID.test(id) ? services.crawl.getTask(siteId, id) : null;
    if (!task) throw new AppError('not_found', `No task "${id}" in this project; use the taskId a crawl call returned.`, 'taskId');
    ctx.body = { status: 'success', ...task };
  });

  router.patch('/tasks/:taskId', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const id = String(ctx.params.taskId ?? '');
    const report = reindexReport(objectBody(await readJson(ctx, { maxBytes: bodyLimit(services) })));
    const task = TASK_ID.test(id) ? services.crawl.reportReindex(siteId, id, report) : null;
    if (!task) throw new AppError('not_found', `No task "${id}" in this project; use the taskId that POST /tasks returned.`, 'taskId');
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
