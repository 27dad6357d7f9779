/**
 * The suggest service behind `GET /sites/suggest` (SPEC §6), main thread:
 * {@link SuggestService.run} pins the project's current index generation, takes the page of
 * results from the suggest cache or has the search executor compute it, adds the query
 * suggestions of the query log, and returns the response body.
 *
 * Why a cache and not a separate engine: suggest is called on every keystroke, and visitors type
 * the same few thousand prefixes ("c", "cr", "cre", …) over and over, while the answer for a
 * prefix only changes when the index or the settings change. A cached answer is by construction
 * the general engine's answer (same semantics: prefix on the last word, suggest typo tolerance,
 * groups, limits, exact totals), so nothing can drift between a "fast path" and the engine.
 *
 * Invalidation: every commit, delete or merge publishes a new manifest generation (strictly
 * increasing per open {@link ProjectIndex}), and every settings change stores a new frozen
 * settings object (`ProjectRegistry.getSettings` returns the same object until then); both are
 * part of the key, so a changed index or settings can never be answered from the cache. A
 * project that is deleted and re-created gets a new ProjectIndex object, hence a new owner id.
 * Entries of old generations are not looked up again and age out of the LRU.
 *
 * A miss asks the engine for a small window of the relevance order when that answers the
 * request exactly ({@link windowSearchParams}, {@link pageFromWindow}), else for `limit` results
 * per content group; both give the general search's answer. Misses do not go through the search
 * answer cache (src/search/cache.ts): there they would push out search answers (several
 * keystrokes per submitted search).
 *
 * The cache holds only rendered results (plain frozen objects), never segment readers or hits,
 * so it pins no index generation or file. `querySuggestions` (from the query log, which changes
 * with every flush) is not cached: the service adds it to every answer.
 */
import type { IndexSnapshot, ProjectIndex } from '../index/index.js';
import type { Settings } from '../core/index.js';
import type { ActiveFilter } from './filters.js';
import { search, type SearchParams, type SearchResponse, type SearchResult } from './results.js';
import { pinned, withSemantic, type SearchSources } from './service.js';
import { groupRecord } from './group.js';
import { AnswerStore } from './cache.js';
import { objectId } from './object-id.js';
import { escapeHtml } from './snippet.js';
import { warmerFor } from './warm.js';

/** Suggest's own parameters of the page of results (validated by the route). */
export interface SuggestParams {
  query: string;
  filters: ActiveFilter[];
  /** 1–2: per content group when `groupResults`, else in total under `_`. */
  limit: number;
  groupResults: boolean;
  includeContent: boolean;
  highlightQueryTerms: boolean;
  includeContentGroups: string[] | null;
  excludeContentGroups: string[] | null;
  /** Blend of vector ranking (0–1); absent: the project's default. */
  semanticRatio?: number;
}

/** A suggested result: the search result shape, plus `suggestionHtml` on custom results. */
export type SuggestResult = SearchResult & { suggestionHtml?: string };

/** The cacheable part of a suggest answer (deep-frozen: shared between responses). */
export interface SuggestPage {
  readonly suggests: Readonly<Record<string, readonly SuggestResult[]>>;
  readonly totalResults: number;
  readonly totalResultsPerContentGroup: Readonly<Record<string, number>>;
  readonly redirect?: string;
}

/** Snippet length of suggested results with `includeContent=true` (shorter than search's 240). */
export const SUGGEST_SNIPPET_SIZE = 120;

/** The general search's parameters for a suggest request (SPEC §6). */
export function suggestSearchParams(settings: Settings, p: SuggestParams): SearchParams {
  return {
    query: p.query,
    filters: p.filters,
    filterOptions: false,
    sort: null,
    sortOrder: 'ASC',
    offset: 0,
    limit: p.limit,
    includeContent: p.includeContent,
    highlightQueryTerms: p.highlightQueryTerms,
    includeContentGroups: p.includeContentGroups,
    excludeContentGroups: p.excludeContentGroups,
    groupResults: p.groupResults,
    // Suggest counts `limit` per content group when grouping (SPEC §6).
    limitPerGroup: p.groupResults,
    typoTolerance: settings.suggest.typoTolerance,
    snippetSize: SUGGEST_SNIPPET_SIZE,
    ...(p.semanticRatio !== undefined ? { semanticRatio: p.semanticRatio } : {}),
  };
}

/** The suggest page of a search answer (as an object, or parsed from a search thread's JSON): deep-frozen. */
export function pageOf(body: Pick<SearchResponse, 'suggests' | 'totalResults' | 'totalResultsPerContentGroup' | 'redirect'>): SuggestPage {
  // Custom results render as suggestions through `suggestionHtml`.
  for (const list of Object.values(body.suggests)) {
    for (const r of list as SuggestResult[]) if (r.type === 'custom') r.suggestionHtml = r.html;
  }
  const page: SuggestPage = {
    suggests: body.suggests,
    totalResults: body.totalResults,
    totalResultsPerContentGroup: body.totalResultsPerContentGroup,
    ...(body.redirect ? { redirect: body.redirect } : {}),
  };
  return deepFreeze(page);
}

