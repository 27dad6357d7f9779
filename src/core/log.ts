/**
 * Structured JSON logging: one line per event, `{"level","time","msg",...fields}`.
 *
 * A few dozen lines instead of pino: sitesift logs a few events per request and a tiny logger
 * has no transport threads to shut down (see README "Dependencies"). Main thread only; workers
 * return data instead of logging.
 *
 * Buffering (`bufferMs` > 0, what the server uses): debug and info lines — the access log, one
 * per request — are collected and written together at most `bufferMs` later (or at 64 KiB),
 * because a synchronous write (a system call) per line is a large share of the main thread's
 * time on a request answered from a cache. A warn or error line writes everything pending and itself at once, in order; so does
 * {@link Logger.flush} (graceful shutdown) and the process's `exit` event. A `kill -9` can
 * lose at most the last `bufferMs` of info lines, never a warning or an error.
 */
import type { Writable } from 'node:stream';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

/** Each method takes an optional fields object (merged into the line) and a message. */
export interface Logger {
  debug(fields: object | string, msg?: string): void;
  info(fields: object | string, msg?: string): void;
  warn(fields: object | string, msg?: string): void;
  error(fields: object | string, msg?: string): void;
  /** A logger whose lines all carry `bindings` (e.g. `{reqId}`); it shares this one's buffer. */
  child(bindings: LogFields): Logger;
  /** Writes buffered lines now (no-op when unbuffered or empty). */
  flush(): void;
  readonly level: Level | 'silent';
}

export interface LoggerOptions {
  /** Collect debug/info lines for up to this many ms before writing them (0, default: write each). */
  bufferMs?: number;
}

/** The server's buffer for debug/info lines (the access log), ms. */
export const SERVER_LOG_BUFFER_MS = 100;

/** Pending lines are written once they reach this many bytes, whatever the timer says. */
const MAX_PENDING_BYTES = 64 * 1024;

/**
 * Where lines go: straight to the stream, or through a buffer flushed by time, size or urgency.
 *
 * The buffer is a Buffer (memory outside the V8 heap) that each line is encoded into at once,
 * not a string the lines are appended to: an appended line would stay reachable until the next
 * write, up to 64 KiB of text plus a cons-string node per line, which every scavenge of the
 * main isolate would copy and eventually promote to the old generation. Encoded, the line is
 * young garbage like the rest of the request. Each flush hands the whole buffer to the stream
 * (which may keep it: a Writable queues its chunks) and starts a new one.
 */
class LineSink {
  private buf: Buffer | null = null;
  private used = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly onExit = (): void => this.flush();

  constructor(
    private readonly stream: Writable,
    private readonly bufferMs: number,
  ) {
    // Synchronous for files and pipes on Linux, so pending lines still reach them at exit.
    if (bufferMs > 0) process.once('exit', this.onExit);
  }

  /** Writes `line` and a newline (`urgent`: with everything pending, at once). */
  write(line: string, urgent: boolean): void {
    if (this.bufferMs <= 0) {
      this.stream.write(line + '\n');
      return;
    }
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; near a full buffer the exact length
    // decides. A line that does not fit goes after what is pending, and one that could not fit
    // an empty buffer goes as it is.
    let need = line.length * 3 + 1;
    if (need > MAX_PENDING_BYTES - this.used) need = Buffer.byteLength(line) + 1;
    if (need > MAX_PENDING_BYTES - this.used) this.flush();
    if (need > MAX_PENDING_BYTES) {
      this.stream.write(line + '\n');
      return;
    }
    this.buf ??= Buffer.allocUnsafeSlow(MAX_PENDING_BYTES);
    this.used += this.buf.write(line, this.used, 'utf8');
    this.buf[this.used++] = 0x0a;
    if (urgent || this.used >= MAX_PENDING_BYTES) this.flush();
    else if (this.timer === null) this.timer = setTimeout(() => this.flush(), this.bufferMs).unref();
  }

  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.used === 0) return;
    const chunk = this.buf!.subarray(0, this.used);
    this.buf = null;
    this.used = 0;
    this.stream.write(chunk);
  }
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

/** Turns Error values into plain objects so JSON.stringify keeps name, message and stack. */
function plain(value: unknown): unknown {
  if (value instanceof Error) {
    const o: Record<string, unknown> = { name: value.name, message: value.message, stack: value.stack };
    const code = (value as { code?: unknown }).code;
    if (code !== undefined) o.code = code;
    return o;
  }
  return value;
}

