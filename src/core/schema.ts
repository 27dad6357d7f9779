/**
 * Schemas: one JSON Schema per payload, written with TypeBox (`Type.*`), compiled once by Ajv
 * into a validator, typed with `Static<>` and published in the OpenAPI document
 * (src/http/openapi.ts). This file holds the compiler and the translation of Ajv's errors into
 * problems that name the field (`dataPoints[2].value`) in the error table's wording; each
 * folder declares the schemas of its own payloads next to the code that uses them.
 *
 * Validators are compiled when their module loads (never per request). Formats that need a
 * higher floor (RE2 patterns, cron expressions) are passed in by the folder that declares them.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { Type, type Static, type TSchema } from '@sinclair/typebox';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv) => Ajv;

/** One problem of a value, with the JSON path of the offending field in dotted form. */
export interface SchemaProblem {
  /** `title`, `dataPoints[2].value`, `crawler.maxDepth`; '' for the value itself. */
  field: string;
  /** A sentence fragment that follows the field name: `must be a string, got number 5`. */
  message: string;
  /** The Ajv keyword that failed (`type`, `minimum`, `required`, `additionalProperties`, …). */
  keyword: string;
}

/** A compiled schema: the schema itself (for documents) and its validator. */
export interface CompiledSchema<T extends TSchema> {
  readonly schema: T;
  /** Whether `value` conforms (fills defaults first when compiled with `useDefaults`). */
  check(value: unknown): value is Static<T>;
  /** The problems of the last failed `check`, or of `value` when given. */
  problems(value?: unknown): SchemaProblem[];
}

export interface CompileOptions {
  /** Report every problem (batches of documents) rather than stopping at the first (settings). */
  allErrors?: boolean;
  /** Fill `default`s of absent properties into the value (Ajv `useDefaults`). */
  useDefaults?: boolean;
  /** Extra string formats, by name (e.g. `re2`, `cron`): true when the string is acceptable. */
  formats?: Record<string, (s: string) => boolean>;
  /** Wording of a failed format, by name: `is not a valid cron expression`. */
  formatMessages?: Record<string, string>;
}

const ajvs = new Map<string, Ajv>();

/** One Ajv per option set (formats are per instance); schemas are compiled into it once. */
function ajvFor(opts: CompileOptions): Ajv {
  const key = `${opts.allErrors ? 1 : 0}${opts.useDefaults ? 1 : 0}:${Object.keys(opts.formats ?? {}).sort().join(',')}`;
  let ajv = ajvs.get(key);
  if (!ajv) {
    ajv = new Ajv({ allErrors: opts.allErrors ?? false, useDefaults: opts.useDefaults ?? false, verbose: true, strict: false, coerceTypes: false });
    addFormats(ajv);
    ajvs.set(key, ajv);
  }
  for (const [name, fn] of Object.entries(opts.formats ?? {})) if (!ajv.formats[name]) ajv.addFormat(name, fn);
  return ajv;
}

/**
 * Compiles `schema` once. Call it at module load and keep the result.
 *
 * @example
 * const Query = compileSchema(Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100 }) }));
 * if (!Query.check(value)) throw badParam(Query.problems()[0].field, '…');
 */
export function compileSchema<T extends TSchema>(schema: T, opts: CompileOptions = {}): CompiledSchema<T> {
  const validate: ValidateFunction = ajvFor(opts).compile(schema);
  const formatMessages = opts.formatMessages ?? {};
  let last: ErrorObject[] = [];
  return {
    schema,
    check(value: unknown): value is Static<T> {
      if (validate(value)) return true;
      last = validate.errors ?? [];
      return false;
    },
    problems(value?: unknown): SchemaProblem[] {
      if (arguments.length > 0) {
        if (validate(value)) return [];
        last = validate.errors ?? [];
      }
      return describeErrors(last, formatMessages);
    },
  };
}

/** `/dataPoints/2/value` → `dataPoints[2].value`. */
export function fieldPath(pointer: string, child?: string): string {
  let out = '';
  const parts = pointer === '' ? [] : pointer.slice(1).split('/');
  if (child !== undefined) parts.push(child);
  for (const raw of parts) {
    const p = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  }
  return out;
}

/** How a value is named in a message: `the string "x"`, `number 5`, `an array`, `null`. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${quote(v)}`;
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`;
  return typeof v;
}

/** A string quoted for a message, cut at 80 characters. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}

/** The JSON Schema type of a value. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function typeWords(type: unknown): string {
  const list = (Array.isArray(type) ? type : [type]).filter((t) => t !== 'null').map((t) => TYPE_WORDS[String(t)] ?? String(t));
  return list.length > 1 ? `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}` : list[0] ?? 'a value';
}

/** The message of a schema: its own `errorMessage` annotation, when the schema gives one. */
function own(e: ErrorObject): string | undefined {
  const m = (e.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  return typeof m === 'string' ? m : undefined;
}

function range(s: { minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number; type?: unknown }): string {
  const kind = s.type === 'integer' ? 'an integer' : 'a number';
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? `greater than ${s.exclusiveMinimum}` : undefined);
  const hi = s.maximum ?? s.exclusiveMaximum;
  if (s.minimum !== undefined && s.maximum !== undefined) return `${kind} between ${s.minimum} and ${s.maximum}`;
  if (typeof lo === 'string' && hi !== undefined) return `${kind} ${lo} and at most ${hi}`;
  if (lo !== undefined && hi === undefined) return typeof lo === 'string' ? `${kind} ${lo}` : `${kind} ≥ ${lo}`;
  if (hi !== undefined) return `${kind} ≤ ${hi}`;
  return kind;
}

