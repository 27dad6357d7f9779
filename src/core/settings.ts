/**
 * Project settings (SPEC §7) declared once, as JSON Schema (TypeBox): each section's fields,
 * limits, defaults and the wording of their failures. From these come the validator
 * (src/projects/settings.ts compiles them with Ajv, filling defaults), the TypeScript types
 * (`Static<>`, exported below), the defaults (`defaultSettings()` is the validation of empty
 * sections) and the settings routes' request and response schemas in the OpenAPI document.
 *
 * The declarations name formats whose checks live on higher floors: `re2` (src/text, the
 * engine that runs the patterns), `cron` (node-cron), `http-url` and `language`
 * (src/projects/settings.ts registers them with their wording).
 *
 * Fields are listed as required where the stored object always has them (so the types do);
 * a client may leave out every field that has a `default` (`inputSchema` publishes that).
 */
import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';
import { ByKey, Nullable, StringEnum, Tagged } from './schema.js';

const MiB = 1024 * 1024;

// ------------------------------------------------------------------ field kinds and their wording

/** A string of at most `max` characters; `nonEmpty`: not empty or blank. */
function Str(opts: { max?: number; nonEmpty?: boolean; format?: string; description?: string; default?: string } = {}) {
  const max = opts.max ?? 10_000;
  return Type.String({
    maxLength: max,
    ...(opts.nonEmpty ? { pattern: '\\S' } : {}),
    ...(opts.format ? { format: opts.format } : {}),
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...(opts.description ? { description: opts.description } : {}),
    errorMessage: { type: 'must be a string', pattern: 'must not be empty', maxLength: `must be at most ${max} characters` },
  });
}

function Int(min: number, max: number, dflt?: number, description?: string) {
  return Type.Integer({ minimum: min, maximum: max, ...(dflt !== undefined ? { default: dflt } : {}), ...(description ? { description } : {}), errorMessage: `must be an integer between ${min} and ${max}` });
}

function Bool(dflt: boolean, description?: string) {
  return Type.Boolean({ default: dflt, ...(description ? { description } : {}), errorMessage: 'must be true or false' });
}

function OneOf<const V extends readonly string[]>(values: V, dflt?: V[number]) {
  return StringEnum(values, { ...(dflt !== undefined ? { default: dflt } : {}), errorMessage: `must be one of ${values.join('|')}` });
}

function List<T extends TSchema>(item: T, opts: { max?: number; min?: number; minMessage?: string; default?: unknown[]; description?: string } = {}) {
  const max = opts.max ?? 10_000;
  return Type.Array(item, {
    maxItems: max,
    ...(opts.min !== undefined ? { minItems: opts.min } : {}),
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...(opts.description ? { description: opts.description } : {}),
    errorMessage: { type: 'must be an array', maxItems: `must have at most ${max} entries`, ...(opts.minMessage ? { minItems: opts.minMessage } : {}) },
  });
}

/** An object with exactly these fields (others are refused, naming the allowed ones). */
function Section<P extends TProperties>(props: P, opts: { default?: unknown; description?: string } = {}) {
  return Type.Object(props, {
    additionalProperties: false,
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...(opts.description ? { description: opts.description } : {}),
    errorMessage: { type: 'must be an object', additionalProperties: `unknown setting (allowed here: ${Object.keys(props).join(', ')})` },
  });
}

const HttpUrl = () => Str({ nonEmpty: true, max: 4096, format: 'http-url' });
/** A regular expression run by RE2 (docs/CRAWLER.md#patterns). */
const Pattern = () => Str({ nonEmpty: true, max: 2000, format: 're2' });
const Cron = (dflt?: string) => Str({ nonEmpty: true, max: 200, format: 'cron', ...(dflt ? { default: dflt } : {}) });
const Host = Type.String({
  maxLength: 253,
  pattern: '^(?:[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(?::\\d{1,5})?$',
  description: 'A host name, optionally with a port; stored in lower case.',
  errorMessage: { type: 'must be a string', maxLength: 'must be at most 253 characters', pattern: 'must be a host name such as "www.example.com"' },
});
const Words = (opts: { min?: number; minMessage?: string } = {}) => List(Str({ nonEmpty: true }), opts);
const TYPO = ['default', 'strict', 'off'] as const;

