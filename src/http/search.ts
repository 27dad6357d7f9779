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
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { badParam, type Settings } from '../core/index.js';
import type { Services } from '../services.js';
import { parseFilters, type SearchOutcome, type SearchParams } from '../search/index.js';
import { requireSite } from './auth.js';
import { bracketListParam, queryParam, readQuery, stringListParam } from './params.js';
import { success, type RouteSpec } from './openapi.js';
import { BoolParam, SiteParam } from './schemas.js';

/** Deepest result reachable by paging (offset + limit). */
export const MAX_WINDOW = 10_000;

/**
 * A list of content-group names (absent: null), given as a JSON array (`name=["Blog","_"]`) or
 * as repeated keys (`name[]=Blog&name[]=_`, empty values skipped). Routes that declare the
 * parameter with {@link ContentGroupsParam} get it from `readQuery`.
 */
export function stringArrayParam(ctx: Context, name: string): string[] | null {
  return stringListParam(ctx, name, GROUP_LIST.what, GROUP_LIST.example);
}

const GROUP_LIST = { what: 'content-group names', example: '["Blog","_"]' };

/**
 * A list of result-group names: a JSON array or `name[]=` keys. Documented as a string holding
 * JSON (`contentMediaType`/`contentSchema`); `readQuery` answers the list (`x-list`).
 */
export function ContentGroupsParam(description: string) {
  return Type.Unsafe<string[]>(Type.String({ contentMediaType: 'application/json', contentSchema: Type.Array(Type.String()), 'x-list': GROUP_LIST, description }));
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

/** The required `query` parameter (400s for absent, empty, too long), as other routes read it. */
export function requireQuery(ctx: Context): string {
  return readQuery(ctx, QueryOnly).query;
}

const QueryParam = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'The query; `*` browses every page.',
  errorMessage: {
    required: 'Parameter "query" is required (use * to browse all pages).',
    minLength: 'Parameter "query" must not be empty (use * to browse all pages).',
    maxLength: 'Parameter "query" must be at most 1000 characters.',
  },
});
const QueryOnly = Type.Object({ query: QueryParam });

/** Query parameters search and suggest read the same way. */
export const SHARED_SEARCH_PARAMS = {
  site: SiteParam,
  query: QueryParam,
  filters: Type.Optional(Type.String({ description: 'A JSON array of one-key objects: [{"fid#1":["a"]},{"fid#2":{"min":1,"max":9}},{"language":["de"]}]; `language` is the built-in filter on the page\'s language (its own, else the project\'s search.language).' })),
  includeContent: BoolParam(false, 'add a content snippet to each result'),
  highlightQueryTerms: BoolParam(false, 'answer HTML with matched words in <mark>'),
  includeContentGroups: Type.Optional(ContentGroupsParam('A JSON array of result-group names (or includeContentGroups[]=name keys); `_` is pages without a group.')),
  excludeContentGroups: Type.Optional(ContentGroupsParam('A JSON array of result-group names (or excludeContentGroups[]=name keys).')),
  groupResults: BoolParam(true, 'group results by result group; false lists them under `_`'),
  semanticRatio: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Blend of vector ranking: 0 lexical only, 1 vector only; default the project\'s search.semantic.semanticRatio.' })),
};

/**
 * The request fields search and suggest read alike from their {@link SHARED_SEARCH_PARAMS}
 * (`q`: the values `readQuery` returned), with the filters checked against the project's.
 */
export function sharedSearchFields(ctx: Context, q: Static<TObject<typeof SHARED_SEARCH_PARAMS>>, settings: Settings) {
  return {
    query: q.query,
    filters: parseFilters(filtersParam(ctx), settings.filters),
    includeContent: q.includeContent,
    highlightQueryTerms: q.highlightQueryTerms,
    includeContentGroups: q.includeContentGroups ?? null,
    excludeContentGroups: q.excludeContentGroups ?? null,
    groupResults: q.groupResults,
  };
}

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

/** The query parameters of `GET /sites`: documented and read (`readQuery`) from this one declaration. */
const SearchQuery = Type.Object({
  ...SHARED_SEARCH_PARAMS,
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_WINDOW - 1, default: 0, description: `offset + limit ≤ ${MAX_WINDOW}` }),
  sort: Type.Optional(Type.String({ description: 'A data-point key listed in sortingOptions; default relevance.' })),
  sortOrder: Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC', description: 'Any case.' }),
  filterOptions: BoolParam(false, 'also return the facets of the matching pages'),
  limitPerGroup: BoolParam(false, 'apply offset/limit inside each group'),
  log: BoolParam(true, 'record this search in the query log'),
});

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/sites', summary: "Search the project's pages", auth: 'site',
    query: SearchQuery,
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
  const q = readQuery(ctx, SearchQuery);
  const settings = services.projects.getSettings(siteId);
  if (q.offset + q.limit > MAX_WINDOW) {
    throw badParam('offset', `offset + limit must be at most ${MAX_WINDOW} (got ${q.offset} + ${q.limit}).`);
  }
  const params: SearchParams = {
    ...sharedSearchFields(ctx, q, settings),
    filterOptions: q.filterOptions,
    sort: q.sort || null,
    sortOrder: q.sortOrder,
    offset: q.offset,
    limit: q.limit,
    limitPerGroup: q.limitPerGroup,
  };
  if (q.semanticRatio !== undefined) params.semanticRatio = q.semanticRatio;
  return { siteId, params, log: q.log };
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
