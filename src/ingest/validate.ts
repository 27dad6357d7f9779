/**
 * Validation of pushed page documents (seed 2.1–2.3, SPEC §4) into {@link PageDoc}s.
 *
 * Pure functions, main thread, no I/O. Every problem is reported with the field path that
 * caused it (`title`, `dataPoints[2].value`, `filters[0].key`, …); a batch collects the
 * problems of every entry before failing so that a client can fix them all at once.
 *
 * Decisions where the seed is silent (also written in docs/INGEST.md):
 * - `url`: an absolute `http:` or `https:` URL of at most 2048 characters. It is stored in the
 *   shared identity form of `src/core/url.ts` (`normalizeUrl`, the crawler's too): lower-case scheme
 *   and host, default port and fragment dropped, percent-escapes normalised, query order kept.
 * - `title` and `content` are required strings; either may be empty (PDFs often have no title),
 *   but not both, since such an entry could never be found.
 * - `appendPageContent`, `contentGroup`, `imageUrl` are listed as required by the seed, but
 *   existing clients omit them: missing or `null` means `false`, `''` (no group) and `null`.
 *   When present they must have the right type.
 * - `null` for any optional field means "absent".
 * - `imageUrl`: an absolute http(s) URL or a relative reference, served percent-encoded where it
 *   could end an HTML attribute (`safeImageUrl`, src/core/url.ts); any other scheme (`javascript:`,
 *   `data:`) is left out with a warning and the page is indexed without an image.
 * - Unknown fields (of the document, a data point or a filter value) are ignored with a warning
 *   naming them in the answer: clients of the hosted API send fields this API does not know,
 *   and one such field must not refuse the whole batch; the warning still shows a misspelt
 *   `keyword`. Accepted extensions: `headings` (a string or an array of strings; a string is
 *   split on new lines and on ` | `) and `description`.
 * - `dataPoints[].value`: a string; numbers and booleans are coerced to their string form
 *   (clients send prices as numbers). `show` defaults to `true`.
 * - `language`: an ISO 639-1 code, a BCP 47 tag whose primary subtag is one (`en-GB` → `en`),
 *   or an English language name (`German` → `de`), case-insensitive.
 * - `filters`: a filter id defined in the project settings; its `value` must match the
 *   definition's type (range → finite number, multiple → array of strings). An undefined id is
 *   a 400 unless `ignoreUndefinedFilters`, which drops it; a value of the wrong type is always a
 *   400. One value per filter id per document.
 */
import {
  AppError, type EntryError, DOCUMENT_TYPES, type DocSource, type DocumentType,
  type FilterValue, type PageDoc, type Settings, normalizeUrl, quote, safeImageUrl, typeName,
} from '../core/index.js';
import { ISO_639_1 } from '../text/index.js';
import { DataPointInput, FilterValueInput, MAX_BATCH, MAX_URL_LENGTH, PAGE_FIELDS, pageDocument, type PageDocumentInput } from './schema.js';

const DATA_POINT_FIELDS: ReadonlySet<string> = new Set(Object.keys(DataPointInput.properties));
const FILTER_VALUE_FIELDS: ReadonlySet<string> = new Set(Object.keys(FilterValueInput.properties));

export { MAX_BATCH, MAX_URL_LENGTH };

/** What validation needs to know about the project and the request. */
export interface ValidateContext {
  /** The project's settings; only `filters` is read. */
  settings: Pick<Settings, 'filters'>;
  /** Drop filter values whose id is not defined in the settings instead of rejecting them. */
  ignoreUndefinedFilters: boolean;
  /** Source recorded on the resulting documents (`api` for JSON pushes). */
  defaultSource: DocSource;
  /**
   * Receives what validation left out of accepted documents (unknown fields, an unsafe
   * `imageUrl`), one entry per problem with the entry's position; the route answers them in
   * `warnings`.
   */
  warnings?: EntryWarning[];
}

/** Something left out of an accepted document: `{index, field, message}` like a rejection's `errors`. */
export type EntryWarning = EntryError;

/**
 * Most warnings one request answers; one more entry (`field` "body") counts the rest, so a body
 * of many unknown keys cannot make a larger answer.
 */
export const MAX_WARNINGS = 100;

