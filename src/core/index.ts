/**
 * The ground floor every other layer stands on: errors and their HTTP statuses, the logger,
 * the shared document and settings types, URL normalisation, the validated configuration, and
 * the worker-thread helpers (the Piscina pool and plain threads). Imports no other src folder.
 *
 * @example
 * import { AppError, createLogger, type Settings } from '../core/index.js';
 */
export { AppError, ERROR_STATUS, badParam } from './errors.js';
export type { EntryError, ErrorCode } from './errors.js';
export { DOCUMENT_TYPES } from './types.js';
export type { DataPoint, DocSource, DocumentType, EmbedderSpec, FilterValue, IndexOp, PageDoc } from './types.js';
export { DEFAULT_SEMANTIC_RATIO, SETTINGS_SECTION_SCHEMAS, SettingsSchema } from './settings.js';
export type {
  AnalyticsSettings, CrawlerSettings, DataPointRule, ExtractionRule, FieldWeights, FilterDefinition, HttpEmbedderSettings, ResultGroupRule,
  ResultMapping, SearchSettings, SemanticSettings, Settings, SuggestSettings, SynonymGroup, SynonymMapping,
} from './settings.js';
export { TASKS, WORKER_YOUNG_GENERATION_MB, createPool, runTask, startThread } from './pool.js';
export type { TaskName } from './pool.js';
export { ConfigError, DEFAULT_OPEN_PROJECTS, DEFAULT_SEARCH_MEMORY_MB, DEFAULT_SITEMAP_LIMITS, defaultConfig, describeSettings, loadConfig } from './config.js';
export type { Config } from './config.js';
export { DEFAULT_REDACT_PATHS, LOG_COMPONENTS, REDACTED, componentLogger, createLogger, runWithRequestId, serverDestination } from './log.js';
export type { LogComponent, LogSettings, Logger } from './log.js';
export { normalizeUrl, normalizeUrlObject } from './url.js';
export type { NormalizeOptions } from './url.js';
export { safeImageUrl } from './url.js';
export { workerExecArgv, workerFile } from './pool.js';
export { DEFAULT_MEMORY_MB, MemoryPlanError, PageCacheShare, planMemory, searchThreadHeapLimitMb, THREAD_BASE_MB, WORD_VECTORS_MB } from './memory.js';
export type { MemoryInputs, MemoryPlan, PragmaTarget, SearchThreadShare } from './memory.js';
export { ByKey, compileSchema, defineFormat, describeErrors, fieldPath, inputSchema, Nullable, quote, StringEnum, Tagged, typeName } from './schema.js';
export type { CompiledSchema, CompileOptions, FormatMessage, SchemaProblem } from './schema.js';