// ------------------------------------------------------------------ sections

export const CrawlerSettingsSchema = Section(
  {
    rootUrls: List(HttpUrl(), { default: [] }),
    sitemapUrls: List(HttpUrl(), { default: [] }),
    sitemapSchedule: Cron('0 3 * * *'),
    recrawlSchedule: Nullable(Cron(), { default: null }),
    allowedHosts: Nullable(List(Host), { default: null }),
    blacklist: List(Pattern(), { default: [] }),
    whitelist: List(Pattern(), { default: [] }),
    noIndex: List(Pattern(), { default: [] }),
    respectRobotsTxt: Bool(true),
    respectNoindex: Bool(true),
    respectCanonical: Bool(true),
    maxDepth: Int(0, 1000, 10),
    maxPages: Int(0, 10_000_000, 10_000),
    requestDelayMs: Int(0, 600_000, 250),
    concurrencyPerHost: Int(1, 64, 2),
    timeoutMs: Int(100, 600_000, 15_000),
    maxBytes: Int(1024, 1024 * MiB, 10 * MiB),
    userAgent: Str({ nonEmpty: true, max: 512, default: 'sitesift/0.1 (+https://github.com/sitesift)' }),
    removeMissing: Bool(false),
  },
  { default: {} },
);
export type CrawlerSettings = Static<typeof CrawlerSettingsSchema>;

export const ExtractionRuleSchema = Section({
  contentGroup: Type.Optional(Str({ nonEmpty: true, max: 200 })),
  title: Type.Optional(Str({ nonEmpty: true })),
  contentInclude: Type.Optional(Words()),
  contentExclude: Type.Optional(Words()),
  image: Type.Optional(Str({ nonEmpty: true })),
});
export type ExtractionRule = Static<typeof ExtractionRuleSchema>;

export const DataPointRuleSchema = Section({
    key: Str({ nonEmpty: true, max: 200 }),
    selector: Type.Optional(Str({ nonEmpty: true })),
    meta: Type.Optional(Str({ nonEmpty: true })),
    jsonLd: Type.Optional(Str({ nonEmpty: true })),
    attribute: Type.Optional(Str({ nonEmpty: true, max: 200 })),
    type: OneOf(['text', 'number', 'date', 'boolean'] as const, 'text'),
    show: Bool(true),
    sortable: Bool(true),
    searchable: Bool(false),
});
// At most one source: a keyword TypeBox has no builder for, added to the schema.
Object.assign(DataPointRuleSchema, {
  not: { anyOf: [{ required: ['selector', 'meta'] }, { required: ['selector', 'jsonLd'] }, { required: ['meta', 'jsonLd'] }] },
  errorMessage: { ...(DataPointRuleSchema as { errorMessage?: object }).errorMessage, not: 'give at most one of selector, meta, jsonLd' },
});
export type DataPointRule = Static<typeof DataPointRuleSchema>;

export const ResultGroupRuleSchema = Section({
  name: Type.String({
    maxLength: 200,
    pattern: '\\S',
    not: { const: '_' },
    errorMessage: { type: 'must be a string', pattern: 'must not be empty', maxLength: 'must be at most 200 characters', not: '"_" is reserved for results without a group' },
  }),
  urlPattern: Type.Optional(Pattern()),
  selector: Type.Optional(Str({ nonEmpty: true })),
});
export type ResultGroupRule = Static<typeof ResultGroupRuleSchema>;

