import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { AppError, createLogger } from '../../src/core/index.js';
import { createApp } from '../../src/http/app.js';
import { requireProject, requireSite } from '../../src/http/auth.js';
import { readForm, readJson, readJsonOrForm } from '../../src/http/body.js';
import { parseBoolParam, parseEnumParam, parseIntParam, parseJsonParam, requireParam } from '../../src/http/params.js';
import { api, startTestServer } from '../helpers/server.js';

const logLines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    logLines.push(...chunk.toString().split('\n').filter(Boolean));
    cb();
  },
});

const s = await startTestServer({
  env: { SITESIFT_MAX_BODY_BYTES: '2048' },
  start: {
    log: createLogger('info', sink),
    app: {
      routes(router, services) {
        router.get('/test/boom', () => {
          throw new Error('secret detail at /srv/app/src/thing.ts:12');
        });
        router.get('/test/app-error', () => {
          throw new AppError('rate_limited', 'Slow down.', 'query', [{ index: 1, field: 'title', message: 'bad' }], { 'Retry-After': '7' });
        });
        router.get('/test/koa-throw', (ctx) => ctx.throw(400, 'bad thing'));
        router.get('/test/params', (ctx) => {
          ctx.body = {
            limit: parseIntParam(ctx, 'limit', { min: 1, max: 100, default: 10 }),
            flag: parseBoolParam(ctx, 'flag', false),
            json: parseJsonParam(ctx, 'json', null),
            sort: parseEnumParam(ctx, 'sort', ['ASC', 'DESC'] as const, 'ASC'),
          };
        });
        router.get('/test/required', (ctx) => {
          ctx.body = { q: requireParam(ctx, 'q') };
        });
        router.post('/test/json', async (ctx) => {
          ctx.body = { got: await readJson(ctx) };
        });
        router.post('/test/form', async (ctx) => {
          ctx.body = { got: await readForm(ctx) };
        });
        router.post('/test/either', async (ctx) => {
          ctx.body = { got: await readJsonOrForm(ctx) };
        });
        router.get('/test/project', (ctx) => {
          ctx.body = { siteId: requireProject(ctx, services) };
        });
        router.get('/test/site', (ctx) => {
          ctx.body = { siteId: requireSite(ctx, services) };
        });
      },
    },
  },
});
t.teardown(() => s.close());

function isFailure(t: Test, res: { status: number; body: any }, status: number, code: string): void {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.status, 'failure');
  t.equal(res.body?.code, code, `code ${code}`);
  t.type(res.body?.message, 'string');
}

t.test('GET /health and request ids', async (t) => {
  const res = await api(s.url, '/health');
  t.equal(res.status, 200);
  t.same(res.body, { status: 'ok' });
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  const other = await api(s.url, '/health');
  t.not(other.headers.get('x-request-id'), res.headers.get('x-request-id'));
  const access = logLines.map((l) => JSON.parse(l)).find((r) => r.msg === 'request' && r.reqId === res.headers.get('x-request-id'));
  t.ok(access, 'access log line with reqId');
  t.equal(access.path, '/health');
  t.equal(access.status, 200);
});

t.test('access log never records the query string (tokens live there)', async (t) => {
  await api(s.url, `/health?token=${s.token}`);
  t.notOk(logLines.some((l) => l.includes(s.token)));
});

t.test('unknown route → 404 not_found; wrong method → 405 with Allow', async (t) => {
  isFailure(t, await api(s.url, '/nope'), 404, 'not_found');
  isFailure(t, await api(s.url, '/admin/projects/default/nope', { token: s.masterKey }), 404, 'not_found');
  const res = await api(s.url, '/admin/projects', { method: 'PUT', token: s.masterKey });
  isFailure(t, res, 405, 'method_not_allowed');
  t.match(res.headers.get('allow'), /GET/);
  t.match(res.headers.get('allow'), /POST/);
  const del = await api(s.url, '/health', { method: 'DELETE' });
  isFailure(t, del, 405, 'method_not_allowed');
  const opt = await api(s.url, '/admin/projects', { method: 'OPTIONS' });
  t.equal(opt.status, 204);
  t.match(opt.headers.get('allow'), /POST/);
  t.equal(opt.headers.get('access-control-allow-origin'), null, 'no CORS on admin OPTIONS');
});

