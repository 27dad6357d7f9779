/**
 * Public surface of query handling: the search and suggest services routes call
 * (`SearchService.run`, `SuggestService.run`), the filter parser, the executor that runs
 * searches on search threads, the search thread's own state (workers/search.ts), and the
 * engine's entry points for tests and benchmarks (`search`, `runQuery`).
 */
export { parseFilters } from './filters.js';
export { SearchService, search } from './service.js';
export type { SearchOutcome, SearchParams, SearchSources } from './service.js';
export { SuggestCache, SuggestService, computeSuggestPage, computeSuggestPageFast } from './suggest.js';
export type { SuggestParams, SuggestRequest } from './suggest.js';
export { LocalSearchExecutor, createSearchExecutor } from './executor.js';
export type { SearchExecutor } from './executor.js';
export { IDLE_SNAPSHOT_MS, SearchThreadState } from './remote.js';
export type { SearchRequest } from './remote.js';
export { runQuery } from './engine.js';
export { warmerFor } from './warm.js';
export { QueryEmbedder, queryText, QUERY_VECTOR_CACHE } from './semantic.js';
export type { SemanticMeta } from './semantic.js';
export type { SemanticQuery } from './hybrid.js';
