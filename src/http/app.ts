/**
 * The Koa application: middleware composed once, in this order (main thread):
 *
 * 1. request id — a UUID per request, echoed in `X-Request-Id`; every line logged while the
 *    request is handled carries it (src/core/log.ts `runWithRequestId`), whichever logger wrote it;
 * 2. access log — one JSON line per request, component `http` (path without the query string:
 *    tokens live there), and the request's metrics (src/http/metrics.ts: a counter and a latency observation);
 * 3. errors — the ONE place failures become `{"status":"failure","code","message",...}`;
 * 4. read-only guard — on a `search`-role node every write route answers 405;
 * 5. CORS — only for the public search routes (`GET /sites`, `GET /sites/suggest`, `GET /sites/similar`,
 *    `POST /sites/queries/log`), including `OPTIONS` preflights;
 * 6. the router — every module in `src/http/*` registers its routes on it;
 * 7. fallback — unknown path → 404 `not_found`, known path with another method → 405 with `Allow`.
 *
 * Every request takes this one path, behind node:http (src/server.ts). Requests node:http
 * itself rejects as malformed never reach it: src/server.ts answers those.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import { AppError, ERROR_STATUS, componentLogger, runWithRequestId, type ErrorCode, type Logger } from '../core/index.js';
import type { Services } from '../services.js';
import * as admin from './admin.js';
import * as analytics from './analytics.js';
import * as crawl from './crawl.js';
import * as cluster from './cluster.js';
import * as documents from './documents.js';
import * as exportRoute from './export.js';
import * as reports from './reports.js';
import * as search from './search.js';
import * as similar from './similar.js';
import * as suggest from './suggest.js';
import { corsHeaders, RESPONSE_CORS_HEADERS } from './cors.js';
import { createRateLimits, type RateLimits } from './rate-limit.js';
import { isMasterKey, presentedToken } from './auth.js';
import { createMetrics, routeLabel, type Metrics } from './metrics.js';
import * as web from './web.js';
import { openApiDocument, responseValidator, type RouteSpec } from './openapi.js';

/**
 * Route modules, each exporting `register(router, services)` and its documented `ROUTES`,
 * registered in this order.
 */
const ROUTE_MODULES = [admin, cluster, exportRoute, documents, reports, search, similar, analytics, crawl, suggest, web];

/** The app's own routes: the health check and the API description. */
const APP_ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/health', summary: 'Liveness; on a search node, 503 not_ready until a snapshot is served', auth: 'public',
    responses: { 200: Type.Object({ status: Type.Literal('ok'), snapshot: Type.Optional(Type.Object({ ready: Type.Boolean(), source: Type.String() })) }) },
  },
  { method: 'get', path: '/metrics', summary: 'Metrics in the Prometheus text format (master key)', auth: 'master', responses: { 200: { media: 'text/plain', description: 'Prometheus text exposition format' } } },
  { method: 'get', path: '/openapi.json', summary: 'This API as an OpenAPI 3.1 document', auth: 'public', responses: { 200: Type.Object({ openapi: Type.String(), paths: Type.Object({}) }) } },
];

/** Every documented route: the app's and the route modules'. */
export const API_ROUTES: readonly RouteSpec[] = [...APP_ROUTES, ...ROUTE_MODULES.flatMap((m) => m.ROUTES)];

/** The package version, for the OpenAPI document (from src/http or dist/src/http). */
function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'sitesift' && pkg.version) return pkg.version;
    } catch {
      // not at this level
    }
  }
  return '0.0.0';
}

const routers = new WeakMap<Koa, Router>();

/** The router of an app built by {@link createApp} (the route/document test walks it). */
export function appRouter(app: Koa): Router {
  const router = routers.get(app);
  if (!router) throw new Error('not an app built by createApp');
  return router;
}

