/**
 * Domain types shared by every folder. Pure declarations: no runtime code except constants.
 */
import type { HttpEmbedderSettings } from './settings.js';

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

// The settings types are derived from their schemas in settings.ts.

/**
 * The embedder a project's segments are built with, as the index and the pool threads see it.
 * `fp` (fingerprint) names the vector space: a segment's vectors are used only by queries
 * embedded with the same fingerprint.
 */
export type EmbedderSpec =
  | { kind: 'builtin'; fp: string; table: string }
  | ({ kind: 'http'; fp: string } & HttpEmbedderSettings);
