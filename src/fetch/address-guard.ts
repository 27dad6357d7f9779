/**
 * Refusal of targets that are not public unicast (status 807) and of hosts that do not resolve
 * (810: fail closed). Runs wherever a fetch runs (pool worker or main thread), once per hop:
 * before the first request and after every redirect, always on the resolved addresses, so a
 * public-looking name that resolves to 127.0.0.1 is refused too.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** One resolved address, as `dns.lookup(host, {all:true})` returns it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address; injectable so tests control DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The production resolver: the OS resolver (`dns.lookup` with `all: true`), like sockets use. */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * A resolver that remembers successful answers for `ttlMs` (per instance, so per thread): a
 * crawl asks for the same host name before every request, and the OS resolver behind
 * `dns.lookup` has no cache of its own (each call is a getaddrinfo on libuv's small thread pool).
 * Failures are not remembered. Bounded: cleared when it holds `max` names.
 */
export function cachingResolver(resolver: Resolver, ttlMs: number, clock: () => number = Date.now, max = 10_000): Resolver {
  const cache = new Map<string, { addresses: ResolvedAddress[]; expiresAt: number }>();
  return async (hostname) => {
    const now = clock();
    const hit = cache.get(hostname);
    if (hit && hit.expiresAt > now) return hit.addresses;
    const addresses = await resolver(hostname);
    if (cache.size >= max) cache.clear();
    cache.set(hostname, { addresses, expiresAt: now + ttlMs });
    return addresses;
  };
}

/**
 * The resolver of fetches in this thread (pool threads: pages, appended content, sitemaps): the
 * system resolver behind a 30 s cache, since a crawl asks for the same host before every request.
 */
export const threadResolver: Resolver = cachingResolver(systemResolver, 30_000);

/** Node's `lookup` option signature (net.connect / http.request). */
export type LookupFunction = (
  hostname: string,
  options: { family?: number | string; all?: boolean },
  callback: (err: NodeJS.ErrnoException | null, address: string | ResolvedAddress[], family?: number) => void,
) => void;

/**
 * A `lookup` for http.request that answers with the addresses the guard has just checked
 * instead of resolving the name again: the socket connects to an address that was judged, so a
 * DNS answer that changes between the check and the connect (DNS rebinding) cannot slip a
 * private address through, and the name is resolved once per request instead of twice.
 */
export function pinnedLookup(addresses: string[]): LookupFunction {
  const all: ResolvedAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const list = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
    if (list.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`no IPv${family} address among the checked ones`);
      err.code = 'ENOTFOUND';
      callback(err, options.all ? [] : '', undefined);
      return;
    }
    if (options.all) callback(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  };
}

/**
 * IPv4 ranges that are not public unicast (IANA special-purpose registry): "this" network,
 * private, CGNAT, loopback, link-local (cloud metadata), IETF protocol assignments, the
 * documentation and benchmarking ranges, AS112 and AMT anycast, the deprecated 6to4 relay,
 * multicast, reserved and broadcast.
 */
const V4_NOT_PUBLIC: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.31.196.0', 24],
  ['192.52.193.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['192.175.48.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4], // reserved, and 255.255.255.255
];

/**
 * IPv6 ranges refused inside global unicast (2000::/3): IETF protocol assignments including
 * Teredo (2001::/23), documentation (2001:db8::/32, 3fff::/20). Everything outside 2000::/3 is
 * refused anyway (::, ::1, fc00::/7, fe80::/10, fec0::/10, ff00::/8, 64:ff9b:1::/48, 100::/64…)
 * except the forms that embed an IPv4 address, which are judged by that address.
 */
const V6_NOT_PUBLIC: Array<[string, number]> = [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
];

// BlockList also judges IPv4-mapped IPv6 (::ffff:a.b.c.d) by the IPv4 rules.
const v4NotPublic = new BlockList();
for (const [net, bits] of V4_NOT_PUBLIC) v4NotPublic.addSubnet(net, bits, 'ipv4');
const v6NotPublic = new BlockList();
for (const [net, bits] of V6_NOT_PUBLIC) v6NotPublic.addSubnet(net, bits, 'ipv6');
const v6GlobalUnicast = new BlockList();
v6GlobalUnicast.addSubnet('2000::', 3, 'ipv6');

