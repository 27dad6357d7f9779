/**
 * The validated configuration of one sitesift process (SPEC §1), read once at start.
 *
 * Precedence, lowest to highest: built-in defaults < config file (`SITESIFT_CONFIG` or
 * `--config`, JSON) < environment < `--flags`. Every value is checked here; anything unknown
 * or invalid throws a {@link ConfigError} whose message is one line naming the setting, which
 * `main` prints before exiting 1. This module is the only reader of `process.env` for server
 * settings (callers pass `env` in, so tests never touch the real environment).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { LOG_COMPONENTS, type LogComponent } from './log.js';
import { DEFAULT_MEMORY_MB, MemoryPlanError, planMemory } from './memory.js';

/** Default of {@link Config.openProjects}: enough for every project a small server serves at once. */
export const DEFAULT_OPEN_PROJECTS = 256;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Config {
  host: string;
  port: number;
  /** Absolute path of the data directory. */
  dataDir: string;
  /** From `SITESIFT_MASTER_KEY`; null until the server bootstraps or reads `<dataDir>/master.key`. */
  masterKey: string | null;
  role: 'primary' | 'search';
  /** Worker-pool threads. */
  workers: number;
  /** Nice value of pool threads while they build, merge or crawl (SITESIFT_WORKER_NICE). */
  workerNice: number;
  /** Search threads (SITESIFT_SEARCH_THREADS); 0 searches on the main thread. */
  searchThreads: number;
  /**
   * The memory budget of the whole process in MiB (SITESIFT_MEMORY_MB): every cache of every
   * thread is sized from it (src/core/memory.ts splits it).
   */
  memoryMb: number;
  /**
   * Memory for cached search answers in MiB (SITESIFT_SEARCH_CACHE_MB); 0 disables the cache;
   * null (default): its share of {@link memoryMb}.
   */
  searchCacheMb: number | null;
  /**
   * Memory for the engine's caches (decoded postings, BM25F values, result cards) in MiB, per
   * thread that searches (SITESIFT_SEARCH_MEMORY_MB); null (default): the thread's share of
   * {@link memoryMb}. A ceiling, filled only by large indexes.
   */
  searchMemoryMb: number | null;
  /** Search role: directory or http(s) URL of an export. */
  snapshot: string | null;
  /** Search role: milliseconds between polls of the snapshot for a newer generation (SITESIFT_SNAPSHOT_POLL_MS). */
  snapshotPollMs: number;
  /** Primary: cron expression (UTC) of the scheduled export of every project (SITESIFT_EXPORT_SCHEDULE); null: none. */
  exportSchedule: string | null;
  /** Primary: directory or http(s) URL the scheduled export writes (SITESIFT_EXPORT_OUT). */
  exportOut: string | null;
  /** Primary: how long exported files no current manifest needs are kept before pruning (SITESIFT_EXPORT_PRUNE_GRACE_MS). */
  exportPruneGraceMs: number;
  crawlerAllowPrivate: boolean;
  /** Levels of sitemap indexes an import follows below a configured sitemap (SITESIFT_SITEMAP_MAX_DEPTH). */
  sitemapMaxDepth: number;
  /** Sitemap files an import reads, indexes included (SITESIFT_SITEMAP_MAX_FILES). */
  sitemapMaxFiles: number;
  /** Unique URLs an import keeps (SITESIFT_SITEMAP_MAX_URLS). */
  sitemapMaxUrls: number;
  /** Decompressed MiB read per sitemap file (SITESIFT_SITEMAP_MAX_MB). */
  sitemapMaxMb: number;
  /** Time for a whole sitemap import, ms (SITESIFT_SITEMAP_TIMEOUT_MS). */
  sitemapTimeoutMs: number;
  /** Base log level (SITESIFT_LOG_LEVEL=info, or the older LOG_LEVEL). */
  logLevel: LogLevel;
  /** Levels of single components (SITESIFT_LOG_LEVEL=info,crawl=debug,http=warn); `silent` mutes one. */
  logComponents: Readonly<Partial<Record<LogComponent, LogLevel | 'silent'>>>;
  /** pino redact paths added to the defaults of src/core/log.ts (SITESIFT_LOG_REDACT, comma-separated). */
  logRedact: readonly string[];
  /** Milliseconds between a write's acknowledgement and its visibility (default 1000). */
  refreshMs: number;
  /** Largest accepted request body in bytes. */
  maxBodyBytes: number;
  /** Search role: where query-log batches are pushed. */
  primaryUrl: string | null;
  /** Search role: the node key (created on the primary) that authenticates the pushes. */
  nodeKey: string | null;
  /** Search role: milliseconds between query-log pushes to the primary (default 2000). */
  queryLogPushMs: number;
  /**
   * Projects whose index and query log stay open at once (SITESIFT_OPEN_PROJECTS); the least
   * recently used idle ones are closed past it and reopened on their next use.
   */
  openProjects: number;
  /**
   * Requests per second each client IP may send to the public routes of one project
   * (SITESIFT_RATE_PUBLIC_PER_SECOND); 0 disables the limit.
   */
  ratePublicPerSecond: number;
  /** Burst of the public limit: requests a client may send at once (SITESIFT_RATE_PUBLIC_BURST). */
  ratePublicBurst: number;
  /** Requests per second each project API key may send to the indexing routes (SITESIFT_RATE_INDEX_PER_SECOND); 0 disables. */
  rateIndexPerSecond: number;
  /** Burst of the indexing limit (SITESIFT_RATE_INDEX_BURST). */
  rateIndexBurst: number;
  /**
   * Most clients (IP and project, or key) the limiter remembers at once (SITESIFT_RATE_MAX_CLIENTS);
   * past it the least recently seen are forgotten, so memory stays bounded under many addresses.
   */
  rateMaxClients: number;
  /**
   * Where `GET /metrics` is also served, without a key (SITESIFT_METRICS_ADDRESS, `host:port`,
   * `[v6]:port` or a bare port on 127.0.0.1); null: only on the API address, with the master key.
   */
  metricsAddress: { host: string; port: number } | null;
  /**
   * The built-in embedder's word-vector file (SITESIFT_WORD_VECTORS), written by
   * `make embeddings`; `none` turns the built-in embedder off (projects using it search lexically).
   */
  wordVectors: string;
  /**
   * Crash-test hook (SITESIFT_TEST_PAUSE_IN): where segment work, an export or a search node's
   * query-log batch (`querylog-ack`: committed, not yet answered) stalls so a kill lands there.
   */
  testPauseIn: 'build' | 'merge' | 'commit' | 'manifest' | 'export-blob' | 'export-index' | 'querylog-ack' | null;
}

