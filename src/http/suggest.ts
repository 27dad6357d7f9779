/**
 * `GET /sites/suggest` (seed 4.7, SPEC §6): public, identified by `site`. Main thread.
 *
 * Two ways in, one answer:
 * - the Koa route ({@link SuggestRoute.register}): every request the lean path declines —
 *   invalid parameters (the errors middleware renders them), a project whose index is not open
 *   yet, HEAD, anything unusual in the URL;
 * - the lean path ({@link SuggestRoute.lean}), called by the app's request handler in front of
 *   the Koa middleware chain: valid `GET /sites/suggest?…` requests of an open project. Why:
 *   with its answer cached a suggest costs ≈ 10–20 µs of route work, while the generic stack
 *   around it (context objects, six middleware, the router matching every route, the access
 *   log through a child logger) cost ≈ 0.1 ms of the ≈ 0.17 ms a cached request took on the
 *   main thread — suggest is called on every keystroke. The lean path does what the chain does
 *   for this route and nothing else: the same parameter readers (a parse error declines, so
 *   Koa renders it), a request id in `X-Request-Id`, the CORS headers, the same access-log line,
 *   the same headers in the same order and the same body bytes (tests compare raw responses of
 *   both paths).
 *
 * Answers come from {@link SuggestCache} (src/search/suggest.ts); a miss searches on the search
 * threads, the snapshot pinned until the answer is there. `querySuggestions` (from the query
 * log, which changes with every flush) is added per request.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ProjectIndex } from '../index/contract.js';
import { parseFilters } from '../search/filters.js';
import { SuggestCache, suggestBody, type SuggestAnswer, type SuggestParams } from '../search/suggest.js';
import type { Services } from '../services.js';
import type { Settings } from '../types.js';
import { requireSite } from './auth.js';
import { corsHeaders } from './cors.js';
import { parseBoolParam, parseIntParam, queryParam } from './params.js';
import { requireQuery, stringArrayParam } from './search.js';

/** What the parameter readers use of a Koa context (the lean path builds just this). */
type ParamSource = Pick<Context, 'query' | 'state'>;

/** A validated suggest request. */
interface SuggestRequest {
  siteId: string;
  settings: Settings;
  params: SuggestParams;
  maxQuerySuggestions: number;
}

/** Raw URL prefix the lean path answers. */
const LEAN_PREFIX = '/sites/suggest?';

/**
 * Characters after which parseurl (Koa's URL parser) falls back to `url.parse`, which may
 * re-escape the query: such URLs take the Koa path, so both paths always read the same values.
 */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * Koa's `ctx.query` of a query string (koa/lib/search-params.js: `URLSearchParams`, repeated
 * keys → arrays), or null when this parser cannot promise the same values: a leading `?`
 * (URLSearchParams strips it) or a percent-encoding that is not valid UTF-8 (URLSearchParams
 * substitutes U+FFFD where decodeURIComponent throws). A hand loop because URLSearchParams and
 * its per-key `getAll` were ≈ 10 µs of a ≈ 100 µs cached suggest in a profile.
 */
function parseQuery(qs: string): Context['query'] | null {
  if (qs.charCodeAt(0) === 0x3f) return null;
  const obj: Context['query'] = {};
  let start = 0;
  while (start <= qs.length) {
    let end = qs.indexOf('&', start);
    if (end === -1) end = qs.length;
    if (end > start) {
      const eq = qs.indexOf('=', start);
      const split = eq === -1 || eq > end ? end : eq;
      const key = decodePart(qs.slice(start, split));
      const value = split === end ? '' : decodePart(qs.slice(split + 1, end));
      if (key === null || value === null) return null;
      const prev = Object.hasOwn(obj, key) ? obj[key] : undefined;
      const next = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
      // defineProperty like Koa, so a key "__proto__" is a plain key.
      Object.defineProperty(obj, key, { value: next, writable: true, enumerable: true, configurable: true });
    }
    start = end + 1;
  }
  return obj;
}

