/**
 * `POST /admin/export` (master key): writes a snapshot of one project or of all of them to a
 * directory on the server's machine or an http(s) URL (src/snapshot/export.ts), used by
 * `sitesift export`. The export pins each project's current generation and copies its sealed
 * files, so writes and searches go on meanwhile. Main thread.
 */
import path from 'node:path';
import type Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import { AppError, badParam } from '../core/index.js';
import type { Services } from '../services.js';
import { requireAdmin } from './auth.js';
import { readJson } from './body.js';
import { success, type RouteSpec } from './openapi.js';

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'post', path: '/admin/export', summary: 'Write a snapshot of one project or all to a directory or an http(s) URL', auth: 'master',
    body: Type.Object({
      out: Type.String({ minLength: 1, description: 'A directory on the server\'s machine or an http(s) URL.' }),
      siteId: Type.Optional(Type.String({ description: 'One project; or give all: true.' })),
      all: Type.Optional(Type.Boolean()),
      keys: Type.Optional(Type.Boolean({ default: false, description: 'Include the projects\' key hashes and the HTTP embedder\'s API key.' })),
      pruneGraceMs: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    responses: {
      200: success({
        out: Type.String(),
        projects: Type.Array(Type.Object({})),
        bytesWritten: Type.Integer({ minimum: 0 }),
        pruned: Type.Object({ manifests: Type.Integer({ minimum: 0 }), blobs: Type.Integer({ minimum: 0 }), temps: Type.Integer({ minimum: 0 }) }),
        ms: Type.Number({ minimum: 0 }),
      }),
    },
  },
];

/** Registers `POST /admin/export`. */
export function register(router: Router, services: Services): void {
  router.post('/admin/export', async (ctx) => {
    if (requireAdmin(ctx, services).kind !== 'master') throw new AppError('forbidden', 'Exports need the master key.');
    const body = await readJson(ctx, { maxBytes: 64 * 1024 });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badParam('out', 'The body must be a JSON object with "out" and "siteId" or "all".');
    const b = body as Record<string, unknown>;
    if (typeof b.out !== 'string' || !(path.isAbsolute(b.out) || /^https?:\/\//i.test(b.out))) {
      throw badParam('out', '"out" must be an absolute directory path on the server or an http(s) URL.');
    }
    const all = b.all === true;
    if (all === (b.siteId !== undefined)) throw badParam('siteId', 'Give either "siteId" (one project) or "all": true.');
    if (!all && (typeof b.siteId !== 'string' || !services.projects.hasProject(b.siteId))) throw new AppError('unknown_site', `No project "${String(b.siteId)}".`, 'siteId');
    if (b.keys !== undefined && typeof b.keys !== 'boolean') throw badParam('keys', '"keys" must be true or false.');
    const grace = b.pruneGraceMs;
    if (grace !== undefined && (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0)) throw badParam('pruneGraceMs', '"pruneGraceMs" must be a non-negative integer.');
    if (!services.exporter) throw new AppError('method_not_allowed', 'Exports run on the primary.');
    let result;
    try {
      result = await services.exporter.run({
        siteIds: all ? null : [b.siteId as string],
        out: b.out,
        keys: b.keys === true,
        pruneGraceMs: (grace as number | undefined) ?? services.config.exportPruneGraceMs,
      });
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('internal', `Export to ${b.out} failed: ${(err as Error).message}`);
    }
    ctx.body = { status: 'success', ...result };
  });
}