/**
 * The general search for suggest parameters on this thread, uncached: the reference the cache
 * must equal (tests compare the two).
 */
export function computeSuggestPage(snap: IndexSnapshot, settings: Settings, p: SuggestParams, cacheOwner: object): SuggestPage {
  return pageOf(search(snap, settings, suggestSearchParams(settings, p), cacheOwner));
}

/** Most results a windowed suggest search renders (see {@link windowSearchParams}). */
export const MAX_SUGGEST_WINDOW = 20;

/**
 * The cheaper search that usually answers a grouped suggest request exactly: the first `window`
 * results of the relevance order, grouped, instead of `limit` per content group. Why: "limit
 * per group" makes the engine keep, fully sort and group every match (a 1-character prefix
 * matches most pages); a window lets it keep only its top 100 (the re-ranked part) in a heap.
 * The per-group lists of a window are the first results of each group in the same order, and
 * the totals are exact either way, so {@link pageFromWindow} can tell whether the window held
 * enough of every group. Null when the window cannot be used: ungrouped requests (already a
 * plain top-k), and settings with pin, hide or custom result mappings (they place results
 * per group after paging).
 */
export function windowSearchParams(settings: Settings, p: SuggestParams, window: number): SearchParams | null {
  if (!p.groupResults) return null;
  if (settings.search.resultMappings.some((m) => m.action.type !== 'redirect')) return null;
  return { ...suggestSearchParams(settings, p), limit: Math.max(p.limit, Math.min(MAX_SUGGEST_WINDOW, window)), limitPerGroup: false };
}

/**
 * The suggest page of a windowed search's answer ({@link windowSearchParams}), or null when
 * the window is not exact: some content group with matches shows fewer than `limit` of them
 * and not all of them. When it is exact, the page equals the "limit per group" search's: each
 * group's first `limit` results in the same order (the order of the first `window` results is
 * the full order's prefix, re-ranking included), the same groups in the same order (first
 * appearance in the ranking), the same exact totals.
 */
export function pageFromWindow(body: Pick<SearchResponse, 'suggests' | 'totalResults' | 'totalResultsPerContentGroup' | 'redirect'>, limit: number): SuggestPage | null {
  for (const [group, n] of Object.entries(body.totalResultsPerContentGroup)) {
    const shown = Object.hasOwn(body.suggests, group) ? body.suggests[group]!.length : 0;
    if (shown < limit && shown < n) return null;
  }
  const suggests = groupRecord<SearchResult[]>();
  for (const [group, list] of Object.entries(body.suggests)) suggests[group] = list.length > limit ? list.slice(0, limit) : list;
  return pageOf({ ...body, suggests });
}

/**
 * Per project index (cache owner): content groups seen in answers (the window covers `limit`
 * results of each), and how often a window was not exact (then the "limit per group" search
 * runs as well; an index where that is common stops trying windows).
 */
interface WindowStats {
  groups: number;
  tries: number;
  misses: number;
}
const windowStats = new WeakMap<object, WindowStats>();

function statsOf(owner: object): WindowStats {
  let s = windowStats.get(owner);
  if (!s) windowStats.set(owner, (s = { groups: 1, tries: 0, misses: 0 }));
  return s;
}

/** The window to try for `p` on this owner's index, or null (see {@link WindowStats}). */
function windowFor(owner: object, settings: Settings, p: SuggestParams): SearchParams | null {
  const s = statsOf(owner);
  if (s.tries >= 32 && s.misses * 4 > s.tries) return null;
  return windowSearchParams(settings, p, p.limit * s.groups);
}

function noteWindow(owner: object, page: SuggestPage | null, exact: SuggestPage | null): void {
  const s = statsOf(owner);
  s.tries++;
  if (!page) s.misses++;
  const groups = Object.keys((page ?? exact)?.totalResultsPerContentGroup ?? {}).length;
  if (groups > s.groups) s.groups = groups;
  // Keep the counts recent.
  if (s.tries >= 1024) {
    s.tries >>= 1;
    s.misses >>= 1;
  }
}

/**
 * The suggest page for `p` on this thread: a windowed search when it is exact, else the
 * general "limit per group" search. Equal to {@link computeSuggestPage} (tests compare them).
 */
