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
import { Type, type TSchema } from '@sinclair/typebox';
import { badParam } from '../core/index.js';
import type { Services } from '../services.js';
import { parseFilters, type SearchOutcome, type SearchParams } from '../search/index.js';
import { requireSite } from './auth.js';
import { bracketListParam, parseBoolParam, parseEnumParam, parseIntParam, parseJsonParam, parseRatioParam, queryParam } from './params.js';
import { success, type RouteSpec } from './openapi.js';
import { BoolParam, SiteParam } from './schemas.js';

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

/** Query parameters search and suggest read the same way. */
export const SHARED_SEARCH_PARAMS = {
  site: SiteParam,
  query: Type.String({ minLength: 1, maxLength: 1000, description: 'The query; `*` browses every page.' }),
  filters: Type.Optional(Type.String({ description: 'A JSON array of one-key objects: [{"fid#1":["a"]},{"fid#2":{"min":1,"max":9}},{"language":["de"]}]; `language` is the built-in filter on the page\'s language (its own, else the project\'s search.language).' })),
  includeContent: Type.Optional(BoolParam(false, 'add a content snippet to each result')),
  highlightQueryTerms: Type.Optional(BoolParam(false, 'answer HTML with matched words in <mark>')),
  includeContentGroups: Type.Optional(Type.String({ description: 'A JSON array of result-group names (or includeContentGroups[]=name keys); `_` is pages without a group.' })),
  excludeContentGroups: Type.Optional(Type.String({ description: 'A JSON array of result-group names (or excludeContentGroups[]=name keys).' })),
  groupResults: Type.Optional(BoolParam(true, 'group results by result group; false lists them under `_`')),
  semanticRatio: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Blend of vector ranking: 0 lexical only, 1 vector only; default the project\'s search.semantic.semanticRatio.' })),
};

/** One result of search or suggest. */
export const SearchResult = Type.Object({
  name: Type.String(),
  image: Type.String(),
  link: Type.String(),
  type: Type.String({ description: 'The document type, or `custom` for a result mapping\'s custom result.' }),
  dataPoints: Type.Array(Type.Object({ key: Type.String(), value: Type.String(), show: Type.Boolean() })),
  content: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  suggestionHtml: Type.Optional(Type.String()),
});

/** The answer fields search and suggest share. */
export const SHARED_SEARCH_ANSWER: Record<string, TSchema> = {
  query: Type.String(),
  suggests: Type.Record(Type.String(), Type.Array(SearchResult), { description: 'Results by result group (`_` = no group).' }),
  totalResults: Type.Integer({ minimum: 0 }),
  totalResultsPerContentGroup: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  redirect: Type.Optional(Type.String()),
};

const FilterOption = Type.Union([
  Type.Object({
    key: Type.String(),
    name: Type.String(),
    type: Type.Literal('multiple'),
    values: Type.Array(Type.Object({ name: Type.String(), value: Type.String(), count: Type.Integer({ minimum: 0 }) })),
  }),
  Type.Object({ key: Type.String(), name: Type.String(), type: Type.Literal('range'), min: Type.Number(), max: Type.Number() }),
]);

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/sites', summary: "Search the project's pages", auth: 'site',
    query: Type.Object({
      ...SHARED_SEARCH_PARAMS,
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WINDOW - 1, default: 0, description: `offset + limit ≤ ${MAX_WINDOW}` })),
      sort: Type.Optional(Type.String({ description: 'A data-point key listed in sortingOptions; default relevance.' })),
      sortOrder: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC', description: 'Any case.' })),
      filterOptions: Type.Optional(BoolParam(false, 'also return the facets of the matching pages')),
      limitPerGroup: Type.Optional(BoolParam(false, 'apply offset/limit inside each group')),
      log: Type.Optional(BoolParam(true, 'record this search in the query log')),
    }),
    responses: {
      200: success({
        ...SHARED_SEARCH_ANSWER,
        sortingOptions: Type.Array(Type.String()),
        sorting: Type.String(),
        filterOptions: Type.Array(FilterOption),
        activeFilterOptions: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      }),
    },
  },
];

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
  const semanticRatio = parseRatioParam(ctx, 'semanticRatio');
  if (semanticRatio !== undefined) params.semanticRatio = semanticRatio;
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
