/**
 * The widget's only ways to the server: the public routes `GET /sites/suggest`, `GET /sites`
 * and `POST /sites/queries/log`. No credentials, no cookies.
 */
import { decodeEntities } from './text';
import type { ClientFilter, SearchAnswer, ServerFilter, SuggestAnswer } from './types';

/** Selected filter values: a multiple-choice filter's values, or a range's bounds. */
export type Selection = Record<string, string[] | { min?: number; max?: number }>;

/**
 * Runs one request at a time per kind: starting a request aborts the one before it, and an
 * answer is handed on only while its request is still the latest — so an answer that arrives
 * late never replaces a newer one, even if the abort came too late to stop it.
 */
export class Latest {
  private seq = 0;
  private ctrl: AbortController | null = null;

  /** Resolves `fn`'s answer, or never settles when a newer `run` started meanwhile. */
  run<T>(fn: (signal: AbortSignal) => Promise<T>, onAnswer: (v: T) => void, onError: (e: unknown) => void): void {
    this.ctrl?.abort();
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    const mine = ++this.seq;
    fn(ctrl.signal).then(
      (v) => {
        if (mine === this.seq) onAnswer(v);
      },
      (e) => {
        if (mine === this.seq && !ctrl.signal.aborted) onError(e);
      },
    );
  }

  /** Drops whatever is in flight (its answer is never handed on). */
  cancel(): void {
    this.ctrl?.abort();
    this.ctrl = null;
    this.seq++;
  }
}

/** The filters parameter of `GET /sites` (seed 2.6): a JSON array of single-key objects. */
export function filtersParam(sel: Selection): string | null {
  const out: Array<Record<string, unknown>> = [];
  for (const [key, v] of Object.entries(sel)) {
    if (Array.isArray(v)) {
      if (v.length) out.push({ [key]: v });
    } else if (v.min !== undefined || v.max !== undefined) {
      const r: { min?: number; max?: number } = {};
      if (v.min !== undefined) r.min = v.min;
      if (v.max !== undefined) r.max = v.max;
      out.push({ [key]: r });
    }
  }
  return out.length ? JSON.stringify(out) : null;
}

/** A filter as the widget shows it: the owner's configuration merged with the server's counts. */
export type ShownFilter =
  | { kind: 'multiple'; key: string; name: string; values: Array<{ name: string; value: string; count: number | null }> }
  | { kind: 'range'; key: string; name: string; min: number; max: number };

/**
 * The filters to show. With the owner's `results.filters` those, in that order, with names
 * and values from it and counts from the server (`null` when the server did not count the
 * value); otherwise every filter the server returned (its display names come HTML-escaped in a
 * highlighted answer and are decoded; values are identifiers and stay as sent).
 */
export function shownFilters(server: ServerFilter[] | undefined, config: ClientFilter[] | undefined): ShownFilter[] {
  const byKey = new Map((server ?? []).map((f) => [f.key, f]));
  if (!config) {
    return (server ?? []).map((f) =>
      f.type === 'range'
        ? { kind: 'range' as const, key: f.key, name: decodeEntities(f.name), min: f.min, max: f.max }
        : { kind: 'multiple' as const, key: f.key, name: decodeEntities(f.name), values: f.values.map((v) => ({ name: decodeEntities(v.name), value: v.value, count: v.count })) },
    );
  }
  return config.map((c) => {
    const s = byKey.get(c.key);
    if ('values' in c) {
      const counts = new Map(s && s.type === 'multiple' ? s.values.map((v) => [v.value, v.count]) : []);
      return {
        kind: 'multiple' as const,
        key: c.key,
        name: c.name,
        values: c.values.map((v) => ({ name: v.name, value: v.value, count: s ? (counts.get(v.value) ?? 0) : null })),
      };
    }
    return { kind: 'range' as const, key: c.key, name: c.name, min: c.min, max: c.max };
  });
}

/** Parameters of one results request. */
export interface SearchRequest {
  query: string;
  offset: number;
  limit: number;
  group: string | null;
  selection: Selection;
  sort: string;
  sortOrder: 'ASC' | 'DESC';
  log: boolean;
  filterOptions: boolean;
}

async function getJson<T>(url: URL, signal: AbortSignal): Promise<T> {
  const res = await fetch(url.toString(), { signal, credentials: 'omit', headers: { Accept: 'application/json' } });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** Builds requests against one server and site. */
export class Client {
  constructor(
    private readonly base: URL,
    readonly site: string,
  ) {}

  private url(path: string, params: Record<string, string | number | boolean | null | undefined>): URL {
    const u = new URL(path, this.base);
    u.searchParams.set('site', this.site);
    for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  suggest(query: string, limit: number, maxQuerySuggestions: number, signal: AbortSignal): Promise<SuggestAnswer> {
    return getJson(this.url('sites/suggest', { query, limit, maxQuerySuggestions, highlightQueryTerms: true }), signal);
  }

  search(r: SearchRequest, signal: AbortSignal): Promise<SearchAnswer> {
    return getJson(
      this.url('sites', {
        query: r.query,
        offset: r.offset || null,
        limit: r.limit,
        includeContent: true,
        highlightQueryTerms: true,
        filterOptions: r.filterOptions || null,
        filters: filtersParam(r.selection),
        includeContentGroups: r.group === null ? null : JSON.stringify([r.group]),
        sort: r.sort || null,
        sortOrder: r.sort ? r.sortOrder : null,
        log: r.log ? null : false,
      }),
      signal,
    );
  }

  /**
   * Sends a select or abandon event to `POST /sites/queries/log` — with `navigator.sendBeacon`
   * (text/plain JSON, which the route accepts and which needs no CORS preflight) so it is sent
   * even while the page unloads; with a keepalive fetch where beacons are missing or refused.
   */
  log(event: { query: string; action: 'select' | 'abandon'; link?: string; position?: number; timeToAction?: number }): void {
    const url = new URL('sites/queries/log', this.base).toString();
    const body = JSON.stringify({ site: this.site, ...event });
    try {
      if (typeof navigator.sendBeacon === 'function' && navigator.sendBeacon(url, body)) return;
    } catch {
      // fall through to fetch
    }
    void fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain;charset=UTF-8' } }).catch(() => {});
  }
}
