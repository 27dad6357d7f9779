/**
 * Stage: one crawl task from its URL to its outcome (main thread; the fetch itself runs in the
 * worker pool through `runFetch`). Applies the Control Panel URL rules, asks robots.txt, fetches
 * and extracts, follows redirects and links (./discovery.ts), decides the page's index status
 * (noindex, canonical, errors, retries) and hands the outcome to ./indexing.ts; then finishes
 * the task and lets ./progress.ts complete its run.
 *
 * Invariants:
 * - Every task ends `done` (an outcome was recorded) or `failed` (retries exhausted, cancelled,
 *   or an appended fetch that produced nothing), unless a retry was scheduled.
 * - `fetched` is called once the request is over (host and fetch slots are for the request,
 *   not for the index write that follows).
 * - Control Panel rules apply to URL-only pages; appended content (JSON pages) never goes
 *   through them, and never becomes a status entry.
 * - A cancelled task, or any task after `stop()`, writes nothing.
 */
import type { WriteOp } from '../index/index.js';
import type { DocSource, PageDoc, Settings } from '../core/index.js';
import type { CrawlContext } from './context.js';
import { allowedHostsOf, followLinks, hostAllowed, queueCanonical } from './discovery.js';
import { appendFetched, statusDoc, type OutcomeWriter } from './indexing.js';
import { pageDoc, type PageRules, hostOf, normalizeUrl } from '../fetch/index.js';
import { firstMatch } from '../text/index.js';
import type { HostGate } from './politeness.js';
import type { RunProgress } from './progress.js';
import type { CrawlQueue, CrawlTask } from './queue.js';
import type { RobotsCache } from './robots.js';

/** The blacklist or whitelist verdict on a URL (801 / 802), or null when both let it through. */
function urlRuleVerdict(s: Settings['crawler'], url: string): { status: number; message: string } | null {
  const b = firstMatch(s.blacklist, url);
  if (b >= 0) return { status: 801, message: `Blacklisted by rule ${JSON.stringify(s.blacklist[b])}` };
  if (s.whitelist.length && firstMatch(s.whitelist, url) < 0) return { status: 802, message: 'Outside the whitelist' };
  return null;
}

/** The Control Panel rules the extractor applies to a URL-only page (only these cross to the worker). */
function pageRules({ contentExtraction, dataPoints, resultGroups, filters }: Settings): PageRules {
  return { contentExtraction, dataPoints, resultGroups, filters };
}

/** Runs crawl tasks one at a time each (the dispatcher runs many at once). */
export class TaskRunner {
  constructor(
    private readonly ctx: CrawlContext,
    private readonly gate: HostGate,
    private readonly robots: RobotsCache,
    private readonly writer: OutcomeWriter,
    private readonly progress: RunProgress,
  ) {}