/**
 * Creates a logger writing to `stream` (default stdout). `level: 'silent'` drops everything
 * (tests that do not inspect logs). `opts.bufferMs` > 0 buffers debug/info lines (see above).
 */
export function createLogger(level: Level | 'silent', stream: Writable = process.stdout, bindings: LogFields = {}, opts: LoggerOptions = {}): Logger {
  return makeLogger(level, new LineSink(stream, opts.bufferMs ?? 0), bindings);
}

/** Keys the line itself sets: a field or binding with one of these names takes the general path. */
const LINE_KEYS = new Set(['level', 'time', 'msg', '__proto__']);

/**
 * The JSON of `fields` without braces when concatenating it gives the same line as the general
 * path, else null: no Error values (they are made plain), no key of the line or a binding (the
 * general path overwrites those in place), no integer-like key (objects order those first), no
 * `toJSON` of its own.
 */
function fieldsJson(fields: object, bound: ReadonlySet<string>): string | null {
  if (typeof (fields as { toJSON?: unknown }).toJSON === 'function') return null;
  for (const k in fields) {
    if (!Object.hasOwn(fields, k)) continue;
    const c = k.charCodeAt(0);
    if ((c >= 48 && c <= 57) || LINE_KEYS.has(k) || bound.has(k) || (fields as Record<string, unknown>)[k] instanceof Error) return null;
  }
  return JSON.stringify(fields).slice(1, -1);
}

function makeLogger(level: Level | 'silent', sink: LineSink, bindings: LogFields): Logger {
  const min = RANK[level];
  // The bindings serialised once (every access-log line of a request carries its reqId), when
  // they can simply be concatenated: else every line takes the general path.
  // Computed at the first line (a child per request logs one or two).
  let boundKeys: ReadonlySet<string> | null = null;
  let boundPart: string | null = null;
  const bound = (): string | null => {
    if (boundKeys === null) {
      boundKeys = new Set(Object.keys(bindings));
      const plainBindings = ![...boundKeys].some((k) => LINE_KEYS.has(k) || /^\d/.test(k));
      const json = plainBindings ? JSON.stringify(bindings).slice(1, -1) : null;
      boundPart = json === null ? null : json === '' ? '' : `,${json}`;
    }
    return boundPart;
  };
  /** The general path: the line as an object, Error values made plain. */
  const general = (lvl: Level, time: string, fields: object | string, msg?: string): string => {
    const line: Record<string, unknown> = { level: lvl, time, ...bindings };
    if (typeof fields === 'string') {
      line.msg = fields;
    } else {
      for (const [k, v] of Object.entries(fields)) line[k] = plain(v);
      line.msg = msg ?? '';
    }
    try {
      return JSON.stringify(line);
    } catch {
      return JSON.stringify({ level: lvl, time: line.time, msg: line.msg, note: 'unserialisable fields dropped' });
    }
  };
  const write = (lvl: Level, fields: object | string, msg?: string): void => {
    if (RANK[lvl] < min) return;
    const time = isoTime(Date.now());
    let text: string | null = null;
    // Fast path, the same text as `general` (tests compare them): concatenated JSON parts
    // instead of a merged object, the costliest part of an access-log line otherwise.
    const boundPart = bound();
    if (boundPart !== null) {
      try {
        if (typeof fields === 'string') {
          text = `{"level":"${lvl}","time":"${time}"${boundPart},"msg":${JSON.stringify(fields)}}`;
        } else {
          const f = fieldsJson(fields, boundKeys!);
          if (f !== null) text = `{"level":"${lvl}","time":"${time}"${boundPart}${f ? `,${f}` : ''},"msg":${JSON.stringify(msg ?? '')}}`;
        }
      } catch {
        text = null;
      }
    }
    text ??= general(lvl, time, fields, msg);
    sink.write(text, RANK[lvl] >= RANK.warn);
  };
  return {
    level,
    debug: (f, m) => write('debug', f, m),
    info: (f, m) => write('info', f, m),
    warn: (f, m) => write('warn', f, m),
    error: (f, m) => write('error', f, m),
    child: (more) => makeLogger(level, sink, { ...bindings, ...more }),
    flush: () => sink.flush(),
  };
}
