/**
 * Schemas: one JSON Schema per payload, written with TypeBox (`Type.*`), compiled once by Ajv
 * into a validator, typed with `Static<>` and published in the OpenAPI document
 * (src/http/openapi.ts). This file holds the compiler and the translation of Ajv's errors into
 * problems that name the field (`dataPoints[2].value`) in the error table's wording; each
 * folder declares the schemas of its own payloads next to the code that uses them.
 *
 * Validators are compiled when their module loads (never per request). Formats that need a
 * higher floor (RE2 patterns, cron expressions) are registered with {@link defineFormat} by the
 * folder that owns the check; a schema names them (`format: 're2'`) from any floor.
 *
 * Wording: a schema may carry `errorMessage`, either one sentence fragment for every failure
 * of that value or one per Ajv keyword (`{ type: 'must be a string', maxLength: '…' }`, the
 * form ajv-errors reads); what it does not word is worded by {@link describeErrors}.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';

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
  /** Fill `default`s of absent properties into the value (Ajv `useDefaults`); the value is changed in place. */
  useDefaults?: boolean;
}

/** How a failed format is worded: a fixed fragment, or one made from the failing value. */
export type FormatMessage = string | ((value: unknown) => string);

const ajvs = new Map<string, Ajv>();
const formats = new Map<string, { test: (s: string) => boolean; message: FormatMessage }>();

/**
 * Registers a string format under `name` for every schema compiled from now on (and every
 * Ajv already made), with the wording of its failure. Call it at module load of the folder
 * that owns the check, before compiling schemas that use it.
 *
 * @example
 * defineFormat('cron', (s) => cron.validate(s), 'is not a valid cron expression (e.g. "0 3 * * *")');
 */
export function defineFormat(name: string, test: (s: string) => boolean, message: FormatMessage): void {
  formats.set(name, { test, message });
  for (const ajv of ajvs.values()) ajv.addFormat(name, test);
}

/** One Ajv per option set; schemas are compiled into it once. */
function ajvFor(opts: CompileOptions): Ajv {
  const key = `${opts.allErrors ? 1 : 0}${opts.useDefaults ? 1 : 0}`;
  let ajv = ajvs.get(key);
  if (!ajv) {
    ajv = new Ajv({ allErrors: opts.allErrors ?? false, useDefaults: opts.useDefaults ?? false, verbose: true, strict: false, coerceTypes: false });
    addFormats(ajv);
    for (const [name, f] of formats) ajv.addFormat(name, f.test);
    ajvs.set(key, ajv);
  }
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
      return describeErrors(last);
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

/**
 * The message of a schema for a failed keyword: its own `errorMessage` annotation, when the
 * schema gives one (one string for every failure of the value, or one per keyword).
 * `valueOnly` keywords (`required`, `additionalProperties`) are about a child, so only the
 * per-keyword form words them.
 */
function own(e: ErrorObject, valueOnly = false): string | undefined {
  const m = (e.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof m === 'string') return valueOnly ? undefined : m;
  if (typeof m === 'object' && m !== null) {
    const k = (m as Record<string, unknown>)[e.keyword];
    return typeof k === 'string' ? k : undefined;
  }
  return undefined;
}

function formatMessage(name: string, value: unknown): string {
  const f = formats.get(name);
  if (!f) return `must be a valid ${name} (got ${typeName(value)})`;
  return typeof f.message === 'function' ? f.message(value) : f.message;
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
export function describeErrors(errors: readonly ErrorObject[]): SchemaProblem[] {
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
        message = own(e, true) ?? 'is required';
        break;
      case 'additionalProperties':
        field = fieldPath(e.instancePath, String(p.additionalProperty));
        message = own(e, true) ?? `is not a known field (allowed here: ${Object.keys((s.properties as object) ?? {}).join(', ')})`;
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
        message = own(e) ?? formatMessage(String(p.format), e.data);
        break;
      case 'if':
        // The failing branch reported its own problems (allErrors) or stopped first.
        continue;
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
 * Nullable(Type.String(), { default: null })  // `opts` are keywords of the nullable value itself
 */
export function Nullable<T extends TSchema>(schema: T, opts: Record<string, unknown> = {}): TSchema & { static: Static<T> | null } {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string') return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...opts });
  const anyOf = (schema as { anyOf?: unknown[] }).anyOf;
  if (anyOf) return Type.Unsafe<Static<T> | null>({ ...schema, anyOf: [...anyOf, { type: 'null' }], ...opts });
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()], opts));
}

