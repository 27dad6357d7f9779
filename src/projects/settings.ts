/**
 * Project settings (SPEC §7): validation, defaults and merging. Pure functions, any thread.
 *
 * The sections are declared once as schemas in src/core/settings.ts (fields, limits, defaults,
 * wording); this file compiles them with Ajv, registers the formats whose checks live on
 * this floor (RE2 patterns, cron expressions, http(s) URLs, language names), and adds what a
 * schema cannot say: unique data-point keys and filter ids, the HTTP embedder's URL, and the
 * normalisation of language names and host names.
 *
 * Validation never clamps or guesses: every problem is a 400 `invalid_parameter` whose
 * `field` is the JSON path of the offending value (`search.typoTolerance`,
 * `filters[1].id`). A section that is given is completed with that section's defaults, so
 * `{"crawler":{"rootUrls":[...]}}` is a complete crawler section.
 */
import cron from 'node-cron';
import { Type, type TSchema } from '@sinclair/typebox';
import { embedderFingerprint, patternError, ISO_639_1 } from '../text/index.js';
import {
  AppError, compileSchema, defineFormat, SETTINGS_SECTION_SCHEMAS, type EmbedderSpec, type SemanticSettings, type Settings,
} from '../core/index.js';

export { DEFAULT_SEMANTIC_RATIO } from '../core/index.js';

// ------------------------------------------------------------------ languages

const LANGUAGE_BY_NAME = new Map<string, string>();
const LANGUAGE_CODES = new Set<string>();
for (const [code, names] of ISO_639_1) {
  LANGUAGE_CODES.add(code);
  for (const n of names) LANGUAGE_BY_NAME.set(n.toLowerCase(), code);
}

/**
 * Normalises an ISO 639-1 code (`"DE"`, `"de-AT"` keeps `de`) or an English language name
 * (`"German"`) to the two-letter code; null when it is neither.
 */
export function normalizeLanguage(input: string): string | null {
  const s = input.trim().toLowerCase();
  const primary = s.split(/[-_]/)[0];
  if (primary.length === 2 && LANGUAGE_CODES.has(primary)) return primary;
  return LANGUAGE_BY_NAME.get(s) ?? null;
}

// ------------------------------------------------------------------ formats named by the schemas

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

// Patterns are checked by the engine that runs them (RE2), so what is accepted is what matches.
defineFormat('re2', (s) => patternError(s) === null, (v) => `is not a valid RE2 regular expression: ${patternError(String(v))}`);
defineFormat('cron', (s) => cron.validate(s), 'is not a valid cron expression (e.g. "0 3 * * *")');
defineFormat('http-url', isHttpUrl, 'must be an absolute http(s) URL');
defineFormat('language', (s) => normalizeLanguage(s) !== null, 'must be an ISO 639-1 code (e.g. "en") or an English language name (e.g. "German")');

// ------------------------------------------------------------------ validation

type Obj = Record<string, unknown>;
type SectionName = keyof typeof SETTINGS_SECTION_SCHEMAS;

