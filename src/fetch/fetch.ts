/**
 * One guarded HTTP fetch with manual redirects, a timeout, a size cap and content decoding
 * (gzip, deflate, br): every request the service makes goes through it — pages and appended
 * content (pool threads, workers/fetch-extract.ts), sitemaps and their children (pool threads,
 * workers/read-sitemap.ts) and robots.txt (main thread).
 *
 * Built on `node:http`/`node:https` with keep-alive agents rather than the global `fetch`
 * (undici): for the small pages of a crawl, the WHATWG fetch machinery (streams, Request and
 * Response objects, header guards) costs more CPU per request than parsing the page.
 *
 * Every hop is checked by the address guard before it is requested, so a redirect to a private
 * address is refused like a direct one.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import zlib from 'node:zlib';
import { checkTarget, pinnedLookup, type LookupFunction, type Resolver } from './address-guard.js';

/** Most redirects followed for one URL. */
export const MAX_REDIRECTS = 5;

/** One redirect response on the way to the final URL. */
export interface RedirectHop {
  url: string;
  status: number;
  location: string;
}

/** How {@link fetchGuarded} fetches. */
export interface FetchOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  allowPrivate: boolean;
  resolver: Resolver;
  /** Extra request headers (Accept etc.). */
  headers?: Record<string, string>;
  /**
   * Undo `Content-Encoding` here (default true). With false the body comes back as received,
   * `maxBytes` capping the bytes received, for a caller that decompresses as a stream with a
   * limit of its own (sitemaps, ./sitemap-file.ts).
   */
  decode?: boolean;
}

/** A fetch that produced an HTTP response (any status). */
export interface FetchedResponse {
  kind: 'response';
  /** The URL that produced `status` (after redirects). */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  hops: RedirectHop[];
}

/** A fetch that ended without a usable response: the crawl status and a message. */
export interface FetchFailure {
  kind: 'failure';
  url: string;
  status: number;
  message: string;
  hops: RedirectHop[];
  /** Whether retrying later may help (network errors, timeouts). */
  retryable: boolean;
}

export type FetchOutcome = FetchedResponse | FetchFailure;

class TooLarge extends Error {}

// One keep-alive agent per protocol and thread: a crawl sends hundreds of requests to a host.
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** Sends a GET; resolves with the response head (the body is still to be read or dropped). */
function send(url: URL, headers: Record<string, string>, signal: AbortSignal, lookup: LookupFunction | undefined): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const options: http.RequestOptions = { method: 'GET', headers, agent: AGENTS[url.protocol as 'http:' | 'https:'], signal };
    if (lookup) options.lookup = lookup as unknown as http.RequestOptions['lookup'];
    const req = lib.request(url, options, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Header values as strings (repeated headers joined with ", ", as fetch's Headers does). */
function headerMap(res: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Reads the raw (still encoded) body; at most `maxBytes`, else {@link TooLarge}. */
function readRaw(res: http.IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (err: Error | null, body?: Buffer): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) {
        res.destroy();
        reject(err);
      } else resolve(body!);
    };
    const onAbort = (): void => settle(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) return settle(new TooLarge());
      chunks.push(chunk);
    });
    res.on('end', () => settle(null, Buffer.concat(chunks, total)));
    res.on('error', (err) => settle(err));
    res.on('close', () => settle(new Error('the connection closed before the body ended')));
  });
}

/**
 * Undoes `Content-Encoding` (last applied first). Decoded bytes are capped at `maxBytes`, so a
 * small gzip body that expands past the cap (a zip bomb) stops at the cap. Unknown codings are
 * passed through.
 */
