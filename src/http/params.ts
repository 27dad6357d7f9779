/**
 * Query-parameter readers for route handlers (main thread). Each either returns a valid value
 * or throws 400 `invalid_parameter` naming the parameter, with the allowed values or range in
 * the message. Out-of-range values are rejected, never clamped (SPEC §3).
 *
 * The `*Value` variants validate a value that did not come from the query string (a field of
 * a JSON or form body) with the same rules and messages.
 */
import type { Context } from 'koa';
import { AppError } from '../core/index.js';

/** The single raw value of a query parameter; a repeated parameter is an error. */
export function queryParam(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw new AppError('invalid_parameter', `Parameter "${name}" is given more than once; give it once.`, name);
  return v;
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

/** Validates a boolean given as `true|false|1|0` (string) or a JSON boolean. */
export function parseBoolValue(value: unknown, name: string, dflt?: boolean): boolean | undefined {
  if (value === undefined || value === '') return dflt;
  if (value === true || value === 'true' || value === '1' || value === 1) return true;
  if (value === false || value === 'false' || value === '0' || value === 0) return false;
  throw new AppError('invalid_parameter', `Parameter "${name}" must be true, false, 1 or 0, got "${String(value)}".`, name);
}

/** A boolean query parameter: `true|false|1|0`; absent → `dflt`. */
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

/** A query parameter that must be one of `values`; absent → `dflt`. */
export function parseEnumParam<T extends string>(ctx: Context, name: string, values: readonly T[], dflt: T): T;
export function parseEnumParam<T extends string>(ctx: Context, name: string, values: readonly T[], dflt?: T): T | undefined;
export function parseEnumParam<T extends string>(ctx: Context, name: string, values: readonly T[], dflt?: T): T | undefined {
  const v = queryParam(ctx, name);
  if (v === undefined || v === '') return dflt;
  if (!values.includes(v as T)) throw new AppError('invalid_parameter', `Parameter "${name}" must be one of ${values.join(', ')}, got "${v}".`, name);
  return v as T;
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
