/**
 * URL helpers of the crawler. Pure functions, any thread. The identity form of a page URL is
 * the shared {@link normalizeUrl} of `src/core/url.ts` (also used by the JSON documents route), so
 * a page pushed as JSON and the same page reached by a crawl are one entry.
 */
import { normalizeUrl, normalizeUrlObject, type NormalizeOptions } from '../core/index.js';

export { normalizeUrl, type NormalizeOptions };

/** Whether `raw` is an absolute http(s) URL. */
export function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Resolves `href` against `base` and normalises it; null when it is not an http(s) link. */
export function resolveLink(href: string, base: string, opts: NormalizeOptions = {}): string | null {
  const h = href.trim();
  if (!h || h.startsWith('#')) return null;
  try {
    return normalizeUrlObject(new URL(h, base), opts);
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
