/**
 * robots.txt (nock): rules per user agent, Crawl-delay, caching per host, 4xx = allow all,
 * 5xx = unavailable; the politeness gate's delays and per-host concurrency under a fake clock.
 */
import t from 'tap';
import nock from 'nock';
import { RobotsCache } from '../../src/crawl/robots.js';
import { HostGate } from '../../src/crawl/politeness.js';
import type { Resolver } from '../../src/fetch/index.js';

const dns: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
t.before(() => nock.disableNetConnect());
t.afterEach(() => nock.cleanAll());
t.teardown(() => nock.enableNetConnect());

t.test('rules, user-agent groups, Crawl-delay, one fetch per host', async (t) => {
  let now = 0;
  const scope = nock('http://shop.example')
    .get('/robots.txt')
    .once()
    .reply(200, 'User-agent: *\nDisallow: /cart\nCrawl-delay: 2\n\nUser-agent: sitesift\nDisallow: /drafts/\nAllow: /drafts/public\nCrawl-delay: 1.5\n');
  const robots = new RobotsCache({ clock: () => now, resolver: dns, allowPrivate: false });
  const ua = 'sitesift/1.0 (+https://example.org)';
  t.same(await robots.check('http://shop.example/drafts/x', ua, { timeoutMs: 1000 }), {
    allowed: false,
    crawlDelayMs: 1500,
    message: 'Disallowed by http://shop.example/robots.txt',
  });
  t.equal((await robots.check('http://shop.example/drafts/public', ua, { timeoutMs: 1000 })).allowed, true, 'Allow overrides');
  t.equal((await robots.check('http://shop.example/cart', ua, { timeoutMs: 1000 })).allowed, true, 'our group replaces *');
  const other = await robots.check('http://shop.example/cart', 'otherbot/2', { timeoutMs: 1000 });
  t.same([other.allowed, other.crawlDelayMs], [false, 2000], '* group for other agents');
  t.ok(scope.isDone(), 'fetched once, cached');
  now += 3_600_001;
  nock('http://shop.example').get('/robots.txt').reply(200, 'User-agent: *\nDisallow: /\n');
  t.equal((await robots.check('http://shop.example/anything', ua, { timeoutMs: 1000 })).allowed, false, 'refetched after the TTL');
});

t.test('404 allows everything, 5xx makes the host unavailable', async (t) => {
  nock('http://a.example').get('/robots.txt').reply(404);
  nock('http://b.example').get('/robots.txt').reply(503);
  const robots = new RobotsCache({ clock: () => 0, resolver: dns, allowPrivate: false });
  t.equal((await robots.check('http://a.example/x', 'ua', { timeoutMs: 1000 })).allowed, true);
  const b = await robots.check('http://b.example/x', 'ua', { timeoutMs: 1000 });
  t.equal(b.allowed, false);
  t.match(b.message, /unavailable/);
});

t.test('HostGate: per-host concurrency and spacing, never sleeping', async (t) => {
  const gate = new HostGate();
  const limits = { concurrency: 2, delayMs: 1000 };
  const a = gate.tryAcquire('h', limits, 0);
  t.equal(a.ok, true);
  const b = gate.tryAcquire('h', limits, 10);
  t.same(b, { ok: false, retryAt: 1000 }, 'delay between request starts');
  const c = gate.tryAcquire('h', limits, 1000);
  t.equal(c.ok, true);
  const d = gate.tryAcquire('h', limits, 5000);
  t.same(d, { ok: false, retryAt: Infinity }, 'concurrency cap until a release');
  if (a.ok) a.release();
  t.equal(gate.tryAcquire('h', limits, 5000).ok, true);
  t.equal(gate.tryAcquire('other', limits, 5000).ok, true, 'hosts are independent');
  t.equal(gate.active('h'), 2);
});
