/**
 * One guarded HTTP fetch with manual redirects, a timeout, a streamed size cap and content
 * decoding (undici's global fetch decodes gzip/deflate/br itself). Runs in the pool worker
 * (workers/fetch-extract.ts) and on the main thread for robots.txt.
 *
 * Every hop is checked by the address guard before it is requested, so a redirect to a private
 * address is refused like a direct one.
 */
import { checkTarget, type Resolver } from './address-guard.js';

/** Crawl-level outcome codes of SPEC §4 that a fetch can produce. */
export const STATUS = {
  OK: 200,
  BLACKLISTED: 801,
  NOT_WHITELISTED: 802,
  NOINDEX: 803,
  ROBOTS: 804,
  CANONICAL: 805,
  UNSUPPORTED: 806,
  HOST_NOT_ALLOWED: 807,
  TOO_LARGE: 808,
  EMPTY: 809,
  NETWORK: 810,
} as const;

/** Most redirects followed for one URL (SPEC §7). */
export const MAX_REDIRECTS = 5;

/** One redirect response on the way to the final URL. */
export interface RedirectHop {
  url: string;
  status: number;
  location: string;
}

export interface FetchOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  allowPrivate: boolean;
  resolver: Resolver;
  /** Extra request headers (Accept etc.). */
  headers?: Record<string, string>;
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

async function readCapped(res: Response, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes && !res.headers.get('content-encoding')) {
    await res.body?.cancel().catch(() => {});
    throw new TooLarge();
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    if (signal.aborted) throw signal.reason ?? new Error('aborted');
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    // Count decoded bytes: a small gzip body can expand past the cap (zip bomb).
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new TooLarge();
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return Buffer.concat(chunks, total);
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
  try {
    for (;;) {
      const verdict = await checkTarget(url, opts.resolver, opts.allowPrivate);
      if (!verdict.ok) return { kind: 'failure', url, status: 807, message: verdict.message, hops, retryable: false };
      seen.add(url);
      let res: Response;
      try {
        res = await fetch(url, {
          redirect: 'manual',
          signal: controller.signal,
          headers: {
            'user-agent': opts.userAgent,
            accept: 'text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.8',
            'accept-encoding': 'gzip, deflate, br',
            ...opts.headers,
          },
        });
      } catch (err) {
        return networkFailure(url, err, controller.signal.aborted, opts.timeoutMs, hops);
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel().catch(() => {});
        let next: string;
        try {
          next = new URL(location, url).toString().replace(/#.*$/, '');
        } catch {
          return { kind: 'failure', url, status: 810, message: `Invalid redirect location ${location}`, hops, retryable: false };
        }
        hops.push({ url, status: res.status, location: next });
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
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      let body: Buffer;
      try {
        body = await readCapped(res, opts.maxBytes, controller.signal);
      } catch (err) {
        if (err instanceof TooLarge) {
          return { kind: 'failure', url, status: 808, message: `Response larger than ${opts.maxBytes} bytes`, hops, retryable: false };
        }
        return networkFailure(url, err, controller.signal.aborted, opts.timeoutMs, hops);
      }
      return { kind: 'response', url, status: res.status, headers, body, hops };
    }
  } finally {
    clearTimeout(timer);
  }
}
