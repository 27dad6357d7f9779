/**
 * The HTTP contract as data: every route module declares its routes as {@link RouteSpec}s
 * (method, path, query, body and response schemas), next to the handlers. From them come the
 * OpenAPI 3.1 document served at `GET /openapi.json` ({@link openApiDocument}) and, with the
 * app option `validateResponses` (the test suite turns it on), a middleware that checks every
 * JSON answer against its route's documented schema ({@link responseValidator}).
 *
 * Declaring a route: add a `RouteSpec` to the module's `ROUTES` list (the route/document test,
 * test/http/openapi.test.ts, fails while a registered route is undocumented or a documented
 * one is not registered). Failures (`status >= 400`) need no entry: every route answers the
 * one failure body of src/http/app.ts, documented once as the `default` response.
 */
import type { Context, Next } from 'koa';
import { Type, type TSchema, type TObject } from '@sinclair/typebox';
import { compileSchema, ERROR_STATUS, type CompiledSchema } from '../core/index.js';
import { ROUTE_SCOPES } from './scopes.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call a route: `public` (nothing), `site` (the public `site` parameter), `project`
 * (a project key in `token` or Bearer), `admin` (the master key, or a project key on its own
 * project), `master` (the master key only).
 */
export type RouteAuth = 'public' | 'site' | 'project' | 'admin' | 'master';

/** A non-JSON answer (pages, scripts): its media type only. */
export interface MediaAnswer {
  /** The media type, or the types it may be. */
  media: string | readonly string[];
  description?: string;
}

/** One documented route. */
export interface RouteSpec {
  method: HttpMethod;
  /** The router's path, with `:name` parameters (`/tasks/:taskId`). */
  path: string;
  summary: string;
  auth: RouteAuth;
  /**
   * Query parameters: one property per parameter. The route reads them with `readQuery` of
   * src/http/params.ts from this same object, so what is documented is what is read.
   */
  query?: TObject;
  /** The JSON body. */
  body?: TSchema;
  /** Media types the body may come in; default `application/json`. */
  bodyMedia?: readonly string[];
  /** Success answers by status: a JSON schema, or a non-JSON media type. */
  responses: Record<number, TSchema | MediaAnswer>;
}

/** `{"status":"failure","code","message","field"?,"errors"?}`: every route's failure answer. */
export const FailureBody = Type.Object(
  {
    status: Type.Literal('failure'),
    code: Type.Union(Object.keys(ERROR_STATUS).map((c) => Type.Literal(c))),
    message: Type.String(),
    field: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ index: Type.Integer({ minimum: 0 }), field: Type.String(), message: Type.String() }))),
    requestId: Type.Optional(Type.String()),
  },
  { description: 'A failure; `code` is one of the error table (docs/API.md#errors).' },
);

/** A success body with `props` after `"status":"success"`. */
export function success<P extends Record<string, TSchema>>(props: P, description?: string): TObject {
  return Type.Object({ status: Type.Literal('success'), ...props }, description ? { description } : {});
}

function isMedia(x: TSchema | MediaAnswer): x is MediaAnswer {
  return (x as MediaAnswer).media !== undefined && (x as { type?: unknown }).type === undefined;
}

/** `/tasks/:taskId` → `/tasks/{taskId}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** A schema as plain JSON (TypeBox's symbol keys dropped). */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}

const SECURITY: Record<RouteAuth, unknown[] | undefined> = {
  public: [],
  site: [],
  project: [{ bearer: [] }, { tokenQuery: [] }],
  admin: [{ bearer: [] }],
  master: [{ bearer: [] }],
};

/**
 * The OpenAPI 3.1 document of `routes`.
 *
 * @example
 * const doc = openApiDocument(allRoutes, '0.1.0'); // { openapi: '3.1.0', paths: { '/sites': { get: … } } }
 */