/** Adds `list` to `ctx.warnings` up to {@link MAX_WARNINGS}, then one entry counting the rest. */
function report(ctx: ValidateContext, list: EntryWarning[], omitted: number): void {
  if (!ctx.warnings) return;
  const room = Math.max(0, MAX_WARNINGS - ctx.warnings.length);
  ctx.warnings.push(...list.slice(0, room));
  const rest = Math.max(0, list.length - room) + omitted;
  if (rest > 0) {
    // At the entry of the last warning listed (where the unlisted ones start or continue).
    const at = list[Math.min(room, list.length) - 1]?.index ?? 0;
    ctx.warnings.push({ index: at, field: 'body', message: `${rest} more warning${rest > 1 ? 's' : ''} not listed` });
  }
}


const LANGUAGE_BY_NAME: ReadonlyMap<string, string> = (() => {
  const byName = new Map<string, string>();
  for (const [code, names] of ISO_639_1) {
    for (const name of names) {
      const key = name.toLowerCase();
      // The first code listed for an ambiguous name wins ("Ndebele"): deterministic, and
      // clients needing the other one can send the code.
      if (!byName.has(key)) byName.set(key, code);
    }
  }
  return byName;
})();
const LANGUAGE_CODES: ReadonlySet<string> = new Set(ISO_639_1.map(([code]) => code));

/**
 * Normalises a language given as an ISO 639-1 code, a BCP 47 tag or an English name to its
 * lower-case ISO 639-1 code; `undefined` when it is none of them.
 */
export function normalizeLanguage(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  if (LANGUAGE_CODES.has(v)) return v;
  const primary = /^([a-z]{2})[-_][a-z0-9-_]+$/.exec(v);
  if (primary && LANGUAGE_CODES.has(primary[1]!)) return primary[1];
  return LANGUAGE_BY_NAME.get(v);
}

/**
 * Parses and canonicalises a page URL (absolute http/https, ≤ {@link MAX_URL_LENGTH}); returns
 * the problem as a sentence instead of the URL when it is not acceptable. Shared with the
 * removal route so that `DELETE ?url=` finds what `pageJson` stored.
 */
export function canonicalPageUrl(raw: string): { url: string } | { problem: string } {
  if (raw.length === 0) return { problem: 'must be a non-empty absolute http(s) URL' };
  if (raw.length > MAX_URL_LENGTH) return { problem: `must be at most ${MAX_URL_LENGTH} characters (got ${raw.length})` };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { problem: `must be an absolute http(s) URL such as https://example.com/page (got ${quote(raw)})` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { problem: `must use http or https (got ${quote(parsed.protocol.replace(/:$/, ''))})` };
  }
  if (!parsed.hostname) return { problem: `must include a host (got ${quote(raw)})` };
  // Credentials in a page URL would be shown to every visitor in search results.
  if (parsed.username !== '' || parsed.password !== '') return { problem: 'must not contain a user name or password' };
  // One identity for JSON and crawled pages (src/core/url.ts): never null for a parsed http(s) URL.
  const url = normalizeUrl(parsed.href)!;
  if (url.length > MAX_URL_LENGTH) return { problem: `must be at most ${MAX_URL_LENGTH} characters once normalised` };
  return { url };
}

/** Collects the problems of one entry; `prefix` is the path of the entry's fields. */
class Problems {
  readonly list: Array<{ field: string; message: string }> = [];
  /** Left out of the document, which is still accepted (the first {@link MAX_WARNINGS}). */
  readonly warnings: Array<{ field: string; message: string }> = [];
  /** Warnings beyond those. */
  omitted = 0;
  /** Records a problem; a field already named keeps its first problem. */
  add(field: string, message: string): void {
    if (this.list.some((p) => p.field === field)) return;
    this.list.push({ field, message });
  }
  warn(field: string, message: string): void {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push({ field, message });
    else this.omitted++;
  }
}

/**
 * Validates one page document (seed 2.1) and returns it as a {@link PageDoc} with defaults
 * filled in (status 200, source from `ctx`). Throws `invalid_document` (400) naming the first
 * bad field, with every problem in `errors` (index 0).
 */
export function validatePage(input: unknown, ctx: ValidateContext): PageDoc {
  const problems = new Problems();
  const doc = checkPage(input, ctx, problems);
  if (doc === undefined || problems.list.length > 0) {
    throw invalidDocuments(problems.list.map((p) => ({ index: 0, ...p })), false);
  }
  report(ctx, problems.warnings.map((w) => ({ index: 0, ...w })), problems.omitted);
  return doc;
}

