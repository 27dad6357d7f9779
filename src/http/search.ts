/**
 * `GET /sites` (seed 4.6, SPEC §5): public, identified by `site` (`GET /sites/suggest` is in
 * src/http/suggest.ts). Thin: validate → search service → shape. CORS comes from the app.
 * Main thread.
 *
 * Two ways in, one answer (like the suggest route):
 * - the Koa route ({@link SearchRoute.register}): every request the lean path declines —
 *   invalid parameters (the errors middleware renders them), a project whose index is not open
 *   yet, HEAD, anything unusual in the URL, a search that fails;
 * - the lean path ({@link SearchRoute.lean}, src/http/lean.ts), called by the app's request
 *   handler in front of the middleware chain: valid `GET /sites?…` requests of an open project,
 *   with the same headers, body bytes, query-log record and access-log line. The search runs
 *   on the search threads either way; the lean path saves the chain's ≈ 0.1–0.2 ms of main
 *   thread per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { badParam } from '../errors.js';
import type { Services } from '../services.js';
import { parseFilters } from '../search/filters.js';
import type { SearchOutcome } from '../search/executor.js';
import type { SearchParams } from '../search/service.js';
import type { Settings } from '../types.js';
import { requireSite } from './auth.js';
import { leanStart, OpenedIndexes, sendLean, userAgentOf, type ParamSource } from './lean.js';
import { parseBoolParam, parseEnumParam, parseIntParam, parseJsonParam, queryParam } from './params.js';

/** Deepest result reachable by paging (offset + limit). */
export const MAX_WINDOW = 10_000;

/** A JSON array of content-group names (absent: null); 400 otherwise. Also read by the suggest route. */
export function stringArrayParam(ctx: Context, name: string): string[] | null {
  const v = parseJsonParam(ctx, name);
  if (v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    throw badParam(name, `Parameter "${name}" must be a JSON array of content-group names, like ["Blog","_"].`);
  }
  return v as string[];
}

/** The required `query` parameter (400s for absent, empty, too long). Also read by the suggest route. */
export function requireQuery(ctx: Context): string {
  const q = queryParam(ctx, 'query');
  if (q === undefined) throw badParam('query', 'Parameter "query" is required (use * to browse all pages).');
  if (q.trim() === '') throw badParam('query', 'Parameter "query" must not be empty (use * to browse all pages).');
  if (q.length > 1000) throw badParam('query', 'Parameter "query" must be at most 1000 characters.');
  return q;
}

/** A validated search request. */
interface SearchRequest {
  siteId: string;
  settings: Settings;
  params: SearchParams;
  log: boolean;
}

/** Raw URL prefix the lean path answers. */
const LEAN_PREFIX = '/sites?';

/** The `GET /sites` route: the Koa route and the lean path in front of Koa. Main thread. */
export class SearchRoute {
  /** Requests answered by the lean path (tests, diagnostics). */
  leanAnswers = 0;
  private readonly opened = new OpenedIndexes();

  constructor(private readonly services: Services) {}

  /** Registers the Koa route (requests the lean path declined). */
  register(router: Router): void {
    router.get('/sites', async (ctx) => {
      const sr = this.read(ctx);
      const index = await this.opened.open(this.services.indexes.get(sr.siteId));
      const snap = index.acquire();
      try {
        const body = await this.services.searcher.run(index, snap, sr.settings, sr.params);
        this.finish(sr, body, ctx.ip, ctx.get('User-Agent'));
        // Serialised where the search ran (a search thread): the main thread only writes it.
        ctx.type = 'application/json';
        ctx.body = body.json;
      } finally {
        snap.release();
      }
    });
  }

  /**
   * The lean path for `req`: true when it took the request (it answers once the search is
   * done; a search or check that fails is handed to `fallback`, the Koa handler, which runs it
   * again and renders the error), false when Koa must handle it (nothing was written).
   */
  lean(req: IncomingMessage, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => unknown): boolean {
    const start = leanStart(req, LEAN_PREFIX, (src) => this.read(src), this.opened, this.services.indexes);
    if (!start) return false;
    const { sr, index, started } = start;
    const snap = index.acquire();
    let pending: Promise<SearchOutcome>;
    try {
      pending = this.services.searcher.run(index, snap, sr.settings, sr.params);
    } catch {
      snap.release();
      return false;
    }
    pending.then(
      (body) => {
        snap.release();
        try {
          // Koa's ctx.ip without a trusted proxy, and ctx.get('User-Agent').
          this.finish(sr, body, req.socket.remoteAddress || '', userAgentOf(req) || '');
          sendLean(res, this.services.log, '/sites', sr.siteId, body.json, started);
        } catch {
          // Nothing was written (writeHead validates before it sends): the chain answers,
          // rendering whatever fails again as the route's error. Never an unhandled rejection.
          if (!res.headersSent) void fallback(req, res);
          return;
        }
        this.leanAnswers++;
      },
      () => {
        snap.release();
        void fallback(req, res);
      },
    );
    return true;
  }

  /** Validates the parameters (400s name the parameter), Koa route and lean path alike. */
  private read(ctx: ParamSource): SearchRequest {
    // The readers only use `query` and `state` (src/http/params.ts, auth.ts).
    const c = ctx as Context;
    const siteId = requireSite(c, this.services);
    const query = requireQuery(c);
    const settings = this.services.projects.getSettings(siteId);
    const limit = parseIntParam(c, 'limit', { min: 1, max: 100, default: 10 });
    const offset = parseIntParam(c, 'offset', { min: 0, max: MAX_WINDOW - 1, default: 0 });
    if (offset + limit > MAX_WINDOW) {
      throw badParam('offset', `offset + limit must be at most ${MAX_WINDOW} (got ${offset} + ${limit}).`);
    }
    const sortOrder = parseEnumParam(c, 'sortOrder', ['ASC', 'DESC'] as const, 'ASC');
    const params: SearchParams = {
      query,
      filters: parseFilters(queryParam(c, 'filters'), settings.filters),
      filterOptions: parseBoolParam(c, 'filterOptions', false),
      sort: queryParam(c, 'sort') || null,
      sortOrder,
      offset,
      limit,
      includeContent: parseBoolParam(c, 'includeContent', false),
      highlightQueryTerms: parseBoolParam(c, 'highlightQueryTerms', false),
      includeContentGroups: stringArrayParam(c, 'includeContentGroups'),
      excludeContentGroups: stringArrayParam(c, 'excludeContentGroups'),
      groupResults: parseBoolParam(c, 'groupResults', true),
      limitPerGroup: parseBoolParam(c, 'limitPerGroup', false),
    };
    const log = parseBoolParam(c, 'log', true);
    return { siteId, settings, params, log };
  }

  /**
   * After the search, before the answer is written: a `sort` that is not one of the sorting
   * options is a 400 (known only now), and a logged search is recorded in the query log.
   */
  private finish(sr: SearchRequest, body: SearchOutcome, ip: string, userAgent: string): void {
    const { params } = sr;
    if (params.sort && !body.sortingOptions.includes(params.sort)) {
      const opts = body.sortingOptions.length ? body.sortingOptions.join(', ') : 'none: index pages with data points first';
      throw badParam('sort', `Parameter "sort" must be one of the sorting options (${opts}), got "${params.sort}".`);
    }
    if (sr.log) {
      this.services.analytics.record(sr.siteId, {
        query: params.query,
        results: body.totalResults,
        filters: params.filters.length ? body.activeFilterOptions : null,
        sort: params.sort,
        ip,
        userAgent,
      });
    }
  }
}
