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

/** Characters percent-encoded in served image URLs: white space, controls, quotes, angle brackets, backtick. */
const IMAGE_URL_UNSAFE = /[\x00-\x20\x7f"'<>`]/g;
/** Base that resolves a relative image reference the way a page would, to read its scheme. */
const RELATIVE_BASE = 'https://relative.invalid/';

/**
 * An image URL as results serve it (`image`), or null when it must not be served: an absolute
 * http(s) URL or a relative reference (`/img/a.png`, `a.png`, `//cdn.example/a.png`), with
 * white space, control characters, quotes, angle brackets and backticks percent-encoded so that
 * it cannot end an HTML attribute; null for an empty string, any other scheme (`javascript:`,
 * `data:`, `vbscript:`, `file:`, …, also spelled with the tabs, new lines and leading controls
 * browsers ignore) and anything a browser cannot parse. Used at ingest (JSON pages) and when
 * results are rendered (pages written before the check, crawled pages). Pure, any thread.
 *
 * @example
 * safeImageUrl('/img/a b.png')          // '/img/a%20b.png'
 * safeImageUrl('javascript:alert(1)')   // null
 */
export function safeImageUrl(raw: string): string | null {
  // What a browser does first: drop tabs and new lines anywhere, controls and spaces around.
  const s = raw.replace(/[\t\n\r]/g, '').replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');
  if (s === '') return null;
  let u: URL;
  try {
    u = new URL(s, RELATIVE_BASE);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return s.replace(IMAGE_URL_UNSAFE, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}