export const FilterDefinitionSchema = Section({
  id: Type.String({ pattern: '^fid#\\d{1,9}$', errorMessage: { type: 'must be a string', pattern: 'must look like "fid#<n>", e.g. "fid#1"' } }),
  name: Str({ nonEmpty: true, max: 200 }),
  type: OneOf(['range', 'multiple'] as const),
  dataPoint: Type.Optional(Str({ nonEmpty: true, max: 200 })),
});
export type FilterDefinition = Static<typeof FilterDefinitionSchema>;

export const SynonymGroupSchema = Section({ terms: Words({ min: 2, minMessage: 'must list at least 2 equivalent terms' }) });
export const SynonymMappingSchema = Section({ from: Str({ nonEmpty: true, max: 200 }), to: Words({ min: 1, minMessage: 'must list at least 1 term' }) });
export type SynonymGroup = Static<typeof SynonymGroupSchema>;
export type SynonymMapping = Static<typeof SynonymMappingSchema>;
const Synonym = ByKey(
  [['terms', SynonymGroupSchema], ['from', SynonymMappingSchema]] as const,
  'must be {"terms":[...]} (equivalent terms) or {"from":"...","to":[...]} (one-way)',
  { errorMessage: { type: 'must be an object' } },
);

const Trigger = Tagged(
  'type',
  {
    equals: Section({ type: Type.Literal('equals'), value: Str({ nonEmpty: true, max: 1000 }) }),
    contains: Section({ type: Type.Literal('contains'), value: Str({ nonEmpty: true, max: 1000 }) }),
    regex: Section({ type: Type.Literal('regex'), value: Pattern() }),
  },
  { tagMessage: 'must be one of equals|contains|regex', errorMessage: { type: 'must be an object' } },
);
const Action = Tagged(
  'type',
  {
    pin: Section({ type: Type.Literal('pin'), urls: List(HttpUrl(), { max: 100 }) }),
    hide: Section({ type: Type.Literal('hide'), urls: List(HttpUrl(), { max: 100 }) }),
    custom: Section({ type: Type.Literal('custom'), html: Str({ nonEmpty: true, max: 100_000 }), position: Int(0, 10_000), contentGroup: Type.Optional(Str({ nonEmpty: true, max: 200 })) }),
    redirect: Section({ type: Type.Literal('redirect'), url: HttpUrl() }),
  },
  { tagMessage: 'must be one of pin|hide|custom|redirect', errorMessage: { type: 'must be an object' } },
);
export const ResultMappingSchema = Section({ trigger: Trigger, action: Action });
export type ResultMapping = Static<typeof ResultMappingSchema>;

const Weight = (dflt: number) => Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: dflt, errorMessage: 'must be a number greater than 0 and at most 1000' });
export const FieldWeightsSchema = Section({ title: Weight(8), keywords: Weight(6), headings: Weight(4), url: Weight(3), content: Weight(1) }, { default: {} });
export type FieldWeights = Static<typeof FieldWeightsSchema>;

const Unit = (dflt?: number, description?: string) => Type.Number({ minimum: 0, maximum: 1, ...(dflt !== undefined ? { default: dflt } : {}), ...(description ? { description } : {}), errorMessage: 'must be a number between 0 and 1' });

/** Default `semanticRatio` of a project: the blend measured best on paraphrase and known-item sets (docs/SEARCH.md). */
export const DEFAULT_SEMANTIC_RATIO = 0.25;

/** An embedding service speaking the `/v1/embeddings` request shape (OpenAI, Ollama, vLLM, TEI). */
export const HttpEmbedderSettingsSchema = Section(
  {
    url: Type.Union([Type.Literal(''), HttpUrl()], { default: '', description: 'Full URL of the embeddings endpoint, e.g. `http://127.0.0.1:11434/v1/embeddings`.', errorMessage: 'must be "" or an absolute http(s) URL' }),
    model: Str({ max: 200, default: '' }),
    dimensions: Int(1, 8192, 768, 'Length of the vectors the model returns.'),
    apiKey: Nullable(Str({ nonEmpty: true, max: 4096 }), { default: null, description: 'Sent as `Authorization: Bearer …`; answered masked by the settings routes.' }),
    batchSize: Int(1, 2048, 32, 'Texts per request.'),
    timeoutMs: Int(100, 600_000, 10_000, 'Per request, ms.'),
    retries: Int(0, 10, 2, 'Further attempts after a failed request (with backoff).'),
  },
  { default: {} },
);
export type HttpEmbedderSettings = Static<typeof HttpEmbedderSettingsSchema>;

