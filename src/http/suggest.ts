/**
 * `GET /sites/suggest` (SPEC §6): public, identified by `site`. The route validates the
 * parameters and calls the suggest service (`services.suggest.run`, src/search/suggest.ts:
 * snapshot, answer cache, search threads, query suggestions), which returns the body. CORS,
 * request id, access log and errors come from the app (src/http/app.ts). Main thread.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { Type } from '@sinclair/typebox';
import { parseFilters, type SuggestRequest } from '../search/index.js';
import type { Services } from '../services.js';
import { requireSite } from './auth.js';
import { parseBoolParam, parseIntParam, parseRatioParam } from './params.js';
import { filtersParam, requireQuery, SHARED_SEARCH_ANSWER, SHARED_SEARCH_PARAMS, stringArrayParam } from './search.js';
import { success, type RouteSpec } from './openapi.js';

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/sites/suggest', summary: 'Autocomplete: suggested pages and earlier queries', auth: 'site',
    query: Type.Object({
      ...SHARED_SEARCH_PARAMS,
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2, default: 2, description: 'Suggested pages, per group when groupResults=true.' })),
      maxQuerySuggestions: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: 3 })),
    }),
    responses: { 200: success({ ...SHARED_SEARCH_ANSWER, querySuggestions: Type.Array(Type.Object({ query: Type.String() })) }) },
  },
];

/** Registers `GET /sites/suggest`. */
export function register(router: Router, services: Services): void {
  router.get('/sites/suggest', async (ctx) => {
    const { siteId, req } = read(ctx, services);
    const body = await services.suggest.run(siteId, req);
    ctx.type = 'application/json';
    ctx.body = body;
  });
}

/** Validates the parameters (400s name the parameter). */
function read(ctx: Context, services: Services): { siteId: string; req: SuggestRequest } {
  const siteId = requireSite(ctx, services);
  const query = requireQuery(ctx);
  const settings = services.projects.getSettings(siteId);
  const limit = parseIntParam(ctx, 'limit', { min: 1, max: 2, default: 2 });
  const maxQuerySuggestions = parseIntParam(ctx, 'maxQuerySuggestions', { min: 0, max: 10, default: 3 });
  const groupResults = parseBoolParam(ctx, 'groupResults', true);
  const req: SuggestRequest = {
    query,
    filters: parseFilters(filtersParam(ctx), settings.filters),
    limit,
    groupResults,
    includeContent: parseBoolParam(ctx, 'includeContent', false),
    highlightQueryTerms: parseBoolParam(ctx, 'highlightQueryTerms', false),
    includeContentGroups: stringArrayParam(ctx, 'includeContentGroups'),
    excludeContentGroups: stringArrayParam(ctx, 'excludeContentGroups'),
    maxQuerySuggestions,
  };
  const semanticRatio = parseRatioParam(ctx, 'semanticRatio');
  if (semanticRatio !== undefined) req.semanticRatio = semanticRatio;
  return { siteId, req };
}
