/**
 * Index reports (seed 4.9, 4.10, SPEC §4): the counts of `GET /sites/indexStatus` and the
 * filtered, paged listing of `GET /sites/indexedContent`.
 *
 * Main thread, read-only. The listing reads the store's live entries (every status, including
 * acknowledged writes not yet searchable) through `ProjectIndex.listEntries` and filters and
 * pages them here when the store does not do it itself. Order: URL ascending (a stable order,
 * so paging with `offset` is consistent while nothing changes).
 */
import type { ProjectIndex } from '../index/contract.js';
import type { DocSource, DocumentType } from '../types.js';

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
  /** Substring of the URL, compared case-insensitively. */
  url?: string;
  contentType?: DocumentType;
  /** Inclusive status range: `{min: 404, max: 404}` or a class `{min: 400, max: 499}`. */
  status?: { min: number; max: number };
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

/** A live entry as the store lists it (the shape the store engineer's `listEntries` yields). */
export interface StoreEntry {
  url: string;
  title: string;
  documentType: DocumentType;
  status: number;
  message?: string;
  contentGroup: string;
  source: DocSource;
  indexedAt: number | string;
  updatedAt: number | string;
}

type ListEntries = () => Iterable<StoreEntry>;

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

/** Runs a listing query over the project's live entries. */
export function indexedContent(index: ProjectIndex, q: ContentQuery): ContentPage {
  const list = (index as unknown as { listEntries?: ListEntries }).listEntries;
  if (typeof list !== 'function') throw new Error('this index store cannot list its entries (ProjectIndex.listEntries missing)');
  return filterAndPage(list.call(index), q);
}

/** Pure: filters `entries` by `q`, sorts by URL and returns one page plus the total. */
export function filterAndPage(entries: Iterable<StoreEntry>, q: ContentQuery): ContentPage {
  const needle = q.url?.toLowerCase();
  const matched: StoreEntry[] = [];
  for (const e of entries) {
    if (needle !== undefined && !e.url.toLowerCase().includes(needle)) continue;
    if (q.contentType !== undefined && e.documentType !== q.contentType) continue;
    if (q.status !== undefined && (e.status < q.status.min || e.status > q.status.max)) continue;
    matched.push(e);
  }
  matched.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  return { total: matched.length, pages: matched.slice(q.offset, q.offset + q.limit).map(toIndexedPage) };
}

function toIndexedPage(e: StoreEntry): IndexedPage {
  const page: IndexedPage = {
    url: e.url,
    title: e.title,
    contentType: e.documentType,
    status: e.status,
    contentGroup: e.contentGroup === '' ? '_' : e.contentGroup,
    source: e.source,
    indexedAt: iso(e.indexedAt),
    updatedAt: iso(e.updatedAt),
  };
  if (e.message !== undefined && e.message !== '') page.message = e.message;
  return page;
}

function iso(t: number | string): string {
  return typeof t === 'number' ? new Date(t).toISOString() : t;
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
