/**
 * The crawler of a running server (main thread): URL pushes, site crawls and sitemap imports
 * feed one durable queue per project ({@link CrawlQueue}); a single scheduler hands ready tasks
 * to the worker pool under per-host politeness and writes every outcome to the project's index.
 *
 * Invariants:
 * - Every task ends `done` (an outcome was recorded) or `failed` (retries exhausted, cancelled,
 *   or an appended fetch that produced nothing); a restart re-runs tasks that were `running`.
 * - Control Panel rules apply to URL-only pages; appended content (JSON pages) never goes
 *   through them, and a crawl never turns a JSON-pushed page into a skipped entry.
 * - Newest write wins: a JSON push that lands after a crawl task was queued is never
 *   overwritten by that task.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { AppError, badParam } from '../errors.js';
import type { ProjectIndex, WriteOp } from '../index/contract.js';
import type { DocSource, PageDoc, Settings } from '../types.js';
import { systemResolver, type Resolver } from './address-guard.js';
import type { ExtractedPage, FetchExtractResult, FetchExtractTask } from './page.js';
import { firstMatch } from './patterns.js';
import { HostGate } from './politeness.js';
import { CrawlQueue, type CrawlTask, type TaskOrigin } from './queue.js';
import { RobotsCache } from './robots.js';
import { readSitemaps, type SitemapReadResult } from './sitemap.js';
import { hostOf, isHttpUrl, normalizeUrl } from './url.js';

/** A task as `GET /tasks/{taskId}` shows it (SPEC §4). */
export interface TaskView {
  taskId: string;
  type: 'url' | 'append' | 'page' | 'crawl' | 'sitemap';
  state: 'queued' | 'running' | 'done' | 'failed';
  url?: string;
  indexStatus?: number;
  message?: string;
  createdAt: string;
  finishedAt?: string;
  /** Crawl and sitemap runs: page tasks queued by the run. */
  pagesQueued?: number;
}

/** Result of a sitemap import. */
export interface SitemapImportResult extends TaskView {
  /** URLs read from the sitemaps. */
  urls: number;
  /** URLs queued (new or changed lastmod, or without lastmod). */
  queued: number;
  /** Pages removed because they left the sitemaps (`removeMissing`). */
  removed: number;
  errors: string[];
}

/** Minimal logger (the platform's Logger fits). */
export interface CrawlLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CrawlServiceOptions {
  dataDir: string;
  /** ms since the epoch. */
  clock: () => number;
  /** SITESIFT_CRAWLER_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** The project's settings; throws for an unknown project. */
  settingsOf: (siteId: string) => Settings;
  indexOf: (siteId: string) => Promise<ProjectIndex>;
  /** Runs one fetch-extract task: the pool in production, in-process in tests (nock). */
  runFetch: (task: FetchExtractTask) => Promise<FetchExtractResult>;
  /** DNS for the address guard of robots.txt and sitemap fetches (the worker uses the system's). */
  resolver?: Resolver;
  /**
   * Fetches (pool tasks) in flight over all projects (default 16). Pages whose fetch is back and
   * that wait for their index commit do not count, up to 4× this many tasks in all.
   */
  maxInFlight?: number;
  /** Attempts per task for 5xx / network errors (default 3) and the first backoff (default 30 s, doubling). */
  maxAttempts?: number;
  retryBaseMs?: number;
  /**
   * Pages of crawl and sitemap runs written between the index flushes the crawler asks for
   * itself, each built as parallel parts (default {@link RUN_FLUSH_PAGES}); see
   * `CrawlService.flushRunPages`.
   */
  runFlushPages?: number;
  log?: CrawlLog;
}

const silent: CrawlLog = { info() {}, warn() {}, error() {} };

function iso(ms: number | null | undefined): string | undefined {
  return ms === null || ms === undefined ? undefined : new Date(ms).toISOString();
}

/** The public view of a queue row. */
export function taskView(t: CrawlTask): TaskView {
  const v: TaskView = { taskId: t.id, type: t.type, state: t.state, createdAt: iso(t.createdAt)! };
  if (t.url) v.url = t.url;
  if (t.indexStatus !== null) v.indexStatus = t.indexStatus;
  if (t.message) v.message = t.message;
  if (t.finishedAt !== null && (t.state === 'done' || t.state === 'failed')) v.finishedAt = iso(t.finishedAt);
  if (t.type === 'crawl' || t.type === 'sitemap') v.pagesQueued = t.total;
  return v;
}

