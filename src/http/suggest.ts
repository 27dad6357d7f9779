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
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ProjectIndex } from '../index/contract.js';
import { parseFilters } from '../search/filters.js';
import { SuggestCache, suggestBody, type SuggestAnswer, type SuggestParams } from '../search/suggest.js';
import type { Services } from '../services.js';
import type { Settings } from '../types.js';
import { requireSite } from './auth.js';
import { leanStart, OpenedIndexes, sendLean, type ParamSource } from './lean.js';
import { parseBoolParam, parseIntParam, queryParam } from './params.js';
import { requireQuery, stringArrayParam } from './search.js';

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
 * The suggest route: one answer cache per app (all projects share its entry budget), the Koa
 * route and the lean path in front of Koa. Main thread.
 */
export class SuggestRoute {
  readonly cache = new SuggestCache();
  /** Requests answered by the lean path (tests, diagnostics). */
  leanAnswers = 0;
  private readonly opened = new OpenedIndexes();

  constructor(private readonly services: Services) {}

  /** Registers the Koa route (requests the lean path declined). */
  register(router: Router): void {
    router.get('/sites/suggest', async (ctx) => {
      const req = this.read(ctx);
      const index = await this.opened.open(this.services.indexes.get(req.siteId));
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
    const start = leanStart(req, LEAN_PREFIX, (src) => this.read(src), this.opened, this.services.indexes);
    if (!start) return false;
    const { sr, index, started } = start;
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

  /** Writes the 200 answer the way the Koa chain does for this route (src/http/lean.ts). */
  private send(res: ServerResponse, req: IncomingMessage, sr: SuggestRequest, body: string, started: bigint): void {
    sendLean(res, req, this.services.log, '/sites/suggest', sr.siteId, body, started);
    this.leanAnswers++;
  }
}
