/**
 * Query normalisation and the anonymous visitor hash of the query log (SPEC §8).
 * Pure functions plus one small salt holder; all run on the main thread.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Longest query kept in the log, in code points; longer input is cut so one abusive request cannot bloat the log. */
export const MAX_LOGGED_QUERY_CHARS = 200;

/** Printable ASCII words separated by single spaces, no space at either end (or empty). */
const PLAIN_ASCII = /^(?:[\x21-\x7e]+(?: [\x21-\x7e]+)*)?$/;

/**
 * The form a query is logged, counted and suggested in: Unicode NFKC, lower case, trimmed,
 * runs of whitespace collapsed to one space, at most {@link MAX_LOGGED_QUERY_CHARS} characters.
 * Idempotent: `normaliseQuery(normaliseQuery(q)) === normaliseQuery(q)`.
 *
 * @example normaliseQuery('  Ｐostgres   SQL ') // 'postgres sql'
 */
export function normaliseQuery(query: string): string {
  // Most queries are printable ASCII words separated by single spaces: NFKC leaves ASCII as it
  // is and there is no whitespace to collapse or trim, so only the case changes. (The full path
  // below costs ≈ 3 µs per logged search and per suggest request; this test ≈ 0.1 µs.)
  if (query.length <= MAX_LOGGED_QUERY_CHARS && PLAIN_ASCII.test(query)) return query.toLowerCase();
  // Control characters become spaces: they are never meaningful and would disturb key ordering.
  let q = query.normalize('NFKC').toLowerCase().replace(/[\s\p{Cc}]+/gu, ' ').trim();
  if (q.length > MAX_LOGGED_QUERY_CHARS) {
    // Cut on code points (never half a surrogate pair), then re-trim so idempotence holds.
    const points = Array.from(q);
    if (points.length > MAX_LOGGED_QUERY_CHARS) q = points.slice(0, MAX_LOGGED_QUERY_CHARS).join('').trim();
  }
  return q;
}

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** UTC day number (days since the epoch) of a millisecond timestamp. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** Start (ms) of the UTC hour containing `ms`. */
export function floorHour(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/**
 * Computes anonymous visitor hashes: sha256(daily salt ‖ siteId ‖ ip ‖ user agent), cut to
 * 16 hex characters. The salt is random, lives only in memory and is replaced when the UTC
 * day changes (the old one is dropped), so a hash links one visitor's searches within one
 * day and one project and can never be turned back into an IP: not even by whoever holds
 * the database, because the salt was never written anywhere. A restart starts a new salt early,
 * which only splits a visitor in two for the rest of that day.
 */
export class VisitorHasher {
  private salt: Buffer = randomBytes(32);
  private saltDay = -1;
  // Visitors send many searches a day (one per keystroke in a search-as-you-type box): their
  // hash is remembered for the salt's day instead of re-hashed per search (a SHA-256 and five
  // updates cost more than the rest of `record`). Memory only, dropped with the salt; bounded.
  private readonly memo = new Map<string, string>();
  // The visitor of the previous call and its hash (cleared with the salt, like the memo).
  private lastSiteId = '';
  private lastIp = '';
  private lastUserAgent = '';
  private lastHash = '';

  /** At most this many visitors remembered per day (then the memo starts over). */
  static readonly MEMO_SIZE = 10_000;

  /** `now` decides the salt's day; `ip`/`userAgent` may be empty. Main thread, ~1 µs when memoised, less for the previous call's visitor. */
  hash(siteId: string, ip: string | undefined, userAgent: string | undefined, now: number): string {
    const day = dayOf(now);
    if (day !== this.saltDay) {
      this.salt = randomBytes(32);
      this.saltDay = day;
      this.memo.clear();
      this.lastHash = '';
    }
    ip ??= '';
    userAgent ??= '';
    // The same visitor as the call before (record() hashes as each search arrives, and one
    // visitor's searches — typing, paging, refining — often follow each other): no key string
    // to build and hash.
    if (this.lastHash !== '' && siteId === this.lastSiteId && ip === this.lastIp && userAgent === this.lastUserAgent) return this.lastHash;
    const key = `${siteId}\0${ip}\0${userAgent}`;
    let known = this.memo.get(key);
    if (known === undefined) known = this.compute(siteId, ip, userAgent, key);
    this.lastSiteId = siteId;
    this.lastIp = ip;
    this.lastUserAgent = userAgent;
    this.lastHash = known;
    return known;
  }

  private compute(siteId: string, ip: string, userAgent: string, key: string): string {
    const h = createHash('sha256')
      .update(this.salt)
      .update(siteId)
      .update('\0')
      .update(ip)
      .update('\0')
      .update(userAgent)
      .digest('hex')
      .slice(0, 16);
    if (this.memo.size >= VisitorHasher.MEMO_SIZE) this.memo.clear();
    this.memo.set(key, h);
    return h;
  }
}
