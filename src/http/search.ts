/**
 * `GET /sites` (seed 4.6, SPEC §5): public, identified by `site` (`GET /sites/suggest` is in
 * src/http/suggest.ts). Thin: validate → search service → shape. CORS comes from the app.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { badParam } from '../errors.js';
import type { Services } from '../services.js';
import { parseFilters } from '../search/filters.js';
import { search, type SearchParams } from '../search/service.js';
import { requireSite } from './auth.js';
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

/** Registers the search and suggest routes. */
export function register(router: Router, services: Services): void {
  router.get('/sites', async (ctx) => {
    const siteId = requireSite(ctx, services);
    const query = requireQuery(ctx);
    const settings = services.projects.getSettings(siteId);
    const limit = parseIntParam(ctx, 'limit', { min: 1, max: 100, default: 10 });
    const offset = parseIntParam(ctx, 'offset', { min: 0, max: MAX_WINDOW - 1, default: 0 });
    if (offset + limit > MAX_WINDOW) {
      throw badParam('offset', `offset + limit must be at most ${MAX_WINDOW} (got ${offset} + ${limit}).`);
    }
    const sortOrder = parseEnumParam(ctx, 'sortOrder', ['ASC', 'DESC'] as const, 'ASC');
    const params: SearchParams = {
      query,
      filters: parseFilters(queryParam(ctx, 'filters'), settings.filters),
      filterOptions: parseBoolParam(ctx, 'filterOptions', false),
      sort: queryParam(ctx, 'sort') || null,
      sortOrder,
      offset,
      limit,
      includeContent: parseBoolParam(ctx, 'includeContent', false),
      highlightQueryTerms: parseBoolParam(ctx, 'highlightQueryTerms', false),
      includeContentGroups: stringArrayParam(ctx, 'includeContentGroups'),
      excludeContentGroups: stringArrayParam(ctx, 'excludeContentGroups'),
      groupResults: parseBoolParam(ctx, 'groupResults', true),
      limitPerGroup: parseBoolParam(ctx, 'limitPerGroup', false),
    };
    const log = parseBoolParam(ctx, 'log', true);
    const index = await services.indexes.get(siteId);
    const snap = index.acquire();
    try {
      const body = await services.searcher.run(index, snap, settings, params);
      if (params.sort && !body.sortingOptions.includes(params.sort)) {
        const opts = body.sortingOptions.length ? body.sortingOptions.join(', ') : 'none: index pages with data points first';
        throw badParam('sort', `Parameter "sort" must be one of the sorting options (${opts}), got "${params.sort}".`);
      }
      if (log) {
        services.analytics.record(siteId, {
          query,
          results: body.totalResults,
          filters: params.filters.length ? body.activeFilterOptions : null,
          sort: params.sort,
          ip: ctx.ip,
          userAgent: ctx.get('User-Agent'),
        });
      }
      // Serialised where the search ran (a search thread): the main thread only writes it.
      ctx.type = 'application/json';
      ctx.body = body.json;
    } finally {
      snap.release();
    }
  });
}