function fail(path: string, message: string): never {
  throw new AppError('invalid_parameter', `${path}: ${message}`, path);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function withoutDefault<T extends TSchema>(schema: T): T {
  const { default: _, ...rest } = schema as T & { default?: unknown };
  return rest as unknown as T;
}

/** Settings as a client sends them: any sections; `updatedAt` and `status` of a GET answer are ignored. */
export const SettingsInputSchema = Type.Object(
  {
    // Without their `default`: an absent section stays absent (partial); full validation puts it in.
    ...Object.fromEntries(Object.entries(SETTINGS_SECTION_SCHEMAS).map(([k, v]) => [k, Type.Optional(withoutDefault(v))])),
    updatedAt: Type.Optional(Type.Unknown()),
    status: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false, errorMessage: { additionalProperties: `unknown setting (allowed here: ${[...Object.keys(SETTINGS_SECTION_SCHEMAS), 'updatedAt', 'status'].join(', ')})` } },
);
/** Compiled once; fills every absent field of a given section with its default. */
const settingsInput = compileSchema(SettingsInputSchema, { useDefaults: true });

export type SettingsSection = SectionName;
export const SETTINGS_SECTIONS = Object.keys(SETTINGS_SECTION_SCHEMAS) as SettingsSection[];

/** The validated sections of an input; absent sections are absent (partial) or defaulted (full). */
export type SettingsInput = Partial<Omit<Settings, 'updatedAt'>>;

/** What a schema cannot say: uniqueness by a field, a field required by another's value, normalisation. */
function finish(out: SettingsInput): void {
  const seen = new Set<string>();
  out.dataPoints?.forEach((d, i) => {
    if (seen.has(d.key)) fail(`dataPoints[${i}].key`, `duplicate data point key "${d.key}"`);
    seen.add(d.key);
  });
  seen.clear();
  out.filters?.forEach((f, i) => {
    if (seen.has(f.id)) fail(`filters[${i}].id`, `duplicate filter id "${f.id}"`);
    seen.add(f.id);
  });
  if (out.crawler?.allowedHosts) out.crawler.allowedHosts = out.crawler.allowedHosts.map((h) => h.toLowerCase());
  const search = out.search;
  if (search) {
    search.language = normalizeLanguage(search.language)!;
    const additions: Record<string, string[]> = {};
    for (const [k, words] of Object.entries(search.stopWordAdditions ?? {})) {
      const code = normalizeLanguage(k);
      if (code === null) fail(`search.stopWordAdditions.${k}`, 'must be keyed by an ISO 639-1 code (e.g. "de") or an English language name');
      additions[code] = [...(additions[code] ?? []), ...words];
    }
    search.stopWordAdditions = additions;
    // In code, not an if/then of the schema: Ajv fills `http` (and its url default) only after
    // an if/then of the enclosing object has run, so an absent url would pass it.
    const semantic = search.semantic;
    if (semantic && semantic.embedder === 'http' && !semantic.http.url) fail('search.semantic.http.url', 'is required when embedder is "http"');
  }
}

/**
 * Validates a settings object from a client. Unknown top-level keys are rejected;
 * `updatedAt` and `status` are accepted and ignored so a `GET` response can be `PUT` back.
 * With `partial: false` missing sections take their defaults (the result is a full object
 * without `updatedAt`); with `partial: true` only the given sections are returned.
 * Throws `AppError('invalid_parameter')` whose `field` is the path of the first problem.
 * `input` is not changed.
 */
export function validateSettings(input: unknown, opts: { partial: boolean }): SettingsInput {
  if (!isObj(input)) throw new AppError('invalid_parameter', 'Settings must be a JSON object.', 'settings');
  // A copy: Ajv fills defaults in place. An absent section is validated empty, which fills it.
  const value: Obj = structuredClone(input);
  if (!opts.partial) for (const name of SETTINGS_SECTIONS) if (value[name] === undefined) value[name] = structuredClone(SETTINGS_SECTION_SCHEMAS[name].default);
  if (!settingsInput.check(value)) {
    const p = settingsInput.problems()[0]!;
    fail(p.field, p.message);
  }
  delete value.updatedAt;
  delete value.status;
  const out = value as SettingsInput;
  finish(out);
  return out;
}

/** Every section of {@link Settings} filled with its default; `updatedAt` is the epoch. */
export function defaultSettings(): Settings {
  return { ...(validateSettings({}, { partial: false }) as Omit<Settings, 'updatedAt'>), updatedAt: new Date(0).toISOString() };
}

/**
 * Applies a JSON Merge Patch (RFC 7396) to `target` without mutating either: objects merge
 * key by key, `null` removes a key (settings then take that field's default), arrays and
 * scalars replace. A patch that is not an object replaces the target whole.
 *
 * @example
 * mergePatch({ crawler: { rootUrls: ['https://a/'], maxDepth: 3 } }, { crawler: { maxDepth: null } })
 * // → { crawler: { rootUrls: ['https://a/'] } }
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return patch;
  // A Map, then fromEntries: a "__proto__" key stays an own key (validation refuses it)
  // instead of replacing the result's prototype.
  const out = new Map<string, unknown>(isObj(target) ? Object.entries(target) : []);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) out.delete(k);
    else out.set(k, mergePatch(out.get(k), v));
  }
  return Object.fromEntries(out);
}

/**
 * Completes stored settings (possibly written by an older version with fewer fields) with
 * today's defaults. Used when reading from the database; never throws on unknown stored data.
 */
export function withDefaults(stored: unknown): Settings {
  const d = defaultSettings();
  if (!isObj(stored)) return d;
  const out = { ...d } as Record<string, unknown>;
  for (const name of SETTINGS_SECTIONS) {
    const v = stored[name];
    if (v === undefined) continue;
    const def = d[name];
    out[name] = isObj(def) && isObj(v) ? { ...def, ...v } : v;
  }
  if (typeof stored.updatedAt === 'string') out.updatedAt = stored.updatedAt;
  return out as unknown as Settings;
}

/**
 * The embedder a project's settings ask for, as the index and search see it: null for `none`,
 * and for `builtin` when the word-vector file is not available (`wordVectors` null).
 *
 * @example embedderSpec(settings.search.semantic, '/srv/sitesift/dist/embeddings/sg100.wv')?.fp // 'builtin:sg100:1'
 */
export function embedderSpec(semantic: SemanticSettings | undefined, wordVectors: string | null): EmbedderSpec | null {
  if (!semantic || semantic.embedder === 'none') return null;
  if (semantic.embedder === 'builtin') return wordVectors ? { kind: 'builtin', fp: embedderFingerprint('builtin'), table: wordVectors } : null;
  if (!semantic.http.url) return null;
  return { kind: 'http', fp: embedderFingerprint('http', semantic.http), ...semantic.http };
}