/** The 8 hextets of a valid IPv6 literal (zone removed; `::` and an IPv4 tail expanded). */
function ipv6Hextets(ip: string): number[] {
  let s = ip.toLowerCase();
  const tail = s.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    s = s.slice(0, -tail[0].length) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [head, rest] = s.split('::');
  const h = head ? head.split(':') : [];
  const r = rest !== undefined ? (rest ? rest.split(':') : []) : [];
  const fill = rest !== undefined ? new Array<string>(8 - h.length - r.length).fill('0') : [];
  return [...h, ...fill, ...r].map((x) => parseInt(x || '0', 16));
}

const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that reach an IPv4
 * host: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (also `::` and `::1`, which
 * land in 0.0.0.0/8), IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and 6to4
 * `2002:AABB:CCDD::`. Null for any other address.
 */
function embeddedV4(h: number[]): string | null {
  const zero = (from: number, to: number): boolean => h.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (h[5] === 0 || h[5] === 0xffff)) return v4Of(h[6]!, h[7]!);
  if (zero(0, 4) && h[4] === 0xffff && h[5] === 0) return v4Of(h[6]!, h[7]!);
  if (h[0] === 0x64 && h[1] === 0xff9b && zero(2, 6)) return v4Of(h[6]!, h[7]!);
  if (h[0] === 0x2002) return v4Of(h[1]!, h[2]!);
  return null;
}

/**
 * Whether an IP literal is anything but a public unicast address: private, loopback,
 * link-local, unique-local, CGNAT, documentation, benchmarking, multicast, reserved or
 * broadcast. An IPv6 form that embeds an IPv4 address is judged by that address, so
 * `::ffff:7f00:1` and `64:ff9b::10.0.0.1` are private while `64:ff9b::8.8.8.8` is not.
 * Unparsable input counts as private (fail closed).
 *
 * @example isPrivateAddress('::ffff:0:7f00:1') // true
 */
export function isPrivateAddress(ip: string): boolean {
  const fam = isIP(ip);
  if (fam === 4) return v4NotPublic.check(ip, 'ipv4');
  if (fam !== 6) return true;
  const bare = ip.replace(/%.*$/, '');
  if (isIP(bare) !== 6) return true;
  const h = ipv6Hextets(bare);
  if (h.length !== 8 || h.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffff)) return true;
  const v4 = embeddedV4(h);
  if (v4 !== null) return v4NotPublic.check(v4, 'ipv4');
  return !v6GlobalUnicast.check(bare, 'ipv6') || v6NotPublic.check(bare, 'ipv6');
}

/**
 * Outcome of {@link checkTarget}: allowed with the addresses to connect to (never empty), or
 * refused with the crawl status (807 not public, 810 the name did not resolve) and a message for
 * indexedContent.
 */
export type TargetVerdict =
  | { ok: true; addresses: string[] }
  | { ok: false; status: 807 | 810; message: string; retryable: boolean };

/**
 * Resolves the URL's host and refuses it when any address is not public (a host with one public
 * and one private address is refused: the socket could pick either). With `allowPrivate`
 * nothing is refused for its address. Fails closed: a host that does not resolve, or resolves to
 * nothing, is refused with 810 (retryable, as DNS failures often pass), so no request is ever
 * made with an address the guard did not see.
 *
 * @example
 * const v = await checkTarget('https://docs.example.org/', systemResolver, false);
 * if (v.ok) connectTo(v.addresses); else record(v.status, v.message);
 */
export async function checkTarget(url: string, resolver: Resolver, allowPrivate: boolean): Promise<TargetVerdict> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return { ok: false, status: 810, message: `Invalid URL ${url}`, retryable: false };
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) {
    return { ok: false, status: 807, message: `Host ${host} is a loopback name; crawling private addresses is disabled`, retryable: false };
  }
  let addresses: ResolvedAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await resolver(host);
    } catch (err) {
      const e = err as { code?: string; message?: string };
      const why = e?.code ?? e?.message ?? String(err);
      return { ok: false, status: 810, message: `Host ${host} did not resolve (${why}); nothing was fetched`, retryable: true };
    }
    if (!Array.isArray(addresses) || addresses.length === 0) {
      return { ok: false, status: 810, message: `Host ${host} resolved to no address; nothing was fetched`, retryable: true };
    }
  }
  // With private targets allowed the addresses are still returned: the fetch pins its socket
  // to them either way (one resolution per request).
  const bad = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
  if (bad) {
    return {
      ok: false,
      status: 807,
      message: `Host ${host} resolves to the private address ${bad.address}; crawling private addresses is disabled (SITESIFT_CRAWLER_ALLOW_PRIVATE)`,
      retryable: false,
    };
  }
  return { ok: true, addresses: addresses.map((a) => a.address) };
}
