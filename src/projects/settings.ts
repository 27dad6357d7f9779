/**
 * Project settings (SPEC §7): defaults and validation. Pure functions, any thread.
 *
 * Validation never clamps or guesses: every problem is a 400 `invalid_parameter` whose
 * `field` is the JSON path of the offending value (`search.typoTolerance`,
 * `filters[1].id`). A section that is given is completed with that section's defaults, so
 * `{"crawler":{"rootUrls":[...]}}` is a complete crawler section.
 */
import cron from 'node-cron';
import { embedderFingerprint, patternError, ISO_639_1 } from '../text/index.js';
import {
  AppError, type AnalyticsSettings, type CrawlerSettings, type DataPointRule, type ExtractionRule,
  type FieldWeights, type FilterDefinition, type ResultGroupRule, type ResultMapping,
  type EmbedderSpec, type HttpEmbedderSettings, type SearchSettings, type SemanticSettings, type Settings, type SuggestSettings, type SynonymGroup, type SynonymMapping,
} from '../core/index.js';

const MiB = 1024 * 1024;

/** Every section of {@link Settings} filled with its default; `updatedAt` is the epoch. */
export function defaultSettings(): Settings {
  return {
    crawler: defaultCrawler(),
    contentExtraction: [],
    dataPoints: [],
    resultGroups: [],
    filters: [],
    search: defaultSearch(),
    suggest: { minSearches: 2, typoTolerance: 'default' },
    analytics: { retentionDays: 365 },
    updatedAt: new Date(0).toISOString(),
  };
}

function defaultCrawler(): CrawlerSettings {
  return {
    rootUrls: [],
    sitemapUrls: [],
    sitemapSchedule: '0 3 * * *',
    recrawlSchedule: null,
    allowedHosts: null,
    blacklist: [],
    whitelist: [],
    noIndex: [],
    respectRobotsTxt: true,
    respectNoindex: true,
    respectCanonical: true,
    maxDepth: 10,
    maxPages: 10_000,
    requestDelayMs: 250,
    concurrencyPerHost: 2,
    timeoutMs: 15_000,
    maxBytes: 10 * MiB,
    userAgent: 'sitesift/0.1 (+https://github.com/sitesift)',
    removeMissing: false,
  };
}

function defaultSearch(): SearchSettings {
  return {
    language: 'en',
    stopWords: null,
    stopWordAdditions: {},
    typoTolerance: 'default',
    fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 },
    synonyms: [],
    resultMappings: [],
    semantic: defaultSemantic(),
  };
}

/** Default `semanticRatio` of a project: the blend measured best on paraphrase and known-item sets (docs/SEARCH.md). */
export const DEFAULT_SEMANTIC_RATIO = 0.25;

function defaultSemantic(): SemanticSettings {
  return {
    embedder: 'builtin',
    semanticRatio: DEFAULT_SEMANTIC_RATIO,
    threshold: null,
    http: { url: '', model: '', dimensions: 768, apiKey: null, batchSize: 32, timeoutMs: 10_000, retries: 2 },
  };
}

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

// ------------------------------------------------------------------ validation primitives

type Obj = Record<string, unknown>;

function fail(path: string, message: string): never {
  throw new AppError('invalid_parameter', `${path}: ${message}`, path);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, path: string): Obj {
  if (!isObj(v)) fail(path, 'must be an object');
  return v;
}

function onlyKeys(o: Obj, allowed: readonly string[], path: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) fail(path ? `${path}.${k}` : k, `unknown setting (allowed here: ${allowed.join(', ')})`);
  }
}

function str(v: unknown, path: string, opts: { nonEmpty?: boolean; max?: number } = {}): string {
  if (typeof v !== 'string') fail(path, 'must be a string');
  if (opts.nonEmpty && v.trim() === '') fail(path, 'must not be empty');
  const max = opts.max ?? 10_000;
  if (v.length > max) fail(path, `must be at most ${max} characters`);
  return v;
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, 'must be true or false');
  return v;
}