t.test('500: no stack or path in the body, request id in body and log', async (t) => {
  const res = await api(s.url, '/test/boom');
  isFailure(t, res, 500, 'internal');
  const reqId = res.headers.get('x-request-id');
  t.equal(res.body.requestId, reqId);
  t.match(res.body.message, reqId!);
  t.notMatch(res.text, /secret|\/srv\/|thing\.ts|at .*:\d+/);
  const logged = logLines.map((l) => JSON.parse(l)).find((r) => r.level === 'error' && r.reqId === reqId);
  t.ok(logged, 'error logged with the request id');
  t.match(logged.err.stack, /secret detail/, 'stack in the log');
});

t.test('AppError renders code, field, errors and headers; Koa errors map by status', async (t) => {
  const res = await api(s.url, '/test/app-error');
  isFailure(t, res, 429, 'rate_limited');
  t.equal(res.body.field, 'query');
  t.same(res.body.errors, [{ index: 1, field: 'title', message: 'bad' }]);
  t.equal(res.headers.get('retry-after'), '7');
  const koa = await api(s.url, '/test/koa-throw');
  isFailure(t, koa, 400, 'invalid_parameter');
  t.equal(koa.body.message, 'bad thing');
});

t.test('params helpers: defaults, values, range in messages, never clamped', async (t) => {
  t.same((await api(s.url, '/test/params')).body, { limit: 10, flag: false, json: null, sort: 'ASC' });
  t.same((await api(s.url, '/test/params?limit=100&flag=1&json=%5B1%5D&sort=DESC')).body, { limit: 100, flag: true, json: [1], sort: 'DESC' });
  t.same((await api(s.url, '/test/params?flag=false')).body.flag, false);
  for (const [q, field, msg] of [
    ['limit=101', 'limit', /1 to 100/],
    ['limit=0', 'limit', /1 to 100/],
    ['limit=abc', 'limit', /1 to 100/],
    ['limit=1&limit=2', 'limit', /more than once/],
    ['flag=yes', 'flag', /true, false, 1 or 0/],
    ['json=%7B', 'json', /valid JSON/],
    ['sort=UP', 'sort', /ASC, DESC/],
  ] as const) {
    const res = await api(s.url, `/test/params?${q}`);
    isFailure(t, res, 400, 'invalid_parameter');
    t.equal(res.body.field, field);
    t.match(res.body.message, msg);
  }
  const req = await api(s.url, '/test/required?q=');
  isFailure(t, req, 400, 'invalid_parameter');
  t.equal(req.body.field, 'q');
});

t.test('readJson: invalid_json, 415, 413 (declared and streamed)', async (t) => {
  t.same((await api(s.url, '/test/json', { method: 'POST', json: { a: 1 } })).body, { got: { a: 1 } });
  t.same(
    (await api(s.url, '/test/json', { method: 'POST', body: '[1]', headers: { 'Content-Type': 'application/vnd.api+json; charset=utf-8' } })).body,
    { got: [1] },
    '+json accepted',
  );
  isFailure(t, await api(s.url, '/test/json', { method: 'POST', body: '{"a":', headers: { 'Content-Type': 'application/json' } }), 400, 'invalid_json');
  isFailure(t, await api(s.url, '/test/json', { method: 'POST', body: '', headers: { 'Content-Type': 'application/json' } }), 400, 'invalid_json');
  isFailure(t, await api(s.url, '/test/json', { method: 'POST', body: 'a=1', headers: { 'Content-Type': 'text/csv' } }), 415, 'unsupported_media_type');
  isFailure(t, await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, body: '{"siteId":"x"}', headers: { 'Content-Type': 'text/plain' } }), 415, 'unsupported_media_type');
  const big = JSON.stringify({ pad: 'x'.repeat(4000) });
  isFailure(t, await api(s.url, '/test/json', { method: 'POST', body: big, headers: { 'Content-Type': 'application/json' } }), 413, 'payload_too_large');

  // Chunked upload without Content-Length: counted while streaming.
  const { port } = new URL(s.url);
  const streamed = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/test/json', method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.write('{"pad":"');
    for (let i = 0; i < 5; i++) req.write('y'.repeat(1000));
    req.end('"}');
  });
  isFailure(t, streamed, 413, 'payload_too_large');
});