  /**
   * Runs `task` (already marked running) to its outcome. `fetched` is called when its request
   * is over (or was never needed); the promise resolves once the outcome is written.
   */
  async run(siteId: string, q: CrawlQueue, task: CrawlTask, settings: Settings, fetched: () => void = () => {}): Promise<void> {
    const { ctx } = this;
    const s = settings.crawler;
    const url = task.url!;
    const index = await ctx.opts.indexOf(siteId);
    const isAppend = task.type === 'append';
    const source: DocSource = isAppend ? (task.appendTo?.source ?? 'api') : task.origin === 'sitemap' ? 'sitemap' : 'crawler';
    const run = task.runId ? q.get(task.runId) : null;
    const ops: WriteOp[] = [];
    const done = async (state: 'done' | 'failed', status: number | null, message: string | null): Promise<void> => {
      if (ctx.cancelled.has(task.id) || ctx.stopped) {
        if (!ctx.stopped) {
          q.finish(task.id, 'failed', null, 'Cancelled: the URL was removed from the index');
          this.progress.settle(siteId, q, run);
        }
        return;
      }
      const superseded = await this.writer.write(siteId, index, q, task, !!run, ops);
      q.finish(task.id, state, status, superseded ? 'Not written: a newer JSON push of this URL wins' : message);
      const key = status === null ? 'failed' : String(status);
      ctx.outcomes.set(key, (ctx.outcomes.get(key) ?? 0) + 1);
      this.progress.settle(siteId, q, run);
    };
    const skip = (status: number, message: string, at = url, partial: Partial<PageDoc> = {}): Promise<void> => {
      ops.push({ op: 'upsert', doc: statusDoc(at, status, message, source, partial) });
      return done('done', status, message);
    };

    // Control Panel URL rules (URL-only pages).
    if (!isAppend) {
      const verdict = urlRuleVerdict(s, url);
      if (verdict) return skip(verdict.status, verdict.message);
      if (task.type === 'url' && s.allowedHosts && s.allowedHosts.length && !hostAllowed(url, allowedHostsOf(s))) {
        return skip(807, `Host ${hostOf(url)} is not in crawler.allowedHosts`);
      }
    }

    if (s.respectRobotsTxt) {
      const verdict = await this.robots.check(url, s.userAgent, { timeoutMs: s.timeoutMs });
      if (verdict.crawlDelayMs) this.gate.learnCrawlDelay(hostOf(url), verdict.crawlDelayMs, ctx.opts.clock());
      if (!verdict.allowed) {
        if (/unavailable/.test(verdict.message ?? '') && this.retry(q, task, verdict.message!)) return;
        if (isAppend) return done('failed', 804, verdict.message ?? 'Disallowed by robots.txt');
        return skip(804, verdict.message ?? 'Disallowed by robots.txt');
      }
    }

    const result = await ctx.opts.runFetch({
      url,
      userAgent: s.userAgent,
      timeoutMs: s.timeoutMs,
      maxBytes: s.maxBytes,
      allowPrivate: ctx.opts.allowPrivate,
      rules: isAppend ? null : pageRules(settings),
    });
    fetched();

    // Redirects: each hop is tracked as its own URL with its 3xx status.
    if (!isAppend) {
      for (const hop of result.hops) {
        const hopUrl = normalizeUrl(hop.url) ?? hop.url;
        ops.push({ op: 'upsert', doc: statusDoc(hopUrl, hop.status, `Redirected to ${hop.location}`, source) });
      }
    }

    if (result.kind === 'failure') {
      if (result.retryable && this.retry(q, task, result.message)) return;
      if (isAppend) return done('failed', result.status, result.message);
      const at = normalizeUrl(result.url) ?? result.url;
      const exhausted = result.retryable ? ' (retries exhausted)' : '';
      return skip(result.status, result.message + exhausted, at).then(() => {
        if (result.retryable) q.finish(task.id, 'failed', result.status, result.message + exhausted);
      });
    }

    if (isAppend) {
      if (result.status !== 200) return done('failed', result.status, result.message ?? 'Nothing to append');
      ops.push({ op: 'upsert', doc: appendFetched(task.appendTo!, result) });
      return done('done', 200, 'Fetched content appended');
    }

    // A redirect target is judged by the URL rules like any URL.
    const finalUrl = normalizeUrl(result.url) ?? result.url;
    if (finalUrl !== url) {
      if (run && !q.markSeen(run.id, finalUrl)) return done('done', result.hops[0]?.status ?? 200, `Redirected to ${finalUrl}, already crawled`);
      const verdict = urlRuleVerdict(s, finalUrl);
      if (verdict) return skip(verdict.status, verdict.message, finalUrl);
    }

    // Links are followed from every fetched page, even noindex or non-canonical ones.
    if (run && run.type === 'crawl' && task.depth < s.maxDepth && !result.nofollow) followLinks(q, index, run, result.links, task.depth, s);

    if (result.status !== 200) return skip(result.status, result.message ?? `Status ${result.status}`, finalUrl, { documentType: result.documentType });
    if (s.respectNoindex && result.noindex) return skip(803, 'noindex (meta robots or X-Robots-Tag)', finalUrl, { title: result.title });
    const n = firstMatch(s.noIndex, finalUrl);
    if (n >= 0) return skip(803, `No-index rule ${JSON.stringify(s.noIndex[n])}`, finalUrl, { title: result.title });
    if (s.respectCanonical && result.canonical) {
      const canonical = normalizeUrl(result.canonical);
      if (canonical && canonical !== finalUrl) {
        queueCanonical(q, index, task, run, canonical, s);
        return skip(805, `Canonical URL is ${canonical}`, finalUrl, { title: result.title });
      }
    }
    if (run && result.canonical) q.markSeen(run.id, normalizeUrl(result.canonical) ?? result.canonical);
    ops.push({ op: 'upsert', doc: pageDoc(result, finalUrl, source) });
    return done('done', 200, null);
  }

  /** Schedules another attempt with exponential backoff; false when attempts are used up. */
  private retry(q: CrawlQueue, task: CrawlTask, message: string): boolean {
    const maxAttempts = this.ctx.opts.maxAttempts ?? 3;
    const attempts = task.attempts + 1; // setRunning counted this one
    if (attempts >= maxAttempts || this.ctx.stopped) return false;
    const delay = (this.ctx.opts.retryBaseMs ?? 30_000) * 2 ** (attempts - 1);
    q.retryAt(task.id, this.ctx.opts.clock() + delay, `${message}; retry ${attempts} of ${maxAttempts - 1} scheduled`);
    return true;
  }
}
