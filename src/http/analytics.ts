/**
 * Query-log routes (SPEC §8, seed 4.8 and 4.11). Main thread; thin: validate → one
 * `services.analytics` call → shape.
 *
 * - `POST /sites/queries/log` (public, `site`; JSON, form, or sendBeacon text/plain JSON):
 *   `{site, query, action: search|select|abandon, timeToAction?, link?, position?}` →
 *   `{"status":"success"}`. Queued, never waits for the disk.
 * - `GET /sites/queries/timechart?start=&end=&interval=` (token) → `{"status":"success","start",
 *   "end","interval","total","buckets":[{"timestamp","count","noResults"}]}`.
 * - `GET /sites/queries/top?start=&end=&limit=` (token) → `{"status":"success","start","end",
 *   "queries":[{"query","count","averageResults","selectRate"}]}`.
 * - `GET /sites/queries/noResults?start=&end=&limit=` (token) → `{"status":"success","start",
 *   "end","queries":[{"query","count","lastSearched"}]}`.
 *
 * Ranges: `start`/`end` are UNIX seconds, `start < end`, default the 7 days before now.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { Type } from '@sinclair/typebox';
import { AppError, badParam } from '../core/index.js';
import { INTERVALS, QueryEventInput, bucketCount, defaultInterval, parseQueryEvent, type Interval } from '../analytics/index.js';
import type { Services } from '../services.js';
import { requireProject, requireSite } from './auth.js';
import { bodyLimit, readJsonOrForm } from './body.js';
import { queryParam, readQuery } from './params.js';
import { success, type RouteSpec } from './openapi.js';
import { SiteParam, TokenParam } from './schemas.js';

/** Largest accepted timestamp: 9999-12-31T23:59:59Z. */
export const MAX_TIMESTAMP = 253_402_300_799;
/** Most buckets one time chart may return. */
export const MAX_TIMECHART_BUCKETS = 5000;
/** Largest `limit` of the top/noResults reports. */
export const MAX_REPORT_LIMIT = 1000;
/** Default range: the last 7 days. */
const DEFAULT_RANGE_SECONDS = 7 * 86_400;
/** An event body is small; refuse anything bigger early. */
const MAX_EVENT_BODY_BYTES = 16 * 1024;

const RangeParams = {
  token: Type.Optional(TokenParam),
  start: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TIMESTAMP, description: 'UNIX seconds; default 7 days before end.' })),
  end: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TIMESTAMP, description: 'UNIX seconds, greater than start; default now.' })),
};
const Range = { start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) };
const ReportLimit = Type.Integer({ minimum: 1, maximum: MAX_REPORT_LIMIT, default: 10 });
/** Query parameters of the analytics reads: documented and read (`readQuery`) from these declarations. */
const RangeQuery = Type.Object(RangeParams);
const TimechartQuery = Type.Object({ ...RangeParams, interval: Type.Optional(Type.Union(INTERVALS.map((i) => Type.Literal(i)), { description: 'Default: by range length. Any case.' })) });
const ReportQuery = Type.Object({ ...RangeParams, limit: ReportLimit });

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'post', path: '/sites/queries/log', summary: 'Record a search, select or abandon event', auth: 'site',
    query: Type.Object({ site: Type.Optional(SiteParam) }),
    body: QueryEventInput, bodyMedia: ['application/json', 'application/x-www-form-urlencoded', 'text/plain'],
    responses: { 200: success({}) },
  },
  {
    method: 'get', path: '/sites/queries/timechart', summary: 'Searches per time bucket', auth: 'project',
    query: TimechartQuery,
    responses: {
      200: success({
        ...Range,
        interval: Type.Union(INTERVALS.map((i) => Type.Literal(i))),
        total: Type.Integer({ minimum: 0 }),
        buckets: Type.Array(Type.Object({ timestamp: Type.Integer(), count: Type.Integer({ minimum: 0 }), noResults: Type.Integer({ minimum: 0 }) })),
      }),
    },
  },
  {
    method: 'get', path: '/sites/queries/top', summary: 'Most frequent queries', auth: 'project', query: ReportQuery,
    responses: {
      200: success({
        ...Range,
        queries: Type.Array(Type.Object({ query: Type.String(), count: Type.Integer({ minimum: 0 }), averageResults: Type.Number({ minimum: 0 }), selectRate: Type.Number({ minimum: 0, maximum: 1 }) })),
      }),
    },
  },
  {
    method: 'get', path: '/sites/queries/noResults', summary: 'Queries that found nothing', auth: 'project', query: ReportQuery,
    responses: { 200: success({ ...Range, queries: Type.Array(Type.Object({ query: Type.String(), count: Type.Integer({ minimum: 0 }), lastSearched: Type.Integer() })) }) },
  },
];