/**
 * Validates a batch (seed 4.3): an array of 1–{@link MAX_BATCH} page documents, all or nothing.
 * Returns the documents in input order with duplicate URLs collapsed (the last occurrence wins,
 * at the position of that last occurrence). Throws `batch_too_large` for more than 100 entries,
 * `invalid_document` for anything else, with per-entry `errors: [{index, field, message}]`.
 */
export function validateBatch(input: unknown, ctx: ValidateContext): PageDoc[] {
  if (!Array.isArray(input)) {
    throw new AppError('invalid_document', `The body must be a JSON array of 1 to ${MAX_BATCH} page documents (got ${typeName(input)}).`, 'body');
  }
  if (input.length === 0) {
    throw new AppError('invalid_document', `The batch is empty: send 1 to ${MAX_BATCH} page documents.`, 'body');
  }
  if (input.length > MAX_BATCH) {
    throw new AppError('batch_too_large', `A batch holds at most ${MAX_BATCH} page documents (got ${input.length}); split it into several requests.`, 'body');
  }
  const errors: EntryError[] = [];
  const warnings: EntryWarning[] = [];
  let omitted = 0;
  const docs: PageDoc[] = [];
  input.forEach((entry, index) => {
    const problems = new Problems();
    const doc = checkPage(entry, ctx, problems);
    for (const p of problems.list) errors.push({ index, ...p });
    for (const w of problems.warnings) {
      if (warnings.length < MAX_WARNINGS) warnings.push({ index, ...w });
      else omitted++;
    }
    omitted += problems.omitted;
    if (doc && problems.list.length === 0) docs.push(doc);
  });
  if (errors.length > 0) throw invalidDocuments(errors, true);
  report(ctx, warnings, omitted);
  return lastWins(docs);
}

/** Keeps the last document of each URL, ordered by the position of that last occurrence. */
function lastWins(docs: PageDoc[]): PageDoc[] {
  const lastIndex = new Map<string, number>();
  docs.forEach((d, i) => lastIndex.set(d.url, i));
  if (lastIndex.size === docs.length) return docs;
  return docs.filter((d, i) => lastIndex.get(d.url) === i);
}

function invalidDocuments(errors: EntryError[], batch: boolean): AppError {
  const first = errors[0]!;
  const where = batch ? `entry ${first.index}, ` : '';
  const more = errors.length > 1 ? ` (${errors.length - 1} more problem${errors.length > 2 ? 's' : ''} in "errors")` : '';
  const nothing = batch ? ' Nothing was indexed.' : '';
  return new AppError('invalid_document', `Invalid page document: ${where}${first.field} ${first.message}.${more}${nothing}`, first.field, errors);
}

