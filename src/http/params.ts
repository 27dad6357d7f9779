/**
 * Query parameters (main thread). A route declares its parameters once, as the `query` schema
 * of its RouteSpec (the OpenAPI document lists them from it); {@link readQuery} reads,
 * coerces and checks the query string by that same schema, so the document and the reader
 * cannot disagree. Every problem is a 400 `invalid_parameter` naming the parameter, with the
 * allowed values or range in the message; out-of-range values are rejected, never clamped
 * (SPEC §3). Parameters a route does not declare are ignored.
 *
 * The per-parameter readers below are what `readQuery` applies by kind; the `*Value` variants
 * validate a value that did not come from the query string (a field of a JSON or form body)
 * with the same rules and messages.
 */
import type { Context } from 'koa';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { AppError, badParam } from '../core/index.js';

/** The single raw value of a query parameter; a repeated parameter is an error. */
export function queryParam(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw new AppError('invalid_parameter', `Parameter "${name}" is given more than once; give it once.`, name);
  return v;
}

/**
 * The values of a list parameter sent as repeated keys, the form jQuery, axios, qs and PHP
 * clients send: `name[]=a&name[]=b`, or indexed `name[0]=a&name[1]=b` (in index order, before
 * any `name[]`); undefined when no such key is given. Any other key starting with `name[` is a
 * 400 naming it: a list form this server does not read is refused, never silently ignored.
 *
 * @example
 * // ?includeContentGroups[]=Blog&includeContentGroups[]=Docs
 * bracketListParam(ctx, 'includeContentGroups') // ['Blog', 'Docs']
 */
export function bracketListParam(ctx: Context, name: string): string[] | undefined {
  let plain: string[] | undefined;
  const indexed: Array<[number, string]> = [];
  for (const [key, raw] of Object.entries(ctx.query)) {
    if (!key.startsWith(`${name}[`)) continue;
    const m = /^\[(\d{0,9})\]$/.exec(key.slice(name.length));
    if (!m) {
      throw new AppError('invalid_parameter', `Parameter "${key}" is not a form of "${name}" this server reads: give ${name}[]=<value> once per value.`, name);
    }
    const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (m[1] === '') (plain ??= []).push(...values);
    else for (const v of values) indexed.push([Number(m[1]), v]);
  }
  if (plain === undefined && indexed.length === 0) return undefined;
  indexed.sort((a, b) => a[0] - b[0]);
  return [...indexed.map(([, v]) => v), ...(plain ?? [])];
}

/** A required, non-empty query parameter. */
export function requireParam(ctx: Context, name: string): string {
  const v = queryParam(ctx, name);
  if (v === undefined || v.trim() === '') throw new AppError('invalid_parameter', `Parameter "${name}" is required.`, name);
  return v;
}

export interface IntOptions {
  min?: number;
  max?: number;
  default?: number;
}

function rangeText(min: number, max: number): string {
  if (max === Number.MAX_SAFE_INTEGER) return `an integer ≥ ${min}`;
  if (min === Number.MIN_SAFE_INTEGER) return `an integer ≤ ${max}`;
  return `an integer from ${min} to ${max}`;
}

/** Validates an integer given as a string or number (body fields); `undefined` → default. */
export function parseIntValue(value: unknown, name: string, opts: IntOptions = {}): number | undefined {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  if (value === undefined || value === '') return opts.default;
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) n = Number(value);
  else n = NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new AppError('invalid_parameter', `Parameter "${name}" must be ${rangeText(min, max)}, got "${String(value)}".`, name);
  }
  return n;
}

/**
 * An integer query parameter within `[min, max]`. Absent → `default`, or 400 when there is no
 * default. Overloads keep the return type `number` whenever a default is given.
 */
export function parseIntParam(ctx: Context, name: string, opts: IntOptions & { default: number }): number;
export function parseIntParam(ctx: Context, name: string, opts?: IntOptions): number | undefined;
export function parseIntParam(ctx: Context, name: string, opts: IntOptions = {}): number | undefined {
  return parseIntValue(queryParam(ctx, name), name, opts);
}

