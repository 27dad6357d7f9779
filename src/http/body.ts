/**
 * Request-body readers for route handlers (main thread). There is no global body parser:
 * each route reads its body explicitly, so routes without a body never buffer one.
 *
 * Limits: a declared `Content-Length` above the limit is refused before reading a byte;
 * chunked bodies are counted while streaming and refused as soon as they cross the limit
 * (the connection is then closed rather than drained). Both → 413 `payload_too_large`.
 */
import type { Context } from 'koa';
import { AppError } from '../core/index.js';
import type { Services } from '../services.js';
import { parseJsonArrayInParts, SPLIT_MIN_BYTES } from './json-array.js';

export interface ReadOptions {
  /** Limit in bytes; default the configured `SITESIFT_MAX_BODY_BYTES` (set per request by app.ts), else 10 MiB. */
  maxBytes?: number;
  /** Resolve `undefined` for an empty body instead of 400 `invalid_json`. */
  optional?: boolean;
}

const DEFAULT_MAX = 10 * 1024 * 1024;

/** The configured body limit (what routes should pass as `maxBytes`). */
export function bodyLimit(services: Pick<Services, 'config'>): number {
  return services.config.maxBodyBytes;
}

/** Media type without parameters, lower-cased ('' when absent). */
function mediaType(ctx: Context): string {
  return (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
}

function isJsonType(t: string): boolean {
  return t === 'application/json' || (t.startsWith('application/') && t.endsWith('+json'));
}

/** The limit for this request: explicit, else the configured one app.ts put in `ctx.state`. */
function limitOf(ctx: Context, opts: ReadOptions): number {
  return opts.maxBytes ?? (ctx.state as { maxBodyBytes?: number }).maxBodyBytes ?? DEFAULT_MAX;
}

/** Reads the raw body as a Buffer, enforcing the size limit. Reads at most once per request. */
export async function readRaw(ctx: Context, maxBytes: number = limitOf(ctx, {})): Promise<Buffer> {
  const state = ctx.state as { rawBody?: Buffer };
  if (state.rawBody) return state.rawBody;
  const tooLarge = () =>
    new AppError('payload_too_large', `Request body is larger than the limit of ${maxBytes} bytes; send less data per request.`);
  const declared = ctx.get('Content-Length');
  if (declared !== '' && Number(declared) > maxBytes) {
    // Not reading the body: close the connection after the answer instead of draining it.
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
  const req = ctx.req;
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        ctx.set('Connection', 'close');
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new AppError('invalid_json', `Could not read the request body (${err.message}).`));
    };
    const onAborted = () => {
      cleanup();
      reject(new AppError('invalid_json', 'The client closed the connection before the body was complete.'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    if (req.readableEnded) {
      resolve();
      return;
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
  const raw = Buffer.concat(chunks, size);
  state.rawBody = raw;
  return raw;
}

/**
 * Reads and parses a JSON body. 415 `unsupported_media_type` when a non-empty body is not
 * sent as `application/json` (or `+json`), 400 `invalid_json` when it does not parse or is
 * empty (unless `optional`), 413 `payload_too_large` over the limit.
 *
 * @example const body = await readJson(ctx, { maxBytes: bodyLimit(services) });
 */
export async function readJson(ctx: Context, opts: ReadOptions = {}): Promise<unknown> {
  const type = mediaType(ctx);
  const hasBody = ctx.get('Content-Length') !== '0' && (ctx.get('Content-Length') !== '' || ctx.get('Transfer-Encoding') !== '');
  if (hasBody && type !== '' && !isJsonType(type)) {
    throw new AppError('unsupported_media_type', `Send the body as JSON with "Content-Type: application/json" (got "${type}").`);
  }
  const raw = await readRaw(ctx, limitOf(ctx, opts));
  // A large array (a batch of pages) is parsed element by element, so no body-sized string
  // lands in V8's large-object space (src/http/json-array.ts); anything else, whole.
  if (raw.length >= SPLIT_MIN_BYTES && type !== '') {
    const bom = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0;
    const parts = parseJsonArrayInParts(raw, bom);
    if (parts !== undefined) return parts;
  }
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trim() === '') {
    if (opts.optional) return undefined;
    throw new AppError('invalid_json', 'The request body is empty; send a JSON document.');
  }
  if (type === '') throw new AppError('unsupported_media_type', 'Send the body as JSON with "Content-Type: application/json".');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', `The request body is not valid JSON: ${(err as Error).message}.`);
  }
}

/**
 * Reads an `application/x-www-form-urlencoded` body into a plain object (last value wins for
 * repeated names). 415 for another content type, 413 over the limit.
 */
export async function readForm(ctx: Context, opts: ReadOptions = {}): Promise<Record<string, string>> {
  const type = mediaType(ctx);
  if (type !== 'application/x-www-form-urlencoded') {
    throw new AppError('unsupported_media_type', 'Send the body as "application/x-www-form-urlencoded".');
  }
  const raw = await readRaw(ctx, limitOf(ctx, opts));
  return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
}

/**
 * Reads a body that may be JSON or a urlencoded form (e.g. `POST /sites/queries/log`,
 * which browsers send with `navigator.sendBeacon`). `text/plain` bodies are parsed as JSON,
 * since sendBeacon with a string sends that type. Returns `{}` for an empty body.
 */
export async function readJsonOrForm(ctx: Context, opts: ReadOptions = {}): Promise<unknown> {
  const type = mediaType(ctx);
  if (type === 'application/x-www-form-urlencoded') return readForm(ctx, opts);
  if (type === 'text/plain') {
    const raw = await readRaw(ctx, limitOf(ctx, opts));
    const text = raw.toString('utf8').trim();
    if (text === '') return {};
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new AppError('invalid_json', `The request body is not valid JSON: ${(err as Error).message}.`);
    }
  }
  const body = await readJson(ctx, { ...opts, optional: true });
  return body === undefined ? {} : body;
}
