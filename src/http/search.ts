/**
 * `GET /sites` (SPEC §5): public, identified by `site` (`GET /sites/suggest` is in
 * src/http/suggest.ts). The route validates the parameters, calls the search service
 * (`services.search.run`, src/search/service.ts: snapshot, answer cache, search threads),
 * checks the sort option against the answer, records the query and writes the body the search
 * serialised. CORS, request id, access log and errors come from the app (src/http/app.ts).
 * Main thread.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { badParam } from '../core/index.js';
import type { Services } from '../services.js';
import { parseFilters, type SearchOutcome, type SearchParams } from '../search/index.js';
import { requireSite } from './auth.js';
import { bracketListParam, parseBoolParam, parseEnumParam, parseIntParam, parseJsonParam, queryParam } from './params.js';

/** Deepest result reachable by paging (offset + limit). */
export const MAX_WINDOW = 10_000;

/**
 * A list of content-group names (absent: null), given as a JSON array (`name=["Blog","_"]`) or
 * as repeated keys (`name[]=Blog&name[]=_`, empty values skipped); 400 for anything else or
 * for both forms at once. Also read by the suggest route.
 */
export function stringArrayParam(ctx: Context, name: string): string[] | null {
  const listed = bracketListParam(ctx, name);
  if (listed !== undefined) {
    if (ctx.query[name] !== undefined) throw badParam(name, `Give "${name}" in one form: a JSON array or ${name}[] keys, not both.`);
    return listed.filter((g) => g !== '');
  }
  const v = parseJsonParam(ctx, name);
  if (v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    throw badParam(name, `Parameter "${name}" must be a JSON array of content-group names, like ["Blog","_"].`);
  }
  return v as string[];
}

/**
 * The raw `filters` parameter (a JSON array, parsed against the settings by `parseFilters`).
 * Bracket keys (`filters[0][fid#1]=…`) are a 400 rather than ignored. Also read by the suggest route.
 */
export function filtersParam(ctx: Context): string | undefined {
  if (bracketListParam(ctx, 'filters') !== undefined) {
    throw badParam('filters', 'Parameter "filters" must be one JSON array such as [{"fid#1":["a"]}], not filters[] keys.');
  }
  return queryParam(ctx, 'filters');
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
  params: SearchParams;
  /** Record the search in the query log (`log`, default true). */
  log: boolean;
}

/** Registers `GET /sites`. */
export function register(router: Router, services: Services): void {
  router.get('/sites', async (ctx) => {
    const sr = read(ctx, services);
    const outcome = await services.search.run(sr.siteId, sr.params);
    checkSort(sr.params, outcome);
    if (sr.log) {
      services.analytics.record(sr.siteId, {
        query: sr.params.query,
        results: outcome.totalResults,
        filters: sr.params.filters.length ? outcome.activeFilterOptions : null,
        sort: sr.params.sort,
        ip: ctx.ip,
        userAgent: ctx.get('User-Agent'),
      });
    }
    // Serialised where the search ran (a search thread): the main thread only writes it.
    ctx.type = 'application/json';
    ctx.body = outcome.json;
  });
}

/** Validates the parameters (400s name the parameter). */
function read(ctx: Context, services: Services): SearchRequest {
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
    filters: parseFilters(filtersParam(ctx), settings.filters),
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
  return { siteId, params, log: parseBoolParam(ctx, 'log', true) };
}

/**
 * A `sort` that is not one of the sorting options is a 400, known only once the search has
 * listed them (without data-point settings they are the keys the index holds).
 */
function checkSort(params: SearchParams, outcome: SearchOutcome): void {
  if (params.sort && !outcome.sortingOptions.includes(params.sort)) {
    const opts = outcome.sortingOptions.length ? outcome.sortingOptions.join(', ') : 'none: index pages with data points first';
    throw badParam('sort', `Parameter "sort" must be one of the sorting options (${opts}), got "${params.sort}".`);
  }
}