/** Validates a boolean given as `true|false|1|0` (a string, any case: `TRUE`, `False`) or a JSON boolean. */
export function parseBoolValue(value: unknown, name: string, dflt?: boolean): boolean | undefined {
  if (value === undefined || value === '') return dflt;
  const v = typeof value === 'string' ? value.toLowerCase() : value;
  if (v === true || v === 'true' || v === '1' || v === 1) return true;
  if (v === false || v === 'false' || v === '0' || v === 0) return false;
  throw new AppError('invalid_parameter', `Parameter "${name}" must be true, false, 1 or 0, got "${String(value)}".`, name);
}

/** A boolean query parameter: `true|false|1|0`, any case; absent → `dflt`. */
export function parseBoolParam(ctx: Context, name: string, dflt: boolean): boolean;
export function parseBoolParam(ctx: Context, name: string, dflt?: boolean): boolean | undefined;
export function parseBoolParam(ctx: Context, name: string, dflt?: boolean): boolean | undefined {
  return parseBoolValue(queryParam(ctx, name), name, dflt);
}

/** A query parameter holding JSON (e.g. `filters`, `excludeContentGroups`); absent → `dflt`. */
export function parseJsonParam(ctx: Context, name: string, dflt?: unknown): unknown {
  const v = queryParam(ctx, name);
  if (v === undefined || v.trim() === '') return dflt;
  try {
    return JSON.parse(v);
  } catch (err) {
    throw new AppError('invalid_parameter', `Parameter "${name}" must be valid JSON (${(err as Error).message}).`, name);
  }
}

/**
 * A query parameter that must be one of `values`, compared without regard to case (`desc`,
 * `Desc` and `DESC` are `DESC`); returns the value as listed. Absent → `dflt`.
 */
export function parseEnumParam<T extends string>(ctx: Context, name: string, values: readonly T[], dflt: T): T;
export function parseEnumParam<T extends string>(ctx: Context, name: string, values: readonly T[], dflt?: T): T | undefined;
export function parseEnumParam<T extends string>(ctx: Context, name: string, values: readonly T[], dflt?: T): T | undefined {
  return parseEnumValue(queryParam(ctx, name), name, values, dflt);
}

/** An absolute http(s) URL query parameter (required). */
export function parseUrlParam(ctx: Context, name: string): string {
  const v = requireParam(ctx, name);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new AppError('invalid_parameter', `Parameter "${name}" must be an absolute http(s) URL.`, name);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AppError('invalid_parameter', `Parameter "${name}" must be an absolute http(s) URL.`, name);
  return v;
}

/**
 * An optional number parameter between `min` and `max` (400 naming it otherwise).
 *
 * @example parseRatioParam(ctx, 'semanticRatio') // 0.5 for ?semanticRatio=0.5, undefined when absent
 */
export function parseRatioParam(ctx: Context, name: string, min = 0, max = 1): number | undefined {
  return parseNumberValue(queryParam(ctx, name), name, min, max);
}

/**
 * Validates a number given as a string or number between `min` and `max`; `undefined` or ''
 * → undefined.
 */
export function parseNumberValue(value: unknown, name: string, min = -Infinity, max = Infinity): number | undefined {
  if (value === undefined || (typeof value === 'string' && value.trim() === '')) return undefined;
  const v = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isFinite(v) || v < min || v > max) throw badParam(name, `Parameter "${name}" must be a number between ${min} and ${max}, got "${String(value)}".`);
  return v;
}

/**
 * A value of `values` compared without regard to case; returns the value as listed;
 * `undefined` or '' → `dflt`.
 */
export function parseEnumValue<T extends string>(value: string | undefined, name: string, values: readonly T[], dflt?: T): T | undefined {
  if (value === undefined || value === '') return dflt;
  const lower = value.toLowerCase();
  const found = values.find((x) => x.toLowerCase() === lower);
  if (found === undefined) throw new AppError('invalid_parameter', `Parameter "${name}" must be one of ${values.join(', ')}, got "${value}".`, name);
  return found;
}

/**
 * A list of names (absent: null), given as a JSON array (`name=["Blog","_"]`) or as repeated
 * keys (`name[]=Blog&name[]=_`, empty values skipped); 400 for anything else or for both
 * forms at once. `what` names the entries in the message (`content-group names`).
 */
