/**
 * Page URL identity, shared by every way a page enters the index (SPEC §4 "the URL is the
 * identity", §7 normalised URL): JSON pushes (`pageJson`/`pagesJson`, bulk import), removal by
 * `url`, URL pushes, site crawls, sitemap imports, redirect targets and canonical links all
 * store and look up a page under {@link normalizeUrl}'s form. Pure functions, any thread.
 *
 * The normalisations (each one maps two spellings of the same resource to one string):
 * - scheme and host lower-cased, IDNA host to punycode, default port (`:80` for http, `:443`
 *   for https) dropped, empty path → `/`, `.`/`..` segments resolved (WHATWG URL parsing);
 * - the fragment dropped: it never reaches the server, so `/a#intro` is the page `/a`;
 * - percent-escapes of unreserved characters (`A–Z a–z 0–9 - . _ ~`) decoded, every other
 *   escape upper-cased (`%7e` → `~`, `%2f` → `%2F`), in the path and the query;
 * - a bare `?` (empty query) dropped;
 * - user name and password dropped (API input with credentials is rejected before this).
 *
 * Kept as given: query parameter order (`?a=1&b=2` and `?b=2&a=1` may be different resources
 * to the server; sorting is an opt-in for callers that only need a de-duplication key), a
 * trailing slash (`/docs` and `/docs/` are different URLs to a server), path case.
 *
 * Invariant: `normalizeUrl(normalizeUrl(u)) === normalizeUrl(u)` (idempotent), so a stored URL
 * can be used as a key and normalised again without changing.
 */

export interface NormalizeOptions {
  /** Sort query parameters by name (stable for equal names). Off by default: order can matter. */
  sortQuery?: boolean;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Decodes `%xx` of unreserved characters and upper-cases every other escape. */
function normalizePercent(part: string): string {
  if (!part.includes('%')) return part;
  return part.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** Normalises a parsed http(s) URL in place and returns its string form. */
function normalizeParsed(u: URL, opts: NormalizeOptions): string {
  u.hash = '';
  if (u.username || u.password) {
    u.username = '';
    u.password = '';
  }
  // The parser already lower-cased scheme and host, dropped default ports and resolved dots.
  const path = normalizePercent(u.pathname || '/');
  if (path !== u.pathname) u.pathname = path;
  if (u.search) {
    if (opts.sortQuery) {
      const params = [...u.searchParams.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      u.search = new URLSearchParams(params).toString();
    } else {
      const search = normalizePercent(u.search);
      if (search !== u.search) u.search = search;
    }
  }
  const out = u.href;
  // `new URL('http://h/a?')` keeps a bare '?': drop it, it is the same resource.
  return out.endsWith('?') ? out.slice(0, -1) : out;
}

/**
 * The identity form of an absolute http(s) URL (see the module comment), or null for anything
 * that is not one (relative, `mailto:`, `javascript:`, garbage). Lenient: credentials are
 * dropped, surrounding white space ignored.
 */
export function normalizeUrl(raw: string, opts: NormalizeOptions = {}): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  return normalizeUrlObject(u, opts);
}

/**
 * {@link normalizeUrl} of an already parsed URL (saves a second parse when resolving links);
 * modifies `u`. Null when it is not http(s).
 */
export function normalizeUrlObject(u: URL, opts: NormalizeOptions = {}): string | null {
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return normalizeParsed(u, opts);
}