function decodeBody(raw: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  if (!contentEncoding) return raw;
  const opts = { maxOutputLength: maxBytes + 1 };
  let body = raw;
  try {
    for (const coding of contentEncoding.toLowerCase().split(',').map((c) => c.trim()).reverse()) {
      if (coding === 'gzip' || coding === 'x-gzip') body = zlib.gunzipSync(body, { ...opts, finishFlush: zlib.constants.Z_SYNC_FLUSH });
      else if (coding === 'br') body = zlib.brotliDecompressSync(body, opts);
      else if (coding === 'deflate') {
        // "deflate" is meant to be zlib-wrapped, but some servers send raw deflate.
        try {
          body = zlib.inflateSync(body, opts);
        } catch (err) {
          if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw err;
          body = zlib.inflateRawSync(body, opts);
        }
      }
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new TooLarge();
    throw new Error(`could not decode the ${contentEncoding} body: ${(err as Error).message}`);
  }
  if (body.length > maxBytes) throw new TooLarge();
  return body;
}

/** The 810 outcome of a timeout or network error (retried with backoff). */
function networkFailure(url: string, err: unknown, timedOut: boolean, timeoutMs: number, hops: RedirectHop[]): FetchFailure {
  return {
    kind: 'failure',
    url,
    status: 810,
    message: timedOut ? `Fetch timed out after ${timeoutMs} ms` : `Network error: ${describe(err)}`,
    hops,
    retryable: true,
  };
}

function describe(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; code?: string; message?: string };
  const code = e?.cause?.code ?? e?.code;
  const msg = e?.cause?.message ?? e?.message ?? String(err);
  return code ? `${code}: ${msg}` : msg;
}

/**
 * Fetches `startUrl`, following at most {@link MAX_REDIRECTS} redirects by hand. Never throws:
 * every failure is a {@link FetchFailure} with its crawl status (807 refused, 808 too large,
 * 810 timeout / network error / redirect loop).
 */
export async function fetchGuarded(startUrl: string, opts: FetchOptions): Promise<FetchOutcome> {
  const hops: RedirectHop[] = [];
  const seen = new Set<string>();
  let url = startUrl;
  const controller = new AbortController();
  // One budget for the whole chain: a slow redirect chain must not multiply the timeout.
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
  const headers: Record<string, string> = {
    'user-agent': opts.userAgent,
    accept: 'text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.8',
    'accept-encoding': 'gzip, deflate, br',
    ...opts.headers,
  };
  try {
    for (;;) {
      const verdict = await checkTarget(url, opts.resolver, opts.allowPrivate);
      if (!verdict.ok) return { kind: 'failure', url, status: verdict.status, message: verdict.message, hops, retryable: verdict.retryable };
      seen.add(url);
      let res: http.IncomingMessage;
      try {
        // Connect to the addresses the guard judged (an IP literal host needs no lookup).
        const pin = isIP(new URL(url).hostname.replace(/^\[|\]$/g, '')) ? undefined : pinnedLookup(verdict.addresses);
        res = await send(new URL(url), headers, controller.signal, pin);
      } catch (err) {
        return networkFailure(url, err, controller.signal.aborted, opts.timeoutMs, hops);
      }
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && location) {
        // Drain the body so the keep-alive socket can serve the next request.
        res.resume();
        let next: string;
        try {
          next = new URL(location, url).toString().replace(/#.*$/, '');
        } catch {
          return { kind: 'failure', url, status: 810, message: `Invalid redirect location ${location}`, hops, retryable: false };
        }
        hops.push({ url, status, location: next });
        if (seen.has(next)) {
          return { kind: 'failure', url: startUrl, status: 810, message: `Redirect loop at ${next}`, hops, retryable: false };
        }
        if (hops.length > MAX_REDIRECTS) {
          return { kind: 'failure', url: startUrl, status: 810, message: `More than ${MAX_REDIRECTS} redirects`, hops, retryable: false };
        }
        if (!/^https?:/i.test(next)) {
          return { kind: 'failure', url, status: 806, message: `Redirect to a non-HTTP URL ${next}`, hops, retryable: false };
        }
        url = next;
        continue;
      }
      const resHeaders = headerMap(res);
      let body: Buffer;
      try {
        const decode = opts.decode !== false;
        const declared = Number(resHeaders['content-length']);
        if (Number.isFinite(declared) && declared > opts.maxBytes && (!decode || !resHeaders['content-encoding'])) {
          res.destroy();
          throw new TooLarge();
        }
        const raw = await readRaw(res, opts.maxBytes, controller.signal);
        body = decode ? decodeBody(raw, resHeaders['content-encoding'], opts.maxBytes) : raw;
      } catch (err) {
        if (err instanceof TooLarge) {
          return { kind: 'failure', url, status: 808, message: `Response larger than ${opts.maxBytes} bytes`, hops, retryable: false };
        }
        return networkFailure(url, err, controller.signal.aborted, opts.timeoutMs, hops);
      }
      return { kind: 'response', url, status, headers: resHeaders, body, hops };
    }
  } finally {
    clearTimeout(timer);
  }
}
