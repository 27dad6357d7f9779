/**
 * Authentication helpers for routes (SPEC §2). Main thread; each call is one indexed lookup
 * in the project registry, so deleting a key or project takes effect on the next request.
 *
 * - {@link requireProject}: `{base_url}` routes (project API key in `token` or Bearer).
 * - {@link requireSite}: public `{search_url}` routes (`site` parameter).
 * - {@link requireAdmin}: `/admin/...` routes (master key, or a project key on its own project).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { AppError } from '../core/index.js';
import type { Services } from '../services.js';
import { queryParam } from './params.js';

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
    siteId = resolved.siteId;
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
  return { kind: 'project', siteId: resolved.siteId, keyId: resolved.keyId };
}
