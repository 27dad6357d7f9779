/**
 * Structured JSON logging through pino: one line per event,
 * `{"level","time",...bindings,...fields,"msg"}` (docs/LOGGING.md has the format).
 *
 * - Request id: a line logged while a request is handled carries its `reqId`, whichever logger
 *   wrote it ({@link runWithRequestId} around the request, read back by pino's `mixin`).
 * - Redaction by configuration: pino `redact` paths, {@link DEFAULT_REDACT_PATHS} plus
 *   `SITESIFT_LOG_REDACT`; `url`, `path` and `href` fields have their `token`/`key` query
 *   parameters masked.
 * - Level per component: `SITESIFT_LOG_LEVEL=info,crawl=debug,http=warn`; each part of the
 *   server logs through {@link componentLogger} (a child with `component` bound and its level).
 *
 * The server writes through an asynchronous, batched pino destination (sonic-boom,
 * {@link serverDestination}): lines are collected and written by libuv's thread pool, never by a
 * system call on the main thread per request. pino registers the destination with `on-exit-leak-free`, which
 * flushes it synchronously on `process.exit` and the `exit` event (the `pino.final` of older
 * versions is gone); a `kill -9` loses what was not yet written.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';

export type Level = 'debug' | 'info' | 'warn' | 'error';

/** The server's loggers: pino loggers (`debug/info/warn/error(fields?, msg)`, `child`, `flush`). */
export type Logger = PinoLogger;

/** Parts of the server with a level of their own (`SITESIFT_LOG_LEVEL=info,crawl=debug`). */
export const LOG_COMPONENTS = ['server', 'http', 'crawl', 'index', 'analytics', 'jobs'] as const;
export type LogComponent = (typeof LOG_COMPONENTS)[number];

/**
 * Redacted in every line unless configured otherwise: the master key, project keys (`token`,
 * `key`), Authorization headers and `token`/`key` query parameters kept as objects, at the top
 * of a line and inside the objects that carry them. pino `redact` paths (fast-redact syntax).
 * Explicit paths, no leading `*`: a leading wildcard visits every field of every line and made
 * an access-log line cost 2.4x as much CPU (11.7 µs instead of 4.8 µs, pino alone, docs/LOGGING.md).
 */
export const DEFAULT_REDACT_PATHS: readonly string[] = [
  'masterKey', 'config.masterKey', 'cfg.masterKey',
  'token', 'key', 'project.token', 'key.token', 'keys[*].token', 'apiKey',
  'authorization', 'headers.authorization', 'req.headers.authorization', 'request.headers.authorization',
  'query.token', 'query.key', 'req.query.token', 'req.query.key', 'params.token', 'params.key',
];

/** What replaces a redacted value. */
export const REDACTED = '[redacted]';

/** The logging part of the configuration (src/core/config.ts fills it from SITESIFT_LOG_*). */
export interface LogSettings {
  /** Level of every component without its own (`silent` drops everything). */
  logLevel: Level | 'silent';
  /** Levels of single components. */
  logComponents?: Readonly<Partial<Record<LogComponent, Level | 'silent'>>>;
  /** Redact paths added to {@link DEFAULT_REDACT_PATHS}. */
  logRedact?: readonly string[];
}

const requestIds = new AsyncLocalStorage<string>();

/**
 * Runs `fn` so that every line logged until it settles (its awaits and callbacks included)
 * carries `reqId`.
 *
 * @example app.use((ctx, next) => runWithRequestId(randomUUID(), next));
 */
export function runWithRequestId<T>(reqId: string, fn: () => T): T {
  return requestIds.run(reqId, fn);
}