function int(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    fail(path, `must be an integer between ${min} and ${max}`);
  }
  return v;
}

function arr(v: unknown, path: string, max = 10_000): unknown[] {
  if (!Array.isArray(v)) fail(path, 'must be an array');
  if (v.length > max) fail(path, `must have at most ${max} entries`);
  return v;
}

function strArray(v: unknown, path: string, opts: { nonEmpty?: boolean } = {}): string[] {
  return arr(v, path).map((x, i) => str(x, `${path}[${i}]`, { nonEmpty: opts.nonEmpty ?? true }));
}

function regex(v: unknown, path: string): string {
  const s = str(v, path, { nonEmpty: true, max: 2000 });
  // Checked by the engine and flags that run it (RE2), so what is accepted is what matches.
  const error = patternError(s);
  if (error !== null) fail(path, `is not a valid RE2 regular expression: ${error}`);
  return s;
}

function httpUrl(v: unknown, path: string): string {
  const s = str(v, path, { nonEmpty: true, max: 4096 });
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    fail(path, 'must be an absolute http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(path, 'must be an absolute http(s) URL');
  return s;
}

function cronExpr(v: unknown, path: string): string {
  const s = str(v, path, { nonEmpty: true, max: 200 });
  if (!cron.validate(s)) fail(path, `is not a valid cron expression (e.g. "0 3 * * *")`);
  return s;
}

function oneOf<T extends string>(v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !values.includes(v as T)) fail(path, `must be one of ${values.join('|')}`);
  return v as T;
}

function hostname(v: unknown, path: string): string {
  const s = str(v, path, { nonEmpty: true, max: 253 }).toLowerCase();
  if (!/^[a-z0-9.-]+(:\d{1,5})?$/.test(s) && !/^\[[0-9a-f:.]+\](:\d{1,5})?$/.test(s)) fail(path, 'must be a host name such as "www.example.com"');
  return s;
}

/** Fills the fields of an object section from `given`, rejecting unknown keys. */
function section<T extends object>(given: unknown, path: string, defaults: T, fields: { [K in keyof T]: (v: unknown, p: string) => T[K] }): T {
  const o = obj(given, path);
  onlyKeys(o, Object.keys(fields), path);
  const out = { ...defaults };
  for (const key of Object.keys(fields) as Array<keyof T>) {
    const v = o[key as string];
    if (v !== undefined) out[key] = fields[key](v, `${path}.${String(key)}`);
  }
  return out;
}

// ------------------------------------------------------------------ sections

function crawler(v: unknown): CrawlerSettings {
  return section(v, 'crawler', defaultCrawler(), {
    rootUrls: (x, p) => arr(x, p).map((u, i) => httpUrl(u, `${p}[${i}]`)),
    sitemapUrls: (x, p) => arr(x, p).map((u, i) => httpUrl(u, `${p}[${i}]`)),
    sitemapSchedule: cronExpr,
    recrawlSchedule: (x, p) => (x === null ? null : cronExpr(x, p)),
    allowedHosts: (x, p) => (x === null ? null : arr(x, p).map((h, i) => hostname(h, `${p}[${i}]`))),
    blacklist: (x, p) => arr(x, p).map((r, i) => regex(r, `${p}[${i}]`)),
    whitelist: (x, p) => arr(x, p).map((r, i) => regex(r, `${p}[${i}]`)),
    noIndex: (x, p) => arr(x, p).map((r, i) => regex(r, `${p}[${i}]`)),
    respectRobotsTxt: bool,
    respectNoindex: bool,
    respectCanonical: bool,
    maxDepth: (x, p) => int(x, p, 0, 1000),
    maxPages: (x, p) => int(x, p, 0, 10_000_000),
    requestDelayMs: (x, p) => int(x, p, 0, 600_000),
    concurrencyPerHost: (x, p) => int(x, p, 1, 64),
    timeoutMs: (x, p) => int(x, p, 100, 600_000),
    maxBytes: (x, p) => int(x, p, 1024, 1024 * MiB),
    userAgent: (x, p) => str(x, p, { nonEmpty: true, max: 512 }),
    removeMissing: bool,
  });
}

