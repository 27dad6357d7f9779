/**
 * Authentication helpers for routes (SPEC §2). Main thread; each call is one indexed lookup
 * in the project registry, so deleting a key or project takes effect on the next request.
 *
 * - {@link requireProject}: `{base_url}` routes (project API key in `token` or Bearer).
 * - {@link requireSite}: public `{search_url}` routes (`site` parameter).
 * - {@link requireAdmin}: `/admin/...` routes (master key, or a project key on its own project).
 *
 * A project key with scopes may use only the routes whose scope it has (src/http/scopes.ts);
 * the public routes and the indexing routes take a token from the client's rate limit
 * (src/http/rate-limit.ts) here, once the project is known.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { AppError } from '../core/index.js';
import type { Services } from '../services.js';
import type { ResolvedToken } from '../projects/index.js';
import { queryParam } from './params.js';
import { enforce, type RateLimits } from './rate-limit.js';
import { INDEXING_ROUTES, scopeFor } from './scopes.js';

/** The route pattern the router matched (`/admin/projects/:siteId/keys`), or the path. */
function routeOf(ctx: Context): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? matched : ctx.path;
}

/** The app's rate limits (src/http/app.ts puts them in the request state); none outside the app. */
function limitsOf(ctx: Context): RateLimits | undefined {
  return (ctx.state as { rateLimits?: RateLimits }).rateLimits;
}

/** 403 `forbidden` unless the key is unscoped or has the scope this route needs. */
function requireScope(ctx: Context, key: ResolvedToken): void {
  if (key.scopes === null) return;
  const route = routeOf(ctx);
  const needed = scopeFor(ctx.method, route);
  if (key.scopes.includes(needed)) return;
  throw new AppError(
    'forbidden',
    `This key lacks the "${needed}" scope that ${ctx.method} ${route} needs (it has: ${key.scopes.join(', ')}); create a key with that scope.`,
    'token',
  );
}

/** The key a request presents: `Authorization: Bearer <key>` first, else the `token` parameter. */
export function presentedToken(ctx: Context): string | null {
  const header = ctx.get('Authorization');
  if (header !== '') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new AppError('invalid_token', 'The Authorization header must be "Bearer <key>".');
    return m[1];
  }
  const token = queryParam(ctx, 'token');
  return token === undefined || token === '' ? null : token;
}

/** Constant-time comparison with the master key (hashing first equalises the lengths). */
export function isMasterKey(services: Pick<Services, 'config'>, token: string): boolean {
  const master = services.config.masterKey;
  if (!master) return false;
  const a = createHash('sha256').update(token).digest();
  const b = createHash('sha256').update(master).digest();
  return timingSafeEqual(a, b);
}

/**
 * The siteId a `{base_url}` request acts on. The project key in `token` (query) or
 * `Authorization: Bearer` identifies the project; the master key is accepted too together with
 * a `site` parameter (bulk import from the CLI). Missing → 401 `missing_token`; unknown or
 * deleted → 401 `invalid_token`; master key with an unknown `site` → 404 `unknown_site`.
 * Also sets `ctx.state.siteId` (access log).
 */
export function requireProject(ctx: Context, services: Pick<Services, 'config' | 'projects'>): string {
  const token = presentedToken(ctx);
  if (token === null) {
    throw new AppError('missing_token', 'This route needs your project API key in the "token" parameter or an "Authorization: Bearer" header.', 'token');
  }
  let siteId: string;
  if (isMasterKey(services, token)) {
    const site = queryParam(ctx, 'site');
    if (site === undefined || site === '') {
      throw new AppError('invalid_parameter', 'With the master key, name the project in the "site" parameter.', 'site');
    }
    if (!services.projects.hasProject(site)) throw new AppError('unknown_site', `No project "${site}".`, 'site');
    siteId = site;
  } else {
    const resolved = services.projects.resolveToken(token);
    if (!resolved) throw new AppError('invalid_token', 'The API key is unknown or was deleted; use a current key of your project.', 'token');
    requireScope(ctx, resolved);
    siteId = resolved.siteId;
    if (INDEXING_ROUTES.has(`${ctx.method} ${routeOf(ctx)}`)) enforce(limitsOf(ctx)?.indexing ?? null, resolved.keyId, 'with this key to the indexing routes');
  }
  ctx.state.siteId = siteId;
  return siteId;
}

/**
 * The siteId of a public search route (`site` parameter, required). 400 `invalid_parameter`
 * when missing, 404 `unknown_site` when no such project exists.
 */
export function requireSite(ctx: Context, services: Pick<Services, 'projects'>, value?: unknown): string {
  const site = value !== undefined ? value : queryParam(ctx, 'site');
  if (site === undefined || site === null || site === '') throw new AppError('invalid_parameter', 'Parameter "site" is required (your project\'s siteId).', 'site');
  if (typeof site !== 'string') throw new AppError('invalid_parameter', 'Parameter "site" must be a string.', 'site');
  if (!services.projects.hasProject(site)) throw new AppError('unknown_site', `No project "${site}".`, 'site');
  ctx.state.siteId = site;
  enforce(limitsOf(ctx)?.publicRoutes ?? null, `${ctx.ip} ${site}`, `from this address to project "${site}"`);
  return site;
}

export type AdminPrincipal = { kind: 'master' } | { kind: 'project'; siteId: string; keyId: string };

/**
 * Authorises an admin request. The master key may do anything; a project API key may act
 * only on its own project (`siteId` given and equal), else 403 `forbidden`. Missing → 401
 * `missing_token`; unknown → 401 `invalid_token`.
 */
export function requireAdmin(ctx: Context, services: Pick<Services, 'config' | 'projects'>, siteId?: string): AdminPrincipal {
  const token = presentedToken(ctx);
  if (token === null) throw new AppError('missing_token', 'Admin routes need "Authorization: Bearer <master key>" (or a project key for its own project).', 'token');
  if (isMasterKey(services, token)) return { kind: 'master' };
  const resolved = services.projects.resolveToken(token);
  if (!resolved) throw new AppError('invalid_token', 'The key is unknown or was deleted.', 'token');
  if (siteId === undefined || resolved.siteId !== siteId) {
    throw new AppError('forbidden', 'A project API key may only manage its own project\'s settings and keys; use the master key.');
  }
  requireScope(ctx, resolved);
  return { kind: 'project', siteId: resolved.siteId, keyId: resolved.keyId };
}