/** One form-urlencoded name or value (`+` is a space), or null when not valid UTF-8. */
function decodePart(s: string): string | null {
  if (s.indexOf('%') === -1) return s.indexOf('+') === -1 ? s : s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * The suggest route: one answer cache per app (all projects share its entry budget), the Koa
 * route and the lean path in front of Koa. Main thread.
 */
export class SuggestRoute {
  readonly cache = new SuggestCache();
  /** Requests answered by the lean path (tests, diagnostics). */
  leanAnswers = 0;
  /**
   * Project indexes the Koa route has awaited, by the registry's promise for them: the lean
   * path needs the index synchronously. Keyed by the promise (`indexes.get` returns the same
   * one while the store is open), so a deleted and re-created project — a new promise — is
   * never answered from the old store.
   */
  private readonly opened = new WeakMap<Promise<ProjectIndex>, ProjectIndex>();

  constructor(private readonly services: Services) {}

  /** Registers the Koa route (requests the lean path declined). */
  register(router: Router): void {
    router.get('/sites/suggest', async (ctx) => {
      const req = this.read(ctx);
      const pending = this.services.indexes.get(req.siteId);
      const index = await pending;
      this.opened.set(pending, index);
      const snap = index.acquire();
      let answer: SuggestAnswer;
      try {
        answer = await this.answer(index, snap, req);
      } finally {
        snap.release();
      }
      ctx.type = 'application/json';
      ctx.body = this.body(req, answer);
    });
  }

  /**
   * The lean path for `req`: true when it took the request (it answers from the cache at once,
   * or after a miss's search; a miss whose search fails is handed to `fallback`, the Koa
   * handler, which renders the error), false when Koa must handle it (nothing was written).
   */
  lean(req: IncomingMessage, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => unknown): boolean {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith(LEAN_PREFIX) || UNUSUAL_URL.test(url)) return false;
    const started = process.hrtime.bigint();
    let sr: SuggestRequest;
    let index: ProjectIndex | undefined;
    try {
      // The Koa route's readers over a context of just `query` and `state`; anything they
      // reject (or anything else thrown) declines, and Koa renders the error.
      const query = parseQuery(url.slice(LEAN_PREFIX.length));
      if (query === null) return false;
      sr = this.read({ query, state: {} } as ParamSource);
      index = this.opened.get(this.services.indexes.get(sr.siteId));
    } catch {
      return false;
    }
    if (!index) return false;
    const snap = index.acquire();
    let hit: SuggestAnswer | undefined;
    try {
      hit = this.cache.peek(snap, sr.settings, sr.params, index);
      if (hit) this.send(res, req, sr, this.body(sr, hit), started);
    } catch {
      snap.release();
      return false;
    }
    if (hit) {
      snap.release();
      return true;
    }
    this.answer(index, snap, sr).then(
      (answer) => {
        snap.release();
        try {
          this.send(res, req, sr, this.body(sr, answer), started);
        } catch {
          // Nothing was written (writeHead validates before it sends): the chain answers,
          // rendering whatever fails again as the route's error. Never an unhandled rejection.
          if (!res.headersSent) void fallback(req, res);
        }
      },
      () => {
        snap.release();
        void fallback(req, res);
      },
    );
    return true;
  }

  /** Validates the parameters (400s name the parameter), Koa route and lean path alike. */
  private read(ctx: ParamSource): SuggestRequest {
    // The readers only use `query` and `state` (src/http/params.ts, auth.ts).
    const c = ctx as Context;
    const siteId = requireSite(c, this.services);
    const query = requireQuery(c);
    const settings = this.services.projects.getSettings(siteId);
    const limit = parseIntParam(c, 'limit', { min: 1, max: 2, default: 2 });
    const maxQuerySuggestions = parseIntParam(c, 'maxQuerySuggestions', { min: 0, max: 10, default: 3 });
    const groupResults = parseBoolParam(c, 'groupResults', true);
    const params: SuggestParams = {
      query,
      filters: parseFilters(queryParam(c, 'filters'), settings.filters),
      limit,
      groupResults,
      includeContent: parseBoolParam(c, 'includeContent', false),
      highlightQueryTerms: parseBoolParam(c, 'highlightQueryTerms', false),
      includeContentGroups: stringArrayParam(c, 'includeContentGroups'),
      excludeContentGroups: stringArrayParam(c, 'excludeContentGroups'),
    };
    return { siteId, settings, params, maxQuerySuggestions };
  }

  /**
   * Cached per (index, generation, settings, parameters): equal to the general search; a miss
   * searches on the search threads (`snap` stays pinned until it settles).
   */
  private answer(index: ProjectIndex, snap: ReturnType<ProjectIndex['acquire']>, sr: SuggestRequest): Promise<SuggestAnswer> {
    // Not through the search answer cache: this route caches its pages itself.
    return this.cache.getAsync(snap, sr.settings, sr.params, index, (sp) => this.services.searcher.run(index, snap, sr.settings, sp, { cache: false }));
  }

  /** The response body: the cached results serialised once, the query and `querySuggestions` new. */
  private body(sr: SuggestRequest, answer: SuggestAnswer): string {
    const qs =
      sr.maxQuerySuggestions > 0
        ? this.services.analytics.querySuggestions(sr.siteId, sr.params.query, { max: sr.maxQuerySuggestions, minSearches: sr.settings.suggest.minSearches })
        : [];
    return suggestBody(sr.params.query, answer, qs);
  }

  /**
   * Writes a 200 the way the Koa chain does for this route (src/http/app.ts): `X-Request-Id`,
   * the CORS headers, `Content-Type`, `Content-Length` in this order, then the access-log line.
   */
  private send(res: ServerResponse, req: IncomingMessage, sr: SuggestRequest, body: string, started: bigint): void {
    const reqId = randomUUID();
    // One array for writeHead: no per-header bookkeeping of setHeader (Node still validates).
    res.writeHead(200, [
      'X-Request-Id', reqId,
      ...corsHeaders('GET', req.headers['access-control-request-headers']),
      'Content-Type', 'application/json; charset=utf-8',
      'Content-Length', String(Buffer.byteLength(body)),
    ]);
    res.end(body);
    this.leanAnswers++;
    // The line of the access-log middleware (its child logger adds `reqId` before the fields).
    this.services.log.info(
      { reqId, method: 'GET', path: '/sites/suggest', status: 200, ms: Number(process.hrtime.bigint() - started) / 1e6, siteId: sr.siteId },
      'request',
    );
  }
}
