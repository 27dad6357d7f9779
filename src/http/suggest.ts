/**
 * `GET /sites/suggest` (SPEC §6): public, identified by `site`. The route validates the
 * parameters and calls the suggest service (`services.suggest.run`, src/search/suggest.ts:
 * snapshot, answer cache, search threads, query suggestions), which returns the body. CORS,
 * request id, access log and errors come from the app (src/http/app.ts). Main thread.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { Type } from '@sinclair/typebox';
import type { SuggestRequest } from '../search/index.js';
import type { Services } from '../services.js';
import { requireSite } from './auth.js';
import { readQuery } from './params.js';
import { SHARED_SEARCH_ANSWER, SHARED_SEARCH_PARAMS, sharedSearchFields } from './search.js';
import { success, type RouteSpec } from './openapi.js';

/** The query parameters of `GET /sites/suggest`: documented and read (`readQuery`) from this one declaration. */
const SuggestQuery = Type.Object({
  ...SHARED_SEARCH_PARAMS,
  limit: Type.Integer({ minimum: 1, maximum: 2, default: 2, description: 'Suggested pages, per group when groupResults=true.' }),
  maxQuerySuggestions: Type.Integer({ minimum: 0, maximum: 10, default: 3 }),
});

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/sites/suggest', summary: 'Autocomplete: suggested pages and earlier queries', auth: 'site',
    query: SuggestQuery,
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
  const q = readQuery(ctx, SuggestQuery);
  const settings = services.projects.getSettings(siteId);
  const req: SuggestRequest = {
    ...sharedSearchFields(ctx, q, settings),
    limit: q.limit,
    maxQuerySuggestions: q.maxQuerySuggestions,
  };
  const semanticRatio = q.semanticRatio;
  if (semanticRatio !== undefined) req.semanticRatio = semanticRatio;
  return { siteId, req };
}