function contentExtraction(v: unknown): ExtractionRule[] {
  return arr(v, 'contentExtraction', 1000).map((x, i) => {
    const p = `contentExtraction[${i}]`;
    const o = obj(x, p);
    onlyKeys(o, ['contentGroup', 'title', 'contentInclude', 'contentExclude', 'image'], p);
    const rule: ExtractionRule = {};
    if (o.contentGroup !== undefined) rule.contentGroup = str(o.contentGroup, `${p}.contentGroup`, { nonEmpty: true, max: 200 });
    if (o.title !== undefined) rule.title = str(o.title, `${p}.title`, { nonEmpty: true });
    if (o.contentInclude !== undefined) rule.contentInclude = strArray(o.contentInclude, `${p}.contentInclude`);
    if (o.contentExclude !== undefined) rule.contentExclude = strArray(o.contentExclude, `${p}.contentExclude`);
    if (o.image !== undefined) rule.image = str(o.image, `${p}.image`, { nonEmpty: true });
    return rule;
  });
}

function dataPoints(v: unknown): DataPointRule[] {
  const seen = new Set<string>();
  return arr(v, 'dataPoints', 1000).map((x, i) => {
    const p = `dataPoints[${i}]`;
    const o = obj(x, p);
    onlyKeys(o, ['key', 'selector', 'meta', 'jsonLd', 'attribute', 'type', 'show', 'sortable', 'searchable'], p);
    const key = str(o.key, `${p}.key`, { nonEmpty: true, max: 200 });
    if (seen.has(key)) fail(`${p}.key`, `duplicate data point key "${key}"`);
    seen.add(key);
    const sources = (['selector', 'meta', 'jsonLd'] as const).filter((s) => o[s] !== undefined);
    if (sources.length > 1) fail(p, 'give at most one of selector, meta, jsonLd');
    const rule: DataPointRule = {
      key,
      type: o.type === undefined ? 'text' : oneOf(o.type, `${p}.type`, ['text', 'number', 'date', 'boolean'] as const),
      show: o.show === undefined ? true : bool(o.show, `${p}.show`),
      sortable: o.sortable === undefined ? true : bool(o.sortable, `${p}.sortable`),
      searchable: o.searchable === undefined ? false : bool(o.searchable, `${p}.searchable`),
    };
    for (const s of sources) rule[s] = str(o[s], `${p}.${s}`, { nonEmpty: true });
    if (o.attribute !== undefined) rule.attribute = str(o.attribute, `${p}.attribute`, { nonEmpty: true, max: 200 });
    return rule;
  });
}

function resultGroups(v: unknown): ResultGroupRule[] {
  return arr(v, 'resultGroups', 1000).map((x, i) => {
    const p = `resultGroups[${i}]`;
    const o = obj(x, p);
    onlyKeys(o, ['name', 'urlPattern', 'selector'], p);
    const rule: ResultGroupRule = { name: str(o.name, `${p}.name`, { nonEmpty: true, max: 200 }) };
    if (rule.name === '_') fail(`${p}.name`, '"_" is reserved for results without a group');
    if (o.urlPattern !== undefined) rule.urlPattern = regex(o.urlPattern, `${p}.urlPattern`);
    if (o.selector !== undefined) rule.selector = str(o.selector, `${p}.selector`, { nonEmpty: true });
    return rule;
  });
}

