/**
 * The document operations behind the JSON indexing and removal routes (SPEC §4): write
 * validated pages durably, remove by URL or URL pattern, and keep the crawler's queue in step.
 *
 * Main thread. Every function resolves only after `ProjectIndex.write` resolved, i.e. after the
 * write log was fsync'd: a resolved call is an acknowledged, crash-safe change.
 */
import { AppError, type PageDoc } from '../core/index.js';
import { type ProjectIndex, type WriteOp, DEFAULT_MAX_BUFFERED_DOCS } from '../index/index.js';
import type { UrlMatcher } from './url-pattern.js';

/** What the crawler offers to ingest; every member optional until the crawler lands. */
export interface CrawlHooks {
  pushUrl?: (siteId: string, url: string, opts: { appendTo?: PageDoc }) => Promise<{ taskId: string }> | { taskId: string };
  /** Drops queued crawls whose URL matches; the predicate is only valid during the call. */
  cancel?: (siteId: string, predicate: (url: string) => boolean) => unknown;
  /** URLs queued for the project (indexStatus `pending`). */
  pendingCount?: (siteId: string) => number;
}

/**
 * `services.crawl` as {@link CrawlHooks}, or undefined while the server runs without a crawler.
 * Until the crawler is wired, `services.crawl` is a stand-in whose every property is a function
 * that throws 501; a property no real service has tells the two apart before anything is written.
 */
export function crawlerOf(crawl: unknown): CrawlHooks | undefined {
  if (typeof crawl !== 'object' || crawl === null) return undefined;
  if (typeof (crawl as Record<string, unknown>)['__noSuchCrawlMethod__'] === 'function') return undefined;
  return crawl as CrawlHooks;
}

/** Result of {@link indexPages}. */
export interface IndexPagesResult {
  indexed: number;
  /** The seq of the last op written (for `waitSearchable`). */
  seq: number;
}

/**
 * Writes `docs` (already validated; URLs unique) as one all-or-nothing write and, when
 * `refresh`, waits until they are searchable.
 */
export async function indexPages(index: ProjectIndex, docs: PageDoc[], opts: { refresh: boolean }): Promise<IndexPagesResult> {
  await admit(index);
  const ops: WriteOp[] = docs.map((doc) => ({ op: 'upsert', doc }));
  const seq = await index.write(ops);
  noteWritten(index, seq);
  if (opts.refresh) await index.waitSearchable(seq);
  return { indexed: docs.length, seq };
}

/**
 * Acknowledged-but-unpublished entries of a project above which a new JSON write first waits
 * until the backlog is published. The store keeps unpublished documents in memory and builds
 * them into one segment, so without this bound a client that writes faster than segments are
 * built grows the server without limit (measured: 3.6 GB RSS half-way through 100k documents).
 * Waiting — rather than answering 503 — keeps naive clients working; the request is simply
 * acknowledged later, and the sustained ingest rate becomes the segment build rate. Equal to
 * the store's `maxBufferedDocs`: a lower bound here would stop writers at the store's early
 * flush, so no documents would arrive while it builds.
 */
export const MAX_PENDING_DOCS = DEFAULT_MAX_BUFFERED_DOCS;

/**
 * Seqs of this module's writes per index, ascending, that may not be published yet: what a
 * held-back writer waits on. Capped; dropping the oldest only makes a wait target later.
 */
const unpublishedSeqs = new WeakMap<ProjectIndex, number[]>();
const MAX_TRACKED_WRITES = 256;

function noteWritten(index: ProjectIndex, seq: number): void {
  let seqs = unpublishedSeqs.get(index);
  if (!seqs) unpublishedSeqs.set(index, (seqs = []));
  if (seqs.length > 0 && seq < seqs[seqs.length - 1]!) return; // ascending; an older seq adds nothing
  seqs.push(seq);
  if (seqs.length > MAX_TRACKED_WRITES) seqs.shift();
}

/**
 * Backpressure: while the project's unpublished backlog is at or above the bound, waits for the
 * publication of our oldest unpublished write — i.e. for the segment build in progress, not for
 * the whole backlog — so that the next build starts while writers resume (a pipeline, not
 * stop-and-go).
 */
async function admit(index: ProjectIndex): Promise<void> {
  for (;;) {
    if (index.stats().pending < MAX_PENDING_DOCS) return;
    const seqs = unpublishedSeqs.get(index);
    // Once every JSON write is published, what remains (e.g. a crawl) is not ours to wait for.
    if (!seqs || seqs.length === 0) return;
    const oldest = seqs[0]!;
    try {
      await index.waitSearchable(oldest);
    } catch {
      // A failed segment build keeps its ops buffered and is retried by the store; this write
      // is still safe to accept (durability comes from the write log), so stop waiting.
      return;
    }
    // Published: forget it (another waiter may have done so already). Each round removes at
    // least one seq, so the loop ends.
    while (seqs.length > 0 && seqs[0]! <= oldest) seqs.shift();
  }
}

/**
 * Removes one URL. Resolves with 1 when it had a live entry (any status), else 0 — no write is
 * made for an absent URL. Queued crawls of the URL are cancelled either way.
 */
export async function deleteByUrl(
  index: ProjectIndex,
  url: string,
  opts: { refresh: boolean; crawl?: CrawlHooks; siteId: string },
): Promise<number> {
  // The crawl queue keys URLs without their fragment (crawler normalisation).
  const unfragmented = url.split('#')[0];
  cancelCrawls(opts.crawl, opts.siteId, (u) => u === url || u === unfragmented);
  if (!index.has(url)) return 0;
  const seq = await index.write([{ op: 'delete', url }]);
  noteWritten(index, seq);
  if (opts.refresh) await index.waitSearchable(seq);
  return 1;
}

/**
 * Removes every live URL the matcher matches (search semantics) through the store's atomic
 * `deleteWhere` (one durable batch; writes acknowledged later are untouched).
 */
export async function deleteByPattern(
  index: ProjectIndex,
  matcher: UrlMatcher,
  opts: { refresh: boolean; crawl?: CrawlHooks; siteId: string },
): Promise<number> {
  cancelCrawls(opts.crawl, opts.siteId, (u) => matcher.test(u));
  const deleted = await index.deleteWhere((u) => matcher.test(u));
  // deleteWhere resolves once durable; the store publishes on its refresh timer, so a flush
  // makes the removal visible now when the caller asked to wait.
  if (opts.refresh && deleted > 0) await index.flush();
  return deleted;
}

function cancelCrawls(crawl: CrawlHooks | undefined, siteId: string, predicate: (url: string) => boolean): void {
  if (typeof crawl?.cancel !== 'function') return;
  try {
    crawl.cancel(siteId, predicate);
  } catch (err) {
    // A server without a crawler has no queue to cancel; anything else is a real failure.
    if (!(err instanceof AppError && err.code === 'not_implemented')) throw err;
  }
}