export function stringListParam(ctx: Context, name: string, what = 'strings', example = '["a","b"]'): string[] | null {
  const listed = bracketListParam(ctx, name);
  if (listed !== undefined) {
    if (ctx.query[name] !== undefined) throw badParam(name, `Give "${name}" in one form: a JSON array or ${name}[] keys, not both.`);
    return listed.filter((g) => g !== '');
  }
  const v = parseJsonParam(ctx, name);
  if (v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    throw badParam(name, `Parameter "${name}" must be a JSON array of ${what}, like ${example}.`);
  }
  return v as string[];
}

// ------------------------------------------------------------------ reading by the declaration

/** The keywords {@link readQuery} reads from a parameter's schema. */
interface ParamSchema {
  type?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  enum?: string[];
  anyOf?: Array<{ const?: unknown }>;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  contentMediaType?: string;
  /** A list read by {@link stringListParam}: a JSON array or `name[]=` keys. */
  'x-list'?: { what: string; example: string };
  /** Full messages by keyword (`required`, `minLength`, `maxLength`, `pattern`). */
  errorMessage?: Record<string, string>;
}

/** The values of `schema`'s properties as `readQuery` returns them: a default fills an absent value. */
export type QueryValues<T extends TObject> = Static<T>;

const patterns = new Map<string, RegExp>();

function enumOf(s: ParamSchema): string[] | undefined {
  if (s.enum) return s.enum;
  if (s.anyOf?.length && s.anyOf.every((b) => typeof b.const === 'string')) return s.anyOf.map((b) => b.const as string);
  return undefined;
}

function readOne(ctx: Context, name: string, s: ParamSchema, required: boolean): unknown {
  if (s['x-list']) {
    const list = stringListParam(ctx, name, s['x-list'].what, s['x-list'].example);
    return list ?? undefined;
  }
  const raw = queryParam(ctx, name);
  const values = enumOf(s);
  if (values) return parseEnumValue(raw, name, values, s.default as string | undefined);
  switch (s.type) {
    case 'integer':
      return parseIntValue(raw, name, { min: s.minimum, max: s.maximum, default: s.default as number | undefined });
    case 'number':
      return parseNumberValue(raw, name, s.minimum, s.maximum) ?? s.default;
    case 'boolean':
      return parseBoolValue(raw, name, s.default as boolean | undefined);
  }
  const m = s.errorMessage ?? {};
  if (raw === undefined || (raw.trim() === '' && !required)) {
    if (required) throw badParam(name, m.required ?? `Parameter "${name}" is required.`);
    return s.default;
  }
  if (raw.trim() === '') throw badParam(name, m.minLength ?? `Parameter "${name}" must not be empty.`);
  if (s.maxLength !== undefined && raw.length > s.maxLength) throw badParam(name, m.maxLength ?? `Parameter "${name}" must be at most ${s.maxLength} characters.`);
  if (s.pattern !== undefined) {
    let re = patterns.get(s.pattern);
    if (!re) patterns.set(s.pattern, (re = new RegExp(s.pattern, 'u')));
    if (!re.test(raw)) throw badParam(name, m.pattern ?? `Parameter "${name}" must match ${s.pattern}, got "${raw}".`);
  }
  if (s.format === 'uri' && !isHttpUrl(raw)) throw badParam(name, m.format ?? `Parameter "${name}" must be an absolute http(s) URL.`);
  return raw;
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Reads the query parameters `schema` declares (a route's `RouteSpec.query`), by kind:
 * integers and numbers within `minimum`/`maximum`, booleans (`true|false|1|0`, any case),
 * enums (`enum` or a union of literals, any case, answered as listed), lists (`x-list`: a JSON
 * array or `name[]=` keys), strings (`required`, `maxLength`, `pattern`, `format: 'uri'`); an
 * absent or empty value takes the `default`. `errorMessage` words a string's failures by
 * keyword. A parameter given twice is a 400; parameters not declared are ignored.
 *
 * @example
 * const Query = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }) });
 * const { limit } = readQuery(ctx, Query); // 10 without ?limit, 400 naming "limit" for ?limit=500
 */
export function readQuery<T extends TObject>(ctx: Context, schema: T): QueryValues<T> {
  const required = new Set(schema.required ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties) as Array<[string, TSchema]>) {
    const v = readOne(ctx, name, s as ParamSchema, required.has(name) && (s as ParamSchema).default === undefined);
    if (v !== undefined) out[name] = v;
  }
  return out as QueryValues<T>;
}
