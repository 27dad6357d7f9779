/**
 * Index reports (seed 4.9, 4.10, SPEC §4): the counts of `GET /sites/indexStatus` and the
 * filtered, paged listing of `GET /sites/indexedContent`.
 *
 * Main thread, read-only. The listing reads the store's live entries (every status, including
 * acknowledged writes not yet searchable) through `ProjectIndex.listEntries`, which filters and
 * orders by URL ascending (a stable order, so paging with `offset` is consistent while nothing
 * changes).
 */
import type { EntryListingQuery, EntryListingRow, ProjectIndex } from '../index/index.js';
import type { DocSource, DocumentType } from '../core/index.js';

/** One entry as the listing shows it (SPEC §4). */
export interface IndexedPage {
  url: string;
  title: string;
  contentType: DocumentType;
  status: number;
  message?: string;
  /** `_` when the page belongs to no group. */
  contentGroup: string;
  source: DocSource;
  /** When the URL first entered the index (ISO 8601). */
  indexedAt: string;
  /** When its entry last changed (ISO 8601). */
  updatedAt: string;
}

/** Filters and paging of `indexedContent`, already validated. */
export interface ContentQuery {
  /** Substring the URL must contain (case-sensitive, as URL paths are). */
  url?: string;
  contentType?: DocumentType;
  /** An index status code (`404`) or a class (`'4XX'`), validated by {@link parseStatusFilter}. */
  status?: number | string;
  offset: number;
  limit: number;
}

export interface ContentPage {
  total: number;
  pages: IndexedPage[];
}

/** `indexStatus` body without `status`. */
export interface IndexStatusReport {
  pages: number;
  '4XX': number;
  '5XX': number;
  '8XX': number;
  pending: number;
  lastUpdated: string | null;
}

/** Counts for `indexStatus`; `crawlPending` is the crawler's queued URLs for the project. */
export function indexStatus(index: ProjectIndex, crawlPending: number): IndexStatusReport {
  const s = index.stats();
  return {
    pages: s.pages,
    '4XX': s.byClass['4XX'] ?? 0,
    '5XX': s.byClass['5XX'] ?? 0,
    '8XX': s.byClass['8XX'] ?? 0,
    // Acknowledged writes not yet searchable plus URLs waiting for the crawler.
    pending: s.pending + crawlPending,
    lastUpdated: s.lastUpdated,
  };
}

/**
 * Runs a listing query over the project's live entries (every status, acknowledged writes
 * included). The store filters, sorts by URL and pages; this shapes the rows for the route.
 */
export function indexedContent(index: ProjectIndex, q: ContentQuery): ContentPage {
  const query: EntryListingQuery = { offset: q.offset, limit: q.limit };
  if (q.url !== undefined) query.urlContains = q.url;
  if (q.contentType !== undefined) query.contentType = q.contentType;
  if (q.status !== undefined) query.status = q.status;
  const { total, rows } = index.listEntries(query);
  return { total, pages: rows.map(toIndexedPage) };
}

/** The SPEC §4 shape of one row: `_` for "no group", `message` only when there is one. */
export function toIndexedPage(e: EntryListingRow): IndexedPage {
  const page: IndexedPage = {
    url: e.url,
    title: e.title,
    contentType: e.contentType as DocumentType,
    status: e.status,
    contentGroup: e.contentGroup === '' ? '_' : e.contentGroup,
    source: e.source,
    indexedAt: e.indexedAt,
    updatedAt: e.updatedAt,
  };
  if (e.message !== undefined && e.message !== '') page.message = e.message;
  return page;
}

/**
 * Parses the `status` filter: an index status code (`200`, `404`, `801`) or a class (`4XX`,
 * case-insensitive). Returns the inclusive range, or undefined when the value is neither.
 */
export function parseStatusFilter(value: string): { min: number; max: number } | undefined {
  const v = value.trim();
  if (/^[1-9][0-9]{2}$/.test(v)) {
    const n = Number(v);
    return { min: n, max: n };
  }
  const cls = /^([1-9])xx$/i.exec(v);
  if (cls) {
    const base = Number(cls[1]) * 100;
    return { min: base, max: base + 99 };
  }
  return undefined;
}
