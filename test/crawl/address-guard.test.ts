import t from 'tap';
import { checkTarget, isPrivateAddress, type Resolver } from '../../src/crawl/address-guard.js';

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