t.test('readForm and readJsonOrForm', async (t) => {
  t.same((await api(s.url, '/test/form', { method: 'POST', body: 'a=1&b=x+y', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })).body, { got: { a: '1', b: 'x y' } });
  isFailure(t, await api(s.url, '/test/form', { method: 'POST', json: { a: 1 } }), 415, 'unsupported_media_type');
  t.same((await api(s.url, '/test/either', { method: 'POST', json: { a: 1 } })).body, { got: { a: 1 } });
  t.same((await api(s.url, '/test/either', { method: 'POST', body: 'a=2', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })).body, { got: { a: '2' } });
  t.same((await api(s.url, '/test/either', { method: 'POST', body: '{"a":3}', headers: { 'Content-Type': 'text/plain;charset=UTF-8' } })).body, { got: { a: 3 } }, 'sendBeacon text/plain');
});

t.test('CORS only on the public search routes', async (t) => {
  for (const path of ['/sites?site=default&query=x', '/sites/suggest?site=default&query=x']) {
    // Twice: the second answer comes from the answer cache.
    for (const round of ['first', 'again']) {
      const res = await api(s.url, path, { headers: { Origin: 'https://shop.example', 'Access-Control-Request-Headers': 'x-custom' } });
      t.equal(res.headers.get('access-control-allow-origin'), '*', `${path} (${round})`);
      // The preflight's headers belong to the preflight only (SPEC §2).
      for (const h of ['access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age']) t.equal(res.headers.get(h), null, `no ${h} on an actual response`);
    }
  }
  for (const [path, method] of [
    ['/sites', 'GET'],
    ['/sites/suggest', 'GET'],
    ['/sites/queries/log', 'POST'],
  ]) {
    const pre = await api(s.url, path, { method: 'OPTIONS', headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type' } });
    t.equal(pre.status, 204, `preflight ${path}`);
    t.equal(pre.headers.get('access-control-allow-origin'), '*');
    t.match(pre.headers.get('access-control-allow-methods'), method);
    t.match(pre.headers.get('access-control-allow-headers'), /content-type/i);
    t.equal(pre.headers.get('access-control-max-age'), '86400');
  }
  const unknown = await api(s.url, '/sites?site=no-such-site&query=x');
  t.equal(unknown.headers.get('access-control-allow-origin'), '*', 'errors on public routes carry CORS too');
  for (const path of ['/health', '/admin/projects', '/sites/indexStatus', '/nope']) {
    const res = await api(s.url, path, { headers: { Origin: 'https://shop.example' } });
    t.equal(res.headers.get('access-control-allow-origin'), null, `no CORS on ${path}`);
  }
});

t.test('requireProject: token query, Bearer, master key + site, errors', async (t) => {
  t.same((await api(s.url, `/test/project?token=${s.token}`)).body, { siteId: 'default' });
  t.same((await api(s.url, '/test/project', { token: s.token })).body, { siteId: 'default' });
  t.same((await api(s.url, '/test/project?site=default', { token: s.masterKey })).body, { siteId: 'default' });
  isFailure(t, await api(s.url, '/test/project'), 401, 'missing_token');
  isFailure(t, await api(s.url, '/test/project?token=ss_nope'), 401, 'invalid_token');
  isFailure(t, await api(s.url, '/test/project', { headers: { Authorization: 'Basic abc' } }), 401, 'invalid_token');
  isFailure(t, await api(s.url, '/test/project', { token: s.masterKey }), 400, 'invalid_parameter');
  isFailure(t, await api(s.url, '/test/project?site=ghost', { token: s.masterKey }), 404, 'unknown_site');
  const key = s.services.projects.createKey('default', 'temp');
  t.same((await api(s.url, `/test/project?token=${key.token}`)).body, { siteId: 'default' });
  s.services.projects.deleteKey('default', key.id);
  isFailure(t, await api(s.url, `/test/project?token=${key.token}`), 401, 'invalid_token');
});

t.test('requireSite: required and must exist', async (t) => {
  t.same((await api(s.url, '/test/site?site=default')).body, { siteId: 'default' });
  const missing = await api(s.url, '/test/site');
  isFailure(t, missing, 400, 'invalid_parameter');
  t.equal(missing.body.field, 'site');
  isFailure(t, await api(s.url, '/test/site?site=ghost'), 404, 'unknown_site');
});

t.test('search role: write routes answer 405, reads pass', async (t) => {
  const app = createApp({ ...s.services, config: Object.freeze({ ...s.services.config, role: 'search' as const }) });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const res = await api(url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'x' } });
  isFailure(t, res, 405, 'method_not_allowed');
  t.equal((await api(url, '/health')).status, 200);
});
