/**
 * Small APIs the Control Panel needs beyond the seed's (main thread; registered by
 * src/http/web.ts):
 *
 * - `GET /admin/whoami` (Bearer master key or project key) → `{"status":"success","kind":"master"}`
 *   or `{"status":"success","kind":"project","siteId","keyId"}`: which projects the signed-in
 *   key may manage.
 * - `GET /sites/tasks?token=&limit=&state=&runId=` → `{"status":"success","counts":{queued,
 *   running,done,failed},"runs":[…],"tasks":[…]}`: the crawl queue for the panel's live
 *   progress. `counts` covers every page task of the project (URL pushes, appended pages and
 *   pages of crawl and sitemap runs); `runs` are the 10 newest crawl/sitemap runs, each with its
 *   own page counts; `tasks` the newest `limit` (1–500, default 50) tasks, optionally only in
 *   one `state` or of one run, shaped like `GET /tasks/{taskId}` plus `runId`.
 *
 * The task list reads the project's crawl queue file (`projects/<siteId>/crawl.db`, the table
 * `tasks` of src/crawl/queue.ts) through its own short-lived connection, read-only by pragma:
 * the crawl service has no listing call, and reading the durable table keeps this route out
 * of the crawler's in-memory state.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import Database from 'better-sqlite3';
import { AppError } from '../core/index.js';
import type { Services } from '../services.js';
import { isMasterKey, presentedToken, requireProject } from './auth.js';
import { readQuery } from './params.js';
import { success, type RouteSpec } from './openapi.js';
import { TaskProps, TokenParam } from './schemas.js';

const STATES = ['queued', 'running', 'done', 'failed'] as const;
/** Query parameters of `GET /sites/tasks`: documented and read (`readQuery`) from this declaration. */
const QueueQuery = Type.Object({
  token: Type.Optional(TokenParam),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  state: Type.Optional(Type.Union(STATES.map((x) => Type.Literal(x)), { description: 'Any case.' })),
  runId: Type.Optional(
    Type.String({
      pattern: '^t_[0-9a-f]{20}$',
      description: 'Only the pages of this crawl or sitemap run.',
      errorMessage: { pattern: 'Parameter "runId" must be a task id such as "t_…" that a crawl or sitemap call returned.' },
    }),
  ),
});
type State = (typeof STATES)[number];
type Counts = Record<State, number>;

/** A task as the list shows it (the fields of `GET /tasks/{taskId}`, plus its run). */
export interface TaskRow {
  taskId: string;
  type: string;
  state: State;
  url?: string;
  indexStatus?: number;
  message?: string;
  createdAt: string;
  finishedAt?: string;
  runId?: string;
  pagesQueued?: number;
}

interface Row {
  id: string;
  type: string;
  state: State;
  url: string | null;
  index_status: number | null;
  message: string | null;
  created_at: number;
  finished_at: number | null;
  run_id: string | null;
  total: number;
}

function toTask(r: Row): TaskRow {
  const t: TaskRow = { taskId: r.id, type: r.type, state: r.state, createdAt: new Date(r.created_at).toISOString() };
  if (r.url) t.url = r.url;
  if (r.index_status !== null) t.indexStatus = r.index_status;
  if (r.message) t.message = r.message;
  if (r.finished_at !== null && (r.state === 'done' || r.state === 'failed')) t.finishedAt = new Date(r.finished_at).toISOString();
  if (r.run_id) t.runId = r.run_id;
  if (r.type === 'crawl' || r.type === 'sitemap') t.pagesQueued = r.total;
  return t;
}

function emptyCounts(): Counts {
  return { queued: 0, running: 0, done: 0, failed: 0 };
}

function countsOf(rows: Array<{ state: State; n: number }>): Counts {
  const c = emptyCounts();
  for (const r of rows) if (r.state in c) c[r.state] = r.n;
  return c;
}

const CountsSchema = Type.Object({ queued: Type.Integer({ minimum: 0 }), running: Type.Integer({ minimum: 0 }), done: Type.Integer({ minimum: 0 }), failed: Type.Integer({ minimum: 0 }) });
const ListedTask = { ...TaskProps, runId: Type.Optional(TaskProps.taskId) };

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/admin/whoami', summary: 'Which key this is: the master key or a project key', auth: 'admin',
    responses: {
      200: Type.Union([
        success({ kind: Type.Literal('master') }),
        success({ kind: Type.Literal('project'), siteId: Type.String(), keyId: Type.String() }),
      ]),
    },
  },
  {
    method: 'get', path: '/sites/tasks', summary: "The project's crawl queue: counts, the latest runs and tasks", auth: 'project',
    query: QueueQuery,
    responses: {
      200: success({
        counts: CountsSchema,
        runs: Type.Array(Type.Object({ ...ListedTask, pages: CountsSchema })),
        tasks: Type.Array(Type.Object(ListedTask)),
      }),
    },
  },
];

const COLUMNS = 'id, type, state, url, index_status, message, created_at, finished_at, run_id, total';
const PAGE_TYPES = "type IN ('url','append','page')";

/** Registers `GET /admin/whoami` and `GET /sites/tasks`. */
export function register(router: Router, services: Services): void {
  router.get('/admin/whoami', (ctx) => {
    const token = presentedToken(ctx);
    if (token === null) throw new AppError('missing_token', 'Send "Authorization: Bearer <master key or project key>".', 'token');
    if (isMasterKey(services, token)) {
      ctx.body = { status: 'success', kind: 'master' };
      return;
    }
    const resolved = services.projects.resolveToken(token);
    if (!resolved) throw new AppError('invalid_token', 'The key is unknown or was deleted.', 'token');
    ctx.body = { status: 'success', kind: 'project', siteId: resolved.siteId, keyId: resolved.keyId };
  });

  router.get('/sites/tasks', (ctx) => {
    const siteId = requireProject(ctx, services);
    const { limit, state, runId } = readQuery(ctx, QueueQuery);
    const file = path.join(services.config.dataDir, 'projects', siteId, 'crawl.db');
    if (!existsSync(file)) {
      ctx.body = { status: 'success', counts: emptyCounts(), runs: [], tasks: [] };
      return;
    }
    const db = new Database(file, { fileMustExist: true });
    try {
      db.pragma('query_only = true');
      db.pragma('busy_timeout = 2000');
      const counts = countsOf(db.prepare(`SELECT state, COUNT(*) AS n FROM tasks WHERE ${PAGE_TYPES} GROUP BY state`).all() as Array<{ state: State; n: number }>);
      const runRows = db.prepare(`SELECT ${COLUMNS} FROM tasks WHERE type IN ('crawl','sitemap') ORDER BY n DESC LIMIT 10`).all() as Row[];
      const perRun = db.prepare('SELECT state, COUNT(*) AS n FROM tasks WHERE run_id = ? GROUP BY state');
      const runs = runRows.map((r) => ({ ...toTask(r), pages: countsOf(perRun.all(r.id) as Array<{ state: State; n: number }>) }));
      const where: string[] = [];
      const args: unknown[] = [];
      if (state) {
        where.push('state = ?');
        args.push(state);
      }
      if (runId) {
        where.push('run_id = ?');
        args.push(runId);
      }
      const sql = `SELECT ${COLUMNS} FROM tasks ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY n DESC LIMIT ?`;
      const tasks = (db.prepare(sql).all(...args, limit) as Row[]).map(toTask);
      ctx.body = { status: 'success', counts, runs, tasks };
    } finally {
      db.close();
    }
  });
}