// Per settings object (settings are replaced, never mutated, on a change): asked once per page.
const allowedHostsCache = new WeakMap<Settings['crawler'], Set<string> | null>();

/** Hosts a site crawl may follow links into: `allowedHosts`, else the hosts of root and sitemap URLs. */
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

function hostAllowed(url: string, allowed: Set<string> | null): boolean {
  if (!allowed) return true;
  try {
    const u = new URL(url);
    return allowed.has(u.host.toLowerCase()) || allowed.has(u.hostname.toLowerCase());
  } catch {
    return false;
  }
}

/** The newest live entry of a URL as the crawler needs it. */
interface EntryInfo {
  seq: number | null;
  source: DocSource;
  at: number;
}

function entryInfo(index: ProjectIndex, url: string): EntryInfo | null {
  if (typeof index.entryOf === 'function') {
    const e = index.entryOf(url);
    return e ? { seq: e.seq, source: e.source, at: e.at } : null;
  }
  // Fallback until the store offers entryOf: the listing row (no seq, time only).
  if (!index.has(url)) return null;
  const row = index.listEntries({ urlContains: url, limit: 100_000 }).rows.find((r) => r.url === url);
  return row ? { seq: null, source: row.source, at: Date.parse(row.updatedAt) } : null;
}

/** An empty, non-searchable entry recording an outcome (SPEC §4 index status codes). */
function statusDoc(url: string, status: number, message: string, source: DocSource, partial: Partial<PageDoc> = {}): PageDoc {
  return {
    url,
    title: partial.title ?? '',
    content: '',
    documentType: partial.documentType ?? 'HTML',
    contentGroup: '',
    imageUrl: null,
    dataPoints: [],
    filters: [],
    boost: 1,
    keywords: [],
    language: null,
    headings: [],
    source,
    status,
    message,
  };
}

/** A crawled page as an index document. */
function pageDoc(page: ExtractedPage, url: string, source: DocSource): PageDoc {
  const doc: PageDoc = {
    url,
    title: page.title,
    content: page.content,
    documentType: page.documentType,
    contentGroup: page.contentGroup,
    imageUrl: page.imageUrl,
    dataPoints: page.dataPoints,
    filters: page.filters,
    boost: 1,
    keywords: page.keywords,
    language: page.language,
    headings: page.headings,
    source,
    status: 200,
  };
  if (page.description) doc.description = page.description;
  return doc;
}

/**
 * `appendPageContent`: the supplied JSON fields win, the fetched text is appended to the
 * supplied content, and fields the JSON left empty are filled from the page.
 */
export function appendFetched(json: PageDoc, page: ExtractedPage): PageDoc {
  return {
    ...json,
    title: json.title || page.title,
    content: [json.content, page.content].filter((s) => s && s.trim()).join('\n\n'),
    headings: json.headings.length ? json.headings : page.headings,
    imageUrl: json.imageUrl ?? page.imageUrl,
    language: json.language ?? page.language,
    ...(json.description ?? page.description ? { description: json.description ?? page.description } : {}),
    source: json.source,
    status: 200,
  };
}

interface Site {
  queue: CrawlQueue;
}

/**
 * Part size from which the flushes a crawl or sitemap run asks for are built as parallel parts
 * (the store's default is 500 per part, meant for bulk imports). Below ≈50 documents a second
 * segment costs more than the half build it saves.
 */
export const RUN_FLUSH_MIN_PART_DOCS = 50;

/** Default of {@link CrawlServiceOptions.runFlushPages}. */
export const RUN_FLUSH_PAGES = 256;