/** `start`/`end` of a report: UNIX seconds, validated, defaults the 7 days before now. */
export function parseRange(ctx: Context, services: Pick<Services, 'clock'>): { start: number; end: number } {
  const now = Math.floor(services.clock() / 1000);
  const { start: startParam, end: endParam } = readQuery(ctx, RangeQuery);
  const end = endParam ?? (startParam !== undefined ? Math.max(now, startParam + 1) : now);
  const start = startParam ?? Math.max(0, end - DEFAULT_RANGE_SECONDS);
  if (start >= end) {
    throw badParam('end', `Parameter "end" (${end}) must be greater than "start" (${start}); both are UNIX timestamps in seconds.`);
  }
  return { start, end };
}

/** Registers the analytics routes. */
export function register(router: Router, services: Services): void {
  router.post('/sites/queries/log', async (ctx) => {
    const body = await readJsonOrForm(ctx, { maxBytes: Math.min(MAX_EVENT_BODY_BYTES, bodyLimit(services)) });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AppError('invalid_json', 'The body must be one JSON object or form: {site, query, action, timeToAction?, link?, position?}.');
    }
    const fields = body as Record<string, unknown>;
    const siteId = requireSite(ctx, services, fields.site ?? queryParam(ctx, 'site'));
    // Enumerated values are read without regard to case, like query parameters (`SELECT`).
    const action = typeof fields.action === 'string' ? fields.action.toLowerCase() : fields.action;
    const event = parseQueryEvent({ ...fields, action });
    services.analytics.recordEvent(siteId, { ...event, ip: ctx.ip, userAgent: ctx.get('User-Agent') });
    ctx.body = { status: 'success' };
  });

  router.get('/sites/queries/timechart', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const { start, end } = parseRange(ctx, services);
    const given: Interval | undefined = readQuery(ctx, TimechartQuery).interval;
    const interval = given ?? defaultInterval(start, end);
    const n = bucketCount(start * 1000, end * 1000, interval);
    if (n > MAX_TIMECHART_BUCKETS) {
      throw badParam(
        given ? 'interval' : 'start',
        `The range from ${start} to ${end} spans ${n} ${interval} buckets; at most ${MAX_TIMECHART_BUCKETS} are allowed: narrow the range or use a larger interval.`,
      );
    }
    ctx.body = { status: 'success', ...services.analytics.timechart(siteId, start, end, interval) };
  });

  router.get('/sites/queries/top', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const range = parseRange(ctx, services);
    const { limit } = readQuery(ctx, ReportQuery);
    ctx.body = { status: 'success', ...range, queries: services.analytics.topQueries(siteId, range, limit) };
  });

  router.get('/sites/queries/noResults', async (ctx) => {
    const siteId = requireProject(ctx, services);
    const range = parseRange(ctx, services);
    const { limit } = readQuery(ctx, ReportQuery);
    ctx.body = { status: 'success', ...range, queries: services.analytics.noResultQueries(siteId, range, limit) };
  });
}