/** Masks the values of `token` and `key` query parameters in a URL-like string. */
export function redactUrl(value: unknown): unknown {
  if (typeof value !== 'string' || !value.includes('?')) return value;
  return value.replace(/([?&](?:token|key)=)[^&#]*/gi, `$1${REDACTED}`);
}

/** The second {@link isoTime} formatted last (ms since the epoch of its start) and its text up to the `.`. */
let isoSecond = NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()` for an integer `ms`: the text of the second before the `.`
 * is formatted once per second and kept, the milliseconds are appended. Why: V8 formats a
 * date through `snprintf`, a visible share of a cached request's main-thread time, and every
 * access-log line needs the time. The same text for every time value (tests compare it with
 * `toISOString` across second, day and year boundaries and backwards). Main thread (the cache
 * is per isolate).
 *
 * @example isoTime(Date.UTC(2024, 0, 2, 3, 4, 5, 6)) // '2024-01-02T03:04:05.006Z'
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms)) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000) * 1000;
  if (second !== isoSecond) {
    // Everything before the milliseconds and the `Z` (years beyond 9999 are longer).
    isoPrefix = new Date(second).toISOString().slice(0, -4);
    isoSecond = second;
  }
  const frac = ms - second;
  return `${isoPrefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
}

/** The settings a logger was made with, read by {@link componentLogger} on it or any child. */
const SETTINGS = Symbol('sitesift.logSettings');
type WithSettings = Logger & { [SETTINGS]?: LogSettings };

const EMPTY = Object.freeze({});

/** How long an info or debug line may wait in the buffer before it is written. */
export const LOG_FLUSH_MS = 100;

/** Bytes buffered before a write is started without waiting for the flush timer. */
const LOG_BUFFER_BYTES = 8 * 1024;

/**
 * The asynchronous destination the server logs to (stdout by default): sonic-boom with
 * `sync: false`, flushed synchronously on exit by pino.
 *
 * Info and debug lines (the access log) are buffered: written when 8 KiB are pending or
 * {@link LOG_FLUSH_MS} after the first pending line, so a busy server starts one write per
 * batch instead of one per request (each write is a hand-off to libuv's thread pool, a thread
 * wake-up that cost more main-thread CPU than the line itself). Warn and error lines are
 * written at once, with everything pending before them, in order. A `kill -9` loses at most
 * the last {@link LOG_FLUSH_MS} of info lines.
 */
export function serverDestination(fd = 1, flushMs = LOG_FLUSH_MS): DestinationStream & { flush(cb?: (err?: Error) => void): void } {
  const boom = pino.destination({ dest: fd, sync: false, minLength: LOG_BUFFER_BYTES });
  let timer: NodeJS.Timeout | null = null;
  const flush = (cb?: (err?: Error) => void): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    boom.flush(cb);
  };
  return {
    flush,
    write(line: string): void {
      boom.write(line);
      // Lines start with their level (the `level` formatter): `{"level":"info",…`.
      if (!line.startsWith('{"level":"info"') && !line.startsWith('{"level":"debug"')) flush();
      else if (timer === null) timer = setTimeout(() => flush(), flushMs).unref();
    },
  };
}

/**
 * Creates the root logger. `settings` is a level or the logging settings of the config (the
 * Config itself fits); `stream` defaults to {@link serverDestination}. Throws on a redact path
 * pino cannot compile.
 *
 * @example
 * const log = createLogger(config);                 // the server's
 * const quiet = createLogger('silent');             // tests that do not read logs
 * const seen = createLogger('info', writable);      // tests that do
 */
export function createLogger(settings: Level | 'silent' | LogSettings, stream?: DestinationStream): Logger {
  const s: LogSettings = typeof settings === 'string' ? { logLevel: settings } : settings;
  // The root passes everything a component may want; components set their own level.
  const levels = [s.logLevel, ...Object.values(s.logComponents ?? {})];
  const rank = (l: string) => (l === 'silent' ? Infinity : pino.levels.values[l]!);
  const lowest = levels.reduce((a, b) => (rank(b) < rank(a) ? b : a));
  const options: LoggerOptions = {
    level: lowest,
    base: null,
    timestamp: () => `,"time":"${isoTime(Date.now())}"`,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: [...DEFAULT_REDACT_PATHS, ...(s.logRedact ?? [])], censor: REDACTED },
    serializers: { err: pino.stdSerializers.err, url: redactUrl, path: redactUrl, href: redactUrl },
    mixin: () => {
      const reqId = requestIds.getStore();
      return reqId === undefined ? EMPTY : { reqId };
    },
    // Outside a request the line's own fields go as they are (pino's default merge would copy them).
    mixinMergeStrategy: (fields, mixed) => (mixed === EMPTY ? fields : Object.assign(mixed, fields)),
  };
  const root = pino(options, stream ?? serverDestination()) as WithSettings;
  root[SETTINGS] = s;
  // Lines logged on the root itself (tests, the CLI) follow the base level.
  return root.level === s.logLevel ? root : root.child({}, { level: s.logLevel });
}

/**
 * A child of `log` for one part of the server: its lines carry `component` and follow that
 * component's level (else the base level).
 *
 * @example const crawlLog = componentLogger(services.log, 'crawl');
 */
export function componentLogger(log: Logger, component: LogComponent): Logger {
  const s = (log as WithSettings)[SETTINGS];
  const level = s?.logComponents?.[component] ?? s?.logLevel ?? log.level;
  return log.child({ component }, { level });
}