function filters(v: unknown): FilterDefinition[] {
  const seen = new Set<string>();
  return arr(v, 'filters', 1000).map((x, i) => {
    const p = `filters[${i}]`;
    const o = obj(x, p);
    onlyKeys(o, ['id', 'name', 'type', 'dataPoint'], p);
    const id = str(o.id, `${p}.id`);
    if (!/^fid#\d{1,9}$/.test(id)) fail(`${p}.id`, 'must look like "fid#<n>", e.g. "fid#1"');
    if (seen.has(id)) fail(`${p}.id`, `duplicate filter id "${id}"`);
    seen.add(id);
    const def: FilterDefinition = {
      id,
      name: str(o.name, `${p}.name`, { nonEmpty: true, max: 200 }),
      type: oneOf(o.type, `${p}.type`, ['range', 'multiple'] as const),
    };
    if (o.dataPoint !== undefined) def.dataPoint = str(o.dataPoint, `${p}.dataPoint`, { nonEmpty: true, max: 200 });
    return def;
  });
}

const TYPO = ['default', 'strict', 'off'] as const;

function synonyms(v: unknown, path: string): Array<SynonymGroup | SynonymMapping> {
  return arr(v, path).map((x, i) => {
    const p = `${path}[${i}]`;
    const o = obj(x, p);
    if (o.terms !== undefined) {
      onlyKeys(o, ['terms'], p);
      const terms = strArray(o.terms, `${p}.terms`);
      if (terms.length < 2) fail(`${p}.terms`, 'must list at least 2 equivalent terms');
      return { terms };
    }
    if (o.from !== undefined) {
      onlyKeys(o, ['from', 'to'], p);
      const to = strArray(o.to, `${p}.to`);
      if (to.length < 1) fail(`${p}.to`, 'must list at least 1 term');
      return { from: str(o.from, `${p}.from`, { nonEmpty: true, max: 200 }), to };
    }
    fail(p, 'must be {"terms":[...]} (equivalent terms) or {"from":"...","to":[...]} (one-way)');
  });
}

function resultMappings(v: unknown, path: string): ResultMapping[] {
  return arr(v, path, 1000).map((x, i) => {
    const p = `${path}[${i}]`;
    const o = obj(x, p);
    onlyKeys(o, ['trigger', 'action'], p);
    const t = obj(o.trigger, `${p}.trigger`);
    onlyKeys(t, ['type', 'value'], `${p}.trigger`);
    const ttype = oneOf(t.type, `${p}.trigger.type`, ['equals', 'contains', 'regex'] as const);
    const value = ttype === 'regex' ? regex(t.value, `${p}.trigger.value`) : str(t.value, `${p}.trigger.value`, { nonEmpty: true, max: 1000 });
    const a = obj(o.action, `${p}.action`);
    const ap = `${p}.action`;
    const atype = oneOf(a.type, `${ap}.type`, ['pin', 'hide', 'custom', 'redirect'] as const);
    let action: ResultMapping['action'];
    switch (atype) {
      case 'pin':
      case 'hide':
        onlyKeys(a, ['type', 'urls'], ap);
        action = { type: atype, urls: arr(a.urls, `${ap}.urls`, 100).map((u, j) => httpUrl(u, `${ap}.urls[${j}]`)) };
        break;
      case 'custom': {
        onlyKeys(a, ['type', 'html', 'position', 'contentGroup'], ap);
        const custom: ResultMapping['action'] = {
          type: 'custom',
          html: str(a.html, `${ap}.html`, { nonEmpty: true, max: 100_000 }),
          position: int(a.position, `${ap}.position`, 0, 10_000),
        };
        if (a.contentGroup !== undefined) custom.contentGroup = str(a.contentGroup, `${ap}.contentGroup`, { nonEmpty: true, max: 200 });
        action = custom;
        break;
      }
      case 'redirect':
        onlyKeys(a, ['type', 'url'], ap);
        action = { type: 'redirect', url: httpUrl(a.url, `${ap}.url`) };
        break;
    }
    return { trigger: { type: ttype, value }, action };
  });
}

function fieldWeights(v: unknown, path: string): FieldWeights {
  const weight = (x: unknown, p: string): number => {
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0 || x > 1000) fail(p, 'must be a number greater than 0 and at most 1000');
    return x;
  };
  return section(v, path, defaultSearch().fieldWeights, { title: weight, keywords: weight, headings: weight, url: weight, content: weight });
}