/**
 * Turns Ajv errors into problems naming the field. The wording follows the error table: what
 * the value must be, then what it was. A schema may carry `errorMessage` to word its own
 * failures (`must look like "fid#<n>"`). For a union (`anyOf`), only the union's own message
 * is kept, not one per branch.
 */
export function describeErrors(errors: readonly ErrorObject[], formatMessages: Record<string, string> = {}): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const seen = new Set<string>();
  // A failed union (anyOf/oneOf) is reported as itself, unless exactly one branch takes the
  // value's JSON type: then that branch's own problems are the useful ones (`headings[0]`
  // rather than `headings` for an array with a bad entry). A union with an `errorMessage`
  // is always reported as itself.
  const hidden: string[] = [];
  const shown = new Set<ErrorObject>();
  for (const u of errors) {
    if (u.keyword !== 'anyOf' && u.keyword !== 'oneOf') continue;
    const branches = ((u.parentSchema as Record<string, unknown> | undefined)?.[u.keyword] ?? []) as Array<{ type?: unknown }>;
    const jt = own(u) === undefined ? jsonType(u.data) : 'worded'; // a union with its own wording keeps it
    const fits = branches.map((b, i) => [b, i] as const).filter(([b]) => [b.type].flat().some((t) => t === jt || (t === 'number' && jt === 'integer')));
    const inner = fits.length === 1 ? errors.filter((e) => e.schemaPath.startsWith(`${u.schemaPath}/${fits[0]![1]}/`)) : [];
    if (inner.length > 0) {
      for (const e of inner) shown.add(e);
      hidden.push(`${u.schemaPath}\u0000`);
    }
    hidden.push(`${u.schemaPath}/`);
  }
  for (const e of errors) {
    if (!shown.has(e) && hidden.some((h) => (h.endsWith('\u0000') ? e.schemaPath === h.slice(0, -1) && (e.keyword === 'anyOf' || e.keyword === 'oneOf') : e.schemaPath.startsWith(h)))) continue;
    const p = e.params as Record<string, unknown>;
    const s = (e.parentSchema ?? {}) as Record<string, unknown>;
    let field = fieldPath(e.instancePath);
    let message: string;
    switch (e.keyword) {
      case 'required':
        field = fieldPath(e.instancePath, String(p.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        field = fieldPath(e.instancePath, String(p.additionalProperty));
        message = `is not a known field (allowed here: ${Object.keys((s.properties as object) ?? {}).join(', ')})`;
        break;
      case 'type':
        message = own(e) ?? `must be ${typeWords(s.type ?? p.type)}, got ${typeName(e.data)}`;
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        message = own(e) ?? `must be ${range(s)} (got ${String(e.data)})`;
        break;
      case 'minLength':
        message = own(e) ?? (p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`);
        break;
      case 'maxLength':
        message = own(e) ?? `must be at most ${String(p.limit)} characters (got ${(e.data as string).length})`;
        break;
      case 'minItems':
        message = own(e) ?? `must list at least ${String(p.limit)} ${p.limit === 1 ? 'entry' : 'entries'}`;
        break;
      case 'maxItems':
        message = own(e) ?? `must have at most ${String(p.limit)} entries`;
        break;
      case 'enum':
        message = own(e) ?? `must be one of ${(p.allowedValues as unknown[]).map(String).join('|')} (got ${typeName(e.data)})`;
        break;
      case 'const':
        message = own(e) ?? `must be ${JSON.stringify(p.allowedValue)}`;
        break;
      case 'pattern':
        message = own(e) ?? `must match ${String(p.pattern)} (got ${typeName(e.data)})`;
        break;
      case 'format':
        message = own(e) ?? formatMessages[String(p.format)] ?? `must be a valid ${String(p.format)} (got ${typeName(e.data)})`;
        break;
      case 'anyOf':
      case 'oneOf':
        message = own(e) ?? `must be ${typeWords(((s.anyOf ?? s.oneOf) as Array<{ type?: unknown }>).map((b) => b.type).flat())}, got ${typeName(e.data)}`;
        break;
      default:
        message = own(e) ?? e.message ?? 'is not valid';
    }
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message, keyword: e.keyword });
  }
  return out;
}

/**
 * `T` or `null` as one JSON type list (`"type": ["string","null"]`), so a wrong value fails
 * with one message rather than one per branch of a union.
 *
 * @example
 * Nullable(Type.String({ maxLength: 256 })) // { type: ['string','null'], maxLength: 256 }
 */
export function Nullable<T extends TSchema>(schema: T): TSchema & { static: Static<T> | null } {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string') return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  const anyOf = (schema as { anyOf?: unknown[] }).anyOf;
  if (anyOf) return Type.Unsafe<Static<T> | null>({ ...schema, anyOf: [...anyOf, { type: 'null' }] });
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}
