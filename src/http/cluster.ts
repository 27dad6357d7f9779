/**
 * Cluster routes of a primary (docs/DEPLOY.md): node keys and the query-log intake from
 * search nodes. Thin: authenticate, validate, one call.
 *
 * - `POST /admin/nodes` `{name?}` (master key) → 201 `{status, id, name, prefix, createdAt, key}`;
 *   `GET /admin/nodes` lists them (never the key); `DELETE /admin/nodes/:id` revokes one.
 * - `POST /cluster/querylog` (`Authorization: Bearer <node key>`) `{batchId, entries:[…]}` →
 *   200 `{status, batchId, accepted, duplicate}`. Exactly once per project by `batchId`, across
 *   crashes of this process: each project's part commits with the id in that project's query
 *   log (fsynced) before the answer, and a part already there is skipped; `duplicate` is true
 *   when every part was.
 */
import type Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import { AppError } from '../core/index.js';
import type { ForwardedLogEntry } from '../analytics/index.js';
import type { Services } from '../services.js';
import { presentedToken, requireAdmin } from './auth.js';
import { bodyLimit, readJson } from './body.js';
import { success, type RouteSpec } from './openapi.js';

const BATCH_ID = /^[A-Za-z0-9_-]{8,100}$/;
/** Most entries one batch may carry (a node sends 500). */
export const MAX_BATCH_ENTRIES = 10_000;

const NodeKey = { id: Type.String(), name: Type.String(), prefix: Type.String(), createdAt: Type.String() };

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'post', path: '/admin/nodes', summary: 'Create a node key for a search node (shown once)', auth: 'master',
    body: Type.Object({ name: Type.Optional(Type.String({ maxLength: 200 })) }),
    responses: { 201: success({ ...NodeKey, key: Type.String() }) },
  },
  { method: 'get', path: '/admin/nodes', summary: 'List node keys (never the key)', auth: 'master', responses: { 200: success({ nodes: Type.Array(Type.Object(NodeKey)) }) } },
  { method: 'delete', path: '/admin/nodes/:id', summary: 'Revoke a node key', auth: 'master', responses: { 200: success({}) } },
  {
    method: 'post', path: '/cluster/querylog', summary: "A search node's query-log batch (node key; idempotent by batchId)", auth: 'master',
    body: Type.Object({ batchId: Type.String({ pattern: '^[A-Za-z0-9_-]{8,100}$' }), entries: Type.Array(Type.Object({}), { maxItems: MAX_BATCH_ENTRIES }) }),
    responses: { 200: success({ batchId: Type.String(), accepted: Type.Integer({ minimum: 0 }), duplicate: Type.Boolean() }) },
  },
];

/** Registers the cluster routes. */
export function register(router: Router, services: Services): void {
  router.post('/admin/nodes', async (ctx) => {
    requireAdmin(ctx, services);
    const body = (await readJson(ctx, { maxBytes: bodyLimit(services) })) as Record<string, unknown> | undefined;
    const name = body?.name ?? '';
    if (typeof name !== 'string' || name.length > 200) throw new AppError('invalid_parameter', '"name" must be a string of at most 200 characters.', 'name');
    const { token, ...info } = services.projects.createNodeKey(name);
    ctx.status = 201;
    ctx.body = { status: 'success', ...info, key: token };
  });
  router.get('/admin/nodes', async (ctx) => {
    requireAdmin(ctx, services);
    ctx.body = { status: 'success', nodes: services.projects.listNodeKeys() };
  });
  router.delete('/admin/nodes/:id', async (ctx) => {
    requireAdmin(ctx, services);
    services.projects.deleteNodeKey(ctx.params.id as string);
    ctx.body = { status: 'success' };
  });

  router.post('/cluster/querylog', async (ctx) => {
    const token = presentedToken(ctx);
    if (token === null) throw new AppError('missing_token', 'This route needs a node key: "Authorization: Bearer <node key>" (sitesift nodes create).', 'token');
    const node = services.projects.resolveNodeKey(token);
    if (!node) throw new AppError('invalid_token', 'The node key is unknown or was revoked.', 'token');
    const body = (await readJson(ctx, { maxBytes: Math.max(bodyLimit(services), 16 * 1024 * 1024) })) as Record<string, unknown> | undefined;
    const batchId = body?.batchId;
    if (typeof batchId !== 'string' || !BATCH_ID.test(batchId)) throw new AppError('invalid_parameter', '"batchId" must be 8–100 letters, digits, "-" or "_".', 'batchId');
    const entries = body?.entries;
    if (!Array.isArray(entries) || entries.length > MAX_BATCH_ENTRIES) throw new AppError('invalid_parameter', `"entries" must be an array of at most ${MAX_BATCH_ENTRIES} entries.`, 'entries');
    // Fast path: system.db lists a batch once every project's part is written. Correctness
    // does not rest on it: each project's log holds the ids of the parts it wrote, in the same
    // transaction as their entries, and skips them (a crash between the two is covered).
    if (services.projects.batchDelivered(batchId)) {
      ctx.body = { status: 'success', batchId, accepted: 0, duplicate: true };
      return;
    }
    const { accepted, parts, duplicateParts } = services.analytics.ingestBatch(batchId, entries as ForwardedLogEntry[]);
    if (services.config.testPauseIn === 'querylog-ack') await pauseForCrashTest(services);
    services.projects.recordBatch(batchId, node.id, accepted);
    ctx.body = { status: 'success', batchId, accepted, duplicate: parts > 0 && duplicateParts === parts };
  });
}

/**
 * Crash-test hook (SITESIFT_TEST_PAUSE_IN=querylog-ack, never set in production): the batch's
 * entries are committed and its answer not sent; logs "querylog paused" and never resolves,
 * so a test's SIGKILL lands in that window (test/http/cluster-querylog-crash.test.ts).
 */
async function pauseForCrashTest(services: Services): Promise<never> {
  services.log.warn({ point: 'querylog-ack' }, 'querylog paused');
  return new Promise<never>(() => {});
}
