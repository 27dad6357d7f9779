/**
 * Refusal of private, loopback and link-local targets (status 807) — runs wherever a fetch
 * runs (pool worker or main thread), once per hop: before the first request and after every
 * redirect, always on the resolved addresses so a public-looking name that resolves to
 * 127.0.0.1 is refused too.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

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

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, p) => (acc << 8) + Number(p), 0) >>> 0;
}

const V4_BLOCKS: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved + broadcast
];

function inV4Block(ip: string): boolean {
  const n = ipv4ToInt(ip);
  return V4_BLOCKS.some(([base, bits]) => {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return (n & mask) === (ipv4ToInt(base) & mask);
  });
}

/** Expands an IPv6 address to 8 hextets (handles `::` and an embedded IPv4 tail). */
function ipv6Hextets(ip: string): number[] {
  let s = ip.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const tail = s.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (tail) {
    const n = ipv4ToInt(tail[1]);
    s = s.slice(0, -tail[1].length) + ((n >>> 16) & 0xffff).toString(16) + ':' + (n & 0xffff).toString(16);
  }
  const [head, rest] = s.split('::');
  const h = head ? head.split(':') : [];
  const r = rest !== undefined ? (rest ? rest.split(':') : []) : [];
  const fill = rest !== undefined ? new Array(8 - h.length - r.length).fill('0') : [];
  return [...h, ...fill, ...r].map((x) => parseInt(x || '0', 16));
}

/**
 * Whether an IP literal is private, loopback, link-local, unique-local, multicast or otherwise
 * not a public unicast address. Unparsable input counts as private (fail closed).
 */
export function isPrivateAddress(ip: string): boolean {
  const fam = isIP(ip);
  if (fam === 4) return inV4Block(ip);
  if (fam !== 6) return true;
  const h = ipv6Hextets(ip);
  if (h.length !== 8) return true;
  if (h.every((x) => x === 0)) return true; // ::
  if (h.slice(0, 7).every((x) => x === 0) && h[7] === 1) return true; // ::1
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible: judge the embedded v4 address.
  if (h.slice(0, 5).every((x) => x === 0) && (h[5] === 0xffff || h[5] === 0)) {
    const v4 = `${h[6] >> 8}.${h[6] & 255}.${h[7] >> 8}.${h[7] & 255}`;
    return inV4Block(v4);
  }
  if ((h[0] & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((h[0] & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((h[0] & 0xffc0) === 0xfec0) return true; // deprecated site-local
  if ((h[0] & 0xff00) === 0xff00) return true; // multicast
  if (h[0] === 0x64 && h[1] === 0xff9b) return true; // NAT64 can reach private v4
  if (h[0] === 0x2002) return true; // 6to4 can embed private v4
  return false;
}

/** Outcome of {@link checkTarget}: allowed, or refused with a message for indexedContent. */
export type TargetVerdict = { ok: true; addresses: string[] } | { ok: false; message: string };

/**
 * Resolves the URL's host and refuses it when any address is private (a host with one public
 * and one private address is refused: the socket could pick either). With `allowPrivate`
 * nothing is refused. A host that does not resolve is not refused here: the fetch reports it
 * as a network error (810).
 */
export async function checkTarget(url: string, resolver: Resolver, allowPrivate: boolean): Promise<TargetVerdict> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return { ok: false, message: `Invalid URL ${url}` };
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) {
    return { ok: false, message: `Host ${host} is a loopback name; crawling private addresses is disabled` };
  }
  let addresses: ResolvedAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await resolver(host);
    } catch {
      return { ok: true, addresses: [] };
    }
  }
  // With private targets allowed the addresses are still returned: the fetch pins its socket
  // to them either way (one resolution per request).
  const bad = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
  if (bad) {
    return {
      ok: false,
      message: `Host ${host} resolves to the private address ${bad.address}; crawling private addresses is disabled (SITESIFT_CRAWLER_ALLOW_PRIVATE)`,
    };
  }
  return { ok: true, addresses: addresses.map((a) => a.address) };
}
