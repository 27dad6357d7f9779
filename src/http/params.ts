/**
 * Query-parameter readers for route handlers (main thread). Each either returns a valid value
 * or throws 400 `invalid_parameter` naming the parameter, with the allowed values or range in
 * the message. Out-of-range values are rejected, never clamped (SPEC §3).
 *
 * The `*Value` variants validate a value that did not come from the query string (a field of
 * a JSON or form body) with the same rules and messages.
 */
import type { Context } from 'koa';
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
  const v = queryParam(ctx, name);
  if (v === undefined || v === '') return dflt;
  const lower = v.toLowerCase();
  const found = values.find((x) => x.toLowerCase() === lower);
  if (found === undefined) throw new AppError('invalid_parameter', `Parameter "${name}" must be one of ${values.join(', ')}, got "${v}".`, name);
  return found;
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
  const raw = queryParam(ctx, name);
  if (raw === undefined || raw.trim() === '') return undefined;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || v > max) throw badParam(name, `Parameter "${name}" must be a number between ${min} and ${max}, got "${raw}".`);
  return v;
}