export function computeSuggestPageFast(snap: IndexSnapshot, settings: Settings, p: SuggestParams, cacheOwner: object): SuggestPage {
  const wp = windowFor(cacheOwner, settings, p);
  if (wp) {
    const page = pageFromWindow(search(snap, settings, wp, cacheOwner), p.limit);
    if (page) {
      noteWindow(cacheOwner, page, null);
      return page;
    }
  }
  const exact = computeSuggestPage(snap, settings, p, cacheOwner);
  if (wp) noteWindow(cacheOwner, null, exact);
  return exact;
}

/**
 * Runs the general search somewhere else (the search threads) and answers its response JSON:
 * `(sp) => executor.run(index, snap, settings, sp)` fits.
 */
export type RunSearch = (params: SearchParams) => Promise<{ json: string }>;

/**
 * A suggest answer ready to send: the frozen page and its JSON, serialised once (a cache hit
 * then costs no re-serialisation of the results).
 */
export interface SuggestAnswer {
  readonly page: SuggestPage;
  /** `"suggests":…,"totalResults":…,"totalResultsPerContentGroup":…` (no braces). */
  readonly json: string;
}

/** {@link SuggestAnswer} of a page. */
export function answerOf(page: SuggestPage): SuggestAnswer {
  const json = JSON.stringify({
    suggests: page.suggests,
    totalResults: page.totalResults,
    totalResultsPerContentGroup: page.totalResultsPerContentGroup,
  }).slice(1, -1);
  return { page, json };
}

/**
 * The `GET /sites/suggest` response body as JSON text: the same keys, in the same order, as
 * `JSON.stringify({status, query, suggests, totalResults, totalResultsPerContentGroup,
 * querySuggestions, redirect?})`. With `html` (`highlightQueryTerms=true`) the echoed query and
 * the query suggestions are HTML-escaped like the rest of the answer (the page already is).
 */
export function suggestBody(query: string, answer: SuggestAnswer, querySuggestions: ReadonlyArray<{ query: string }>, html = false): string {
  const redirect = answer.page.redirect ? `,"redirect":${JSON.stringify(answer.page.redirect)}` : '';
  const q = html ? escapeHtml(query) : query;
  const qs = html ? querySuggestions.map((s) => ({ query: escapeHtml(s.query) })) : querySuggestions;
  return `{"status":"success","query":${JSON.stringify(q)},${answer.json},"querySuggestions":${JSON.stringify(qs)}${redirect}}`;
}

/** Counters of one {@link SuggestCache} (tests, benchmark). */
export interface SuggestCacheStats {
  hits: number;
  misses: number;
  shared: number;
  size: number;
  /** Estimated memory of the entries (UTF-16 strings, and the frozen objects about as much). */
  bytes: number;
}

/**
 * An LRU of suggest answers shared by all projects (one entry and byte budget, so many projects
 * cannot multiply the memory). Main thread only; a `Map` in recency order (a hit re-inserts
 * the entry under its stored key).
 */
export class SuggestCache {
  /** Answers of a project's older generations leave at once (as in the search answer cache). */
  private readonly answers: AnswerStore<SuggestAnswer>;
  private readonly inflight = new Map<string, Promise<SuggestAnswer>>();
  hits = 0;
  misses = 0;
  /** Misses answered by a search another request had already started ({@link getAsync}). */
  shared = 0;

  /**
   * @param maxEntries at most this many answers (≈ 0.5–3 KB each); 0 disables the cache.
   * @param maxBytes and at most this much estimated memory (answers with content snippets and
   *   many content groups are larger), default 32 MiB.
   */
  constructor(
    readonly maxEntries = 8192,
    readonly maxBytes = 32 * 1024 * 1024,
  ) {
    this.answers = new AnswerStore<SuggestAnswer>(maxBytes, maxBytes, maxEntries);
  }

  /**
   * The suggest answer for `p` over the pinned `snap`: from the cache when the same project
   * index, generation, settings object and parameters were answered before, else computed by
   * {@link computeSuggestPage} and remembered.
   */
  get(snap: IndexSnapshot, settings: Settings, p: SuggestParams, cacheOwner: object): SuggestAnswer {
    if (this.maxEntries <= 0) return answerOf(computeSuggestPageFast(snap, settings, p, cacheOwner));
    const key = this.keyOf(snap, settings, p, cacheOwner);
    const cached = this.lookup(key);
    if (cached) return cached;
    this.misses++;
    return this.store(key, answerOf(computeSuggestPageFast(snap, settings, p, cacheOwner)), cacheOwner, snap.generation);
  }

