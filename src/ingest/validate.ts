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
  AppError, type EntryError, DOCUMENT_TYPES, type DataPoint, type DocSource, type DocumentType,
  type FilterValue, type PageDoc, type Settings, normalizeUrl, safeImageUrl,
} from '../core/index.js';
import { ISO_639_1 } from '../text/index.js';

/** Largest number of entries in one `pagesJson` batch (seed 8). */
export const MAX_BATCH = 100;
/** Longest accepted URL, in UTF-16 code units. */
export const MAX_URL_LENGTH = 2048;

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

const KNOWN_FIELDS = new Set([
  'url',
  'documentType',
  'title',
  'content',
  'appendPageContent',
  'contentGroup',
  'imageUrl',
  'dataPoints',
  'filters',
  'boost',
  'keywords',
  'language',
  'headings',
  'description',
]);

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
  add(field: string, message: string): void {
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
  for (const key of Object.keys(o)) {
    if (!KNOWN_FIELDS.has(key)) {
      problems.warn(key, 'is not a page document field; ignored');
    }
  }

  // url
  let url = '';
  if (o.url === undefined || o.url === null) problems.add('url', 'is required');
  else if (typeof o.url !== 'string') problems.add('url', `must be a string, got ${typeName(o.url)}`);
  else {
    const c = canonicalPageUrl(o.url.trim());
    if ('problem' in c) problems.add('url', c.problem);
    else url = c.url;
  }

  const title = requiredString(o, 'title', problems);
  const content = requiredString(o, 'content', problems);
  if (title !== undefined && content !== undefined && title.trim() === '' && content.trim() === '') {
    problems.add('content', 'and title are both empty: a page needs some text to be found');
  }

  let documentType: DocumentType = 'HTML';
  if (present(o.documentType)) {
    if (typeof o.documentType !== 'string') problems.add('documentType', `must be a string, got ${typeName(o.documentType)}`);
    else {
      const t = o.documentType.trim().toUpperCase();
      if ((DOCUMENT_TYPES as readonly string[]).includes(t)) documentType = t as DocumentType;
      else problems.add('documentType', `must be one of ${DOCUMENT_TYPES.join(', ')} (got ${quote(o.documentType)})`);
    }
  }

  if (present(o.appendPageContent) && typeof o.appendPageContent !== 'boolean') {
    problems.add('appendPageContent', `must be true or false, got ${typeName(o.appendPageContent)}`);
  }

  let contentGroup = '';
  if (present(o.contentGroup)) {
    if (typeof o.contentGroup !== 'string') problems.add('contentGroup', `must be a string, got ${typeName(o.contentGroup)}`);
    else if (o.contentGroup.length > 256) problems.add('contentGroup', `must be at most 256 characters (got ${o.contentGroup.length})`);
    else contentGroup = o.contentGroup.trim();
  }

  let imageUrl: string | null = null;
  if (present(o.imageUrl)) {
    if (typeof o.imageUrl !== 'string') problems.add('imageUrl', `must be a string, got ${typeName(o.imageUrl)}`);
    else if (o.imageUrl.length > MAX_URL_LENGTH) problems.add('imageUrl', `must be at most ${MAX_URL_LENGTH} characters (got ${o.imageUrl.length})`);
    else if (o.imageUrl.trim() !== '') {
      // Relative references are kept (the result page resolves them); other schemes
      // (`javascript:`, `data:`) would run or embed anything where a client shows the image.
      imageUrl = safeImageUrl(o.imageUrl);
      if (imageUrl === null) problems.warn('imageUrl', `is not an http(s) or relative URL (got ${quote(o.imageUrl)}): the page is indexed without an image`);
    }
  }

  let boost = 1;
  if (present(o.boost)) {
    if (typeof o.boost !== 'number' || !Number.isFinite(o.boost)) problems.add('boost', `must be a number in (0, 100], got ${typeName(o.boost)}`);
    else if (!(o.boost > 0 && o.boost <= 100)) problems.add('boost', `must be greater than 0 and at most 100 (got ${o.boost})`);
    else boost = o.boost;
  }

  let language: string | null = null;
  if (present(o.language)) {
    if (typeof o.language !== 'string') problems.add('language', `must be a string, got ${typeName(o.language)}`);
    else {
      const code = normalizeLanguage(o.language);
      if (code === undefined) problems.add('language', `must be an ISO 639-1 code such as "en" or an English language name such as "German" (got ${quote(o.language)})`);
      else language = code;
    }
  }

  const keywords = stringArray(o, 'keywords', problems) ?? [];

  let headings: string[] = [];
  if (present(o.headings)) {
    if (typeof o.headings === 'string') headings = splitHeadings(o.headings);
    else headings = (stringArray(o, 'headings', problems) ?? []).map((h) => h.trim()).filter((h) => h !== '');
  }

  let description: string | undefined;
  if (present(o.description)) {
    if (typeof o.description !== 'string') problems.add('description', `must be a string, got ${typeName(o.description)}`);
    else description = o.description;
  }

  const dataPoints = checkDataPoints(o.dataPoints, problems);
  const filters = checkFilters(o.filters, ctx, problems);

  if (problems.list.length > 0) return undefined;
  const doc: PageDoc = {
    url,
    title: title!,
    content: content!,
    documentType,
    contentGroup,
    imageUrl,
    dataPoints,
    filters,
    boost,
    keywords,
    language,
    headings,
    source: ctx.defaultSource,
    status: 200,
  };
  if (description !== undefined) doc.description = description;
  return doc;
}

