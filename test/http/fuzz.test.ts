/**
 * Bounded fuzz of the whole HTTP API against a real server on 127.0.0.1 (fixed seed, so a
 * failure reproduces): random methods on the routes of the table, random and garbage query
 * parameters, JSON / form / broken bodies, with the master key, a project key, a scoped key,
 * a wrong key or none. Every answer must come within the per-request timeout, never be a
 * 5xx, and every error body must be `{status:'failure', code, message}`.
 *
 * URLs the fuzzer writes (documents, settings, crawl requests) are loopback literals, so
 * nothing it sends can make the server contact another machine.
 */
import t from 'tap';
import { ROUTE_SCOPES } from '../../src/http/scopes.js';
import { api, startTestServer } from '../helpers/server.js';

const SEED = 0x5eed21;
const REQUESTS = 3000;
const CONCURRENCY = 4;
const TIMEOUT_MS = 15_000;

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const rnd = prng(SEED);
const int = (n: number) => Math.floor(rnd() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const chance = (p: number) => rnd() < p;

const LOCAL_URLS = ['http://127.0.0.1:1/a', 'http://[::1]:1/b?x=1', 'http://0.0.0.0:1/', 'http://127.0.0.1:1/' + 'x'.repeat(3000), 'https://127.0.0.1:1/%zz', 'http://127.0.0.1:1/ü/?q=é#f'];

/** A garbage string without ':' so it can never be an absolute URL to another host. */
function garbage(): string {
  const kinds = [
    () => '',
    () => String(int(1e6) - 5e5),
    () => '9'.repeat(1 + int(40)),
    () => pick(['true', 'FALSE', 'null', 'NaN', '-0', '1e309', '0x10', 'undefined', '[]', '{}', '[1,"a"]', '{"a":', '"', '\\', '*']),
    () => pick(['Blog', '_', 'default', 'fuzz', 'asc', 'desc', 'DAY', 'hour', 'search', 'select', 'abandon']),
    () => Array.from({ length: int(20) }, () => String.fromCharCode(int(0x3000))).join('').replace(/:/g, ''),
    () => 'a'.repeat(int(3000)),
    () => JSON.stringify(json(2)).replace(/:/g, ''),
    () => pick(['%', '%00', '<script>', "' OR 1=1 --", '../../etc/passwd', '\u0000', '\ud800', 'ﬁ', '𝔘']),
  ];
  return pick(kinds)();
}

/** Percent-encodes a path segment; a lone surrogate becomes bytes that are not UTF-8 at all. */
function enc(segment: string): string {
  try {
    return encodeURIComponent(segment);
  } catch {
    return '%ED%A0%80' + encodeURIComponent(segment.replace(/[\ud800-\udfff]/g, ''));
  }
}

function json(depth: number): unknown {
  const leaf = [() => null, () => chance(0.5), () => int(2e9) - 1e9, () => rnd() * 1e308, () => garbage(), () => pick(LOCAL_URLS)];
  if (depth <= 0 || chance(0.4)) return pick(leaf)();
  if (chance(0.5)) return Array.from({ length: int(6) }, () => json(depth - 1));
  const o: Record<string, unknown> = {};
  for (let i = 0; i < int(8); i++) o[chance(0.7) ? pick(FIELDS) : garbage()] = json(depth - 1);
  return o;
}

const PARAMS = [
  'site', 'query', 'token', 'limit', 'offset', 'page', 'filters', 'includeContentGroups', 'excludeContentGroups', 'sortOrder', 'sortBy',
  'start', 'end', 'interval', 'url', 'urlPattern', 'refresh', 'groupResults', 'highlightQueryTerms', 'includeContent',
  'maxQuerySuggestions', 'type', 'state', 'runId', 'wait', 'action', 'position',
];
const FIELDS = [
  'url', 'title', 'content', 'keywords', 'headings', 'image', 'date', 'language', 'contentGroup', 'dataPoints', 'filters', 'key', 'value', 'show',
  'pages', 'urls', 'siteId', 'name', 'label', 'scopes', 'site', 'query', 'action', 'link', 'position', 'timeToAction',
  'crawler', 'rootUrls', 'sitemapUrls', 'blacklist', 'whitelist', 'search', 'resultGroups', 'requestDelayMs', 'appendPageContent',
];

/** Route patterns: the scope table plus the routes it does not list (the web assets aside: they need a build). */
const ROUTES: Array<[string, string]> = [
  ...Object.keys(ROUTE_SCOPES).map((r) => r.split(' ') as [string, string]),
  ['GET', '/health'],
  ['GET', '/admin/projects'],
  ['POST', '/admin/projects'],
  ['DELETE', '/admin/projects/:siteId'],
  ['POST', '/admin/projects/:siteId/merge'],
  ['GET', '/admin/whoami'],
  ['GET', '/nowhere'],
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];

t.test(`fuzz: ${REQUESTS} requests, seed ${SEED.toString(16)}`, async (t) => {
  const s = await startTestServer({ t });
  const scoped = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: s.masterKey, json: { scopes: ['search'] } });
  await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'fuzz' } });
  for (let i = 0; i < 20; i++) {
    await api(s.url, '/sites/pageJson', { method: 'POST', token: s.token, json: { url: `http://127.0.0.1:1/p${i}`, title: `Page ${i} alpha`, content: `alpha beta gamma ${i}` } });
  }
  const tokens = [s.masterKey, s.masterKey, s.token, s.token, s.token, scoped.body.token as string, 'ss_' + 'x'.repeat(32), 'not-a-key', ''];

  function request(): { method: string; path: string; headers: Record<string, string>; body?: string } {
    const [routeMethod, pattern] = pick(ROUTES);
    const method = chance(0.75) ? routeMethod : pick(METHODS);
    const path = pattern.replace(/:(\w+)/g, (_, name: string) => {
      if (name === 'siteId') return enc(method === 'DELETE' && pattern === '/admin/projects/:siteId' ? pick(['nope', garbage()]) : pick(['default', 'fuzz', 'nope', garbage()]));
      return enc(garbage());
    });
    const q = new URLSearchParams();
    if (chance(0.8)) q.append('site', pick(['default', 'fuzz', 'nope', garbage()]));
    if (chance(0.6)) q.append('query', pick(['alpha', '*', 'alp', 'beta gamma', garbage()]));
    for (let i = 0; i < int(5); i++) {
      const name = chance(0.8) ? pick(PARAMS) : garbage();
      const form = int(4);
      q.append(form === 0 ? `${name}[]` : form === 1 ? `${name}[${int(3)}]` : name, chance(0.2) ? pick(LOCAL_URLS) : garbage());
    }
    const headers: Record<string, string> = {};
    const token = pick(tokens);
    if (token !== '') {
      if (chance(0.7)) headers.Authorization = pick([`Bearer ${token}`, `bearer ${token}`, token, `Bearer ${token} extra`]);
      else q.append('token', token);
    }
    let body: string | undefined;
    if (method !== 'GET' && method !== 'HEAD' && chance(0.85)) {
      const kind = int(5);
      if (kind <= 1) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(json(4));
      } else if (kind === 2) {
        headers['Content-Type'] = pick(['application/json', 'text/plain', 'application/x-ndjson']);
        body = pick(['{', '[1,', '{"url":', '\u0000', 'null', '"x"', '[]', garbage()]);
      } else if (kind === 3) {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams({ site: pick(['default', garbage()]), query: garbage(), action: pick(['search', 'select', garbage()]) }).toString();
      } else {
        headers['Content-Type'] = pick(['application/xml', 'multipart/form-data; boundary=x', 'x/y', 'application/json; charset=latin1', 'application/json; charset=utf-8; x=y']);
        body = garbage();
      }
    }
    const qs = q.toString();
    return { method, path: path + (qs ? `?${qs}` : ''), headers, body };
  }

  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  async function worker(): Promise<void> {
    while (next < REQUESTS) {
      next++;
      const r = request();
      const label = `${r.method} ${r.path.slice(0, 200)}`;
      let res: Response;
      try {
        res = await fetch(s.url + r.path, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(TIMEOUT_MS) });
      } catch (err) {
        failures.push(`${label}: ${(err as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS} ms` : (err as Error).message}`);
        continue;
      }
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push(`${label}: ${res.status} ${text.slice(0, 300)}`);
      if (res.status >= 400 && r.method !== 'HEAD') {
        let body: { status?: unknown; code?: unknown; message?: unknown } | undefined;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        if (!body || body.status !== 'failure' || typeof body.code !== 'string' || typeof body.message !== 'string' || body.message === '') {
          failures.push(`${label}: ${res.status} body is not {status:'failure',code,message}: ${text.slice(0, 300)}`);
        }
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  t.same(failures.slice(0, 20), [], `no 5xx, no hang, every error body has the shape (${failures.length} failures)`);
  t.ok([...statuses.keys()].some((s) => s === 200), 'some requests succeed');
  t.ok([...statuses.keys()].filter((s) => s >= 400).length >= 4, `several kinds of refusal (${[...statuses].map(([k, v]) => `${k}×${v}`).join(' ')})`);
  t.equal((await api(s.url, '/health')).status, 200, 'the server still answers afterwards');
});
