/**
 * `GET /sites/similar`: public, identified by `site`; the pages nearest to one indexed page by
 * their vectors, for "related pages" boxes. Same answer shape and rules as `GET /sites` (paging,
 * content groups, filters, facets, sorting, rendering, the answer cache, search threads); the
 * neighbour search is src/search/similar.ts. Not recorded in the query log: it is no visitor's
 * query. Main thread.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { Type } from '@sinclair/typebox';
import { badParam, normalizeUrl } from '../core/index.js';
import type { Services } from '../services.js';
import { parseFilters, type SearchOutcome, type SearchParams } from '../search/index.js';
import { requireSite } from './auth.js';
import { parseBoolParam, parseEnumParam, parseIntParam, queryParam } from './params.js';
import { filtersParam, MAX_WINDOW, SearchResult, stringArrayParam } from './search.js';
import { success, type RouteSpec } from './openapi.js';
import { BoolParam, SiteParam } from './schemas.js';

const SemanticAnswer = Type.Object(
  {
    ratio: Type.Number(),
    embedder: Type.String({ description: 'The vector space (embedder fingerprint) compared in; `none` when the project has no embedder.' }),
    lexicalOnlyDocuments: Type.Integer({ minimum: 0, description: 'Live pages in segments not embedded in that space yet (never neighbours).' }),
    error: Type.Optional(Type.String({ description: 'Why the answer is empty: the page has no vector, or the project has no embedder.' })),
  },
  { description: 'The vector side of the answer.' },
);

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/sites/similar', summary: 'Pages similar to an indexed page (related pages), by their vectors', auth: 'site',
    query: Type.Object({
      site: SiteParam,
      url: Type.String({ minLength: 1, maxLength: 8192, description: 'An indexed page, as indexed (normalised like indexing normalises URLs).' }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WINDOW - 1, default: 0, description: `offset + limit ≤ ${MAX_WINDOW}` })),
      filters: Type.Optional(Type.String({ description: 'A JSON array of one-key objects, as for GET /sites.' })),
      includeContent: Type.Optional(BoolParam(false, 'add the opening of the content to each result')),
      includeContentGroups: Type.Optional(Type.String({ description: 'A JSON array of result-group names (or includeContentGroups[]=name keys); `_` is pages without a group.' })),
      excludeContentGroups: Type.Optional(Type.String({ description: 'A JSON array of result-group names (or excludeContentGroups[]=name keys).' })),
      groupResults: Type.Optional(BoolParam(true, 'group results by result group; false lists them under `_`')),
      limitPerGroup: Type.Optional(BoolParam(false, 'apply offset/limit inside each group')),
      sort: Type.Optional(Type.String({ description: 'A data-point key listed in sortingOptions; default similarity.' })),
      sortOrder: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC', description: 'Any case.' })),
      filterOptions: Type.Optional(BoolParam(false, 'also return the facets of the similar pages')),
    }),
    responses: {
      200: success({
        query: Type.String({ description: 'Always empty: the page is the query.' }),
        suggests: Type.Record(Type.String(), Type.Array(SearchResult), { description: 'Results by result group (`_` = no group), most similar first.' }),
        totalResults: Type.Integer({ minimum: 0, description: 'Pages at or above the similarity threshold passing the filters and groups (the page itself left out).' }),
        totalResultsPerContentGroup: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
        sortingOptions: Type.Array(Type.String()),
        sorting: Type.String(),
        filterOptions: Type.Array(Type.Record(Type.String(), Type.Unknown())),
        activeFilterOptions: Type.Array(Type.Record(Type.String(), Type.Unknown())),
        semantic: SemanticAnswer,
      }),
    },
  },
];

/** Registers `GET /sites/similar`. */
export function register(router: Router, services: Services): void {
  router.get('/sites/similar', async (ctx) => {
    const { siteId, url, params } = read(ctx, services);
    const outcome: SearchOutcome = await services.search.similar(siteId, url, params);
    if (params.sort && !outcome.sortingOptions.includes(params.sort)) {
      const opts = outcome.sortingOptions.length ? outcome.sortingOptions.join(', ') : 'none: index pages with data points first';
      throw badParam('sort', `Parameter "sort" must be one of the sorting options (${opts}), got "${params.sort}".`);
    }
    ctx.type = 'application/json';
    ctx.body = outcome.json;
  });
}

/** Validates the parameters (400s name the parameter). */
function read(ctx: Context, services: Services): { siteId: string; url: string; params: SearchParams } {
  const siteId = requireSite(ctx, services);
  const raw = queryParam(ctx, 'url');
  if (raw === undefined || raw.trim() === '') throw badParam('url', 'Parameter "url" is required: the indexed page whose similar pages are wanted.');
  if (raw.length > 8192) throw badParam('url', 'Parameter "url" must be at most 8192 characters.');
  const url = normalizeUrl(raw.trim());
  if (url === null) throw badParam('url', `Parameter "url" must be an absolute http(s) URL, got "${raw.slice(0, 200)}".`);
  const settings = services.projects.getSettings(siteId);
  const limit = parseIntParam(ctx, 'limit', { min: 1, max: 100, default: 10 });
  const offset = parseIntParam(ctx, 'offset', { min: 0, max: MAX_WINDOW - 1, default: 0 });
  if (offset + limit > MAX_WINDOW) throw badParam('offset', `offset + limit must be at most ${MAX_WINDOW} (got ${offset} + ${limit}).`);
  const params: SearchParams = {
    query: '',
    filters: parseFilters(filtersParam(ctx), settings.filters),
    filterOptions: parseBoolParam(ctx, 'filterOptions', false),
    sort: queryParam(ctx, 'sort') || null,
    sortOrder: parseEnumParam(ctx, 'sortOrder', ['ASC', 'DESC'] as const, 'ASC'),
    offset,
    limit,
    includeContent: parseBoolParam(ctx, 'includeContent', false),
    highlightQueryTerms: false,
    includeContentGroups: stringArrayParam(ctx, 'includeContentGroups'),
    excludeContentGroups: stringArrayParam(ctx, 'excludeContentGroups'),
    groupResults: parseBoolParam(ctx, 'groupResults', true),
    limitPerGroup: parseBoolParam(ctx, 'limitPerGroup', false),
  };
  return { siteId, url, params };
}
