/**
 * Public surface of `src/ingest`: how pages enter and leave the index by API — validation of
 * pushed page documents, the write/delete operations behind the documents routes, the index
 * reports, RE2 URL patterns, and the bulk import client used by `sitesift index`.
 */
export { validatePage, validateBatch, canonicalPageUrl, normalizeLanguage, wantsAppend, MAX_BATCH, MAX_URL_LENGTH } from './validate.js';
export type { ValidateContext, EntryWarning } from './validate.js';
export { PageDocumentInput, PageBatchInput, DataPointInput, FilterValueInput } from './schema.js';
export { indexPages, deleteByUrl, deleteByPattern, crawlerOf } from './documents.js';
export type { CrawlHooks, IndexPagesResult } from './documents.js';
export { compileUrlPattern, MAX_PATTERN_LENGTH } from './url-pattern.js';
export type { UrlMatcher } from './url-pattern.js';
export { indexStatus, indexedContent, parseStatusFilter, toIndexedPage } from './reports.js';
export type { ContentQuery, ContentPage, IndexedPage, IndexStatusReport } from './reports.js';
export { runImport, formatSummary, listInputFiles, readEntries, inputSize, withBaseUrl, ImportAborted } from './bulk-import.js';
export type { ImportOptions, ImportSummary, ImportEntry, Rejection } from './bulk-import.js';