let openApiJson: string | undefined;
/** The OpenAPI document as served (built on first request, then kept). */
export function openApiText(): string {
  return (openApiJson ??= JSON.stringify(openApiDocument(API_ROUTES, packageVersion())));
}

/** Public search routes: the only paths that send CORS headers (SPEC §2). */
export const PUBLIC_ROUTES: Readonly<Record<string, string>> = {
  '/sites': 'GET',
  '/sites/suggest': 'GET',
  '/sites/similar': 'GET',
  '/sites/queries/log': 'POST',
};

/** Writes allowed on a read-only search node (query logs are forwarded to the primary). */
const SEARCH_ROLE_WRITES = new Set(['/sites/queries/log']);

export interface AppOptions {
  /** Extra routes registered after the modules' (tests use this for a throwing route). */
  routes?: (router: Router, services: Services) => void;
  /** The server's metrics (shared with a separate metrics address); default a registry of its own. */
  metrics?: Metrics;
  /**
   * Check every JSON answer against its route's documented schema (src/http/openapi.ts); a
   * mismatch becomes a 500 naming the route, status and problem. The test suite turns it on.
   */
  validateResponses?: boolean;
  /** Routes added by `routes`, documented for `validateResponses`. */
  extraRoutes?: readonly RouteSpec[];
}

/** Per-request state every route can rely on. */
export interface RequestState {
  reqId: string;
  /** SITESIFT_MAX_BODY_BYTES, the default limit of the body readers. */
  maxBodyBytes: number;
  /** The `http` component's logger; its lines carry `reqId` while the request runs. */
  log: Logger;
  siteId?: string;
  /** The app's rate limits, applied by src/http/auth.ts. */
  rateLimits: RateLimits;
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_parameter',
  401: 'invalid_token',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  501: 'not_implemented',
  503: 'overloaded',
};

/** Sends a failure body (also used by the fallback, which does not throw). */
function renderError(ctx: Context, err: AppError): void {
  ctx.status = err.status;
  const body: Record<string, unknown> = { status: 'failure', code: err.code, message: err.message };
  if (err.field !== undefined) body.field = err.field;
  if (err.errors !== undefined) body.errors = err.errors;
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.body = body;
}

/**
 * Maps anything thrown by a route to the response. AppErrors render as themselves; Koa
 * http-errors with `expose` map by status; everything else is a 500 `internal` that carries
 * the request id and is logged with its stack — which never reaches the body.
 */
async function errors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } catch (thrown) {
    const state = ctx.state as RequestState;
    if (thrown instanceof AppError) {
      renderError(ctx, thrown);
      if (thrown.status >= 500) state.log.error({ err: thrown }, 'request failed');
      return;
    }
    const e = thrown as { status?: number; expose?: boolean; message?: string };
    const code = typeof e.status === 'number' ? STATUS_CODES[e.status] : undefined;
    if (code && e.expose && e.status! < 500) {
      renderError(ctx, new AppError(code, e.message ?? code));
      return;
    }
    state.log.error({ err: thrown }, 'unhandled error');
    ctx.status = ERROR_STATUS.internal;
    ctx.body = {
      status: 'failure',
      code: 'internal',
      message: `Internal error; please retry, and quote request id ${state.reqId} if you report it.`,
      requestId: state.reqId,
    };
  }
}

function cors(ctx: Context): boolean {
  const method = PUBLIC_ROUTES[ctx.path];
  if (method === undefined) return false;
  const h = ctx.method === 'OPTIONS' ? corsHeaders(method, ctx.get('Access-Control-Request-Headers')) : RESPONSE_CORS_HEADERS;
  for (let i = 0; i < h.length; i += 2) ctx.set(h[i]!, h[i + 1]!);
  return true;
}

/**
 * An access-log line's `ms` for a request that took `elapsedNs`: milliseconds to the
 * microsecond; finer digits are noise in an access log.
 */
function accessMs(elapsedNs: number): number {
  return Math.round(elapsedNs / 1e3) / 1e3;
}

