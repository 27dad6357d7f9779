/**
 * Sitemap reading with sitemapper (main thread; sitemaps are small XML). Handles sitemap
 * indexes and `.gz` files (sitemapper gunzips by magic bytes and follows index entries).
 *
 * sitemapper never throws and drops URLs without `lastmod` when its `lastmod` option is set, so
 * that option is not used: every URL comes back with its lastmod (or null) and the caller
 * decides what changed. Failures come back in `errors`.
 */
import Sitemapper from 'sitemapper';
import { checkTarget, type Resolver, normalizeUrl } from '../fetch/index.js';

/** One URL of a sitemap. */
export interface SitemapEntry {
  url: string;
  lastmod: string | null;
}

export interface SitemapReadResult {
  entries: SitemapEntry[];
  errors: string[];
}

export interface SitemapReadOptions {
  userAgent: string;
  timeoutMs: number;
  allowPrivate: boolean;
  resolver: Resolver;
}

/** Normalises a lastmod to an ISO string so equal instants compare equal; null when absent. */
function normLastmod(v: unknown): string | null {
  if (typeof v !== 'string' || !v.trim()) return null;
  const t = Date.parse(v.trim());
  return Number.isFinite(t) ? new Date(t).toISOString() : v.trim();
}

/** Reads every sitemap (and the sitemaps their indexes list); de-duplicates by URL. */
export async function readSitemaps(urls: string[], opts: SitemapReadOptions): Promise<SitemapReadResult> {
  const byUrl = new Map<string, SitemapEntry>();
  const errors: string[] = [];
  for (const sitemapUrl of urls) {
    const verdict = await checkTarget(sitemapUrl, opts.resolver, opts.allowPrivate);
    if (!verdict.ok) {
      errors.push(`${sitemapUrl}: ${verdict.message}`);
      continue;
    }
    const mapper = new Sitemapper({
      url: sitemapUrl,
      timeout: opts.timeoutMs,
      requestHeaders: { 'user-agent': opts.userAgent },
      fields: { loc: true, lastmod: true },
      retries: 1,
    });
    const res = await mapper.fetch();
    for (const e of res.errors) {
      const err = e as { url?: string; type?: string; message?: string };
      errors.push(`${err.url ?? sitemapUrl}: ${err.message ?? err.type ?? 'error'}`);
    }
    for (const site of res.sites as Array<{ loc?: string; lastmod?: string } | string>) {
      const loc = typeof site === 'string' ? site : site.loc;
      const url = loc ? normalizeUrl(String(loc)) : null;
      if (!url) continue;
      byUrl.set(url, { url, lastmod: typeof site === 'string' ? null : normLastmod(site.lastmod) });
    }
  }
  return { entries: [...byUrl.values()], errors };
}