/**
 * Engine cache memory of a searching thread before the server hands it its share of the
 * budget, MiB (tests and tools that search without a server): src/index/budgets.ts splits it.
 */
export const DEFAULT_SEARCH_MEMORY_MB = 928;

/**
 * Default limits of one sitemap import. The sitemaps protocol allows 50,000 URLs and 50 MB per
 * file and indexes of sitemaps (not of indexes); depth 2 leaves room for sites that nest one level
 * further, and the URL and file caps keep one import's memory and time bounded.
 */
export const DEFAULT_SITEMAP_LIMITS = Object.freeze({ maxDepth: 2, maxFiles: 1000, maxUrls: 200_000, maxMb: 50, timeoutMs: 300_000 });

/** An unknown or invalid setting. `message` is one line that names the setting. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message.replace(/\s*\n\s*/g, ' '));
    this.name = 'ConfigError';
  }
}

type Key = keyof Config;

interface SettingSpec {
  key: Key;
  env: string;
  /** An older name of the variable, read when `env` is not set. */
  alias?: string;
  flag: string;
  parse: (raw: string, name: string) => Config[Key];
  /** Sets more than `key` (a value with parts); default `config[key] = parse(raw)`. */
  assign?: (config: Config, raw: string, name: string) => void;
}

const MiB = 1024 * 1024;