/**
 * Builds the application. Every route module's `register(router, services)` is called once,
 * in a fixed order; `opts.routes` adds test-only routes.
 *
 * @example
 * const server = http.createServer(createApp(services).callback());
 */
export function createApp(services: Services, opts: AppOptions = {}): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  const rateLimits = createRateLimits(services.config, services.clock);
  const metrics = opts.metrics ?? createMetrics(services);

  router.get('/health', (ctx) => {
    // A search node is healthy once it serves a snapshot; before that load balancers skip it.
    const node = services.node?.health();
    if (node && !node.ready) {
      ctx.status = 503;
      ctx.set('Retry-After', String(Math.max(1, Math.ceil(services.config.snapshotPollMs / 1000))));
      ctx.body = { status: 'failure', code: 'not_ready', message: 'No snapshot loaded yet.', snapshot: node };
      return;
    }
    ctx.body = node ? { status: 'ok', snapshot: node } : { status: 'ok' };
  });
  router.get('/metrics', async (ctx) => {
    const token = presentedToken(ctx);
    if (token === null) throw new AppError('missing_token', 'GET /metrics needs "Authorization: Bearer <master key>" (or a scrape of SITESIFT_METRICS_ADDRESS).', 'token');
    if (!isMasterKey(services, token)) throw new AppError('forbidden', 'Only the master key may read /metrics.', 'token');
    ctx.body = await metrics.text();
    ctx.type = metrics.contentType;
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = openApiText();
  });
  for (const mod of ROUTE_MODULES) mod.register(router, services);
  opts.routes?.(router, services);

  const httpLog = componentLogger(services.log, 'http');
  app.use((ctx, next) => {
    const reqId = randomUUID();
    ctx.state.reqId = reqId;
    ctx.state.maxBodyBytes = services.config.maxBodyBytes;
    ctx.state.rateLimits = rateLimits;
    ctx.state.log = httpLog;
    ctx.set('X-Request-Id', reqId);
    return runWithRequestId(reqId, next);
  });

  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const elapsedNs = Number(process.hrtime.bigint() - started);
      metrics.observeRequest(ctx.method, routeLabel(ctx), ctx.status, elapsedNs / 1e9);
      const state = ctx.state as RequestState;
      state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: accessMs(elapsedNs),
          ...(state.siteId ? { siteId: state.siteId } : {}),
        },
        'request',
      );
    }
  });

  if (opts.validateResponses) app.use(responseValidator([...API_ROUTES, ...(opts.extraRoutes ?? [])]));

  app.use(errors);

  app.use(async (ctx, next) => {
    if (services.config.role === 'search' && !['GET', 'HEAD', 'OPTIONS'].includes(ctx.method) && !SEARCH_ROLE_WRITES.has(ctx.path)) {
      ctx.set('Allow', 'GET, HEAD');
      throw new AppError('method_not_allowed', 'This is a read-only search node; send writes to the primary.');
    }
    await next();
  });

  app.use(async (ctx, next) => {
    const isPublic = cors(ctx);
    if (isPublic && ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    await next();
  });

  app.use(router.routes());

  app.use(async (ctx) => {
    if (ctx.body !== undefined && ctx.body !== null) return;
    if (ctx.status !== 404) return;
    const match = router.match(ctx.path, ctx.method);
    const methods = new Set<string>();
    for (const layer of match.path) for (const m of layer.methods) methods.add(m);
    if (methods.size === 0) {
      renderError(ctx, new AppError('not_found', `No route ${ctx.method} ${ctx.path}; see the API reference for the available routes.`));
      return;
    }
    const allow = [...methods, 'OPTIONS'].join(', ');
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    renderError(ctx, new AppError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; use ${[...methods].join(' or ')}.`));
  });

  app.on('error', (err: Error) => httpLog.error({ err }, 'koa error'));
  routers.set(app, router);
  return app;
}
