/**
 * Per-client request rate limits (main thread): token buckets in a bounded map.
 *
 * - Public routes (`GET /sites`, `GET /sites/suggest`, `GET /sites/similar`, `POST /sites/queries/log`): one bucket
 *   per client IP and project, applied by `requireSite` once the project is known to exist.
 * - Indexing routes (document pushes and deletes, crawl and sitemap requests): one bucket per
 *   project API key, applied by `requireProject`. The master key is the operator's and is not limited.
 *
 * A bucket holds at most `burst` tokens and gains `perSecond` a second; a request takes one.
 * The map forgets the least recently seen client once it holds `maxClients`: a forgotten
 * client starts again with a full bucket, which is what an idle one would have had anyway.
 */
import { AppError, type Config } from '../core/index.js';

/** What {@link TokenBuckets.take} answers: allowed, or refused with seconds until a token is back. */
export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  /** Clock ms when `tokens` was last brought up to date. */
  at: number;
}

/**
 * Token buckets keyed by client, at most `maxClients` of them (least recently used evicted).
 *
 * @example
 * const buckets = new TokenBuckets({ perSecond: 20, burst: 60, maxClients: 50_000 });
 * const r = buckets.take(`${ip} ${siteId}`);
 * if (!r.ok) ctx.set('Retry-After', String(r.retryAfterSeconds));
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly burst: number;
  private readonly maxClients: number;
  private readonly clock: () => number;

  constructor(opts: { perSecond: number; burst: number; maxClients: number; clock?: () => number }) {
    this.perMs = opts.perSecond / 1000;
    this.burst = opts.burst;
    this.maxClients = Math.max(1, opts.maxClients);
    this.clock = opts.clock ?? Date.now;
  }

  /** Clients currently remembered (bounded by `maxClients`). */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token from `key`'s bucket. */
  take(key: string): TakeResult {
    const now = this.clock();
    let b = this.buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.burst, at: now };
      if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    } else {
      // Re-inserting moves the key to the end of the Map's order: the front is least recently used.
      this.buckets.delete(key);
      // A clock that steps back must not drain the bucket.
      b.tokens = Math.min(this.burst, b.tokens + Math.max(0, now - b.at) * this.perMs);
      b.at = now;
    }
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000)) };
  }
}

/** The limits of one application, built from the configuration; a limit with rate 0 is off (null). */
export interface RateLimits {
  publicRoutes: TokenBuckets | null;
  indexing: TokenBuckets | null;
}

/** Builds the limits from `SITESIFT_RATE_*` (see src/core/config.ts). */
export function createRateLimits(config: Pick<Config, 'ratePublicPerSecond' | 'ratePublicBurst' | 'rateIndexPerSecond' | 'rateIndexBurst' | 'rateMaxClients'>, clock: () => number): RateLimits {
  const make = (perSecond: number, burst: number) => (perSecond > 0 ? new TokenBuckets({ perSecond, burst, maxClients: config.rateMaxClients, clock }) : null);
  return {
    publicRoutes: make(config.ratePublicPerSecond, config.ratePublicBurst),
    indexing: make(config.rateIndexPerSecond, config.rateIndexBurst),
  };
}

/**
 * Takes a token for `key` or throws 429 `rate_limited` with `Retry-After` (seconds). A null
 * limit (disabled) lets everything through.
 */
export function enforce(buckets: TokenBuckets | null, key: string, what: string): void {
  if (buckets === null) return;
  const r = buckets.take(key);
  if (r.ok) return;
  throw new AppError(
    'rate_limited',
    `Too many requests ${what}; retry after ${r.retryAfterSeconds} s.`,
    undefined,
    undefined,
    { 'Retry-After': String(r.retryAfterSeconds) },
  );
}