/**
 * Semantic search of a project (`search.semantic`): which embedder turns pages and queries into
 * vectors, the default blend of vector and lexical ranking, and the similarity a vector
 * neighbour needs to count as a result.
 */
export const SemanticSettingsSchema = Section(
  {
    embedder: OneOf(['builtin', 'http', 'none'] as const, 'builtin'),
    semanticRatio: Unit(DEFAULT_SEMANTIC_RATIO, 'Default `semanticRatio` of search and suggest (0: lexical only, 1: vectors only).'),
    threshold: Nullable(Unit(), { default: null, description: "Least cosine similarity of a vector neighbour; null: the embedder's measured default." }),
    http: HttpEmbedderSettingsSchema,
  },
  { default: {} },
);
export type SemanticSettings = Static<typeof SemanticSettingsSchema>;

export const SearchSettingsSchema = Section(
  {
    language: Str({ nonEmpty: true, max: 100, format: 'language', default: 'en', description: 'ISO 639-1 code or English language name; stored as the code.' }),
    stopWords: Nullable(Words(), { default: null, description: 'Replaces the built-in stop words of the language; null: the built-in list.' }),
    stopWordAdditions: Type.Optional(
      Type.Record(Type.String(), Words(), {
        default: {},
        description: 'Words added to the built-in stop words of a language, keyed by ISO 639-1 code or English language name.',
        errorMessage: { type: 'must be an object' },
      }),
    ),
    typoTolerance: OneOf(TYPO, 'default'),
    fieldWeights: FieldWeightsSchema,
    synonyms: List(Synonym, { default: [] }),
    resultMappings: List(ResultMappingSchema, { max: 1000, default: [] }),
    // Optional in the type: settings objects built by hand (tests) leave semantic search off.
    semantic: Type.Optional(SemanticSettingsSchema),
  },
  { default: {} },
);
export type SearchSettings = Static<typeof SearchSettingsSchema>;

export const SuggestSettingsSchema = Section({ minSearches: Int(1, 1_000_000, 2), typoTolerance: OneOf(TYPO, 'default') }, { default: {} });
export type SuggestSettings = Static<typeof SuggestSettingsSchema>;

export const AnalyticsSettingsSchema = Section({ retentionDays: Int(1, 36_500, 365) }, { default: {} });
export type AnalyticsSettings = Static<typeof AnalyticsSettingsSchema>;

/** The sections of a settings object, in the order they are answered and validated. */
export const SETTINGS_SECTION_SCHEMAS = {
  crawler: CrawlerSettingsSchema,
  contentExtraction: List(ExtractionRuleSchema, { max: 1000, default: [] }),
  dataPoints: List(DataPointRuleSchema, { max: 1000, default: [] }),
  resultGroups: List(ResultGroupRuleSchema, { max: 1000, default: [] }),
  filters: List(FilterDefinitionSchema, { max: 1000, default: [] }),
  search: SearchSettingsSchema,
  suggest: SuggestSettingsSchema,
  analytics: AnalyticsSettingsSchema,
};

/** The whole settings object of a project, every section filled with defaults, as stored and answered. */
export const SettingsSchema = Type.Object(
  { ...SETTINGS_SECTION_SCHEMAS, updatedAt: Type.String({ format: 'date-time' }) },
  { description: 'Project settings (docs/API.md#settings).' },
);
export type Settings = Static<typeof SettingsSchema>;
