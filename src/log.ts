/**
 * Structured JSON logging: one line per event, `{"level","time","msg",...fields}`.
 *
 * A dozen lines instead of pino: sitesift logs a few events per request, synchronous writes
 * of one short line are cheap at that rate, and a tiny logger has no transport threads to
 * shut down (see README "Dependencies"). Main thread only; workers return data instead of logging.
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
  /** A logger whose lines all carry `bindings` (e.g. `{reqId}`). */
  child(bindings: LogFields): Logger;
  readonly level: Level | 'silent';
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
 * (tests that do not inspect logs).
 */
export function createLogger(level: Level | 'silent', stream: Writable = process.stdout, bindings: LogFields = {}): Logger {
  const min = RANK[level];
  const write = (lvl: Level, fields: object | string, msg?: string): void => {
    if (RANK[lvl] < min) return;
    const line: Record<string, unknown> = { level: lvl, time: new Date().toISOString(), ...bindings };
    if (typeof fields === 'string') {
      line.msg = fields;
    } else {
      for (const [k, v] of Object.entries(fields)) line[k] = plain(v);
      line.msg = msg ?? '';
    }
    let text: string;
    try {
      text = JSON.stringify(line);
    } catch {
      text = JSON.stringify({ level: lvl, time: line.time, msg: line.msg, note: 'unserialisable fields dropped' });
    }
    stream.write(text + '\n');
  };
  return {
    level,
    debug: (f, m) => write('debug', f, m),
    info: (f, m) => write('info', f, m),
    warn: (f, m) => write('warn', f, m),
    error: (f, m) => write('error', f, m),
    child: (more) => createLogger(level, stream, { ...bindings, ...more }),
  };
}