function search(v: unknown): SearchSettings {
  return section(v, 'search', defaultSearch(), {
    language: (x, p) => {
      const code = normalizeLanguage(str(x, p, { nonEmpty: true, max: 100 }));
      if (code === null) fail(p, 'must be an ISO 639-1 code (e.g. "en") or an English language name (e.g. "German")');
      return code;
    },
    stopWords: (x, p) => (x === null ? null : strArray(x, p)),
    stopWordAdditions: (x, p) => {
      const out: Record<string, string[]> = {};
      for (const [k, v] of Object.entries(obj(x, p))) {
        const code = normalizeLanguage(k);
        if (code === null) fail(`${p}.${k}`, 'must be keyed by an ISO 639-1 code (e.g. "de") or an English language name');
        out[code] = [...(out[code] ?? []), ...strArray(v, `${p}.${k}`)];
      }
      return out;
    },
    typoTolerance: (x, p) => oneOf(x, p, TYPO),
    fieldWeights,
    synonyms,
    resultMappings,
    semantic,
  });
}

function unitNumber(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) fail(path, 'must be a number between 0 and 1');
  return v;
}

function semantic(v: unknown, path: string): SemanticSettings {
  const out = section(v, path, defaultSemantic(), {
    embedder: (x, p) => oneOf(x, p, ['builtin', 'http', 'none'] as const),
    semanticRatio: unitNumber,
    threshold: (x, p) => (x === null ? null : unitNumber(x, p)),
    http: (x, p) => section<HttpEmbedderSettings>(x, p, defaultSemantic().http, {
      url: (y, q) => (y === '' ? '' : httpUrl(y, q)),
      model: (y, q) => str(y, q, { max: 200 }),
      dimensions: (y, q) => int(y, q, 1, 8192),
      apiKey: (y, q) => (y === null ? null : str(y, q, { nonEmpty: true, max: 4096 })),
      batchSize: (y, q) => int(y, q, 1, 2048),
      timeoutMs: (y, q) => int(y, q, 100, 600_000),
      retries: (y, q) => int(y, q, 0, 10),
    }),
  });
  if (out.embedder === 'http' && !out.http.url) fail(`${path}.http.url`, 'is required when embedder is "http"');
  return out;
}

function suggest(v: unknown): SuggestSettings {
  return section(v, 'suggest', defaultSettings().suggest, {
    minSearches: (x, p) => int(x, p, 1, 1_000_000),
    typoTolerance: (x, p) => oneOf(x, p, TYPO),
  });
}

function analytics(v: unknown): AnalyticsSettings {
  return section(v, 'analytics', defaultSettings().analytics, { retentionDays: (x, p) => int(x, p, 1, 36_500) });
}

const SECTIONS = {
  crawler,
  contentExtraction,
  dataPoints,
  resultGroups,
  filters,
  search,
  suggest,
  analytics,
} as const;

export type SettingsSection = keyof typeof SECTIONS;
export const SETTINGS_SECTIONS = Object.keys(SECTIONS) as SettingsSection[];

/** The validated sections of an input; absent sections are absent (partial) or defaulted (full). */
export type SettingsInput = Partial<Omit<Settings, 'updatedAt'>>;

/**
 * Validates a settings object from a client. Unknown top-level keys are rejected;
 * `updatedAt` and `status` are accepted and ignored so a `GET` response can be `PUT` back.
 * With `partial: false` missing sections take their defaults (the result is a full object
 * without `updatedAt`); with `partial: true` only the given sections are returned.
 * Throws `AppError('invalid_parameter')` whose `field` is the path of the first problem.
 */
export function validateSettings(input: unknown, opts: { partial: boolean }): SettingsInput {
  if (!isObj(input)) throw new AppError('invalid_parameter', 'Settings must be a JSON object.', 'settings');
  onlyKeys(input, [...SETTINGS_SECTIONS, 'updatedAt', 'status'], '');
  const out: Record<string, unknown> = {};
  const defaults = defaultSettings();
  for (const name of SETTINGS_SECTIONS) {
    const given = input[name];
    if (given !== undefined) out[name] = SECTIONS[name](given);
    else if (!opts.partial) out[name] = defaults[name];
  }
  return out as SettingsInput;
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
