/**
 * Domain types shared by every folder. Pure declarations: no runtime code except constants.
 */

export const DOCUMENT_TYPES = ['HTML', 'PDF', 'XLS', 'DOC', 'PPT', 'ODP', 'ODS', 'ODT', 'TXT', 'YOUTUBE_VIDEO'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** Seed 2.2. */
export interface DataPoint {
  key: string;
  value: string;
  show: boolean;
}

/** Seed 2.3: a number for a range filter, an array of strings for a multiple-choice filter. */
export interface FilterValue {
  key: string;
  value: number | string[];
}

export type DocSource = 'api' | 'crawler' | 'sitemap';

/**
 * A validated page as the index stores it, whatever its source (JSON push, crawl, sitemap).
 * `status` is the index status of SPEC §4: only `200` entries are searchable; other entries
 * (3xx/4xx/5xx/8xx) exist only for `indexedContent`/`indexStatus` and replace any searchable
 * entry of the same URL (the URL is the identity).
 */
export interface PageDoc {
  url: string;
  title: string;
  content: string;
  documentType: DocumentType;
  /** '' when the page belongs to no group (reported as `_`). */
  contentGroup: string;
  imageUrl: string | null;
  dataPoints: DataPoint[];
  filters: FilterValue[];
  /** (0, 100], multiplies the relevance score. */
  boost: number;
  keywords: string[];
  /** ISO 639-1 code, or null for "project default". */
  language: string | null;
  /** Extension: section headings (crawler output, bulk import); searchable with heading weight. */
  headings: string[];
  /** Extension: meta description (crawler). */
  description?: string;
  source: DocSource;
  status: number;
  /** Human-readable outcome for non-200 statuses. */
  message?: string;
}

/** One write-log / segment operation. `seq` (the opstamp) is assigned by the index, monotonic per project. */
export type IndexOp =
  | { op: 'upsert'; seq: number; at: number; doc: PageDoc }
  | { op: 'delete'; seq: number; at: number; url: string };

// ---------------------------------------------------------------- settings (SPEC §7)

export interface SynonymGroup {
  terms: string[];
}
export interface SynonymMapping {
  from: string;
  to: string[];
}
export type ResultMapping = {
  trigger: { type: 'equals' | 'contains' | 'regex'; value: string };
  action:
    | { type: 'pin'; urls: string[] }
    | { type: 'hide'; urls: string[] }
    | { type: 'custom'; html: string; position: number; contentGroup?: string }
    | { type: 'redirect'; url: string };
};

export interface FieldWeights {
  title: number;
  keywords: number;
  headings: number;
  url: number;
  content: number;
}

export interface SearchSettings {
  language: string;
  stopWords: string[] | null;
  /** Words added to the built-in stop words of a language (ISO 639-1 code → words). */
  stopWordAdditions?: Record<string, string[]>;
  typoTolerance: 'default' | 'strict' | 'off';
  fieldWeights: FieldWeights;
  synonyms: Array<SynonymGroup | SynonymMapping>;
  resultMappings: ResultMapping[];
  /** Absent in settings objects built by hand (tests): semantic search off. */
  semantic?: SemanticSettings;
}

/**
 * Semantic search of a project (`search.semantic`): which embedder turns pages and queries into
 * vectors, the default blend of vector and lexical ranking, and the similarity a vector
 * neighbour needs to count as a result.
 */
export interface SemanticSettings {
  /** `builtin` (word vectors shipped with sitesift), `http` (a /v1/embeddings service) or `none`. */
  embedder: 'builtin' | 'http' | 'none';
  /** Default `semanticRatio` of search and suggest (0: lexical only, 1: vectors only). */
  semanticRatio: number;
  /** Least cosine similarity of a vector neighbour; null: the embedder's measured default. */
  threshold: number | null;
  /** The HTTP embedder (used when `embedder` is `http`). */
  http: HttpEmbedderSettings;
}

/** An embedding service speaking the `/v1/embeddings` request shape (OpenAI, Ollama, vLLM, TEI). */
export interface HttpEmbedderSettings {
  /** Full URL of the embeddings endpoint, e.g. `http://127.0.0.1:11434/v1/embeddings`. */
  url: string;
  model: string;
  /** Length of the vectors the model returns. */
  dimensions: number;
  /** Sent as `Authorization: Bearer …`; answered masked by the settings routes. */
  apiKey: string | null;
  /** Texts per request. */
  batchSize: number;
  /** Per request, ms. */
  timeoutMs: number;
  /** Further attempts after a failed request (with backoff). */
  retries: number;
}

/**
 * The embedder a project's segments are built with, as the index and the pool threads see it.
 * `fp` (fingerprint) names the vector space: a segment's vectors are used only by queries
 * embedded with the same fingerprint.
 */
export type EmbedderSpec =
  | { kind: 'builtin'; fp: string; table: string }
  | ({ kind: 'http'; fp: string } & HttpEmbedderSettings);

export interface CrawlerSettings {
  rootUrls: string[];
  sitemapUrls: string[];
  sitemapSchedule: string;
  recrawlSchedule: string | null;
  allowedHosts: string[] | null;
  blacklist: string[];
  whitelist: string[];
  noIndex: string[];
  respectRobotsTxt: boolean;
  respectNoindex: boolean;
  respectCanonical: boolean;
  maxDepth: number;
  maxPages: number;
  requestDelayMs: number;
  concurrencyPerHost: number;
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  removeMissing: boolean;
}

export interface ExtractionRule {
  contentGroup?: string;
  title?: string;
  contentInclude?: string[];
  contentExclude?: string[];
  image?: string;
}

export interface DataPointRule {
  key: string;
  selector?: string;
  meta?: string;
  jsonLd?: string;
  attribute?: string;
  type: 'text' | 'number' | 'date' | 'boolean';
  show: boolean;
  sortable: boolean;
  searchable: boolean;
}

export interface ResultGroupRule {
  name: string;
  urlPattern?: string;
  selector?: string;
}

export interface FilterDefinition {
  id: string; // fid#<n>
  name: string;
  type: 'range' | 'multiple';
  dataPoint?: string;
}

export interface SuggestSettings {
  minSearches: number;
  typoTolerance: 'default' | 'strict' | 'off';
}

export interface AnalyticsSettings {
  retentionDays: number;
}

/** The whole settings object of a project, every section filled with defaults. */
export interface Settings {
  crawler: CrawlerSettings;
  contentExtraction: ExtractionRule[];
  dataPoints: DataPointRule[];
  resultGroups: ResultGroupRule[];
  filters: FilterDefinition[];
  search: SearchSettings;
  suggest: SuggestSettings;
  analytics: AnalyticsSettings;
  updatedAt: string;
}
