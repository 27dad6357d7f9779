import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cachingResolver, checkTarget, isPrivateAddress, pinnedLookup, type Resolver } from '../../src/crawl/address-guard.js';
import { fetchGuarded } from '../../src/crawl/fetch.js';

t.test('isPrivateAddress', async (t) => {
  for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'ff02::1', 'garbage']) {
    t.ok(isPrivateAddress(ip), `${ip} is private`);
  }
  for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8']) {
    t.notOk(isPrivateAddress(ip), `${ip} is public`);
  }
});

t.test('checkTarget resolves names before judging', async (t) => {
  const resolver: Resolver = async (host) =>
    host === 'innocent-looking.example' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }];
  const bad = await checkTarget('http://innocent-looking.example/page', resolver, false);
  t.equal(bad.ok, false);
  t.match(!bad.ok && bad.message, /127\.0\.0\.1/);
  t.equal((await checkTarget('http://public.example/', resolver, false)).ok, true);
  t.equal((await checkTarget('http://[::1]:8080/', resolver, false)).ok, false, 'IPv6 literal');
  t.equal((await checkTarget('http://localhost/', resolver, false)).ok, false);
  t.equal((await checkTarget('http://innocent-looking.example/', resolver, true)).ok, true, 'allowed with allowPrivate');
  const mixed: Resolver = async () => [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.1', family: 4 }];
  t.equal((await checkTarget('http://mixed.example/', mixed, false)).ok, false, 'any private address refuses the host');
});

t.test('cachingResolver: one lookup per name within the TTL, failures not remembered', async (t) => {
  let now = 0;
  const calls: string[] = [];
  let fail = false;
  const resolver = cachingResolver(
    async (host) => {
      calls.push(host);
      if (fail) throw new Error('ENOTFOUND');
      return [{ address: '93.184.216.34', family: 4 }];
    },
    30_000,
    () => now,
  );
  t.same(await resolver('a.example'), [{ address: '93.184.216.34', family: 4 }]);
  await resolver('a.example');
  await resolver('b.example');
  t.same(calls, ['a.example', 'b.example'], 'a.example resolved once');
  now += 30_001;
  await resolver('a.example');
  t.same(calls, ['a.example', 'b.example', 'a.example'], 'resolved again after the TTL');
  fail = true;
  now += 30_001;
  await t.rejects(resolver('a.example'));
  fail = false;
  await resolver('a.example');
  t.equal(calls.length, 5, 'a failure is not cached');
});

t.test('pinnedLookup answers with the checked addresses, and a socket connects to them', async (t) => {
  const lookup = pinnedLookup(['127.0.0.1', '::1']);
  const one = await new Promise<unknown[]>((r) => lookup('anything.example', {}, (err, address, family) => r([err, address, family])));
  t.same(one, [null, '127.0.0.1', 4]);
  const all = await new Promise<unknown[]>((r) => lookup('anything.example', { all: true }, (err, address) => r([err, address])));
  t.same(all, [null, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]]);
  const v6 = await new Promise<unknown[]>((r) => lookup('anything.example', { family: 6 }, (err, address, family) => r([err, address, family])));
  t.same(v6, [null, '::1', 6]);
  const none = await new Promise<unknown[]>((r) => pinnedLookup(['127.0.0.1'])('x', { family: 6 }, (err) => r([err?.code])));
  t.same(none, ['ENOTFOUND']);

  // A name that does not exist in DNS reaches the local server: the socket used the pin.
  const server = http.createServer((_req, res) => res.end('pinned'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const body = await new Promise<string>((resolve, reject) => {
    const req = http.request(`http://no-such-host.invalid:${port}/`, { lookup: pinnedLookup(['127.0.0.1']) as never, agent: false }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => resolve(b));
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(body, 'pinned');
});

t.test('fetchGuarded connects to the addresses the guard checked (no second resolution)', async (t) => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('reached through the pin');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const asked: string[] = [];
  // A name no DNS server knows: only the injected resolver's answer can reach the server.
  const resolver: Resolver = async (host) => {
    asked.push(host);
    return [{ address: '127.0.0.1', family: 4 }];
  };
  const opts = { userAgent: 'sitesift-test/1.0', timeoutMs: 5000, maxBytes: 100_000, allowPrivate: true, resolver };
  const r = await fetchGuarded(`http://no-such-host.invalid:${port}/x`, opts);
  t.equal(r.kind, 'response');
  t.equal(r.kind === 'response' && r.body.toString(), 'reached through the pin');
  t.same(asked, ['no-such-host.invalid'], 'resolved once, by the guard');
  const refused = await fetchGuarded(`http://no-such-host.invalid:${port}/x`, { ...opts, allowPrivate: false });
  t.equal(refused.kind === 'failure' && refused.status, 807, 'and the same answer is refused when private targets are not allowed');
});
