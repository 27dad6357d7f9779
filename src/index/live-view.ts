/**
 * The acknowledged view of the segment store: which URLs have a live entry right after their
 * write is acknowledged (published or still in the buffer), with their status counts, and the
 * reports read from it (`stats`, `listEntries`).
 *
 * Main thread. Invariants: an entry is set by the buffer stage (buffer.ts) when a write becomes
 * durable and at open from the published winners; an upsert sets it, a delete removes it;
 * `statusCounts` always counts the entries' statuses.
 */
import type { EntryListing, EntryListingQuery, EntryListingRow, IndexStats } from './contract.js';
import type { DocMeta } from './generations.js';

/** A live URL's newest op. */
export interface UrlState {
  seq: number;
  at: number;
  /** When the URL was first indexed (kept across re-indexing; reset by a delete). */
  firstAt: number;
  status: number;
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}XX`;
}

export class LiveView {
  private readonly live = new Map<string, UrlState>();
  private readonly statusCounts = new Map<number, number>();
  /** Newest `at` of any op, published or acknowledged (0: none yet). */
  lastUpdatedAt = 0;

  get(url: string): UrlState | undefined {
    return this.live.get(url);
  }

  has(url: string): boolean {
    return this.live.has(url);
  }

  urls(): IterableIterator<string> {
    return this.live.keys();
  }

  /** Sets `url`'s entry, or removes it (`null`). */
  set(url: string, st: UrlState | null): void {
    const prev = this.live.get(url);
    if (prev) this.statusCounts.set(prev.status, (this.statusCounts.get(prev.status) ?? 1) - 1);
    if (st) {
      this.live.set(url, st);
      this.statusCounts.set(st.status, (this.statusCounts.get(st.status) ?? 0) + 1);
    } else {
      this.live.delete(url);
    }
  }

  /** Forgets every entry (a replace installs a new set of pages). */
  clear(): void {
    this.live.clear();
    this.statusCounts.clear();
  }

  /** Notes an op written at `at` (ms). */
  touch(at: number): void {
    if (at > this.lastUpdatedAt) this.lastUpdatedAt = at;
  }

  /** The counts of the project's status report; `pending` = acknowledged ops not yet published. */
  stats(pending: number): IndexStats {
    const byClass: Record<string, number> = { '3XX': 0, '4XX': 0, '5XX': 0, '8XX': 0 };
    for (const [status, n] of this.statusCounts) {
      if (n === 0 || status === 200) continue;
      const c = statusClass(status);
      byClass[c] = (byClass[c] ?? 0) + n;
    }
    return {
      pages: this.statusCounts.get(200) ?? 0,
      byClass,
      pending,
      lastUpdated: this.lastUpdatedAt > 0 ? new Date(this.lastUpdatedAt).toISOString() : null,
    };
  }

  /**
   * Lists live entries sorted by URL (see ProjectIndex.listEntries). `docOf` and
   * `documentTypeOf` read a URL's stored fields wherever its newest op is (buffer or segment).
   */
  list(q: EntryListingQuery, docOf: (url: string) => DocMeta | null, documentTypeOf: (url: string) => string | null): EntryListing {
    const offset = q.offset ?? 0;
    const limit = q.limit ?? 50;
    const statusFilter = q.status === undefined || q.status === null ? null : String(q.status).toUpperCase();
    const typeFilter = q.contentType ? q.contentType.toUpperCase() : null;
    const matches: string[] = [];
    for (const [url, st] of this.live) {
      if (q.urlContains && !url.includes(q.urlContains)) continue;
      if (statusFilter !== null) {
        const ok = statusFilter.endsWith('XX') ? statusClass(st.status) === statusFilter : String(st.status) === statusFilter;
        if (!ok) continue;
      }
      if (typeFilter !== null && documentTypeOf(url) !== typeFilter) continue;
      matches.push(url);
    }
    matches.sort();
    const rows: EntryListingRow[] = [];
    for (const url of matches.slice(offset, offset + limit)) {
      const st = this.live.get(url)!;
      const doc = docOf(url);
      rows.push({
        url,
        title: doc?.title ?? '',
        contentType: doc?.documentType ?? 'HTML',
        status: st.status,
        ...(doc?.message !== undefined ? { message: doc.message } : {}),
        contentGroup: doc?.contentGroup ?? '',
        source: doc?.source ?? 'api',
        indexedAt: new Date(st.firstAt).toISOString(),
        updatedAt: new Date(st.at).toISOString(),
      });
    }
    return { total: matches.length, rows };
  }
}
