/**
 * The query-log routes through a real server on 127.0.0.1 with a temp data dir and a fake clock.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { defaultConfig, createLogger } from '../../src/core/index.js';
import { startServer, type RunningServer } from '../../src/server.js';

const HOUR = 3600;
// 2026-03-10T12:30:00Z
const NOW = Date.UTC(2026, 2, 10, 12, 30, 0);

let server: RunningServer;
let token: string;
let dataDir: string;
const clock = { now: NOW };

t.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sitesift-http-ql-'));
  server = await startServer(
    { ...defaultConfig(), dataDir, port: 0, masterKey: 'test-master-key-0123456789abcdef', workers: 1, logLevel: 'error' },
    {
      log: createLogger('silent'),
      clock: () => clock.now,
      jobs: false,
      stdout: new Writable({ write: (_c, _e, cb) => cb() }),
    },
  );
  token = server.services.projects.createProject('docs').key.token;
});
t.teardown(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(path: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
const postJson = (body: unknown) =>
  call('/sites/queries/log', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

t.test('POST /sites/queries/log accepts JSON and form events, with CORS', async (t) => {
  let r = await postJson({ site: 'docs', query: 'pg dump', action: 'select', link: 'https://example.org/dump', position: 2, timeToAction: 1800 });
  t.equal(r.status, 200);
  t.same(r.body, { status: 'success' });
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  r = await call('/sites/queries/log', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'site=docs&query=pg+dump&action=abandon&timeToAction=5000',
  });
  t.equal(r.status, 200, 'form body');
  r = await call('/sites/queries/log', { method: 'OPTIONS', headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'POST' } });
  t.equal(r.status, 204, 'preflight');
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  server.services.analytics.flush();
  const db = server.services.analytics.site('docs').db;
  t.same(
    db.prepare('SELECT query, action, time_to_action, link, position FROM events ORDER BY id').all(),
    [
      { query: 'pg dump', action: 'select', time_to_action: 1800, link: 'https://example.org/dump', position: 2 },
      { query: 'pg dump', action: 'abandon', time_to_action: 5000, link: null, position: null },
    ],
  );
});

t.test('bad events are 400s naming the field', async (t) => {
  const cases: Array<[unknown, number, string, string?]> = [
    [{ query: 'x', action: 'select' }, 400, 'invalid_parameter', 'site'],
    [{ site: 'nope', query: 'x', action: 'select' }, 404, 'unknown_site', 'site'],
    [{ site: 'docs', action: 'select' }, 400, 'invalid_parameter', 'query'],
    [{ site: 'docs', query: '   ', action: 'select' }, 400, 'invalid_parameter', 'query'],
    [{ site: 'docs', query: 'x' }, 400, 'invalid_parameter', 'action'],
    [{ site: 'docs', query: 'x', action: 'click' }, 400, 'invalid_parameter', 'action'],
    [{ site: 'docs', query: 'x', action: 'select', position: 0 }, 400, 'invalid_parameter', 'position'],
    [{ site: 'docs', query: 'x', action: 'select', position: 'two' }, 400, 'invalid_parameter', 'position'],
    [{ site: 'docs', query: 'x', action: 'select', timeToAction: -1 }, 400, 'invalid_parameter', 'timeToAction'],
    [{ site: 'docs', query: 'x', action: 'select', timeToAction: 1.5 }, 400, 'invalid_parameter', 'timeToAction'],
    [{ site: 'docs', query: 'x', action: 'select', link: 'javascript:alert(1)' }, 400, 'invalid_parameter', 'link'],
    [{ site: 'docs', query: 'x', action: 'select', link: 'not a url' }, 400, 'invalid_parameter', 'link'],
    [[1, 2], 400, 'invalid_json'],
  ];
  for (const [body, status, code, field] of cases) {
    const r = await postJson(body);
    t.equal(r.status, status, JSON.stringify(body));
    t.equal(r.body.code, code);
    if (field) t.equal(r.body.field, field);
    t.match(r.body.message, /\S/);
  }
  const r = await call('/sites/queries/log', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"site":' });
  t.equal(r.status, 400);
  t.equal(r.body.code, 'invalid_json');
});

t.test('timechart: auth, defaults, zeros, interval choice, validation', async (t) => {
  const a = server.services.analytics;
  const base = NOW - 3 * HOUR * 1000;
  a.record('docs', { query: 'one', results: 3, at: base });
  a.record('docs', { query: 'two', results: 0, at: base + 60_000 });
  a.record('docs', { query: 'three', results: 1, at: NOW - 5 * 86_400_000 });
  a.flush();
  a.rollup('docs', NOW - HOUR * 1000);

  let r = await call('/sites/queries/timechart');
  t.equal(r.status, 401);
  t.equal(r.body.code, 'missing_token');
  r = await call('/sites/queries/timechart?token=wrong');
  t.equal(r.body.code, 'invalid_token');
  t.notOk(r.headers.get('access-control-allow-origin'), 'no CORS on token routes');

  r = await call(`/sites/queries/timechart?token=${token}`);
  t.equal(r.status, 200);
  t.equal(r.body.interval, 'day', 'default range is 7 days: by day');
  t.equal(r.body.end, NOW / 1000);
  t.equal(r.body.start, NOW / 1000 - 7 * 86400);
  t.equal(r.body.buckets.length, 8, 'every day touched by the range, zeros included');
  t.equal(r.body.total, 3);
  t.same(r.body.buckets.map((b: { count: number }) => b.count), [0, 0, 1, 0, 0, 0, 0, 2]);
  t.same(r.body.buckets.at(-1), { timestamp: Date.UTC(2026, 2, 10) / 1000, count: 2, noResults: 1 });

  const start = NOW / 1000 - 6 * HOUR;
  r = await call(`/sites/queries/timechart?token=${token}&start=${start}&end=${NOW / 1000}`);
  t.equal(r.body.interval, 'hour', 'up to 2 days: by hour');
  t.equal(r.body.buckets.length, 7);
  t.same(
    r.body.buckets.map((b: { timestamp: number; count: number }) => [b.timestamp - Math.floor(start / HOUR) * HOUR, b.count]),
    [[0, 0], [3600, 0], [7200, 0], [10800, 2], [14400, 0], [18000, 0], [21600, 0]],
  );
  r = await call(`/sites/queries/timechart?token=${token}&start=${NOW / 1000 - 2 * 86400}&end=${NOW / 1000}`);
  t.equal(r.body.interval, 'hour', 'exactly 2 days: still by hour');
  r = await call(`/sites/queries/timechart?token=${token}&start=${NOW / 1000 - 2 * 86400 - 1}&end=${NOW / 1000}`);
  t.equal(r.body.interval, 'day', 'beyond 2 days: by day');
  r = await call(`/sites/queries/timechart?token=${token}&start=${NOW / 1000 - 60 * 86400}&interval=week`);
  t.equal(r.body.interval, 'week');
  t.equal(r.body.total, 3);
  t.equal(new Date(r.body.buckets[0].timestamp * 1000).getUTCDay(), 1, 'weeks start on Monday (UTC)');
  r = await call(`/sites/queries/timechart?token=${token}&start=${NOW / 1000 - 400 * 86400}&interval=month`);
  t.equal(r.body.buckets.length, 14);
  r = await call(`/sites/queries/timechart?start=${start}&end=${NOW / 1000}`, { headers: { Authorization: `Bearer ${token}` } });
  t.equal(r.status, 200, 'Bearer works too');

  const bad: Array<[string, string]> = [
    [`start=${NOW / 1000}&end=${NOW / 1000}`, 'end'],
    [`start=${NOW / 1000}&end=${NOW / 1000 - 1}`, 'end'],
    ['start=abc', 'start'],
    ['start=-5', 'start'],
    ['end=1.5', 'end'],
    ['end=99999999999999', 'end'],
    ['interval=minute', 'interval'],
    [`start=0&end=${NOW / 1000}&interval=hour`, 'interval'],
    [`start=0&end=${NOW / 1000}&interval=day`, 'interval'],
  ];
  for (const [qs, field] of bad) {
    r = await call(`/sites/queries/timechart?token=${token}&${qs}`);
    t.equal(r.status, 400, qs);
    t.equal(r.body.code, 'invalid_parameter');
    t.equal(r.body.field, field, qs);
  }
  r = await call(`/sites/queries/timechart?token=${token}&start=0&end=${NOW / 1000}&interval=month`);
  t.equal(r.status, 200, '56 years by month is fine');
});

t.test('top and noResults reports', async (t) => {
  const a = server.services.analytics;
  for (let i = 0; i < 3; i++) a.record('docs', { query: 'Vacuum', results: 4, at: NOW - 1000 });
  for (let i = 0; i < 2; i++) a.record('docs', { query: 'pgx', results: 0, at: NOW - 2000 });
  a.flush();
  await postJson({ site: 'docs', query: 'vacuum', action: 'select', link: 'https://example.org/v', position: 1 });
  a.flush();
  const start = NOW / 1000 - HOUR;
  let r = await call(`/sites/queries/top?token=${token}&start=${start}&end=${NOW / 1000 + 1}&limit=2`);
  t.equal(r.status, 200);
  t.same(r.body, {
    status: 'success',
    start,
    end: NOW / 1000 + 1,
    queries: [
      { query: 'vacuum', count: 3, averageResults: 4, selectRate: 0.3333 },
      { query: 'pgx', count: 2, averageResults: 0, selectRate: 0 },
    ],
  });
  r = await call(`/sites/queries/noResults?token=${token}&start=${start}&end=${NOW / 1000 + 1}`);
  t.same(r.body.queries, [{ query: 'pgx', count: 2, lastSearched: NOW / 1000 - 2 }]);
  r = await call(`/sites/queries/top?token=${token}`);
  t.ok(r.body.queries.length >= 4, 'default range: the last 7 days');
  r = await call(`/sites/queries/top?token=${token}&limit=0`);
  t.equal(r.status, 400);
  t.equal(r.body.field, 'limit');
  t.match(r.body.message, /1 to 1000/);
  r = await call(`/sites/queries/noResults?token=${token}&limit=1001`);
  t.equal(r.body.field, 'limit');
  r = await call(`/sites/queries/noResults?site=docs`);
  t.equal(r.status, 401);
});

t.test('end to end: log=false searches and suggest calls are not counted; no-result queries are not suggested', async (t) => {
  for (const [path, title] of [
    ['checkpoint', 'Checkpoint tuning guide'],
    ['replication', 'Replication setup'],
  ]) {
    const r = await call(`/sites/pageJson?token=${token}&refresh=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `https://example.org/${path}`, title, content: `${title} explained in detail` }),
    });
    t.equal(r.status, 200, `indexed ${path}: ${JSON.stringify(r.body)}`);
  }
  const search = async (q: string, extra = '') => {
    const r = await call(`/sites?site=docs&query=${encodeURIComponent(q)}${extra}`);
    t.equal(r.status, 200);
    return r.body.totalResults as number;
  };
  for (let i = 0; i < 3; i++) t.ok((await search('Checkpoint tuning', '&log=false')) > 0);
  for (let i = 0; i < 2; i++) t.ok((await search('Replication')) > 0);
  for (let i = 0; i < 3; i++) t.equal(await search('zzzqqq nothing'), 0);
  const suggest = async (q: string) => {
    const r = await call(`/sites/suggest?site=docs&query=${encodeURIComponent(q)}&maxQuerySuggestions=5`);
    t.equal(r.status, 200);
    return r.body.querySuggestions;
  };
  for (let i = 0; i < 3; i++) await suggest('checkpoint t');
  server.services.analytics.flush();
  t.same(await suggest('che'), [], 'log=false searches (and suggest calls) did not count');
  t.same(await suggest('rep'), [{ query: 'replication' }], 'searched twice with results: suggested');
  t.same(await suggest('zzz'), [], 'a query that found nothing is not suggested');
  const top = await call(`/sites/queries/top?token=${token}&start=${NOW / 1000 - 60}&end=${NOW / 1000 + 60}&limit=100`);
  t.notOk(
    top.body.queries.some((q: { query: string }) => q.query.startsWith('checkpoint')),
    'neither the log=false searches nor the suggest calls are in the log',
  );
});