/** The crawler. One instance per server; see the module comment. */
export class CrawlService {
  private readonly opts: CrawlServiceOptions;
  private readonly log: CrawlLog;
  private readonly resolver: Resolver;
  private readonly sites = new Map<string, Site>();
  private readonly gate = new HostGate();
  private readonly robots: RobotsCache;
  private readonly crawlDelayMs = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly cancelled = new Set<string>();
  /** Tasks between dispatch and the end of their fetch (the pool's share of {@link inflight}). */
  private fetching = 0;
  /** Per project: whether its last scheduling pass met a task its host gate held back (unknown: yes). */
  private readonly gateBlocked = new Map<string, boolean>();
  /** Per project: run pages written since its last run flush, and whether that flush is still running. */
  private readonly runFlush = new Map<string, { written: number; busy: boolean }>();
  private idleWaiters: Array<{ siteId: string | null; resolve: () => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private pumping = false;
  private pumpAgain = false;
  private started = false;
  private stopped = false;

  constructor(opts: CrawlServiceOptions) {
    this.opts = opts;
    this.log = opts.log ?? silent;
    this.resolver = opts.resolver ?? systemResolver;
    this.robots = new RobotsCache({ clock: opts.clock, resolver: this.resolver, allowPrivate: opts.allowPrivate });
  }

  // ------------------------------------------------------------------ lifecycle

  /** Opens the queues found on disk and resumes them (tasks that were running run again). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopped = false;
    const root = path.join(this.opts.dataDir, 'projects');
    if (existsSync(root)) {
      for (const siteId of readdirSync(root)) {
        if (existsSync(path.join(root, siteId, 'crawl.db'))) {
          try {
            this.opts.settingsOf(siteId);
            const q = this.site(siteId).queue;
            // A run whose last page finished just before a crash was never marked done.
            for (const run of q.activeRuns()) this.settleRunOf(siteId, q, run);
          } catch {
            // A project folder without a project (deleted while down): leave it alone.
          }
        }
      }
    }
    this.wake();
  }

  /**
   * Stops handing out tasks, waits up to `graceMs` for in-flight tasks, and closes the queues.
   * Tasks still running stay `running` on disk and run again after the next start.
   */
  async stop(graceMs = 5000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pending = [...this.inflight.values()];
    if (pending.length) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(pending), new Promise((r) => (t = setTimeout(r, graceMs)))]);
      if (t) clearTimeout(t);
    }
    for (const s of this.sites.values()) s.queue.close();
    this.sites.clear();
    this.started = false;
    for (const w of this.idleWaiters) w.resolve();
    this.idleWaiters = [];
  }

  /** Forgets a deleted project's queue (its folder is removed by the index registry). */
  dropSite(siteId: string): void {
    const s = this.sites.get(siteId);
    if (!s) return;
    for (const id of s.queue.runningMatching(() => true)) this.cancelled.add(id);
    s.queue.close();
    this.sites.delete(siteId);
    this.runFlush.delete(siteId);
  }

  private site(siteId: string): Site {
    let s = this.sites.get(siteId);
    if (!s) {
      const queue = new CrawlQueue(path.join(this.opts.dataDir, 'projects', siteId, 'crawl.db'), this.opts.clock);
      s = { queue };
      this.sites.set(siteId, s);
    }
    return s;
  }

  private assertRunning(): void {
    if (this.stopped) throw new AppError('overloaded', 'The crawler is shutting down; try again in a moment.', undefined, undefined, { 'Retry-After': '5' });
  }

  // ------------------------------------------------------------------ public API

  /**
   * Queues one URL (`POST /index/documents?url=`), or — with `appendTo` — the fetch whose text
   * is appended to that JSON page (`appendPageContent`). Call it after the JSON write resolved.
   */
  async pushUrl(siteId: string, rawUrl: string, opts: { appendTo?: PageDoc } = {}): Promise<TaskView> {
    this.assertRunning();
    this.opts.settingsOf(siteId); // unknown project → throws
    if (!isHttpUrl(rawUrl)) throw badParam('url', `"url" must be an absolute http(s) URL, got ${JSON.stringify(rawUrl)}.`);
    // The URL is the identity: keep the pushed spelling for appends (it is the JSON page's URL).
    const url = opts.appendTo ? opts.appendTo.url : (normalizeUrl(rawUrl) ?? rawUrl);
    const q = this.site(siteId).queue;
    const index = await this.opts.indexOf(siteId);
    const type = opts.appendTo ? 'append' : 'url';
    if (!opts.appendTo) {
      const existing = q.queuedFor(url, 'url');
      if (existing) return taskView(existing);
    }
    const e = entryInfo(index, url);
    const task = q.add({ type, origin: 'url', url, baseSeq: e?.seq ?? (e ? -1 : 0), appendTo: opts.appendTo ?? null });
    q.commit(); // the task id is acknowledged to the client
    this.wake();
    return taskView(task);
  }

  /** A task of the project, or null. */
  getTask(siteId: string, taskId: string): TaskView | null {
    const t = this.site(siteId).queue.get(taskId);
    return t ? taskView(t) : null;
  }

  /** Queued or running page tasks of the project (`pending` of indexStatus). */
  pending(siteId: string): number {
    if (!this.sites.has(siteId) && !existsSync(path.join(this.opts.dataDir, 'projects', siteId, 'crawl.db'))) return 0;
    return this.site(siteId).queue.pending();
  }

  /** Alias of {@link pending} under the name the reports route looks for. */
  pendingCount(siteId: string): number {
    return this.pending(siteId);
  }

  /**
   * Cancels queued crawls whose URL matches (deleting pages cancels their crawls); running ones
   * finish without writing. Returns how many were cancelled.
   */
  cancel(siteId: string, predicate: (url: string) => boolean): number {
    if (!this.sites.has(siteId) && !existsSync(path.join(this.opts.dataDir, 'projects', siteId, 'crawl.db'))) return 0;
    const q = this.site(siteId).queue;
    const ids = q.cancelQueued(predicate, 'Cancelled: the URL was removed from the index');
    for (const id of q.runningMatching(predicate)) this.cancelled.add(id);
    // Cancelling the last open pages of a run completes the run.
    const runs = new Set(ids.map((id) => q.get(id)?.runId).filter((r): r is string => !!r));
    for (const runId of runs) {
      // Pages behind a cancelled page were never reached: this crawl is not a full one.
      q.markTruncated(runId);
      this.settleRunOf(siteId, q, q.get(runId));
    }
    q.commit();
    return ids.length;
  }

  /**
   * Starts a site crawl (`POST /sites/crawl`, recrawl schedule): breadth-first from `rootUrls`
   * within the allowed hosts to `maxDepth` / `maxPages`. A crawl already running is returned
   * instead of starting a second one.
   */
  async startSiteCrawl(siteId: string): Promise<TaskView> {
    this.assertRunning();
    const s = this.opts.settingsOf(siteId).crawler;
    if (!s.rootUrls.length) throw badParam('rootUrls', 'The project has no crawler.rootUrls; set them in the settings before starting a crawl.');
    const q = this.site(siteId).queue;
    const active = q.activeRuns().find((r) => r.type === 'crawl');
    if (active) return taskView(active);
    const index = await this.opts.indexOf(siteId);
    const run = q.add({ type: 'crawl', origin: 'crawl', url: s.rootUrls[0], state: 'running' });
    for (const root of s.rootUrls) this.enqueueRunPage(q, index, run, root, 0, 'crawl', s.maxPages);
    this.settleRunOf(siteId, q, q.get(run.id));
    q.commit();
    this.wake();
    return taskView(q.get(run.id)!);
  }

  /**
   * Imports the project's sitemaps now (`POST /sites/sitemap`, the sitemap schedule): queues
   * URLs that are new, whose lastmod changed, or that have no lastmod; with `removeMissing`
   * removes sitemap pages that left the sitemaps (only after a read without errors).
   */
  async importSitemaps(siteId: string): Promise<SitemapImportResult> {
    this.assertRunning();
    const s = this.opts.settingsOf(siteId).crawler;
    if (!s.sitemapUrls.length) throw badParam('sitemapUrls', 'The project has no crawler.sitemapUrls; set them in the settings before importing.');
    const read: SitemapReadResult = await readSitemaps(s.sitemapUrls, {
      userAgent: s.userAgent,
      timeoutMs: s.timeoutMs,
      allowPrivate: this.opts.allowPrivate,
      resolver: this.resolver,
    });
    const q = this.site(siteId).queue;
    const index = await this.opts.indexOf(siteId);
    const run = q.add({ type: 'sitemap', origin: 'sitemap', url: s.sitemapUrls[0], state: 'running' });
    const previous = q.sitemapLastmods();
    let queued = 0;
    q.db.transaction(() => {
      for (const e of read.entries) {
        const before = previous.get(e.url);
        const changed = e.lastmod === null || before === undefined || before !== e.lastmod;
        if (!changed) continue;
        if (this.enqueueRunPage(q, index, run, e.url, 0, 'sitemap', Number.MAX_SAFE_INTEGER)) queued++;
      }
    })();
    const gone = q.saveSitemapUrls(run.id, read.entries, read.errors.length === 0);
    let removed = 0;
    if (s.removeMissing && gone.length) {
      const ops: WriteOp[] = [];
      for (const url of gone) {
        const e = entryInfo(index, url);
        // Only pages the sitemap brought in: never JSON pushes, never site-crawl finds.
        if (e && e.source === 'sitemap') ops.push({ op: 'delete', url });
      }
      if (ops.length) {
        await index.write(ops);
        q.forget(ops.map((o) => (o as { url: string }).url));
        q.cancelQueued((u) => gone.includes(u), 'Cancelled: the URL left the sitemap');
      }
      removed = ops.length;
    }
    const summary = `${read.entries.length} URLs read, ${queued} queued, ${removed} removed${read.errors.length ? `, ${read.errors.length} errors` : ''}`;
    q.setRunState(run.id, 'running', summary);
    this.settleRunOf(siteId, q, q.get(run.id));
    q.commit();
    this.wake();
    this.log.info({ siteId, urls: read.entries.length, queued, removed, errors: read.errors.length }, 'sitemap import');
    return { ...taskView(q.get(run.id)!), urls: read.entries.length, queued, removed, errors: read.errors };
  }

  /**
   * Resolves when the project (or every project) has no task ready now and none running —
   * tasks waiting for a later retry do not count. For tests and the benchmark.
   */
  idle(siteId?: string): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push({ siteId: siteId ?? null, resolve });
      this.wake();
    });
  }

  /** Runs the scheduler now (after enqueueing, and when a test advanced its clock). */
  wake(): void {
    if (this.stopped || !this.started) {
      this.checkIdle();
      return;
    }
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    queueMicrotask(() => this.pump());
  }

  // ------------------------------------------------------------------ scheduling

  private pump(): void {
    if (this.stopped || this.pumping) return;
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        this.pumpOnce();
      } while (this.pumpAgain && !this.stopped);
    } finally {
      this.pumping = false;
    }
    this.checkIdle();
  }

  private pumpOnce(): void {
    const now = this.opts.clock();
    const max = this.opts.maxInFlight ?? 16;
    let wakeAt = Infinity;
    for (const [siteId, site] of this.sites) {
      if (this.fetching >= max || this.inflight.size >= max * 4) break;
      let settings: Settings;
      try {
        settings = this.opts.settingsOf(siteId);
      } catch {
        continue;
      }
      const s = settings.crawler;
      // Look ahead past tasks whose host is busy, but not through the whole queue; when the
      // last pass met no busy host, the next free slots' worth is enough (a pass runs after
      // every finished page, so reading 20 rows to start one task was most of its cost).
      const free = max - this.fetching;
      const lookahead = (this.gateBlocked.get(siteId) ?? true) ? free * 4 + 16 : free + 4;
      let blocked = false;
      const ready = site.queue.ready(now, lookahead);
      for (const task of ready) {
        if (this.fetching >= max || this.inflight.size >= max * 4) break;
        if (this.inflight.has(task.id)) continue;
        const host = hostOf(task.url!);
        const delayMs = Math.max(s.requestDelayMs, s.respectRobotsTxt ? (this.crawlDelayMs.get(host) ?? 0) : 0);
        const slot = this.gate.tryAcquire(host, { concurrency: s.concurrencyPerHost, delayMs }, now);
        if (!slot.ok) {
          blocked = true;
          wakeAt = Math.min(wakeAt, slot.retryAt);
          continue;
        }
        site.queue.setRunning(task.id);
        // The host's slot and the fetch slot are for the request: freed once the fetch is back,
        // not after the index write, so slow commits (fsync on a busy disk) neither hold back
        // the next requests to the host nor leave the pool without work.
        this.fetching++;
        let fetchDone = false;
        const fetched = (): void => {
          if (fetchDone) return;
          fetchDone = true;
          this.fetching--;
          slot.release();
          this.wake();
        };
        const p = this.process(siteId, site.queue, task, settings, fetched)
          .catch((err: unknown) => {
            this.log.error({ err, siteId, url: task.url }, 'crawl task crashed');
            try {
              site.queue.finish(task.id, 'failed', null, 'Internal error while crawling');
            } catch {
              // The queue was closed by stop(); the task runs again after a restart.
            }
          })
          .finally(() => {
            fetched();
            this.inflight.delete(task.id);
            this.cancelled.delete(task.id);
            this.wake();
          });
        this.inflight.set(task.id, p);
      }
      this.gateBlocked.set(siteId, blocked);
      const next = site.queue.nextWakeAt(now);
      if (next !== null) wakeAt = Math.min(wakeAt, next);
    }
    this.arm(wakeAt);
  }

  private arm(at: number): void {
    if (!Number.isFinite(at)) return;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.wake();
    }, Math.max(0, at - this.opts.clock()));
    this.timer.unref();
  }

  private checkIdle(): void {
    if (!this.idleWaiters.length) return;
    const now = this.opts.clock();
    const keep: typeof this.idleWaiters = [];
    for (const w of this.idleWaiters) {
      const busy = [...this.sites.entries()].some(
        ([id, site]) => (w.siteId === null || w.siteId === id) && (site.queue.ready(now, 1).length > 0 || site.queue.anyRunning()),
      );
      if (busy && !this.stopped && this.started) keep.push(w);
      else w.resolve();
    }
    this.idleWaiters = keep;
  }

  // ------------------------------------------------------------------ one task

  /** Queues a page of a run if it is new to the run and the run has room. */
  private enqueueRunPage(q: CrawlQueue, index: ProjectIndex, run: CrawlTask, raw: string, depth: number, origin: TaskOrigin, maxPages: number): boolean {
    // Links from the extractor are normalised already (normalizing is idempotent), and most
    // were seen: answer those without parsing the URL again.
    if (q.isSeen(run.id, raw)) return false;
    const url = normalizeUrl(raw);
    if (!url) return false;
    if (!q.markSeen(run.id, url)) return false;
    if (!q.takeRunSlot(run.id, maxPages)) return false;
    const e = entryInfo(index, url);
    q.add({ type: 'page', origin, url, depth, runId: run.id, baseSeq: e?.seq ?? (e ? -1 : 0) });
    return true;
  }

  private async process(siteId: string, q: CrawlQueue, task: CrawlTask, settings: Settings, fetched: () => void = () => {}): Promise<void> {
    const s = settings.crawler;
    const url = task.url!;
    const index = await this.opts.indexOf(siteId);
    const isAppend = task.type === 'append';
    const source: DocSource = isAppend ? (task.appendTo?.source ?? 'api') : task.origin === 'sitemap' ? 'sitemap' : 'crawler';
    const run = task.runId ? q.get(task.runId) : null;
    const ops: WriteOp[] = [];
    const done = async (state: 'done' | 'failed', status: number | null, message: string | null): Promise<void> => {
      if (this.cancelled.has(task.id) || this.stopped) {
        if (!this.stopped) {
          q.finish(task.id, 'failed', null, 'Cancelled: the URL was removed from the index');
          this.settleRunOf(siteId, q, run);
        }
        return;
      }
      const kept = ops.filter((op) => this.mayWrite(index, task, op));
      if (kept.length) {
        await index.write(kept);
        for (const op of kept) if (op.op === 'upsert' && op.doc.source !== 'api') q.record(op.doc.url, task.origin, task.runId);
        if (run) this.flushRunPages(siteId, index, kept.length);
      }
      const superseded = ops.length > 0 && kept.length < ops.length && ops.some((op) => op.op === 'upsert' && op.doc.url === url) && !kept.some((op) => op.op === 'upsert' && op.doc.url === url);
      q.finish(task.id, state, status, superseded ? 'Not written: a newer JSON push of this URL wins' : message);
      this.settleRunOf(siteId, q, run);
    };
    const skip = (status: number, message: string, at = url, partial: Partial<PageDoc> = {}): Promise<void> => {
      ops.push({ op: 'upsert', doc: statusDoc(at, status, message, source, partial) });
      return done('done', status, message);
    };

    // Control Panel URL rules (URL-only pages).
    if (!isAppend) {
      const b = firstMatch(s.blacklist, url);
      if (b >= 0) return skip(801, `Blacklisted by rule ${JSON.stringify(s.blacklist[b])}`);
      if (s.whitelist.length && firstMatch(s.whitelist, url) < 0) return skip(802, 'Outside the whitelist');
      if (task.type === 'url' && s.allowedHosts && s.allowedHosts.length && !hostAllowed(url, allowedHostsOf(s))) {
        return skip(807, `Host ${hostOf(url)} is not in crawler.allowedHosts`);
      }
    }

    if (s.respectRobotsTxt) {
      const verdict = await this.robots.check(url, s.userAgent, { timeoutMs: s.timeoutMs });
      if (verdict.crawlDelayMs) {
        const host = hostOf(url);
        if (this.crawlDelayMs.get(host) !== verdict.crawlDelayMs) this.gate.extend(host, this.opts.clock() + verdict.crawlDelayMs);
        this.crawlDelayMs.set(host, verdict.crawlDelayMs);
      }
      if (!verdict.allowed) {
        if (/unavailable/.test(verdict.message ?? '') && this.retry(q, task, verdict.message!)) return;
        if (isAppend) return done('failed', 804, verdict.message ?? 'Disallowed by robots.txt');
        return skip(804, verdict.message ?? 'Disallowed by robots.txt');
      }
    }

    const result = await this.opts.runFetch({
      url,
      userAgent: s.userAgent,
      timeoutMs: s.timeoutMs,
      maxBytes: s.maxBytes,
      allowPrivate: this.opts.allowPrivate,
      rules: isAppend
        ? null
        : { contentExtraction: settings.contentExtraction, dataPoints: settings.dataPoints, resultGroups: settings.resultGroups, filters: settings.filters },
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

    const finalUrl = isAppend ? url : (normalizeUrl(result.url) ?? result.url);
    if (isAppend) {
      if (result.status !== 200) return done('failed', result.status, result.message ?? 'Nothing to append');
      ops.push({ op: 'upsert', doc: appendFetched(task.appendTo!, result) });
      return done('done', 200, 'Fetched content appended');
    }

    // A redirect target is judged by the URL rules like any URL.
    if (finalUrl !== url) {
      if (run && !q.markSeen(run.id, finalUrl)) return done('done', result.hops[0]?.status ?? 200, `Redirected to ${finalUrl}, already crawled`);
      const b = firstMatch(s.blacklist, finalUrl);
      if (b >= 0) return skip(801, `Blacklisted by rule ${JSON.stringify(s.blacklist[b])}`, finalUrl);
      if (s.whitelist.length && firstMatch(s.whitelist, finalUrl) < 0) return skip(802, 'Outside the whitelist', finalUrl);
    }

    // Links are followed from every fetched page, even noindex or non-canonical ones.
    if (run && run.type === 'crawl' && task.depth < s.maxDepth && !result.nofollow) {
      const allowed = allowedHostsOf(s);
      // The inserts join the queue's group transaction (a page has dozens of links, each a
      // seen-set insert); a transaction of its own per page cost a savepoint, or a commit, and
      // a new transaction function for every page, most of whose links were seen already.
      for (const link of result.links) {
        // Most links were seen already: answered from the seen-set before parsing the URL.
        if (q.isSeen(run.id, link)) continue;
        if (hostAllowed(link, allowed)) this.enqueueRunPage(q, index, run, link, task.depth + 1, 'crawl', s.maxPages);
      }
    }

    if (result.status !== 200) return skip(result.status, result.message ?? `Status ${result.status}`, finalUrl, { documentType: result.documentType });
    if (s.respectNoindex && result.noindex) return skip(803, 'noindex (meta robots or X-Robots-Tag)', finalUrl, { title: result.title });
    const n = firstMatch(s.noIndex, finalUrl);
    if (n >= 0) return skip(803, `No-index rule ${JSON.stringify(s.noIndex[n])}`, finalUrl, { title: result.title });
    if (s.respectCanonical && result.canonical) {
      const canonical = normalizeUrl(result.canonical);
      if (canonical && canonical !== finalUrl) {
        if (run) this.enqueueRunPage(q, index, run, canonical, task.depth, task.origin, run.type === 'crawl' ? s.maxPages : Number.MAX_SAFE_INTEGER);
        else if (!q.queuedFor(canonical, 'url')) {
          const e = entryInfo(index, canonical);
          q.add({ type: 'url', origin: task.origin, url: canonical, baseSeq: e?.seq ?? (e ? -1 : 0) });
        }
        return skip(805, `Canonical URL is ${canonical}`, finalUrl, { title: result.title });
      }
    }
    if (run && result.canonical) q.markSeen(run.id, normalizeUrl(result.canonical) ?? result.canonical);
    ops.push({ op: 'upsert', doc: pageDoc(result, finalUrl, source) });
    return done('done', 200, null);
  }

  /**
   * Newest write wins: an op is dropped when a JSON push of its URL landed after the task was
   * queued, and crawl outcomes other than 200 never replace a JSON page unless the URL itself
   * was pushed.
   */
  private mayWrite(index: ProjectIndex, task: CrawlTask, op: WriteOp): boolean {
    if (op.op !== 'upsert') return true;
    const e = entryInfo(index, op.doc.url);
    if (!e || e.source !== 'api') return true;
    const sameUrl = op.doc.url === task.url;
    const newer = sameUrl && e.seq !== null && task.baseSeq >= 0 ? e.seq > task.baseSeq : e.at > task.createdAt;
    if (newer) return false;
    if (task.type === 'append') return true;
    if (op.doc.status !== 200 && !(task.type === 'url' && sameUrl)) return false;
    return true;
  }

  /** Schedules another attempt with exponential backoff; false when attempts are used up. */
  private retry(q: CrawlQueue, task: CrawlTask, message: string): boolean {
    const attempts = task.attempts + 1; // setRunning counted this one
    if (attempts >= (this.opts.maxAttempts ?? 3) || this.stopped) return false;
    const delay = (this.opts.retryBaseMs ?? 30_000) * 2 ** (attempts - 1);
    q.retryAt(task.id, this.opts.clock() + delay, `${message}; retry ${attempts} of ${(this.opts.maxAttempts ?? 3) - 1} scheduled`);
    return true;
  }

  /** Completes a run once none of its page tasks is open; a finished full crawl removes unreached pages. */
  private settleRunOf(siteId: string, q: CrawlQueue, run: CrawlTask | null): void {
    if (!run || (run.type !== 'crawl' && run.type !== 'sitemap')) return;
    if (q.hasOpenInRun(run.id)) return;
    const fresh = q.get(run.id);
    if (!fresh || fresh.state === 'done' || fresh.state === 'failed') return;
    if (fresh.type === 'sitemap') {
      q.setRunState(run.id, 'done');
      this.publishNow(siteId);
      return;
    }
    q.setRunState(run.id, 'done', `Crawl finished: ${fresh.total} pages${fresh.truncated ? ' (incomplete: maxPages reached or pages cancelled; nothing removed)' : ''}`);
    if (!fresh.truncated) void this.removeUnreached(siteId, q, fresh).finally(() => this.publishNow(siteId));
    else this.publishNow(siteId);
  }

  /**
   * Asks the index for a flush built as parallel parts once a run has written
   * `runFlushPages` pages since its last one and that one is done. Why: the store's refresh
   * timer builds each flush below 1,000 documents as one segment on one pool thread; when the
   * run ends, the flush that publishes its last pages waits for the build in flight, so the
   * crawl's end waited for up to a whole single-thread build while the other thread idled. In
   * two halves that wait halves too, and pages are published every few hundred (under a
   * second of crawling) rather than whenever the timer fires.
   */
  private flushRunPages(siteId: string, index: ProjectIndex, pages: number): void {
    let f = this.runFlush.get(siteId);
    if (!f) this.runFlush.set(siteId, (f = { written: 0, busy: false }));
    f.written += pages;
    if (f.busy || f.written < (this.opts.runFlushPages ?? RUN_FLUSH_PAGES)) return;
    const state = f;
    state.busy = true;
    state.written = 0;
    index
      .flush({ minPartDocs: RUN_FLUSH_MIN_PART_DOCS })
      .catch((err: unknown) => this.log.error({ err, siteId }, 'flushing crawled pages failed'))
      .finally(() => (state.busy = false));
  }

  /**
   * A finished run's last pages become searchable now instead of when the index's refresh
   * timer (refreshMs after a write) fires: nothing more of the run is coming to share the
   * segment with them. The flush is built as parallel parts from {@link RUN_FLUSH_MIN_PART_DOCS}
   * pages per part: the fetches are over, so the pool threads are free, and one thread building
   * the last few hundred pages alone was 8–10 % of a crawl's wall time.
   */
  private publishNow(siteId: string): void {
    this.opts
      .indexOf(siteId)
      .then((index) => index.flush({ minPartDocs: RUN_FLUSH_MIN_PART_DOCS }))
      .catch((err: unknown) => this.log.error({ err, siteId }, 'publishing a finished crawl failed'));
  }

  private async removeUnreached(siteId: string, q: CrawlQueue, run: CrawlTask): Promise<void> {
    try {
      const index = await this.opts.indexOf(siteId);
      const gone = q.crawledUrls().filter((r) => r.runId !== run.id && !q.isSeen(run.id, r.url)).map((r) => r.url);
      const ops: WriteOp[] = [];
      for (const url of gone) {
        const e = entryInfo(index, url);
        if (e && e.source === 'crawler' && e.at <= (run.finishedAt ?? this.opts.clock())) ops.push({ op: 'delete', url });
      }
      if (ops.length) await index.write(ops);
      q.forget(gone);
      if (ops.length) {
        q.setRunState(run.id, 'done', `Crawl finished: ${run.total} pages, ${ops.length} pages no longer reached were removed`);
        this.log.info({ siteId, removed: ops.length }, 'crawl removed unreached pages');
      }
    } catch (err) {
      this.log.error({ err, siteId }, 'removing unreached pages failed');
    }
  }
}