function parseInteger(min: number, max: number) {
  return (raw: string, name: string): number => {
    const s = raw.trim();
    if (!/^-?\d+$/.test(s)) throw new ConfigError(name, `${name} must be an integer between ${min} and ${max}, got "${raw}"`);
    const n = Number(s);
    if (n < min || n > max) throw new ConfigError(name, `${name} must be an integer between ${min} and ${max}, got ${n}`);
    return n;
  };
}

function parseBoolean(raw: string, name: string): boolean {
  const s = raw.trim().toLowerCase();
  if (s === 'true' || s === '1') return true;
  if (s === 'false' || s === '0') return false;
  throw new ConfigError(name, `${name} must be true or false, got "${raw}"`);
}

function parseEnum<T extends string>(values: readonly T[]) {
  return (raw: string, name: string): T => {
    const s = raw.trim().toLowerCase() as T;
    if (!values.includes(s)) throw new ConfigError(name, `${name} must be one of ${values.join('|')}, got "${raw}"`);
    return s;
  };
}

/** `info` or `info,crawl=debug,http=warn`: the base level and per-component levels. */
function assignLogLevel(config: Config, raw: string, name: string): void {
  const components: Partial<Record<LogComponent, LogLevel | 'silent'>> = {};
  let base: LogLevel | null = null;
  for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq < 0) {
      base = parseEnum(LOG_LEVELS)(part, name);
      continue;
    }
    const component = part.slice(0, eq).trim() as LogComponent;
    if (!LOG_COMPONENTS.includes(component)) {
      throw new ConfigError(name, `${name}: unknown log component "${component}" (known: ${LOG_COMPONENTS.join(', ')})`);
    }
    components[component] = parseEnum([...LOG_LEVELS, 'silent'] as const)(part.slice(eq + 1), `${name} (${component})`);
  }
  if (base === null && Object.keys(components).length === 0) throw new ConfigError(name, `${name} must be a level (${LOG_LEVELS.join('|')}), optionally followed by ,component=level`);
  if (base !== null) config.logLevel = base;
  config.logComponents = Object.freeze(components);
}

