/**
 * Admin API (SPEC §7, the Control Panel): projects, API keys and settings. Thin routes:
 * authorise → validate → one registry call → shape the response. Main thread.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { Type } from '@sinclair/typebox';
import { AppError, inputSchema, Nullable, SettingsSchema, type Settings } from '../core/index.js';
import { threadCacheUsage } from '../index/index.js';
import { assertSiteId, keepSecrets, KEY_SCOPES, maskSecrets, SettingsInputSchema } from '../projects/index.js';
import { wordVectorsBytes } from '../text/index.js';
import type { Services } from '../services.js';
import { requireAdmin } from './auth.js';
import { bodyLimit, readJson } from './body.js';
import { success, type RouteSpec } from './openapi.js';
import { IsoTime } from './schemas.js';

const Scopes = Nullable(Type.Array(Type.Union(KEY_SCOPES.map((s) => Type.Literal(s))), { minItems: 1, description: 'null: full access to the project' }));
const ProjectProps = { siteId: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }), name: Type.String(), createdAt: IsoTime };
const KeyProps = { id: Type.String(), label: Type.String(), prefix: Type.String(), createdAt: IsoTime, scopes: Scopes };
const CreatedKey = Type.Object({ ...KeyProps, token: Type.String() });
const ListedKey = Type.Object({ ...KeyProps, lastUsedAt: Nullable(IsoTime) });
const Done = success({});
/** Settings as stored and answered (src/core/settings.ts declares the sections). */
const SettingsAnswer = success({ ...SettingsSchema.properties }, 'The stored settings (docs/API.md#settings).');
/** Settings as a client sends them: every field with a default may be left out. */
const SettingsBody = Type.Unsafe(inputSchema(SettingsInputSchema) as object);
const SettingsPatch = Type.Unsafe({
  ...(inputSchema(SettingsInputSchema) as object),
  description: 'A JSON Merge Patch (RFC 7396) of the settings: objects merge, null removes a field (it takes its default), arrays replace. The merged result must match this schema.',
});

/** The routes of this module, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  {
    method: 'get', path: '/admin/memory', summary: 'The memory budget, its split, and what each cache holds now', auth: 'master',
    responses: { 200: success({ budgetMb: Type.Number(), rssMb: Type.Number(), plan: Type.Object({}), threads: Type.Array(Type.Object({ thread: Type.String() })) }) },
  },
  {
    method: 'post', path: '/admin/projects', summary: 'Create a project and its first API key', auth: 'master',
    body: Type.Object({ siteId: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }), name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))) }),
    responses: { 201: success({ ...ProjectProps, apiKey: CreatedKey }) },
  },
  {
    method: 'get', path: '/admin/projects', summary: 'List projects', auth: 'master',
    responses: { 200: success({ projects: Type.Array(Type.Object({ ...ProjectProps, pages: Type.Integer({ minimum: 0 }) })) }) },
  },
  { method: 'delete', path: '/admin/projects/:siteId', summary: 'Delete a project with its pages, keys, settings, crawl queue and query log', auth: 'master', responses: { 200: Done } },
  {
    method: 'post', path: '/admin/projects/:siteId/keys', summary: 'Create an API key (the token is shown once)', auth: 'admin',
    body: Type.Object({ label: Type.Optional(Nullable(Type.String({ maxLength: 200 }))), scopes: Type.Optional(Scopes) }),
    responses: { 201: success({ ...CreatedKey.properties }) },
  },
  { method: 'get', path: '/admin/projects/:siteId/keys', summary: "List a project's keys (never a token)", auth: 'admin', responses: { 200: success({ keys: Type.Array(ListedKey) }) } },
  {
    method: 'patch', path: '/admin/projects/:siteId/keys/:id', summary: 'Rename a key', auth: 'admin',
    body: Type.Object({ label: Type.String({ maxLength: 200 }) }, { additionalProperties: false }),
    responses: { 200: success({ ...ListedKey.properties }) },
  },
  { method: 'delete', path: '/admin/projects/:siteId/keys/:id', summary: 'Delete a key', auth: 'admin', responses: { 200: Done } },
  { method: 'get', path: '/admin/projects/:siteId/settings', summary: "A project's settings", auth: 'admin', responses: { 200: SettingsAnswer } },
  { method: 'put', path: '/admin/projects/:siteId/settings', summary: 'Replace the settings (absent sections take their defaults)', auth: 'admin', body: SettingsBody, responses: { 200: SettingsAnswer } },
  { method: 'patch', path: '/admin/projects/:siteId/settings', summary: 'Change the settings with a JSON Merge Patch (RFC 7396)', auth: 'admin', body: SettingsPatch, bodyMedia: ['application/json', 'application/merge-patch+json'], responses: { 200: SettingsAnswer } },
  { method: 'post', path: '/admin/projects/:siteId/merge', summary: "Merge the project's index into one segment", auth: 'master', responses: { 200: success({ siteId: Type.String(), pages: Type.Integer({ minimum: 0 }) }) } },
];

function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_parameter', 'The request body must be a JSON object.', 'body');
  }
  return body as Record<string, unknown>;
}

function optionalString(body: Record<string, unknown>, field: string, max: number): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new AppError('invalid_parameter', `"${field}" must be a string.`, field);
  if (v.length > max) throw new AppError('invalid_parameter', `"${field}" must be at most ${max} characters.`, field);
  return v;
}

/** The siteId path parameter of an existing project (404 `not_found` otherwise). */
function existingProject(ctx: Context, services: Services): string {
  const siteId = ctx.params.siteId as string;
  if (!services.projects.hasProject(siteId)) throw new AppError('not_found', `No project "${siteId}".`, 'siteId');
  return siteId;
}