/**
 * A string that is one of `values`, as one `enum` (rather than a union of literals) so a
 * wrong value fails with one message listing the values.
 *
 * @example StringEnum(['default', 'strict', 'off'] as const, { default: 'default' })
 */
export function StringEnum<const V extends readonly string[]>(values: V, opts: Record<string, unknown> = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...opts });
}

/**
 * An object whose shape is chosen by the value of its `tag` property (a discriminated union):
 * a wrong tag fails at the tag with one message, a right tag is checked against its variant
 * only, so problems name the variant's fields (`action.urls[0]`), not "matches no branch".
 * Each variant lists the tag itself (`type: Type.Literal('pin')`). JSON Schema `if`/`then`.
 *
 * @example Tagged('type', { pin: Type.Object({ type: Type.Literal('pin'), urls: Type.Array(Type.String()) }), … })
 */
export function Tagged<V extends Record<string, TObject>>(tag: string, variants: V, opts: { tagMessage?: string; errorMessage?: unknown; description?: string } = {}): TUnsafe<Static<V[keyof V]>> {
  const values = Object.keys(variants);
  return Type.Unsafe<Static<V[keyof V]>>({
    type: 'object',
    required: [tag],
    properties: { [tag]: { type: 'string', enum: values, ...(opts.tagMessage ? { errorMessage: opts.tagMessage } : {}) } },
    allOf: values.map((v) => ({ if: { properties: { [tag]: { const: v } } }, then: variants[v] })),
    ...(opts.errorMessage !== undefined ? { errorMessage: opts.errorMessage } : {}),
    ...(opts.description ? { description: opts.description } : {}),
  });
}

/**
 * An object whose shape is chosen by which key it has: the first case whose key is present
 * applies; a value with none of the keys fails with `otherwise`. JSON Schema `if`/`then`/`else`.
 *
 * @example ByKey([['terms', Group], ['from', Mapping]], 'must be {"terms":[...]} or {"from":"...","to":[...]}')
 */
export function ByKey<C extends ReadonlyArray<readonly [string, TObject]>>(cases: C, otherwise: string, opts: { errorMessage?: unknown } = {}): TUnsafe<Static<C[number][1]>> {
  let schema: Record<string, unknown> = { not: {}, errorMessage: otherwise };
  for (const [key, variant] of [...cases].reverse()) schema = { if: { required: [key] }, then: variant, else: schema };
  return Type.Unsafe<Static<C[number][1]>>({ type: 'object', ...schema, ...(opts.errorMessage !== undefined ? { errorMessage: opts.errorMessage } : {}) });
}

/**
 * `schema` as a client may send it: a property with a `default` is not required (the server
 * fills it). The schemas of stored objects list every field as required so their `Static`
 * types do; their request bodies are published through this. Returns plain JSON.
 */
export function inputSchema(schema: TSchema): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const o = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)])) as Record<string, unknown>;
    if (Array.isArray(o.required) && typeof o.properties === 'object' && o.properties !== null) {
      const props = o.properties as Record<string, { default?: unknown }>;
      const required = (o.required as string[]).filter((k) => props[k]?.default === undefined);
      if (required.length > 0) o.required = required;
      else delete o.required;
    }
    return o;
  };
  return walk(JSON.parse(JSON.stringify(schema)));
}
