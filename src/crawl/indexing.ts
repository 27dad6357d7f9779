/**
 * Stage: indexing the outcome of a crawl task (main thread). Turns fetched pages and status
 * outcomes into index documents, writes those the newest-write-wins rule allows, records what
 * the crawler wrote in the project's queue (for later removals), and asks the index for flushes
 * while runs write pages and when they end.
 *
 * Invariants:
 * - Newest write wins: an outcome never overwrites a JSON push that landed after its task was
 *   queued, and a crawl outcome other than 200 never replaces a JSON page unless the URL itself
 *   was pushed ({@link mayWrite}).
 * - Appended content (`appendPageContent`) keeps the JSON page's fields and source.
 * - At most one run flush per project is in flight.
 */
import type { ProjectIndex, WriteOp } from '../index/index.js';
import type { DocSource, PageDoc } from '../core/index.js';
import type { CrawlContext } from './context.js';
import type { ExtractedPage } from '../fetch/index.js';
import type { CrawlQueue, CrawlTask } from './queue.js';

/**
 * Part size from which the flushes a crawl or sitemap run asks for are built as parallel parts
 * (the store's default is 500 per part, meant for bulk imports). Below ≈50 documents a second
 * segment costs more than the half build it saves.
 */
export const RUN_FLUSH_MIN_PART_DOCS = 50;

/** Default of `CrawlServiceOptions.runFlushPages`. */
export const RUN_FLUSH_PAGES = 256;

/** The newest live entry of a URL as the crawler needs it. */
export interface EntryInfo {
  /** null when the index cannot tell (then the entry's time decides). */
  seq: number | null;
  source: DocSource;
  at: number;
}

/**
 * The newest live entry of `url` in the index, or null.
 *
 * @example if (entryInfo(index, url)?.source === 'sitemap') ops.push({ op: 'delete', url });
 */
export function entryInfo(index: ProjectIndex, url: string): EntryInfo | null {
  if (typeof index.entryOf === 'function') {
    const e = index.entryOf(url);
    return e ? { seq: e.seq, source: e.source, at: e.at } : null;
  }
  // An index without entryOf: the listing row (no seq, time only).
  if (!index.has(url)) return null;
  const row = index.listEntries({ urlContains: url, limit: 100_000 }).rows.find((r) => r.url === url);
  return row ? { seq: null, source: row.source, at: Date.parse(row.updatedAt) } : null;
}

/**
 * The `baseSeq` of a task queued now for `url`: the URL's newest seq, -1 when it has an entry
 * whose seq is unknown, 0 when it has none. Later writes are judged against it ({@link mayWrite}).
 *
 * @example q.add({ type: 'url', origin: 'url', url, baseSeq: baseSeqOf(index, url) });
 */
export function baseSeqOf(index: ProjectIndex, url: string): number {
  const e = entryInfo(index, url);
  return e?.seq ?? (e ? -1 : 0);
}

/**
 * An empty, non-searchable entry recording an outcome (an index status code such as 801
 * blacklisted, 804 robots.txt, 805 canonical elsewhere, or a redirect's 3xx).
 *
 * @example statusDoc(url, 801, 'Blacklisted by rule "/private/"', 'crawler')
 */
export function statusDoc(url: string, status: number, message: string, source: DocSource, partial: Partial<PageDoc> = {}): PageDoc {
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

/**
 * `appendPageContent`: the supplied JSON fields win, the fetched text is appended to the
 * supplied content, and fields the JSON left empty are filled from the page.
 *
 * @example ops.push({ op: 'upsert', doc: appendFetched(task.appendTo, fetchedPage) });
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

/**
 * Newest write wins: an op of `task` is dropped when a JSON push of its URL landed after the
 * task was queued, and crawl outcomes other than 200 never replace a JSON page unless the URL
 * itself was pushed.
 */
export function mayWrite(index: ProjectIndex, task: CrawlTask, op: WriteOp): boolean {
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

/** Writes task outcomes into the project indexes and asks for the flushes of runs. */
export class OutcomeWriter {
  /** Per project: run pages written since its last run flush, and whether that flush is still running. */
  private readonly runFlush = new Map<string, { written: number; busy: boolean }>();

  constructor(private readonly ctx: CrawlContext) {}

  /**
   * Writes the ops of `task` that {@link mayWrite} allows and records the crawler's pages in the
   * queue's ledger. Returns true when the task's own page was not written because a newer JSON
   * push of its URL wins.
   */
  async write(siteId: string, index: ProjectIndex, q: CrawlQueue, task: CrawlTask, inRun: boolean, ops: WriteOp[]): Promise<boolean> {
    const kept = ops.filter((op) => mayWrite(index, task, op));
    if (kept.length) {
      await index.write(kept);
      for (const op of kept) if (op.op === 'upsert' && op.doc.source !== 'api') q.record(op.doc.url, task.origin, task.runId);
      if (inRun) this.flushRunPages(siteId, index, kept.length);
    }
    const ownPage = (op: WriteOp): boolean => op.op === 'upsert' && op.doc.url === task.url;
    return kept.length < ops.length && ops.some(ownPage) && !kept.some(ownPage);
  }

  /**
   * Asks the index for a flush built as parallel parts once a run has written `runFlushPages`
   * pages since its last one and that one is done. Why: the store's refresh timer builds each
   * small flush as one segment on one pool thread, and the flush that publishes a run's last
   * pages waits for the build in flight, so a run's end would wait for a whole single-thread
   * build while the other threads idle. Built in parts, that wait shrinks, and pages are
   * published every few hundred rather than whenever the timer fires.
   */
  private flushRunPages(siteId: string, index: ProjectIndex, pages: number): void {
    let f = this.runFlush.get(siteId);
    if (!f) this.runFlush.set(siteId, (f = { written: 0, busy: false }));
    f.written += pages;
    if (f.busy || f.written < (this.ctx.opts.runFlushPages ?? RUN_FLUSH_PAGES)) return;
    const state = f;
    state.busy = true;
    state.written = 0;
    index
      .flush({ minPartDocs: RUN_FLUSH_MIN_PART_DOCS })
      .catch((err: unknown) => this.ctx.log.error({ err, siteId }, 'flushing crawled pages failed'))
      .finally(() => (state.busy = false));
  }

  /**
   * A finished run's last pages become searchable now instead of when the index's refresh
   * timer fires: nothing more of the run is coming to share the segment with them. Built as
   * parallel parts of at least {@link RUN_FLUSH_MIN_PART_DOCS} pages: the fetches are over, so
   * the pool threads are free.
   */
  publishNow(siteId: string): void {
    this.ctx.opts
      .indexOf(siteId)
      .then((index) => index.flush({ minPartDocs: RUN_FLUSH_MIN_PART_DOCS }))
      .catch((err: unknown) => this.ctx.log.error({ err, siteId }, 'publishing a finished crawl failed'));
  }

  /** Forgets a deleted project's flush state. */
  forget(siteId: string): void {
    this.runFlush.delete(siteId);
  }
}