/**
 * Searchable pages of a project for listings, read without opening its index where the
 * registry can (src/index/registry.ts `pages`); 0 while the index store is not available.
 */
async function pageCount(services: Services, siteId: string): Promise<number> {
  try {
    return await services.indexes.pages(siteId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_implemented') return 0;
    throw err;
  }
}

/** A settings answer: secrets masked (src/projects/secrets.ts). */
function settingsBody(settings: Settings): Record<string, unknown> {
  return { status: 'success', ...maskSecrets(settings) };
}

/** Registers the `/admin/projects...` routes. */
export function register(router: Router, services: Services): void {
  const limit = bodyLimit(services);

  // The memory budget, its split, and what each cache holds now (master key only).
  router.get('/admin/memory', async (ctx) => {
    const who = requireAdmin(ctx, services);
    if (who.kind !== 'master') throw new AppError('forbidden', 'Only the master key may read the server\'s memory.');
    const plan = services.memory;
    const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
    const searchCache = services.search.cache.stats();
    const suggestCache = services.suggest.cache.stats();
    const searchThreads = await services.executor.memory();
    const mem = process.memoryUsage();
    ctx.body = {
      status: 'success',
      budgetMb: plan.budgetMb,
      rssMb: mb(mem.rss),
      plan,
      threads: [
        {
          thread: 'main',
          shareMb: plan.main.totalMb,
          searchAnswers: { budgetMb: plan.main.searchAnswersMb, usedMb: mb(searchCache.bytes), entries: searchCache.entries },
          suggestAnswers: { budgetMb: plan.main.suggestAnswersMb, usedMb: mb(suggestCache.bytes), entries: suggestCache.size },
          queryLog: { budgetMb: plan.main.queryLogMb, ...services.analytics.memoryUsage() },
          // One table for the whole process (the pool threads share it).
          wordVectors: { budgetMb: plan.base.wordVectorsMb, usedMb: mb(wordVectorsBytes()) },
          ...threadCacheUsage(),
        },
        ...searchThreads.map((usage, i) => ({ thread: `search ${i + 1}`, shareMb: plan.searchThreads.eachTotalMb, ...usage })),
        ...(plan.poolThreads.count > 0 ? [{ thread: `pool × ${plan.poolThreads.count}`, shareMb: plan.poolThreads.count * plan.base.poolThreadMb }] : []),
      ],
    };
  });

  router.post('/admin/projects', async (ctx) => {
    requireAdmin(ctx, services);
    const body = objectBody(await readJson(ctx, { maxBytes: limit }));
    assertSiteId(body.siteId);
    const name = optionalString(body, 'name', 200);
    const { project, key } = services.projects.createProject(body.siteId, name);
    ctx.status = 201;
    ctx.body = { status: 'success', ...project, apiKey: key };
  });

  router.get('/admin/projects', async (ctx) => {
    requireAdmin(ctx, services);
    const projects = [];
    for (const p of services.projects.listProjects()) projects.push({ ...p, pages: await pageCount(services, p.siteId) });
    ctx.body = { status: 'success', projects };
  });

  router.delete('/admin/projects/:siteId', async (ctx) => {
    requireAdmin(ctx, services);
    const siteId = existingProject(ctx, services);
    await services.projects.deleteProject(siteId);
    ctx.body = { status: 'success' };
  });

  router.post('/admin/projects/:siteId/keys', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    const body = objectBody(await readJson(ctx, { maxBytes: limit, optional: true }));
    const label = optionalString(body, 'label', 200) ?? '';
    ctx.status = 201;
    ctx.body = { status: 'success', ...services.projects.createKey(siteId, label, body.scopes) };
  });

  router.get('/admin/projects/:siteId/keys', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    ctx.body = { status: 'success', keys: services.projects.listKeys(siteId) };
  });

  router.patch('/admin/projects/:siteId/keys/:id', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    const body = objectBody(await readJson(ctx, { maxBytes: limit }));
    const label = optionalString(body, 'label', 200);
    if (label === undefined) throw new AppError('invalid_parameter', '"label" is required.', 'label');
    for (const k of Object.keys(body)) {
      if (k !== 'label') throw new AppError('invalid_parameter', `Unknown field "${k}"; only "label" can be changed.`, k);
    }
    ctx.body = { status: 'success', ...services.projects.renameKey(siteId, ctx.params.id as string, label) };
  });

  router.delete('/admin/projects/:siteId/keys/:id', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    services.projects.deleteKey(siteId, ctx.params.id as string);
    ctx.body = { status: 'success' };
  });

  router.get('/admin/projects/:siteId/settings', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    ctx.body = settingsBody(services.projects.getSettings(siteId));
  });

  router.put('/admin/projects/:siteId/settings', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    const body = await readJson(ctx, { maxBytes: limit });
    ctx.body = settingsBody(services.projects.putSettings(siteId, keepSecrets(body, services.projects.getSettings(siteId))));
  });

  router.patch('/admin/projects/:siteId/settings', async (ctx) => {
    requireAdmin(ctx, services, ctx.params.siteId);
    const siteId = existingProject(ctx, services);
    const body = await readJson(ctx, { maxBytes: limit });
    ctx.body = settingsBody(services.projects.patchSettings(siteId, keepSecrets(body, services.projects.getSettings(siteId))));
  });

  // Operator action used by `sitesift merge`: merges the project's segments into one.
  router.post('/admin/projects/:siteId/merge', async (ctx) => {
    requireAdmin(ctx, services);
    const siteId = existingProject(ctx, services);
    const index = await services.indexes.get(siteId);
    await index.merge({ full: true });
    ctx.body = { status: 'success', siteId, pages: index.stats().pages };
  });
}