function checkPage(input: unknown, ctx: ValidateContext, problems: Problems): PageDoc | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    problems.add('body', `must be a JSON object (a page document), got ${typeName(input)}`);
    return undefined;
  }
  const o = input as Record<string, unknown>;
  for (const key in o) {
    if (!PAGE_FIELDS.has(key)) problems.warn(key, 'is not a page document field; ignored');
  }
  for (const sub of ['dataPoints', 'filters'] as const) {
    const list = o[sub];
    if (!Array.isArray(list)) continue;
    const known = sub === 'dataPoints' ? DATA_POINT_FIELDS : FILTER_VALUE_FIELDS;
    list.forEach((x, i) => {
      if (x === null || typeof x !== 'object' || Array.isArray(x)) return;
      for (const k in x) if (!known.has(k)) problems.warn(`${sub}[${i}].${k}`, sub === 'dataPoints' ? 'is not a data point field (key, value, show); ignored' : 'is not a filter value field (key, value); ignored');
    });
  }
  // Types, lengths and ranges: the schema (src/ingest/schema.ts), one problem per field.
  if (!pageDocument.check(o)) {
    for (const p of pageDocument.problems()) problems.add(p.field || 'body', p.message);
  }
  const d = o as PageDocumentInput;

  // What the schema cannot say: canonical URL, document type in any case, language names,
  // filter ids of the settings, and "title and content not both empty".
  let url = '';
  if (typeof d.url === 'string') {
    const c = canonicalPageUrl(d.url.trim());
    if ('problem' in c) problems.add('url', c.problem);
    else url = c.url;
  }
  if (typeof d.title === 'string' && typeof d.content === 'string' && d.title.trim() === '' && d.content.trim() === '') {
    problems.add('content', 'and title are both empty: a page needs some text to be found');
  }

  let documentType: DocumentType = 'HTML';
  if (typeof d.documentType === 'string') {
    const t = d.documentType.trim().toUpperCase();
    if ((DOCUMENT_TYPES as readonly string[]).includes(t)) documentType = t as DocumentType;
    else problems.add('documentType', `must be one of ${DOCUMENT_TYPES.join(', ')} (got ${quote(d.documentType)})`);
  }

  let imageUrl: string | null = null;
  if (typeof d.imageUrl === 'string' && d.imageUrl.trim() !== '' && d.imageUrl.length <= MAX_URL_LENGTH) {
    // Relative references are kept (the result page resolves them); other schemes
    // (`javascript:`, `data:`) would run or embed anything where a client shows the image.
    imageUrl = safeImageUrl(d.imageUrl);
    if (imageUrl === null) problems.warn('imageUrl', `is not an http(s) or relative URL (got ${quote(d.imageUrl)}): the page is indexed without an image`);
  }

  let language: string | null = null;
  if (typeof d.language === 'string') {
    const code = normalizeLanguage(d.language);
    if (code === undefined) problems.add('language', `must be an ISO 639-1 code such as "en" or an English language name such as "German" (got ${quote(d.language)})`);
    else language = code;
  }

  const filters = checkFilters(d.filters, ctx, problems);

  if (problems.list.length > 0) return undefined;
  const doc: PageDoc = {
    url,
    title: d.title,
    content: d.content,
    documentType,
    contentGroup: d.contentGroup?.trim() ?? '',
    imageUrl,
    dataPoints: d.dataPoints ? d.dataPoints.map((dp) => ({ key: dp.key.trim(), value: typeof dp.value === 'string' ? dp.value : String(dp.value), show: dp.show ?? true })) : [],
    filters,
    boost: d.boost ?? 1,
    keywords: d.keywords ?? [],
    language,
    headings: d.headings == null ? [] : typeof d.headings === 'string' ? splitHeadings(d.headings) : d.headings.map((h) => h.trim()).filter((h) => h !== ''),
    source: ctx.defaultSource,
    status: 200,
  };
  if (d.description != null) doc.description = d.description;
  return doc;
}

/** Whether the client wants append mode for this (already valid) raw entry. */
export function wantsAppend(input: unknown): boolean {
  return typeof input === 'object' && input !== null && (input as Record<string, unknown>).appendPageContent === true;
}

/** Filter values against the project's filter definitions (their shape is the schema's). */
function checkFilters(value: PageDocumentInput['filters'], ctx: ValidateContext, problems: Problems): FilterValue[] {
  if (!Array.isArray(value)) return [];
  const defined = new Map(ctx.settings.filters.map((f) => [f.id, f] as const));
  const seen = new Set<string>();
  const out: FilterValue[] = [];
  value.forEach((f, i) => {
    const at = `filters[${i}]`;
    if (f === null || typeof f !== 'object' || typeof f.key !== 'string') return;
    const def = defined.get(f.key);
    if (!def) {
      if (ctx.ignoreUndefinedFilters) return;
      const known = ctx.settings.filters.map((d) => d.id);
      problems.add(
        `${at}.key`,
        `${quote(f.key)} is not a filter defined in the project settings (${known.length ? `defined: ${known.join(', ')}` : 'none are defined'}); define it first or pass ignoreUndefinedFilters=true to drop it`,
      );
      return;
    }
    if (seen.has(def.id)) {
      problems.add(`${at}.key`, `${quote(def.id)} is given more than once in this document`);
      return;
    }
    seen.add(def.id);
    if (def.type === 'range') {
      if (typeof f.value !== 'number' || !Number.isFinite(f.value)) {
        problems.add(`${at}.value`, `must be a number: ${def.id} (${def.name}) is a range filter, got ${typeName(f.value)}`);
        return;
      }
      out.push({ key: def.id, value: f.value });
    } else {
      if (!Array.isArray(f.value) || !f.value.every((s) => typeof s === 'string')) {
        problems.add(`${at}.value`, `must be an array of strings: ${def.id} (${def.name}) is a multiple-choice filter, got ${typeName(f.value)}`);
        return;
      }
      out.push({ key: def.id, value: [...new Set(f.value)] });
    }
  });
  return out;
}

function splitHeadings(s: string): string[] {
  return s
    .split(/\r?\n| \| /)
    .map((h) => h.trim())
    .filter((h) => h !== '');
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}
