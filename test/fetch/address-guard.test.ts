import t from 'tap';
import http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { cachingResolver, checkTarget, isPrivateAddress, pinnedLookup, type Resolver } from '../../src/fetch/address-guard.js';
import { fetchGuarded } from '../../src/fetch/fetch.js';

// Every form the guard must refuse, with the range it falls in.
const NOT_PUBLIC: Array<[string, string]> = [
  ['0.0.0.0', '"this" network 0/8'],
  ['0.1.2.3', '"this" network 0/8'],
  ['10.1.2.3', 'private 10/8'],
  ['100.64.0.1', 'CGNAT 100.64/10'],
  ['100.127.255.254', 'CGNAT 100.64/10'],
  ['127.0.0.1', 'loopback 127/8'],
  ['127.255.255.254', 'loopback 127/8'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12'],
  ['192.0.0.8', 'IETF protocol assignments 192.0.0/24'],
  ['192.0.2.10', 'TEST-NET-1'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private 192.168/16'],
  ['198.18.0.1', 'benchmarking 198.18/15'],
  ['198.19.255.1', 'benchmarking 198.18/15'],
  ['198.51.100.7', 'TEST-NET-2'],
  ['203.0.113.9', 'TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, long form'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback, long form'],
  ['::FFFF:A00:1', 'IPv4-mapped 10/8, upper case'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
  ['::ffff:0:10.0.0.1', 'IPv4-translated 10/8'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::a00:1', 'IPv4-compatible 10/8'],
  ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
  ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:c0a8:101::', '6to4 of 192.168.1.1'],
  ['fc00::1', 'unique local fc00::/7'],
  ['fd12:3456::1', 'unique local fc00::/7'],
  ['fe80::1', 'link-local fe80::/10'],
  ['fe80::1%eth0', 'link-local with zone'],
  ['febf::1', 'link-local fe80::/10'],
  ['fec0::1', 'site-local (deprecated)'],
  ['ff02::1', 'multicast ff00::/8'],
  ['ff0e::1', 'multicast ff00::/8'],
  ['2001:db8::1', 'documentation 2001:db8::/32'],
  ['2001::1', 'Teredo 2001::/32'],
  ['2001:10::1', 'IETF protocol assignments 2001::/23'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['100::1', 'discard-only 100::/64'],
  ['::2', 'reserved ::/8 (compatible form of 0.0.0.2)'],
  ['4000::1', 'outside global unicast 2000::/3'],
  ['garbage', 'not an address'],
  ['', 'empty'],
  ['1.2.3', 'short IPv4'],
];
const PUBLIC = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '192.0.1.1', '192.0.3.1', '192.169.0.1', '198.17.255.255', '198.20.0.1', '223.255.255.254', '2606:2800:220:1:248:1893:25c8:1946', '2a00:1450:4001:82a::200e', '::ffff:8.8.8.8', '::ffff:0808:0808', '64:ff9b::8.8.8.8', '2002:808:808::1'];

t.test('isPrivateAddress: every form that is not public unicast is refused', async (t) => {
  for (const [ip, range] of NOT_PUBLIC) t.ok(isPrivateAddress(ip), `${ip} is not public (${range})`);
  for (const ip of PUBLIC) t.notOk(isPrivateAddress(ip), `${ip} is public`);
});

t.test('checkTarget refuses every form with 807, as a resolved address and as a URL literal', async (t) => {
  for (const [ip, range] of NOT_PUBLIC) {
    if (!isIP(ip.replace(/%.*$/, ''))) continue;
    const resolver: Resolver = async () => [{ address: ip, family: isIP(ip.replace(/%.*$/, '')) }];
    const v = await checkTarget('http://rebinding.example/x', resolver, false);
    t.same(v.ok === false && v.status, 807, `resolved ${ip} (${range}) refused`);
    if (ip.includes('%')) continue;
    const literal = isIP(ip) === 6 ? `[${ip}]` : ip;
    const lit = await checkTarget(`http://${literal}:8080/x`, async () => [], false);
    t.same(lit.ok === false && lit.status, 807, `literal ${literal} (${range}) refused`);
  }
  // The URL parser turns other IPv4 spellings into dotted quads before the guard judges them.
  for (const host of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '[::ffff:127.0.0.1]', '[0:0:0:0:0:ffff:7f00:1]']) {
    const v = await checkTarget(`http://${host}/`, async () => [], false);
    t.same(v.ok === false && v.status, 807, `${host} refused`);
  }
  for (const ip of PUBLIC) {
    const v = await checkTarget('http://public.example/', async () => [{ address: ip, family: isIP(ip) }], false);
    t.same(v, { ok: true, addresses: [ip] }, `${ip} allowed`);
  }
});

t.test('checkTarget fails closed when DNS fails or answers nothing (810, retryable)', async (t) => {
  const failing: Resolver = async () => {
    const err: NodeJS.ErrnoException = new Error('queryA ESERVFAIL public.example');
    err.code = 'ESERVFAIL';
    throw err;
  };
  for (const allowPrivate of [false, true]) {
    const v = await checkTarget('http://public.example/', failing, allowPrivate);
    t.match(v, { ok: false, status: 810, retryable: true, message: /did not resolve \(ESERVFAIL\)/ }, `resolver error, allowPrivate=${allowPrivate}`);
    const empty = await checkTarget('http://public.example/', async () => [], allowPrivate);
    t.match(empty, { ok: false, status: 810, message: /no address/ }, `empty answer, allowPrivate=${allowPrivate}`);
  }
});

t.test('fetchGuarded: a resolver that fails makes no connection (no second, unpinned lookup)', async (t) => {
  let connections = 0;
  const server = http.createServer((_req, res) => res.end('reached'));
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const failing: Resolver = async () => {
    throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
  };
  // `localhost` is what the OS resolver would answer with 127.0.0.1 if the fetch resolved again.
  const opts = { userAgent: 'sitesift-test/1.0', timeoutMs: 5000, maxBytes: 100_000, allowPrivate: true, resolver: failing };
  const r = await fetchGuarded(`http://localhost:${port}/`, opts);
  t.match(r, { kind: 'failure', status: 810, retryable: true, message: /did not resolve \(EAI_AGAIN\)/ });
  t.equal(connections, 0, 'nothing connected');
  const control = await fetchGuarded(`http://localhost:${port}/`, { ...opts, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
  t.equal(control.kind === 'response' && control.status, 200, 'the same URL with a working resolver connects');
  t.equal(connections, 1);
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