  /**
   * Like {@link get}, but a miss runs the search through `run` (the search threads), so a
   * search that misses never blocks the main thread, which meanwhile keeps answering hits.
   * Concurrent misses of one key share one search. `snap` must stay pinned until this settles.
   */
  async getAsync(snap: IndexSnapshot, settings: Settings, p: SuggestParams, cacheOwner: object, run: RunSearch): Promise<SuggestAnswer> {
    const compute = async (): Promise<SuggestAnswer> => {
      // A window first when it is likely exact (one search), else or then "limit per group".
      const wp = windowFor(cacheOwner, settings, p);
      if (wp) {
        const page = pageFromWindow(JSON.parse((await run(wp)).json) as SearchResponse, p.limit);
        if (page) {
          noteWindow(cacheOwner, page, null);
          return answerOf(page);
        }
      }
      const exact = pageOf(JSON.parse((await run(suggestSearchParams(settings, p))).json) as SearchResponse);
      if (wp) noteWindow(cacheOwner, null, exact);
      return answerOf(exact);
    };
    if (this.maxEntries <= 0) return compute();
    const key = this.keyOf(snap, settings, p, cacheOwner);
    const cached = this.lookup(key);
    if (cached) return cached;
    const pending = this.inflight.get(key);
    if (pending) {
      this.shared++;
      return pending;
    }
    this.misses++;
    const promise = compute();
    this.inflight.set(key, promise);
    try {
      return this.store(key, await promise, cacheOwner, snap.generation);
    } finally {
      this.inflight.delete(key);
    }
  }

  private lookup(key: string): SuggestAnswer | undefined {
    const cached = this.answers.get(key);
    if (cached) this.hits++;
    return cached;
  }

  private store(key: string, answer: SuggestAnswer, cacheOwner: object, generation: number): SuggestAnswer {
    // UTF-16 key and JSON, the frozen objects about as much again as the JSON, bookkeeping.
    this.answers.put(key, answer, 2 * key.length + 4 * answer.json.length + 256, objectId(cacheOwner), generation);
    return answer;
  }

  /** Drops every entry (tests; not needed for correctness: keys carry the generation). */
  clear(): void {
    this.answers.clear();
  }

  stats(): SuggestCacheStats {
    return { hits: this.hits, misses: this.misses, shared: this.shared, size: this.answers.size, bytes: this.answers.bytes };
  }

  private keyOf(snap: IndexSnapshot, settings: Settings, p: SuggestParams, cacheOwner: object): string {
    // Everything the answer depends on. The raw query, not a normalised form: parsing looks at
    // quotes, minus signs and a trailing space (which ends the prefix word).
    return JSON.stringify([
      objectId(cacheOwner),
      snap.generation,
      objectId(settings),
      p.query,
      p.limit,
      p.groupResults,
      p.includeContent,
      p.highlightQueryTerms,
      p.filters,
      p.includeContentGroups,
      p.excludeContentGroups,
    ]);
  }
}

/** A suggest request: the page's parameters and how many query suggestions to add (0–10). */
export interface SuggestRequest extends SuggestParams {
  maxQuerySuggestions: number;
}

/** What the suggest service reads besides {@link SearchSources}. */
export interface SuggestSources extends SearchSources {
  /**
   * Popular logged queries that start like `query`, at most `max`, each searched at least
   * `minSearches` times (src/analytics: `QueryLogService.querySuggestions`).
   */
  querySuggestions(siteId: string, query: string, opts: { max: number; minSearches: number }): ReadonlyArray<{ query: string }>;
}

/**
 * Answers suggest requests of every project, behind one {@link SuggestCache} (all projects
 * share its budget). Main thread.
 *
 * @example
 * const suggest = new SuggestService({ projects, indexes, executor, querySuggestions });
 * ctx.type = 'application/json';
 * ctx.body = await suggest.run('default', { ...params, maxQuerySuggestions: 3 });
 */
export class SuggestService {
  /** @param cache the answer cache (tests pass a small or disabled one). */
  constructor(
    private readonly sources: SuggestSources,
    readonly cache = new SuggestCache(),
  ) {}

  /**
   * The `GET /sites/suggest` response body (JSON text) for `req` over the project's current
   * index generation: the page of results from the cache, or searched on the executor and
   * cached (concurrent misses of one key share one search), plus the query suggestions of the
   * moment. Rejects like `SearchService.run` (src/search/service.ts).
   */
  run(siteId: string, req: SuggestRequest): Promise<string> {
    return pinned(this.sources, siteId, async (index, snap, settings) => {
      warmerFor(this.sources).searched(siteId, index, snap.generation);
      const answer = await this.cache.getAsync(snap, settings, req, index, async (sp) => this.sources.executor.run(index, snap, settings, await withSemantic(this.sources, siteId, sp)));
      const qs = req.maxQuerySuggestions > 0 ? this.sources.querySuggestions(siteId, req.query, { max: req.maxQuerySuggestions, minSearches: settings.suggest.minSearches }) : [];
      return suggestBody(req.query, answer, qs, req.highlightQueryTerms);
    });
  }
}

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}
