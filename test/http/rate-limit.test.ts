/**
 * Rate limits: the token buckets alone (injected clock), then through a real server on
 * 127.0.0.1 whose clock is injected — public routes per client IP and project (a second
 * client binds 127.0.0.2), indexing routes per key.
 */
import http from 'node:http';
import t from 'tap';
import { defaultConfig } from '../../src/core/index.js';
import { createRateLimits, TokenBuckets } from '../../src/http/rate-limit.js';
import { fakeClock } from '../helpers/clock.js';
import { api, startTestServer } from '../helpers/server.js';

t.test('token bucket: burst, refusal with retry time, refill, separate keys', async (t) => {
  const clock = fakeClock();
  const b = new TokenBuckets({ perSecond: 2, burst: 3, maxClients: 100, clock: clock.now });
  for (let i = 0; i < 3; i++) t.same(b.take('a'), { ok: true }, `burst request ${i + 1} passes`);
  t.same(b.take('a'), { ok: false, retryAfterSeconds: 1 }, 'the next one is refused, retry after 1 s');
  t.same(b.take('b'), { ok: true }, 'another key has its own bucket');
  clock.advance(499);
  t.equal(b.take('a').ok, false, 'not a whole token yet after 499 ms at 2/s');
  clock.advance(1);
  t.equal(b.take('a').ok, true, 'one token back after 500 ms');
  t.equal(b.take('a').ok, false);
  clock.advance(60_000);
  for (let i = 0; i < 3; i++) t.equal(b.take('a').ok, true, 'refilled to the burst, not beyond');
  t.equal(b.take('a').ok, false);
  clock.advance(-10_000);
  t.equal(b.take('a').ok, false, 'a clock stepping back neither refills nor fails');

  const slow = new TokenBuckets({ perSecond: 0.1, burst: 1, maxClients: 10, clock: clock.now });
  slow.take('x');
  t.same(slow.take('x'), { ok: false, retryAfterSeconds: 10 }, 'Retry-After is the time to the next whole token, rounded up');
});

t.test('the bucket map stays bounded under 100,000 distinct IPs', async (t) => {
  const clock = fakeClock();
  const limits = createRateLimits(defaultConfig(), clock.now);
  const b = limits.publicRoutes!;
  for (let i = 0; i < 100_000; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    b.take(`${ip} shop`);
  }
  t.equal(b.size, defaultConfig().rateMaxClients, `at most SITESIFT_RATE_MAX_CLIENTS (${defaultConfig().rateMaxClients}) buckets`);
  t.ok(defaultConfig().rateMaxClients < 100_000);
  // The most recent client is remembered (still has its spent token), the oldest was forgotten.
  for (let i = 0; i < 60; i++) b.take('10.1.134.159 shop');
  t.equal(b.take('10.1.134.159 shop').ok, false, 'a recent client keeps its bucket');
});

t.test('disabled limits: rate 0 lets everything through', async (t) => {
  const limits = createRateLimits({ ...defaultConfig(), ratePublicPerSecond: 0, rateIndexPerSecond: 0 }, Date.now);
  t.equal(limits.publicRoutes, null);
  t.equal(limits.indexing, null);
});

/** GET from a chosen loopback source address (so the server sees another client IP). */
function getFrom(localAddress: string, url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
  });
}

t.test('public routes over HTTP: per IP and per project, 429 with Retry-After and the error shape', async (t) => {
  const clock = fakeClock();
  const s = await startTestServer({ t, start: { clock: clock.now }, env: { SITESIFT_RATE_PUBLIC_PER_SECOND: '1', SITESIFT_RATE_PUBLIC_BURST: '3' } });
  t.equal((await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'other' } })).status, 201);
  const search = (site: string) => `${s.url}/sites?site=${site}&query=hello`;

  t.equal((await getFrom('127.0.0.1', search('default'))).status, 200);
  t.equal((await getFrom('127.0.0.1', `${s.url}/sites/suggest?site=default&query=he`)).status, 200, 'suggest shares the bucket');
  const log = await api(s.url, '/sites/queries/log', { method: 'POST', json: { site: 'default', query: 'hello', action: 'search' } });
  t.equal(log.status, 200, 'so does the query log');

  const over = await getFrom('127.0.0.1', search('default'));
  t.equal(over.status, 429, 'the request after the burst is refused');
  t.equal(over.headers['retry-after'], '1');
  t.match(over.body, { status: 'failure', code: 'rate_limited', message: /retry after 1 s/ });
  t.equal(over.headers['access-control-allow-origin'], '*', 'a refusal still carries CORS headers, so the browser can read it');
  const overLog = await api(s.url, '/sites/queries/log', { method: 'POST', json: { site: 'default', query: 'hello', action: 'search' } });
  t.equal(overLog.status, 429, 'the query log is limited too');

  t.equal((await getFrom('127.0.0.1', search('other'))).status, 200, 'same IP, another project: its own bucket');
  t.equal((await getFrom('127.0.0.2', search('default'))).status, 200, 'another IP, same project: its own bucket');
  t.equal((await getFrom('127.0.0.1', `${s.url}/sites?site=nope&query=x`)).status, 404, 'an unknown site is a 404, not a bucket');

  clock.advance(1000);
  t.equal((await getFrom('127.0.0.1', search('default'))).status, 200, 'one token back after a second');
  t.equal((await getFrom('127.0.0.1', search('default'))).status, 429);
});

t.test('indexing routes over HTTP: per key; reports and the master key are not limited', async (t) => {
  const clock = fakeClock();
  const s = await startTestServer({ t, start: { clock: clock.now }, env: { SITESIFT_RATE_INDEX_PER_SECOND: '1', SITESIFT_RATE_INDEX_BURST: '2' } });
  const other = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: s.masterKey, json: { label: 'second' } });
  const page = { url: 'https://shop.example.com/a', title: 'A', content: 'alpha' };
  const push = (token: string) => api(s.url, '/sites/pageJson', { method: 'POST', token, json: page });

  t.equal((await push(s.token)).status, 200);
  t.equal((await api(s.url, `/index/documents?url=${encodeURIComponent('https://shop.example.com/b')}`, { method: 'DELETE', token: s.token })).status, 200, 'delete shares the bucket');
  const over = await push(s.token);
  t.equal(over.status, 429, 'third indexing request of the key is refused');
  t.equal(over.headers.get('retry-after'), '1');
  t.match(over.body, { status: 'failure', code: 'rate_limited' });
  t.equal((await api(s.url, `/sites/indexStatus?token=${s.token}`)).status, 200, 'reports are not indexing routes');
  t.equal((await push(other.body.token)).status, 200, 'another key of the project: its own bucket');
  t.equal((await api(s.url, '/sites/pageJson?site=default', { method: 'POST', token: s.masterKey, json: page })).status, 200, 'the master key is not limited');
  clock.advance(1000);
  t.equal((await push(s.token)).status, 200, 'refilled');
});