export function openApiDocument(routes: readonly RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = openApiPath(r.path);
    const parameters: unknown[] = [];
    for (const m of path.matchAll(/\{([^}]+)\}/g)) parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
    if (r.query) {
      const required = new Set(r.query.required ?? []);
      for (const [name, schema] of Object.entries(r.query.properties)) {
        const s = plain(schema) as { description?: string; default?: unknown };
        // A parameter with a default is never required (the reader fills it: src/http/params.ts).
        parameters.push({ name, in: 'query', required: required.has(name) && s.default === undefined, ...(s.description ? { description: s.description } : {}), schema: s });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, answer] of Object.entries(r.responses)) {
      responses[status] = isMedia(answer)
        ? { description: answer.description ?? String(answer.media), content: Object.fromEntries([answer.media].flat().map((m) => [m, {}])) }
        : { description: (answer as { description?: string }).description ?? 'Success', content: { 'application/json': { schema: plain(answer) } } };
    }
    responses.default = { description: 'Failure', content: { 'application/json': { schema: { $ref: '#/components/schemas/Failure' } } } };
    // The key scope a scoped project key needs (src/http/scopes.ts, the table auth consults).
    const scope = ROUTE_SCOPES[`${r.method.toUpperCase()} ${r.path}`];
    const op: Record<string, unknown> = {
      operationId: `${r.method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      summary: r.summary,
      'x-auth': r.auth,
      ...(scope ? { 'x-scope': scope } : {}),
      security: SECURITY[r.auth],
      parameters,
      responses,
    };
    if (r.body) {
      const media = r.bodyMedia ?? ['application/json'];
      op.requestBody = { required: true, content: Object.fromEntries(media.map((m) => [m, { schema: plain(r.body!) }])) };
    }
    (paths[path] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'sitesift', version, description: 'Site search: indexing, crawling, search, suggest, query log and reports. Reference: docs/API.md.' },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: { Failure: plain(FailureBody) },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A project API key, or the master key on admin routes.' },
        tokenQuery: { type: 'apiKey', in: 'query', name: 'token', description: 'A project API key.' },
      },
    },
  };
}

/** Compiled answer schemas, once per schema object across apps. */
const compiled = new WeakMap<TSchema, CompiledSchema<TSchema>>();
function compiledOf(schema: TSchema): CompiledSchema<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = compileSchema(schema);
    compiled.set(schema, c);
  }
  return c;
}

/** What the answer's body is as JSON, or undefined when it is not JSON (a page, a stream). */
function jsonBody(ctx: Context): { value: unknown } | undefined {
  const body = ctx.body as unknown;
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') {
    if (!/json/i.test(ctx.type)) return undefined;
    try {
      return { value: JSON.parse(body) };
    } catch {
      return { value: body };
    }
  }
  if (Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return undefined;
  return { value: body };
}

/**
 * Middleware that checks each JSON answer against the documented schema of its route and
 * status (failures against {@link FailureBody}); a mismatch replaces the answer with a 500
 * `internal` naming the route, the status and the first schema problem, so the request that
 * got it fails its test. Compiles each schema on first use and keeps it.
 */
export function responseValidator(routes: readonly RouteSpec[]): (ctx: Context, next: Next) => Promise<void> {
  const byKey = new Map(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const));
  return async (ctx, next) => {
    await next();
    if (ctx.method === 'HEAD' || ctx.method === 'OPTIONS' || ctx.status === 204 || ctx.status === 304) return;
    const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
    const route = matched ? byKey.get(`${ctx.method} ${matched}`) : undefined;
    const where = `${ctx.method} ${matched ?? ctx.path}`;
    const body = jsonBody(ctx);
    let problem: string | undefined;
    if (ctx.status >= 400) {
      if (!body) problem = 'a failure answered without a JSON body';
      else {
        const p = compiledOf(FailureBody).problems(body.value)[0];
        if (p) problem = `${p.field || 'body'} ${p.message}`;
      }
    } else if (!route) {
      // Every route of the app is documented (test/http/openapi.test.ts); what is not is a
      // test's own route (AppOptions.routes), checked only when it is declared in extraRoutes.
      return;
    } else {
      const answer = route.responses[ctx.status];
      if (answer === undefined) problem = `status ${ctx.status} is not documented (documented: ${Object.keys(route.responses).join(', ')})`;
      else if (isMedia(answer)) {
        const media = [answer.media].flat();
        if (!media.some((m) => ctx.type.startsWith(m))) problem = `media type ${ctx.type} is not documented (${media.join(', ')})`;
      } else if (!body) problem = 'the answer is not JSON';
      else {
        const p = compiledOf(answer).problems(body.value)[0];
        if (p) problem = `${p.field || 'body'} ${p.message}`;
      }
    }
    if (problem === undefined) return;
    const status = ctx.status;
    ctx.remove('Content-Encoding');
    ctx.status = 500;
    ctx.type = 'application/json';
    ctx.body = {
      status: 'failure',
      code: 'internal',
      message: `Response of ${where} (status ${status}) does not match its documented schema: ${problem}.`,
    };
  };
}
