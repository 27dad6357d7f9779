/**
 * Sitemap import (main thread): walks the configured sitemaps and the indexes they list,
 * breadth first, and collects their URLs with their lastmod. Each file is fetched and parsed by
 * `readFile` — in a pool thread on a running server (workers/read-sitemap.ts), in process in
 * tests — through the guarded fetch (src/fetch/sitemap-file.ts), so a child sitemap, a redirect and a
 * host name are judged by the address guard like any page.
 *
 * Bounded per import (see {@link SitemapLimits}): index depth, sitemap files, unique URLs,
 * decompressed bytes per file, and time. A sitemap is read once per import however often it is
 * listed (an index that lists itself ends at once), and a URL is kept once. What a limit cut, and
 * sitemaps listed again, are reported in `cut`.
 */
import { DEFAULT_SITEMAP_LIMITS as CONFIG_DEFAULTS } from '../core/index.js';
import { normalizeUrl, type SitemapEntry, type SitemapFileResult, type SitemapFileTask } from '../fetch/index.js';

export type { SitemapEntry };

/** The limits of one sitemap import (config `SITESIFT_SITEMAP_*`, docs/CRAWLER.md). */
export interface SitemapLimits {
  /** Levels of sitemap indexes followed below a configured sitemap URL. */
  maxDepth: number;
  /** Sitemap files read per import (indexes included). */
  maxFiles: number;
  /** Unique URLs kept per import. */
  maxUrls: number;
  /** Decompressed bytes read per sitemap file. */
  maxBytes: number;
  /** Time for the whole import, ms. */
  timeoutMs: number;
}

/** The configuration's defaults (src/core/config.ts) as import limits. */
export const DEFAULT_SITEMAP_LIMITS: Readonly<SitemapLimits> = Object.freeze({
  maxDepth: CONFIG_DEFAULTS.maxDepth,
  maxFiles: CONFIG_DEFAULTS.maxFiles,
  maxUrls: CONFIG_DEFAULTS.maxUrls,
  maxBytes: CONFIG_DEFAULTS.maxMb * 1024 * 1024,
  timeoutMs: CONFIG_DEFAULTS.timeoutMs,
});

export interface SitemapReadResult {
  /** Unique URLs (by URL identity), in the order first read. */
  entries: SitemapEntry[];
  /** Files that could not be read, one line each: `<url>: <why>`. */
  errors: string[];
  /**
   * What was left out or read once, one line each: what a limit cut short, and sitemaps listed
   * again (empty when every listed file was read once, whole).
   */
  cut: string[];
  /** False when a limit cut the import short (then it cannot tell which URLs left). */
  complete: boolean;
  /** Sitemap files read (indexes included). */
  sitemaps: number;
  /** URLs listed more than once (kept once). */
  duplicates: number;
}

export interface SitemapReadOptions {
  userAgent: string;
  /** Per fetch. */
  timeoutMs: number;
  allowPrivate: boolean;
  limits: SitemapLimits;
  /** Fetches and parses one file (the pool task, or readSitemapFile in process). */
  readFile: (task: SitemapFileTask) => Promise<SitemapFileResult>;
  /** ms since the epoch (the import's time limit). */
  clock: () => number;
}

/** Notes of one kind beyond this many are summed up in one line. */
const MAX_NOTES = 20;

function noteList(): { push(s: string): void; lines(): string[] } {
  const lines: string[] = [];
  let more = 0;
  return {
    push(s) {
      if (lines.length < MAX_NOTES) lines.push(s);
      else more++;
    },
    lines: () => (more ? [...lines, `… and ${more} more`] : lines),
  };
}

/**
 * Reads every sitemap (and the sitemaps their indexes list) within `opts.limits`.
 *
 * @example
 * const r = await readSitemaps(['https://docs.example.org/sitemap.xml'], { userAgent: 'sitesift',
 *   timeoutMs: 10_000, allowPrivate: false, limits: DEFAULT_SITEMAP_LIMITS, readFile, clock: Date.now });
 * queue(r.entries); if (r.cut.length) log.warn({ cut: r.cut }, 'sitemap import cut');
 */
export async function readSitemaps(urls: string[], opts: SitemapReadOptions): Promise<SitemapReadResult> {
  const { limits } = opts;
  const deadline = opts.clock() + limits.timeoutMs;
  const byUrl = new Map<string, SitemapEntry>();
  const errors = noteList();
  const cut = noteList();
  const listed = new Set<string>();
  const todo: Array<{ url: string; depth: number }> = [];
  let duplicates = 0;
  let read = 0;
  let complete = true;
  const limited = (note: string): void => {
    complete = false;
    cut.push(note);
  };
  for (const raw of urls) {
    const url = normalizeUrl(raw) ?? raw;
    if (listed.has(url)) continue;
    listed.add(url);
    todo.push({ url, depth: 0 });
  }

  while (todo.length) {
    const left = opts.clock() < deadline ? deadline - opts.clock() : 0;
    if (left <= 0) {
      limited(`time limit of ${limits.timeoutMs} ms reached: ${todo.length} sitemaps not read`);
      break;
    }
    if (read >= limits.maxFiles) {
      limited(`sitemap limit of ${limits.maxFiles} reached: ${todo.length} sitemaps not read`);
      break;
    }
    if (byUrl.size >= limits.maxUrls) {
      limited(`URL limit of ${limits.maxUrls} reached: ${todo.length} sitemaps not read`);
      break;
    }
    const { url, depth } = todo.shift()!;
    read++;
    const r = await opts.readFile({
      url,
      userAgent: opts.userAgent,
      timeoutMs: Math.max(1, Math.min(opts.timeoutMs, left)),
      allowPrivate: opts.allowPrivate,
      maxBytes: limits.maxBytes,
      maxUrls: limits.maxUrls - byUrl.size,
      maxSitemaps: Math.max(0, limits.maxFiles - read - todo.length),
    });
    for (const note of r.cut) limited(note);
    duplicates += r.duplicates;
    if (r.kind === 'failed') {
      errors.push(`${url}: ${r.error ?? `status ${r.status}`}`);
      continue;
    }
    for (const e of r.entries) {
      if (byUrl.has(e.url)) duplicates++;
      else if (byUrl.size < limits.maxUrls) byUrl.set(e.url, e);
    }
    if (r.kind !== 'index' || !r.sitemaps.length) continue;
    if (depth + 1 > limits.maxDepth) {
      limited(`${url}: ${r.sitemaps.length} child sitemaps not read (index depth limit ${limits.maxDepth})`);
      continue;
    }
    for (const child of r.sitemaps) {
      if (listed.has(child)) {
        cut.push(`${child}: listed again by ${url}, read once`);
        continue;
      }
      listed.add(child);
      todo.push({ url: child, depth: depth + 1 });
    }
  }
  return { entries: [...byUrl.values()], errors: errors.lines(), cut: cut.lines(), complete, sitemaps: read, duplicates };
}
