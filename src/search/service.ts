/**
 * The search service behind `GET /sites` (main thread): one call, {@link SearchService.run},
 * takes a project and validated parameters, pins the project's current index generation,
 * answers from the answer cache (src/search/cache.ts) or has the executor (search threads, or
 * this thread) compute the answer, and releases the pin. Routes validate parameters, call it
 * and shape the response; they never see a snapshot. The suggest service
 * (src/search/suggest.ts) pins the same way ({@link pinned}).
 *
 * The answer of one search over a pinned snapshot is computed by {@link search}
 * (src/search/results.ts), re-exported here with its parameter and response types.
 */
import type { IndexSnapshot, ProjectIndex } from '../index/index.js';
import type { EmbedderSpec, Settings } from '../core/index.js';
import { QueryEmbedder } from './semantic.js';
import { SearchCache } from './cache.js';
import { similarSemantic } from './similar.js';
import type { SearchExecutor, SearchOutcome } from './executor.js';
import type { SearchParams } from './results.js';
import { warmerFor } from './warm.js';

export { search, sortingOptions, type SearchParams, type SearchResponse, type SearchResult } from './results.js';
export type { SearchOutcome } from './executor.js';

/** What the search services read: projects' settings and indexes, and where searches run. */
export interface SearchSources {
  /** The project's current settings: one frozen object per version (src/projects). */
  projects: { getSettings(siteId: string): Settings };
  /**
   * The project's open index (src/index/registry.ts); `peek`: the index when it is open now,
   * without opening it or marking it used (new generations are warmed only where given:
   * src/search/warm.ts).
   */
  indexes: { get(siteId: string): Promise<ProjectIndex>; peek?(siteId: string): ProjectIndex | null };
  /** Runs a search over a pinned snapshot (src/search/executor.ts). */
  executor: SearchExecutor;
  /** The project's embedder (null or absent: lexical search only). */
  embedderOf?: (siteId: string) => EmbedderSpec | null;
  /** Embeds queries (one per server: its cache is shared by every project). */
  queryEmbedder?: QueryEmbedder;
}

/**
 * Runs `fn` with the project's settings, its open index and a pinned snapshot of the index's
 * current generation, and releases the pin when `fn` settles (resolved or rejected). The
 * settings are read when `pinned` is called, before anything is awaited: a route that
 * validated parameters against `getSettings(siteId)` and then calls a service in the same
 * turn gets those very settings.
 *
 * @example
 * const total = await pinned(sources, 'default', async (index, snap) => snap.totalDocs);
 */
export async function pinned<T>(sources: SearchSources, siteId: string, fn: (index: ProjectIndex, snap: IndexSnapshot, settings: Settings) => Promise<T>): Promise<T> {
  const settings = sources.projects.getSettings(siteId);
  const index = await sources.indexes.get(siteId);
  const snap = index.acquire();
  try {
    return await fn(index, snap, settings);
  } finally {
    snap.release();
  }
}

const fallbackEmbedders = new WeakMap<SearchSources, QueryEmbedder>();

/**
 * `params` with the semantic part of the query resolved for the project (search and suggest):
 * unchanged when the project has no embedder. Synchronous for the built-in embedder and cached
 * vectors.
 */
export function withSemantic(sources: SearchSources, siteId: string, params: SearchParams): SearchParams | Promise<SearchParams> {
  const spec = sources.embedderOf?.(siteId) ?? null;
  if (!spec) return params;
  let embedder = sources.queryEmbedder ?? fallbackEmbedders.get(sources);
  if (!embedder) fallbackEmbedders.set(sources, (embedder = new QueryEmbedder()));
  const settings = sources.projects.getSettings(siteId);
  const r = embedder.resolve(spec, settings.search.semantic, params.query, params.semanticRatio);
  const apply = (x: Awaited<typeof r>): SearchParams => (x.q ? { ...params, semantic: x.q, ...(x.error ? { semanticError: x.error } : {}) } : params);
  return r instanceof Promise ? r.then(apply) : apply(r);
}

/**
 * Answers searches of every project, behind one answer cache (all projects share its byte
 * budget). Main thread.
 *
 * @example
 * const search = new SearchService({ projects, indexes, executor }, 64 * 1024 * 1024);
 * const outcome = await search.run('default', params);
 * ctx.body = outcome.json; // the response body, serialised where the search ran
 */
export class SearchService {
  /** The answer cache (its counters for tests and diagnostics). */
  readonly cache: SearchCache;

  /** @param cacheBytes the answer cache's budget (SITESIFT_SEARCH_CACHE_MB); 0 disables it. */
  constructor(
    private readonly sources: SearchSources,
    cacheBytes: number,
  ) {
    this.cache = new SearchCache(cacheBytes);
  }

  /**
   * The answer to `params` over the project's current index generation: from the cache when
   * the same generation, settings and parameters were answered before, else computed by the
   * executor and cached. Rejects with what `getSettings` or `indexes.get` throw (an unknown
   * project) or with the executor's error (a bug: parameters are validated before).
   */
  run(siteId: string, params: SearchParams): Promise<SearchOutcome> {
    const withSemantic = this.semantic(siteId, params);
    const go = (p: SearchParams) =>
      pinned(this.sources, siteId, (index, snap, settings) => {
        warmerFor(this.sources).searched(siteId, index, snap.generation);
        return this.cache.get(index, snap, settings, p, () => this.sources.executor.run(index, snap, settings, p));
      });
    return withSemantic instanceof Promise ? withSemantic.then(go) : go(withSemantic);
  }

  /**
   * The pages nearest to the page `url` (`GET /sites/similar`, src/search/similar.ts), answered
   * like a search of `params` (filters, groups, paging, rendering, the answer cache); `query`
   * is not read. Rejects with 404 `not_found` (field `url`) when `url` is not a searchable page
   * of the current generation. A page without a vector, or a project without an embedder,
   * answers no results and says why in `semantic.error`.
   *
   * @example
   * const outcome = await search.similar('default', 'https://docs.test/rollback', { ...params, limit: 5 });
   */
  similar(siteId: string, url: string, params: SearchParams): Promise<SearchOutcome> {
    const settings = this.sources.projects.getSettings(siteId);
    const { semantic, error } = similarSemantic(this.sources.embedderOf?.(siteId) ?? null, settings.search.semantic);
    const p: SearchParams = { ...params, similarTo: url, semantic, ...(error ? { semanticError: error } : {}) };
    return pinned(this.sources, siteId, (index, snap, settings) => this.cache.get(index, snap, settings, p, () => this.sources.executor.run(index, snap, settings, p)));
  }

  /**
   * `params` with the semantic part resolved (the query vector, ratio, threshold). Synchronous
   * for the built-in embedder and cached vectors, so that the search pins in the caller's turn.
   */
  semantic(siteId: string, params: SearchParams): SearchParams | Promise<SearchParams> {
    return withSemantic(this.sources, siteId, params);
  }
}
