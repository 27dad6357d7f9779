/**
 * URL normalisation for crawl de-duplication (SPEC §7). Pure functions, any thread.
 *
 * Invariant: `normalizeUrl(normalizeUrl(u)) === normalizeUrl(u)` — normalising is idempotent,
 * so a normalised URL can be used as a queue / seen-set key.
 */

export interface NormalizeOptions {
  /** Sort query parameters by name (stable for equal names). Off by default: order can matter. */
  sortQuery?: boolean;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Re-encodes one URL component: `%xx` of unreserved characters are decoded, every other
 * escape is upper-cased. WHATWG URL parsing already encodes what must be encoded.
 */
function normalizePercent(part: string): string {
  return part.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** Whether `raw` is an absolute http(s) URL. */
export function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Normalises an absolute http(s) URL: fragment dropped, scheme and host lower-cased (the WHATWG
 * parser does this and IDNA), default ports dropped, empty path → `/`, dot segments resolved,
 * percent-encoding normalised, optionally the query sorted. Returns null for anything that is
 * not an absolute http(s) URL (mailto:, javascript:, garbage).
 */
export function normalizeUrl(raw: string, opts: NormalizeOptions = {}): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  u.hash = '';
  u.username = '';
  u.password = '';
  // URL already drops :80 for http and :443 for https; the host is lower-cased by the parser.
  u.pathname = normalizePercent(u.pathname || '/');
  if (u.search) {
    if (opts.sortQuery) {
      const params = [...u.searchParams.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const sp = new URLSearchParams(params);
      u.search = sp.toString();
    } else {
      u.search = normalizePercent(u.search);
    }
    if (u.search === '?') u.search = '';
  }
  const out = u.toString();
  // `new URL('http://h/?')` keeps a bare '?': drop it, it is the same resource.
  return out.endsWith('?') ? out.slice(0, -1) : out;
}

/** Resolves `href` against `base` and normalises it; null when it is not an http(s) link. */
export function resolveLink(href: string, base: string, opts: NormalizeOptions = {}): string | null {
  const h = href.trim();
  if (!h || h.startsWith('#')) return null;
  try {
    return normalizeUrl(new URL(h, base).toString(), opts);
  } catch {
    return null;
  }
}

/** Host (hostname plus non-default port) of a URL, lower-cased; '' when unparsable. */
export function hostOf(raw: string): string {
  try {
    return new URL(raw).host.toLowerCase();
  } catch {
    return '';
  }
}