/** Whether the client wants append mode for this (already valid) raw entry. */
export function wantsAppend(input: unknown): boolean {
  return typeof input === 'object' && input !== null && (input as Record<string, unknown>).appendPageContent === true;
}

function checkDataPoints(value: unknown, problems: Problems): DataPoint[] {
  if (!present(value)) return [];
  if (!Array.isArray(value)) {
    problems.add('dataPoints', `must be an array of {key, value, show} objects, got ${typeName(value)}`);
    return [];
  }
  const out: DataPoint[] = [];
  value.forEach((dp, i) => {
    const at = `dataPoints[${i}]`;
    if (dp === null || typeof dp !== 'object' || Array.isArray(dp)) {
      problems.add(at, `must be an object {key, value, show}, got ${typeName(dp)}`);
      return;
    }
    const d = dp as Record<string, unknown>;
    for (const k of Object.keys(d)) {
      if (k !== 'key' && k !== 'value' && k !== 'show') problems.warn(`${at}.${k}`, 'is not a data point field (key, value, show); ignored');
    }
    let key = '';
    if (typeof d.key !== 'string' || d.key.trim() === '') problems.add(`${at}.key`, d.key === undefined ? 'is required' : `must be a non-empty string, got ${typeName(d.key)}`);
    else key = d.key.trim();
    let val = '';
    if (typeof d.value === 'string') val = d.value;
    else if ((typeof d.value === 'number' && Number.isFinite(d.value)) || typeof d.value === 'boolean') val = String(d.value);
    else problems.add(`${at}.value`, d.value === undefined ? 'is required' : `must be a string (numbers and booleans are converted), got ${typeName(d.value)}`);
    let show = true;
    if (present(d.show)) {
      if (typeof d.show !== 'boolean') problems.add(`${at}.show`, `must be true or false, got ${typeName(d.show)}`);
      else show = d.show;
    }
    out.push({ key, value: val, show });
  });
  return out;
}

function checkFilters(value: unknown, ctx: ValidateContext, problems: Problems): FilterValue[] {
  if (!present(value)) return [];
  if (!Array.isArray(value)) {
    problems.add('filters', `must be an array of {key, value} objects, got ${typeName(value)}`);
    return [];
  }
  const defined = new Map(ctx.settings.filters.map((f) => [f.id, f] as const));
  const seen = new Set<string>();
  const out: FilterValue[] = [];
  value.forEach((fv, i) => {
    const at = `filters[${i}]`;
    if (fv === null || typeof fv !== 'object' || Array.isArray(fv)) {
      problems.add(at, `must be an object {key, value}, got ${typeName(fv)}`);
      return;
    }
    const f = fv as Record<string, unknown>;
    for (const k of Object.keys(f)) {
      if (k !== 'key' && k !== 'value') problems.warn(`${at}.${k}`, 'is not a filter value field (key, value); ignored');
    }
    if (typeof f.key !== 'string') {
      problems.add(`${at}.key`, f.key === undefined ? 'is required (a filter id such as "fid#1")' : `must be a string filter id such as "fid#1", got ${typeName(f.key)}`);
      return;
    }
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
      out.push({ key: def.id, value: [...new Set(f.value as string[])] });
    }
  });
  return out;
}

function requiredString(o: Record<string, unknown>, field: string, problems: Problems): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) {
    problems.add(field, 'is required');
    return undefined;
  }
  if (typeof v !== 'string') {
    problems.add(field, `must be a string, got ${typeName(v)}`);
    return undefined;
  }
  return v;
}

function stringArray(o: Record<string, unknown>, field: string, problems: Problems): string[] | undefined {
  const v = o[field];
  if (!present(v)) return undefined;
  if (!Array.isArray(v)) {
    problems.add(field, `must be an array of strings, got ${typeName(v)}`);
    return undefined;
  }
  let ok = true;
  v.forEach((s, i) => {
    if (typeof s !== 'string') {
      problems.add(`${field}[${i}]`, `must be a string, got ${typeName(s)}`);
      ok = false;
    }
  });
  return ok ? (v as string[]) : undefined;
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

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${quote(v)}`;
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`;
  return typeof v;
}

function quote(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}
