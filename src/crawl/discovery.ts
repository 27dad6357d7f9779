/**
 * Stage: link discovery and queueing (main thread). Decides which URLs a run queues as page
 * tasks — the roots of a site crawl, the changed URLs of a sitemap, the links of a crawled page
 * within the allowed hosts, the canonical URL a page points to — and adds them to the
 * project's queue.
 *
 * Invariants:
 * - A run queues each normalised URL at most once (its seen-set) and at most `maxPages` pages.
 * - A site crawl follows links only into its allowed hosts, and only to `maxDepth`.
 * - Every queued task carries the URL's index seq at queueing time (newest write wins, see
 *   ./indexing.ts).
 */
import type { ProjectIndex } from '../index/index.js';
import type { Settings } from '../core/index.js';
import { baseSeqOf } from './indexing.js';
import type { CrawlQueue, CrawlTask, TaskOrigin } from './queue.js';
import { normalizeUrl } from '../fetch/index.js';

// Per settings object (settings are replaced, never mutated, on a change): asked once per page.
const allowedHostsCache = new WeakMap<Settings['crawler'], Set<string> | null>();

/**
 * Hosts a site crawl may follow links into: `allowedHosts`, else the hosts (with and without
 * port) of the root and sitemap URLs; null when there is no restriction.
 *
 * @example hostAllowed(link, allowedHostsOf(settings.crawler))
 */
export function allowedHostsOf(s: Settings['crawler']): Set<string> | null {
  let hosts = allowedHostsCache.get(s);
  if (hosts === undefined) {
    hosts = computeAllowedHosts(s);
    allowedHostsCache.set(s, hosts);
  }
  return hosts;
}

function computeAllowedHosts(s: Settings['crawler']): Set<string> | null {
  if (s.allowedHosts && s.allowedHosts.length) return new Set(s.allowedHosts.map((h) => h.toLowerCase()));
  const hosts = new Set<string>();
  for (const u of [...s.rootUrls, ...s.sitemapUrls]) {
    try {
      const p = new URL(u);
      hosts.add(p.host.toLowerCase());
      hosts.add(p.hostname.toLowerCase());
    } catch {
      // Settings validation keeps these absolute; ignore anything else.
    }
  }
  return hosts.size ? hosts : null;
}

/**
 * Whether `url`'s host (with or without port) is in `allowed` (null: every host is).
 *
 * @example hostAllowed('https://docs.example.org/a', new Set(['docs.example.org'])) // true
 */
export function hostAllowed(url: string, allowed: Set<string> | null): boolean {
  if (!allowed) return true;
  try {
    const u = new URL(url);
    return allowed.has(u.host.toLowerCase()) || allowed.has(u.hostname.toLowerCase());
  } catch {
    return false;
  }
}

/**
 * Queues `raw` as a page of `run` at `depth` if it is a URL new to the run and the run has
 * room for it (`maxPages`). Returns whether a task was added.
 *
 * @example for (const root of settings.crawler.rootUrls) enqueueRunPage(q, index, run, root, 0, 'crawl', maxPages);
 */
export function enqueueRunPage(q: CrawlQueue, index: ProjectIndex, run: CrawlTask, raw: string, depth: number, origin: TaskOrigin, maxPages: number): boolean {
  // Links from the extractor are normalised already (normalizing is idempotent), and most
  // were seen: answer those without parsing the URL again.
  if (q.isSeen(run.id, raw)) return false;
  const url = normalizeUrl(raw);
  if (!url) return false;
  if (!q.markSeen(run.id, url)) return false;
  if (!q.takeRunSlot(run.id, maxPages)) return false;
  q.add({ type: 'page', origin, url, depth, runId: run.id, baseSeq: baseSeqOf(index, url) });
  return true;
}

/**
 * Queues the links of a page of a site crawl found at `depth` (the caller checks `maxDepth` and
 * nofollow): those in the allowed hosts and new to the run, one level deeper.
 */
export function followLinks(q: CrawlQueue, index: ProjectIndex, run: CrawlTask, links: string[], depth: number, s: Settings['crawler']): void {
  const allowed = allowedHostsOf(s);
  // The inserts join the queue's group transaction: a page has dozens of links, most of them
  // seen already, and a transaction of its own per page would cost a commit per page.
  for (const link of links) {
    // Answered from the seen-set before parsing the URL.
    if (q.isSeen(run.id, link)) continue;
    if (hostAllowed(link, allowed)) enqueueRunPage(q, index, run, link, depth + 1, 'crawl', s.maxPages);
  }
}

/**
 * Queues the canonical URL a page of `task` points to: as a page of the task's run (a site
 * crawl's `maxPages` applies), or as a URL task of its own when the page was pushed alone and
 * the canonical URL is not queued already.
 */
export function queueCanonical(q: CrawlQueue, index: ProjectIndex, task: CrawlTask, run: CrawlTask | null, canonical: string, s: Settings['crawler']): void {
  if (run) enqueueRunPage(q, index, run, canonical, task.depth, task.origin, run.type === 'crawl' ? s.maxPages : Number.MAX_SAFE_INTEGER);
  else if (!q.queuedFor(canonical, 'url')) q.add({ type: 'url', origin: task.origin, url: canonical, baseSeq: baseSeqOf(index, canonical) });
}
