/**
 * Filters, facets and sorting over per-document values (pure, main thread).
 */
import { type DataPoint, type FilterDefinition, type FilterValue, AppError } from '../core/index.js';
import { normalizeLanguage } from '../projects/index.js';

/**
 * The built-in filter on a page's language (`filters=[{"language":["de","fr"]}]`): a
 * multiple-choice filter every project has, whose value is the page's own language or, for a
 * page without one, the project's `search.language`. Defined filter ids are `fid#<n>`, so this
 * key never collides with one.
 */
export const LANGUAGE_FILTER = 'language';

/** The facet definition of the language filter (its values are ISO 639-1 codes). */
export const LANGUAGE_FACET: FilterDefinition = { id: LANGUAGE_FILTER, name: 'Language', type: 'multiple' };

const displayNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });

/**
 * The English name of an ISO 639-1 code, for the language facet's value names.
 *
 * @example languageName('de') // 'German'
 */
export function languageName(code: string): string {
  try {
    return displayNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/** One applied filter: multiple choice (OR inside) or range (inclusive bounds, each optional). */
export type ActiveFilter =
  | { key: string; type: 'multiple'; values: string[] }
  | { key: string; type: 'range'; min: number | null; max: number | null };

/**
 * Parses the `filters` search parameter (docs/API.md): a JSON array of single-key objects whose
 * key is a defined Filter-ID and whose value is an array of strings or `{min?, max?}`.
 */
export function parseFilters(raw: string | undefined, defs: FilterDefinition[]): ActiveFilter[] {
  if (raw === undefined || raw === '') return [];
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new AppError('invalid_parameter', 'filters must be a JSON array like [{"fid#1":["a","b"]},{"fid#2":{"min":1,"max":5}}].', 'filters');
  }
  if (!Array.isArray(v)) throw new AppError('invalid_parameter', 'filters must be a JSON array of single-key objects.', 'filters');
  const out: ActiveFilter[] = [];
  for (const item of v) {
    if (typeof item !== 'object' || item === null || Array.isArray(item) || Object.keys(item).length !== 1) {
      throw new AppError('invalid_parameter', 'Each entry of filters must be an object with exactly one Filter-ID key.', 'filters');
    }
    const [key, val] = Object.entries(item as Record<string, unknown>)[0]!;
    if (key === LANGUAGE_FILTER) {
      out.push({ key, type: 'multiple', values: languageValues(val) });
      continue;
    }
    const def = defs.find((d) => d.id === key);
    if (!def) {
      const known = [...defs.map((d) => d.id), LANGUAGE_FILTER].join(', ');
      throw new AppError('invalid_parameter', `filters names ${key}, which is not a defined filter (defined: ${known}).`, 'filters');
    }
    if (def.type === 'multiple') {
      if (!Array.isArray(val) || !val.every((x) => typeof x === 'string')) {
        throw new AppError('invalid_parameter', `filters: ${key} is a multiple-choice filter; its value must be an array of strings.`, 'filters');
      }
      out.push({ key, type: 'multiple', values: val as string[] });
    } else {
      if (typeof val !== 'object' || val === null || Array.isArray(val)) {
        throw new AppError('invalid_parameter', `filters: ${key} is a range filter; its value must be {"min":n,"max":n}.`, 'filters');
      }
      const r = val as Record<string, unknown>;
      for (const k of Object.keys(r)) {
        if (k !== 'min' && k !== 'max') throw new AppError('invalid_parameter', `filters: ${key} has unknown bound "${k}" (use min and max).`, 'filters');
        if (typeof r[k] !== 'number' || !Number.isFinite(r[k])) {
          throw new AppError('invalid_parameter', `filters: ${key}.${k} must be a number.`, 'filters');
        }
      }
      out.push({ key, type: 'range', min: (r.min as number | undefined) ?? null, max: (r.max as number | undefined) ?? null });
    }
  }
  return out;
}

/** The values of a language filter as ISO 639-1 codes (codes, BCP 47 tags or English names accepted). */
function languageValues(val: unknown): string[] {
  if (!Array.isArray(val) || !val.every((x) => typeof x === 'string')) {
    throw new AppError('invalid_parameter', 'filters: language is a multiple-choice filter; its value must be an array of language codes like ["de","fr"].', 'filters');
  }
  const codes: string[] = [];
  for (const x of val as string[]) {
    const code = normalizeLanguage(x);
    if (code === null) throw new AppError('invalid_parameter', `filters: language "${x}" is not an ISO 639-1 code, BCP 47 tag or English language name.`, 'filters');
    if (!codes.includes(code)) codes.push(code);
  }
  return codes;
}

/** The request format of an applied filter, for `activeFilterOptions`. */
export function echoFilter(f: ActiveFilter): Record<string, unknown> {
  if (f.type === 'multiple') return { [f.key]: f.values };
  const r: Record<string, number> = {};
  if (f.min !== null) r.min = f.min;
  if (f.max !== null) r.max = f.max;
  return { [f.key]: r };
}

/**
 * Whether a document's filter values and language (its own or the project default; null for
 * a result that is not a page) pass one applied filter.
 */
export function passes(values: FilterValue[] | null, f: ActiveFilter, language: string | null): boolean {
  if (f.key === LANGUAGE_FILTER) return language !== null && f.type === 'multiple' && f.values.includes(language);
  if (!values) return false;
  for (const v of values) {
    if (v.key !== f.key) continue;
    if (f.type === 'multiple') {
      if (Array.isArray(v.value) && v.value.some((x) => f.values.includes(x))) return true;
    } else if (typeof v.value === 'number') {
      if ((f.min === null || v.value >= f.min) && (f.max === null || v.value <= f.max)) return true;
    }
  }
  return false;
}

/**
 * Facet accumulator for one defined filter, or for the language filter ({@link LANGUAGE_FACET}),
 * which is reported only when the counted pages are in two languages or more.
 */
export class Facet {
  readonly counts = new Map<string, number>();
  min = Infinity;
  max = -Infinity;
  seen = 0;
  private readonly isLanguage: boolean;
  constructor(readonly def: FilterDefinition) {
    this.isLanguage = def.id === LANGUAGE_FILTER;
  }
  /** Counts one document: its filter values and its language (own or the project default). */
  add(values: FilterValue[] | null, language: string | null): void {
    if (this.isLanguage) {
      if (language === null) return;
      this.counts.set(language, (this.counts.get(language) ?? 0) + 1);
      this.seen++;
      return;
    }
    if (!values) return;
    let hit = false;
    for (const v of values) {
      if (v.key !== this.def.id) continue;
      if (this.def.type === 'multiple' && Array.isArray(v.value)) {
        for (const x of new Set(v.value)) this.counts.set(x, (this.counts.get(x) ?? 0) + 1);
        hit = true;
      } else if (this.def.type === 'range' && typeof v.value === 'number') {
        if (v.value < this.min) this.min = v.value;
        if (v.value > this.max) this.max = v.value;
        hit = true;
      }
    }
    if (hit) this.seen++;
  }
  /** The response entry, or null when no matching document has this filter. */
  out(): Record<string, unknown> | null {
    if (this.seen === 0 || (this.isLanguage && this.counts.size < 2)) return null;
    if (this.def.type === 'range') return { key: this.def.id, name: this.def.name, type: 'range', min: this.min, max: this.max };
    const values = [...this.counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([value, count]) => ({ name: this.isLanguage ? languageName(value) : value, value, count }));
    return { key: this.def.id, name: this.def.name, type: 'multiple', values };
  }
}

/** A sort key extracted from a data point value: numbers, then ISO dates, then text. */
export type SortKey = { kind: 0; n: number } | { kind: 1; n: number } | { kind: 2; s: string } | null;

const ISO_DATE = /^\d{4}-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$/;

/**
 * The sort key of the data point `key` among `points` (null when the page has none): a number
 * when the value reads as one, else a time when it is an ISO date, else its lower-cased text.
 */
export function sortKey(points: DataPoint[] | null, key: string): SortKey {
  if (!points) return null;
  const p = points.find((d) => d.key === key);
  if (!p) return null;
  const v = String(p.value).trim();
  if (v !== '' && Number.isFinite(Number(v))) return { kind: 0, n: Number(v) };
  if (ISO_DATE.test(v)) {
    const t = Date.parse(v);
    if (Number.isFinite(t)) return { kind: 1, n: t };
  }
  return { kind: 2, s: v.toLowerCase() };
}

/**
 * Compares two present sort keys in ascending order: two numbers numerically, two dates by
 * time, anything else as text (numbers and dates use their text then).
 */
export function compareKeys(a: Exclude<SortKey, null>, b: Exclude<SortKey, null>, ra: string, rb: string): number {
  if (a.kind === b.kind && a.kind !== 2) return (a as { n: number }).n - (b as { n: number }).n;
  const sa = a.kind === 2 ? a.s : ra.toLowerCase();
  const sb = b.kind === 2 ? b.s : rb.toLowerCase();
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
