/**
 * The page document (seed 2.1, docs/API.md#page-document) as one schema: the validator of
 * `POST /sites/pageJson|pagesJson` (src/ingest/validate.ts), the `PageDocumentInput` type and
 * the OpenAPI document's request body. What a schema cannot say stays code in validate.ts:
 * URL canonicalisation, language names, the filter ids of the project's settings, "title and
 * content not both empty", unsafe image URLs (a warning, not a rejection).
 *
 * `null` for an optional field means absent. Unknown fields are allowed here and reported as
 * warnings by validate.ts (clients of the hosted API send fields this API does not know).
 */
import { Type, type Static } from '@sinclair/typebox';
import { compileSchema, Nullable } from '../core/index.js';

/** Largest number of entries in one `pagesJson` batch (seed 8). */
export const MAX_BATCH = 100;
/** Longest accepted URL, in UTF-16 code units. */
export const MAX_URL_LENGTH = 2048;

/** One data point of a page: `value` may be sent as a number or boolean, stored as its string. */
export const DataPointInput = Type.Object(
  {
    key: Type.String({ minLength: 1, pattern: '\\S', errorMessage: 'must be a non-empty string' }),
    value: Type.Unsafe<string | number | boolean>({ type: ['string', 'number', 'boolean'], errorMessage: 'must be a string (numbers and booleans are converted)' }),
    show: Type.Optional(Nullable(Type.Boolean({ default: true }))),
  },
  { description: 'A data point; unknown fields are ignored with a warning.' },
);

/** One filter value: `value` is a number for a range filter, an array of strings for a multiple-choice one. */
export const FilterValueInput = Type.Object({
  key: Type.String({ description: 'A filter id defined in the project settings, such as "fid#1".', errorMessage: 'must be a string filter id such as "fid#1"' }),
  value: Type.Union([Type.Number(), Type.Array(Type.String())], { description: 'A number (range filter) or an array of strings (multiple-choice filter).', errorMessage: 'must be a number (range filter) or an array of strings (multiple-choice filter)' }),
});

/** A page document as a client sends it. */
export const PageDocumentInput = Type.Object(
  {
    url: Type.String({ maxLength: MAX_URL_LENGTH, description: 'Absolute http(s) URL; stored in canonical form.' }),
    title: Type.String({ description: 'May be empty, but not together with content.' }),
    content: Type.String(),
    documentType: Type.Optional(Nullable(Type.String({ description: 'HTML (default), PDF, XLS, DOC, PPT, ODP, ODS, ODT, TXT or YOUTUBE_VIDEO, any case.' }))),
    appendPageContent: Type.Optional(Nullable(Type.Boolean({ default: false }))),
    contentGroup: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
    imageUrl: Type.Optional(Nullable(Type.String({ maxLength: MAX_URL_LENGTH, description: 'An http(s) URL or a relative reference; other schemes are left out with a warning.' }))),
    dataPoints: Type.Optional(Nullable(Type.Array(DataPointInput))),
    filters: Type.Optional(Nullable(Type.Array(FilterValueInput))),
    boost: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 100, default: 1 }))),
    keywords: Type.Optional(Nullable(Type.Array(Type.String()))),
    language: Type.Optional(Nullable(Type.String({ description: 'ISO 639-1 code, BCP 47 tag or English language name.' }))),
    headings: Type.Optional(Nullable(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'A string is split on new lines and on " | ".' }))),
    description: Type.Optional(Nullable(Type.String())),
  },
  { description: 'A page document; unknown fields are ignored with a warning naming them.' },
);
export type PageDocumentInput = Static<typeof PageDocumentInput>;

/** A batch: 1–100 page documents, all or nothing. */
export const PageBatchInput = Type.Array(PageDocumentInput, { minItems: 1, maxItems: MAX_BATCH });

/** Names of the page document's fields (anything else is warned about and ignored). */
export const PAGE_FIELDS: ReadonlySet<string> = new Set(Object.keys(PageDocumentInput.properties));

/** The compiled page validator: every problem of an entry at once (compiled at module load). */
export const pageDocument = compileSchema(PageDocumentInput, { allErrors: true });
