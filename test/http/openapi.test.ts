/**
 * The OpenAPI document and the router agree: every registered route (method + path) is
 * documented, every documented route is registered, `GET /openapi.json` is public and serves
 * the document, and every schema in it compiles. Answers of the other test files are checked
 * against the same schemas by the `validateResponses` option startTestServer turns on; the
 * last tests here show that check failing a request whose answer does not match.
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { API_ROUTES, appRouter, createApp, openApiPath } from '../../src/http/index.js';
import http from 'node:http';
import { startTestServer } from '../helpers/server.js';

/**
 * GET on a fresh connection: on a loaded machine a pause longer than the server's keep-alive
 * would otherwise let fetch reuse a socket the server has just closed.
 */
function api(base: string, path: string): Promise<{ status: number; body: any; headers: { get(name: string): string | null } }> {
  return new Promise((resolve, reject) => {
    http
      .get(base + path, { agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, headers: { get: (n) => (res.headers[n.toLowerCase()] as string | undefined) ?? null } });
        });
      })
      .on('error', reject);
  });
}

const s = await startTestServer({
  t,
  start: {
    app: {
      routes: (router) => {
        router.get('/test/wrong-shape', (ctx) => {
          ctx.body = { status: 'success', count: 'three' };
        });
        router.get('/test/undocumented-status', (ctx) => {
          ctx.status = 201;
          ctx.body = { status: 'success', count: 3 };
        });
      },
      extraRoutes: [
        { method: 'get', path: '/test/wrong-shape', summary: 'test', auth: 'public', responses: { 200: Type.Object({ status: Type.Literal('success'), count: Type.Integer() }) } },
        { method: 'get', path: '/test/undocumented-status', summary: 'test', auth: 'public', responses: { 200: Type.Object({ status: Type.Literal('success'), count: Type.Integer() }) } },
      ],
    },
  },
});

/** `METHOD /path/{param}` of every route the app's router registers (HEAD is implied by GET). */
function registered(): Set<string> {
  const router = appRouter(createApp(s.services));
  const out = new Set<string>();
  for (const layer of router.stack) {
    for (const m of layer.methods) if (m !== 'HEAD') out.add(`${m} ${openApiPath(String(layer.path))}`);
  }
  return out;
}

t.test('every registered route is documented and every documented route is registered', async (t) => {
  const { status, body, headers } = await api(s.url, '/openapi.json');
  t.equal(status, 200, 'public: no key needed');
  t.match(headers.get('content-type'), /application\/json/);
  t.equal(body.openapi, '3.1.0');
  const documented = new Set<string>();
  for (const [path, ops] of Object.entries(body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
  }
  const routes = registered();
  t.ok(routes.size > 20, `the router lists its routes (${routes.size})`);
  t.same([...routes].filter((r) => !documented.has(r)).sort(), [], 'no undocumented route');
  t.same([...documented].filter((r) => !routes.has(r)).sort(), [], 'no documented route that does not exist');
  t.equal(documented.size, API_ROUTES.length, 'each route documented once');
});

t.test('the document describes parameters, bodies and answers', async (t) => {
  const { body } = await api(s.url, '/openapi.json');
  const search = body.paths['/sites'].get;
  const limit = search.parameters.find((p: { name: string }) => p.name === 'limit');
  t.match(limit, { in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } });
  t.match(search.parameters.find((p: { name: string }) => p.name === 'query'), { required: true });
  t.match(body.paths['/tasks/{taskId}'].get.parameters[0], { name: 'taskId', in: 'path', required: true });
  const page = body.paths['/sites/pageJson'].post.requestBody.content['application/json'].schema;
  t.same(page.required.sort(), ['content', 'title', 'url']);
  t.equal(body.paths['/sites/pagesJson'].post.requestBody.content['application/json'].schema.maxItems, 100);
  t.equal(body.paths['/sites/indexStatus'].get['x-scope'], 'reports', 'the key scope a route needs');
  t.match(body.paths['/sites'].get.responses.default.content['application/json'].schema, { $ref: '#/components/schemas/Failure' });
});

t.test('an answer that does not match its documented schema fails the request', async (t) => {
  const wrong = await api(s.url, '/test/wrong-shape');
  t.equal(wrong.status, 500);
  t.match(wrong.body, { status: 'failure', code: 'internal', message: /GET \/test\/wrong-shape \(status 200\).*count must be an integer/ });
  const undocumented = await api(s.url, '/test/undocumented-status');
  t.equal(undocumented.status, 500);
  t.match(undocumented.body.message, /status 201 is not documented/);
});

t.test('documented answers pass unchanged', async (t) => {
  t.same((await api(s.url, '/health')).body, { status: 'ok' });
  const failure = await api(s.url, '/sites?site=default');
  t.equal(failure.status, 400, 'a failure body matches the Failure schema');
  t.equal(failure.body.field, 'query');
});

t.test('every schema in the document compiles (valid JSON Schema)', async (t) => {
  const { body } = await api(s.url, '/openapi.json');
  const ajv = new Ajv({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'doc', components: body.components }, 'doc');
  const seen = new Set<string>();
  let n = 0;
  const visit = (schema: unknown, where: string): void => {
    if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return;
    const text = JSON.stringify(schema).replace(/"#\/components/g, '"doc#/components');
    n++;
    if (seen.has(text)) return;
    seen.add(text);
    t.doesNotThrow(() => ajv.compile(JSON.parse(text)), where);
  };
  for (const [path, ops] of Object.entries(body.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const p of op.parameters) visit(p.schema, `${method} ${path} ${p.name}`);
      for (const c of Object.values((op.requestBody?.content ?? {}) as Record<string, { schema?: unknown }>)) visit(c.schema, `${method} ${path} body`);
      for (const [status, r] of Object.entries(op.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>)) {
        for (const c of Object.values(r.content ?? {})) visit(c.schema, `${method} ${path} ${status}`);
      }
    }
  }
  t.ok(n > 50, `${n} schemas compiled`);
});
