/**
 * robots.txt per host (main thread), parsed with robots-parser and cached for an hour.
 *
 * Fetch outcomes follow RFC 9309: 2xx → the rules; 4xx → everything allowed; 5xx or
 * unreachable → everything disallowed for a short while (the site may be down).
 */
import { createRequire } from 'node:module';
import { type Resolver, fetchGuarded } from '../fetch/index.js';

/** The robots-parser object (its typings do not resolve under NodeNext, so declared here). */
interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}
// robots-parser is CommonJS (`module.exports = fn`).
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => Robot;

/** What the crawler needs to know about one URL under its host's robots.txt. */
export interface RobotsVerdict {
  allowed: boolean;
  /** Crawl-delay for our user agent in ms (0 when none). */
  crawlDelayMs: number;
  message?: string;
}

interface Entry {
  robot: Robot | null;
  /** 'rules' = parsed file; 'allow-all' = 4xx; 'unavailable' = 5xx/network. */
  kind: 'rules' | 'allow-all' | 'unavailable';
  expiresAt: number;
}

export interface RobotsCacheOptions {
  clock: () => number;
  resolver: Resolver;
  allowPrivate: boolean;
  ttlMs?: number;
  unavailableTtlMs?: number;
}

/**
 * robots.txt verdicts per origin; one fetch per origin at a time, cached per the module comment.
 *
 * @example
 * const robots = new RobotsCache({ clock: Date.now, resolver: systemResolver, allowPrivate: false });
 * const v = await robots.check('https://docs.example.org/a.html', 'sitesift', { timeoutMs: 10_000 });
 * if (!v.allowed) skip(804, v.message);
 */
export class RobotsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();
  private readonly opts: Required<RobotsCacheOptions>;

  constructor(opts: RobotsCacheOptions) {
    this.opts = { ttlMs: 3_600_000, unavailableTtlMs: 60_000, ...opts };
  }

  /** Answers whether `url` may be fetched by `userAgent`, fetching robots.txt when not cached. */
  async check(url: string, userAgent: string, fetchOpts: { timeoutMs: number }): Promise<RobotsVerdict> {
    const origin = new URL(url).origin;
    const entry = await this.entry(origin, userAgent, fetchOpts.timeoutMs);
    if (entry.kind === 'allow-all') return { allowed: true, crawlDelayMs: 0 };
    if (entry.kind === 'unavailable') return { allowed: false, crawlDelayMs: 0, message: `robots.txt of ${origin} is unavailable; retrying later` };
    const token = userAgent.split(/[/\s]/)[0] || userAgent;
    const allowed = entry.robot!.isAllowed(url, token) !== false;
    const delay = entry.robot!.getCrawlDelay(token);
    return {
      allowed,
      crawlDelayMs: typeof delay === 'number' && delay > 0 ? Math.min(delay, 60) * 1000 : 0,
      ...(allowed ? {} : { message: `Disallowed by ${origin}/robots.txt` }),
    };
  }

  /** Forgets every cached file (settings change, tests). */
  clear(): void {
    this.entries.clear();
  }

  private async entry(origin: string, userAgent: string, timeoutMs: number): Promise<Entry> {
    const now = this.opts.clock();
    const cached = this.entries.get(origin);
    if (cached && cached.expiresAt > now) return cached;
    let p = this.inflight.get(origin);
    if (!p) {
      p = this.load(origin, userAgent, timeoutMs).finally(() => this.inflight.delete(origin));
      this.inflight.set(origin, p);
    }
    return p;
  }

  private async load(origin: string, userAgent: string, timeoutMs: number): Promise<Entry> {
    const robotsUrl = `${origin}/robots.txt`;
    const res = await fetchGuarded(robotsUrl, {
      userAgent,
      timeoutMs,
      maxBytes: 512 * 1024,
      allowPrivate: this.opts.allowPrivate,
      resolver: this.opts.resolver,
    });
    const now = this.opts.clock();
    let entry: Entry;
    if (res.kind === 'response' && res.status >= 200 && res.status < 300) {
      entry = { kind: 'rules', robot: robotsParser(robotsUrl, res.body.toString('utf8')), expiresAt: now + this.opts.ttlMs };
    } else if (res.kind === 'response' && res.status >= 400 && res.status < 500) {
      entry = { kind: 'allow-all', robot: null, expiresAt: now + this.opts.ttlMs };
    } else if (res.kind === 'failure' && res.status === 807) {
      // The page fetch itself will be refused with 807; do not block it with 804 first.
      entry = { kind: 'allow-all', robot: null, expiresAt: now + this.opts.unavailableTtlMs };
    } else {
      entry = { kind: 'unavailable', robot: null, expiresAt: now + this.opts.unavailableTtlMs };
    }
    this.entries.set(origin, entry);
    return entry;
  }
}