/** Comma-separated pino redact paths (fast-redact syntax: `a.b`, `a[*].b`, `a["x-y"]`). */
function parseRedactPaths(raw: string, name: string): readonly string[] {
  const paths = raw.split(',').map((p) => p.trim()).filter(Boolean);
  for (const p of paths) {
    if (!/^(?:[A-Za-z_$*][\w$]*|\[(?:\*|\d+|"[^"]*"|'[^']*')\])(?:\.(?:[A-Za-z_$*][\w$]*)|\[(?:\*|\d+|"[^"]*"|'[^']*')\])*$/.test(p)) {
      throw new ConfigError(name, `${name}: "${p}" is not a redact path (fields joined by dots, [*] for any array element)`);
    }
  }
  return Object.freeze(paths);
}

function parseNonEmpty(raw: string, name: string): string {
  if (raw.trim() === '') throw new ConfigError(name, `${name} must not be empty`);
  return raw.trim();
}

function parseHttpUrl(raw: string, name: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError(name, `${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(name, `${name} must be an absolute http(s) URL, got "${raw}"`);
  return u.toString().replace(/\/$/, '');
}

function parseMasterKey(raw: string, name: string): string {
  const s = raw.trim();
  // A guessable master key defeats the whole auth model; 16 chars is the floor we accept.
  if (s.length < 16 || /\s/.test(s)) throw new ConfigError(name, `${name} must be at least 16 characters without spaces`);
  return s;
}

function parseAddress(raw: string, name: string): { host: string; port: number } {
  const s = raw.trim();
  const m = /^(?:(?:\[([0-9a-fA-F:.]+)\]|([^\s/:[\]]+)):)?(\d{1,5})$/.exec(s);
  if (!m || Number(m[3]) > 65535) throw new ConfigError(name, `${name} must be host:port, [ipv6]:port or a port, got "${raw}"`);
  const port = Number(m[3]);
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

function parseHost(raw: string, name: string): string {
  const s = raw.trim();
  if (s === '' || /[\s/]/.test(s)) throw new ConfigError(name, `${name} must be a host name or IP address, got "${raw}"`);
  return s;
}

const SPECS: SettingSpec[] = [
  { key: 'host', env: 'HOST', flag: 'host', parse: parseHost },
  { key: 'port', env: 'PORT', flag: 'port', parse: parseInteger(0, 65535) },
  { key: 'dataDir', env: 'SITESIFT_DATA_DIR', flag: 'data-dir', parse: parseNonEmpty },
  { key: 'masterKey', env: 'SITESIFT_MASTER_KEY', flag: 'master-key', parse: parseMasterKey },
  { key: 'role', env: 'SITESIFT_ROLE', flag: 'role', parse: parseEnum(['primary', 'search'] as const) },
  { key: 'workers', env: 'SITESIFT_WORKERS', flag: 'workers', parse: parseInteger(1, 256) },
  { key: 'workerNice', env: 'SITESIFT_WORKER_NICE', flag: 'worker-nice', parse: parseInteger(0, 19) },
  { key: 'searchThreads', env: 'SITESIFT_SEARCH_THREADS', flag: 'search-threads', parse: parseInteger(0, 256) },
  { key: 'memoryMb', env: 'SITESIFT_MEMORY_MB', flag: 'memory-mb', parse: parseInteger(64, 1_048_576) },
  { key: 'searchCacheMb', env: 'SITESIFT_SEARCH_CACHE_MB', flag: 'search-cache-mb', parse: parseInteger(0, 65536) },
  { key: 'searchMemoryMb', env: 'SITESIFT_SEARCH_MEMORY_MB', flag: 'search-memory-mb', parse: parseInteger(16, 65536) },
  { key: 'snapshot', env: 'SITESIFT_SNAPSHOT', flag: 'snapshot', parse: parseNonEmpty },
  { key: 'snapshotPollMs', env: 'SITESIFT_SNAPSHOT_POLL_MS', flag: 'snapshot-poll-ms', parse: parseInteger(100, 86_400_000) },
  { key: 'exportSchedule', env: 'SITESIFT_EXPORT_SCHEDULE', flag: 'export-schedule', parse: parseNonEmpty },
  { key: 'exportOut', env: 'SITESIFT_EXPORT_OUT', flag: 'export-out', parse: parseNonEmpty },
  { key: 'exportPruneGraceMs', env: 'SITESIFT_EXPORT_PRUNE_GRACE_MS', flag: 'export-prune-grace-ms', parse: parseInteger(0, 30 * 86_400_000) },
  { key: 'crawlerAllowPrivate', env: 'SITESIFT_CRAWLER_ALLOW_PRIVATE', flag: 'crawler-allow-private', parse: parseBoolean },
  { key: 'sitemapMaxDepth', env: 'SITESIFT_SITEMAP_MAX_DEPTH', flag: 'sitemap-max-depth', parse: parseInteger(0, 10) },
  { key: 'sitemapMaxFiles', env: 'SITESIFT_SITEMAP_MAX_FILES', flag: 'sitemap-max-files', parse: parseInteger(1, 100_000) },
  { key: 'sitemapMaxUrls', env: 'SITESIFT_SITEMAP_MAX_URLS', flag: 'sitemap-max-urls', parse: parseInteger(1, 10_000_000) },
  { key: 'sitemapMaxMb', env: 'SITESIFT_SITEMAP_MAX_MB', flag: 'sitemap-max-mb', parse: parseInteger(1, 1024) },
  { key: 'sitemapTimeoutMs', env: 'SITESIFT_SITEMAP_TIMEOUT_MS', flag: 'sitemap-timeout-ms', parse: parseInteger(1000, 86_400_000) },
  { key: 'logLevel', env: 'SITESIFT_LOG_LEVEL', alias: 'LOG_LEVEL', flag: 'log-level', parse: parseEnum(LOG_LEVELS), assign: assignLogLevel },
  { key: 'logRedact', env: 'SITESIFT_LOG_REDACT', flag: 'log-redact', parse: parseRedactPaths },
  { key: 'refreshMs', env: 'SITESIFT_REFRESH_MS', flag: 'refresh-ms', parse: parseInteger(10, 3_600_000) },
  { key: 'maxBodyBytes', env: 'SITESIFT_MAX_BODY_BYTES', flag: 'max-body-bytes', parse: parseInteger(1024, 1024 * MiB) },
  { key: 'primaryUrl', env: 'SITESIFT_PRIMARY_URL', flag: 'primary-url', parse: parseHttpUrl },
  { key: 'nodeKey', env: 'SITESIFT_NODE_KEY', flag: 'node-key', parse: parseNonEmpty },
  { key: 'queryLogPushMs', env: 'SITESIFT_QUERYLOG_PUSH_MS', flag: 'querylog-push-ms', parse: parseInteger(50, 3_600_000) },
  { key: 'openProjects', env: 'SITESIFT_OPEN_PROJECTS', flag: 'open-projects', parse: parseInteger(1, 1_000_000) },
  { key: 'ratePublicPerSecond', env: 'SITESIFT_RATE_PUBLIC_PER_SECOND', flag: 'rate-public-per-second', parse: parseInteger(0, 1_000_000) },
  { key: 'ratePublicBurst', env: 'SITESIFT_RATE_PUBLIC_BURST', flag: 'rate-public-burst', parse: parseInteger(1, 1_000_000) },
  { key: 'rateIndexPerSecond', env: 'SITESIFT_RATE_INDEX_PER_SECOND', flag: 'rate-index-per-second', parse: parseInteger(0, 1_000_000) },
  { key: 'rateIndexBurst', env: 'SITESIFT_RATE_INDEX_BURST', flag: 'rate-index-burst', parse: parseInteger(1, 1_000_000) },
  { key: 'metricsAddress', env: 'SITESIFT_METRICS_ADDRESS', flag: 'metrics-address', parse: parseAddress },
  { key: 'rateMaxClients', env: 'SITESIFT_RATE_MAX_CLIENTS', flag: 'rate-max-clients', parse: parseInteger(100, 10_000_000) },
  // Crash tests only: makes segment builds/merges/commits stall at that point (never in production).
  { key: 'wordVectors', env: 'SITESIFT_WORD_VECTORS', flag: 'word-vectors', parse: parseNonEmpty },
  { key: 'testPauseIn', env: 'SITESIFT_TEST_PAUSE_IN', flag: 'test-pause-in', parse: parseEnum(['build', 'merge', 'commit', 'manifest', 'export-blob', 'export-index', 'querylog-ack'] as const) },
];

/**
 * `SITESIFT_*` variables that are not server settings but are legitimately present in the
 * environment (read by the CLI or the config loader itself). Anything else with the prefix is
 * a typo and is rejected so that a misspelt setting never silently falls back to its default.
 */
export const OTHER_KNOWN_ENV = new Set(['SITESIFT_CONFIG', 'SITESIFT_URL']);

export function defaultConfig(): Config {
  return {
    host: '127.0.0.1',
    port: 8080,
    dataDir: './data',
    masterKey: null,
    role: 'primary',
    workers: Math.max(1, os.availableParallelism()),
    workerNice: 10,
    searchThreads: Math.max(1, os.availableParallelism()),
    memoryMb: DEFAULT_MEMORY_MB,
    searchCacheMb: null,
    searchMemoryMb: null,
    snapshot: null,
    snapshotPollMs: 5000,
    exportSchedule: null,
    exportOut: null,
    exportPruneGraceMs: 3_600_000,
    crawlerAllowPrivate: false,
    sitemapMaxDepth: DEFAULT_SITEMAP_LIMITS.maxDepth,
    sitemapMaxFiles: DEFAULT_SITEMAP_LIMITS.maxFiles,
    sitemapMaxUrls: DEFAULT_SITEMAP_LIMITS.maxUrls,
    sitemapMaxMb: DEFAULT_SITEMAP_LIMITS.maxMb,
    sitemapTimeoutMs: DEFAULT_SITEMAP_LIMITS.timeoutMs,
    logLevel: 'info',
    logComponents: Object.freeze({}),
    logRedact: Object.freeze([]),
    refreshMs: 1000,
    maxBodyBytes: 10 * MiB,
    primaryUrl: null,
    nodeKey: null,
    queryLogPushMs: 2000,
    openProjects: DEFAULT_OPEN_PROJECTS,
    ratePublicPerSecond: 20,
    ratePublicBurst: 60,
    rateIndexPerSecond: 20,
    rateIndexBurst: 100,
    rateMaxClients: 50_000,
    metricsAddress: null,
    wordVectors: DEFAULT_WORD_VECTORS,
    testPauseIn: null,
  };
}

/**
 * Where `make embeddings` writes the built-in embedder's word vectors: `dist/embeddings/sg100.wv`
 * in the checkout (found from this file, whether it runs from src/ or dist/).
 */
export const DEFAULT_WORD_VECTORS = ((): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'embeddings', 'sg100.wv');
    dir = path.dirname(dir);
  }
  return path.resolve('dist/embeddings/sg100.wv');
})();

/** Names accepted in `--help` output and docs: env name, flag and default of each setting. */
export function describeSettings(): Array<{ env: string; flag: string; default: string }> {
  const d = defaultConfig();
  return SPECS.map((s) => {
    const v = d[s.key];
    return { env: s.env, flag: `--${s.flag}`, default: v === null || (Array.isArray(v) && v.length === 0) ? '(none)' : String(v) };
  });
}

/** Splits `--name=value` / `--name value` / `--bool-flag` arguments; positional arguments are rejected. */
function parseFlags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new ConfigError(arg, `unexpected argument "${arg}" (settings are given as --name=value)`);
    const eq = arg.indexOf('=');
    let name: string;
    let value: string;
    if (eq >= 0) {
      name = arg.slice(2, eq);
      value = arg.slice(eq + 1);
    } else {
      name = arg.slice(2);
      const next = argv[i + 1];
      if (name === 'crawler-allow-private' && (next === undefined || next.startsWith('--'))) {
        value = 'true';
      } else {
        if (next === undefined) throw new ConfigError(`--${name}`, `--${name} needs a value`);
        value = next;
        i++;
      }
    }
    if (name !== 'config' && !SPECS.some((s) => s.flag === name)) throw new ConfigError(`--${name}`, `unknown option --${name}`);
    out.set(name, value);
  }
  return out;
}

function readConfigFile(file: string): Map<SettingSpec, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message;
    throw new ConfigError('SITESIFT_CONFIG', `SITESIFT_CONFIG: cannot read ${file}: ${reason}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('SITESIFT_CONFIG', `SITESIFT_CONFIG: ${file} must contain a JSON object`);
  }
  const out = new Map<SettingSpec, string>();
  for (const [k, v] of Object.entries(parsed)) {
    // Either the env name (PORT) or the config field (port) is accepted as a key.
    const spec = SPECS.find((s) => s.env === k || s.alias === k || s.key === k);
    if (!spec) throw new ConfigError(k, `SITESIFT_CONFIG: unknown setting "${k}" in ${file}`);
    if (v === null) continue;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw new ConfigError(spec.env, `${spec.env} in ${file} must be a string, number or boolean`);
    }
    out.set(spec, String(v));
  }
  return out;
}

/**
 * Checks that the memory plan (src/core/memory.ts) can be made. Thread counts left at their
 * defaults (one per CPU) are lowered, the larger first, until the threads' bases fit in the
 * budget, so a many-core machine with the default budget still starts; explicit settings that
 * do not fit throw a {@link ConfigError} naming the setting.
 */
function fitThreadsToBudget(c: Config, explicit: ReadonlySet<Key>): void {
  for (;;) {
    try {
      planMemory(c);
      return;
    } catch (err) {
      if (!(err instanceof MemoryPlanError)) throw err;
      const canSearch = !explicit.has('searchThreads') && c.searchThreads > 1;
      const canPool = !explicit.has('workers') && c.workers > 1;
      if (canPool && (!canSearch || c.workers >= c.searchThreads)) c.workers--;
      else if (canSearch) c.searchThreads--;
      else throw new ConfigError(err.setting, err.message);
    }
  }
}

/**
 * Builds the frozen {@link Config} from command-line flags, the environment and an optional
 * JSON config file (`file`, else `--config`, else `SITESIFT_CONFIG`). Pure apart from reading
 * that file. Throws {@link ConfigError} (one line, names the setting) on the first problem.
 *
 * @example loadConfig(['--port', '0'], { SITESIFT_DATA_DIR: '/tmp/x' })
 */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv, file?: string): Readonly<Config> {
  const flags = parseFlags(argv);
  for (const name of Object.keys(env)) {
    if (name.startsWith('SITESIFT_') && !OTHER_KNOWN_ENV.has(name) && !SPECS.some((s) => s.env === name)) {
      throw new ConfigError(name, `unknown setting ${name} (known: ${SPECS.filter((s) => s.env.startsWith('SITESIFT_')).map((s) => s.env).join(', ')})`);
    }
  }
  const config = defaultConfig() as unknown as Record<Key, unknown>;
  const configFile = file ?? flags.get('config') ?? (env.SITESIFT_CONFIG || undefined);
  const fromFile = configFile ? readConfigFile(configFile) : new Map<SettingSpec, string>();

  const explicit = new Set<Key>();
  for (const spec of SPECS) {
    let raw: string | undefined;
    let name = spec.env;
    if (fromFile.has(spec)) raw = fromFile.get(spec);
    // An empty env var means "unset" (shells make `X= cmd` easy), so it does not override.
    const envName = !env[spec.env] && spec.alias && env[spec.alias] ? spec.alias : spec.env;
    const envValue = env[envName];
    if (envValue !== undefined && envValue !== '') {
      raw = envValue;
      name = envName;
    }
    if (flags.has(spec.flag)) {
      raw = flags.get(spec.flag);
      name = `--${spec.flag}`;
    }
    if (raw === undefined) continue;
    explicit.add(spec.key);
    if (spec.assign) spec.assign(config as unknown as Config, raw, name);
    else config[spec.key] = spec.parse(raw, name);
  }

  const out = config as unknown as Config;
  out.dataDir = path.resolve(out.dataDir);
  if (out.role === 'search' && out.snapshot === null) {
    throw new ConfigError('SITESIFT_SNAPSHOT', 'SITESIFT_SNAPSHOT is required when SITESIFT_ROLE=search (a directory or http(s) URL of an export)');
  }
  if (out.snapshot !== null && !/^https?:\/\//i.test(out.snapshot)) out.snapshot = path.resolve(out.snapshot);
  if (out.exportSchedule !== null && out.exportOut === null) {
    throw new ConfigError('SITESIFT_EXPORT_OUT', 'SITESIFT_EXPORT_OUT is required with SITESIFT_EXPORT_SCHEDULE (a directory or http(s) URL to export to)');
  }
  if (out.exportOut !== null && !/^https?:\/\//i.test(out.exportOut)) out.exportOut = path.resolve(out.exportOut);
  fitThreadsToBudget(out, explicit);
  if (out.wordVectors !== 'none') out.wordVectors = path.resolve(out.wordVectors);
  return Object.freeze(out);
}
