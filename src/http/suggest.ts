/**
 * `GET /sites/suggest` (seed 4.7, SPEC §6): public, identified by `site`. Main thread.
 *
 * Three ways in, one answer:
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
 *   both paths);
 * - the connection front (src/http/front.ts), which reads plain keep-alive `GET /sites/suggest?…`
 *   requests from the socket itself and calls {@link SuggestRoute.answerTarget} (the lean path
 *   without node:http's request and response objects) with a response that writes node:http's
 *   bytes.
 *
 * Answers come from {@link SuggestCache} (src/search/suggest.ts); a miss searches on the search
 * threads, the snapshot pinned until the answer is there. `querySuggestions` (from the query
 * log, which changes with every flush) is added per request.
 *
 * In front of both, the lean path replays a stored response ({@link StoredResponses}) when the
 * raw request target was answered before and nothing the answer depends on has changed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { QuerySuggestion, SuggestionIndex } from '../analytics/suggestions.js';
import type { ProjectIndex } from '../index/contract.js';
import { parseFilters } from '../search/filters.js';
import { SuggestCache, suggestBody, type SuggestAnswer, type SuggestParams } from '../search/suggest.js';
import type { Services } from '../services.js';
import type { Settings } from '../types.js';
import { requireSite } from './auth.js';
import { leanHeaders, leanStart, OpenedIndexes, writeLean, type LeanResponse, type ParamSource } from './lean.js';
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
 * A 200 answer of the lean path as it was written, stored under the raw request target
 * (`req.url`, path and query string exactly as received), with what it depended on besides
 * the target. Parsing the same target gives the same parameters, so a request with this target
 * gets these bytes again while every dependency is unchanged.
 */
interface StoredResponse {
  /** The key, kept so a hit re-inserts under it (not under the request's new string). */
  url: string;
  siteId: string;
  /** The frozen settings object the answer was computed with (a change stores a new one). */
  settings: Settings;
  /** The registry's promise of the project's index (a re-created project gets a new one). */
  pending: Promise<ProjectIndex>;
  index: ProjectIndex;
  /** The index generation the page half was computed on. */
  generation: number;
  query: string;
  maxQuerySuggestions: number;
  /** The `querySuggestions` in the body (the query log moves them). */
  querySuggestions: readonly QuerySuggestion[];
  /**
   * The suggestion index and its version when `querySuggestions` was last found current
   * (undefined: not yet). While both are unchanged a hit skips computing them again; else it
   * computes and compares them, and stamps the entry again when they are equal.
   */
  suggestionIndex?: SuggestionIndex;
  suggestionVersion?: number;
  /** The header list ({@link leanHeaders}; {@link writeLean} sets its request id per write). */
  headers: string[];
  /** The body's bytes (UTF-8), written as they are: no string to join and encode per replay. */
  body: Buffer;
  bytes: number;
  /** {@link StoredResponses}' count of entries put at the recent end when this one last was. */
  used?: number;
}

/**
 * Stored lean-path answers by raw request target: an LRU bounded in bytes (all projects share
 * the budget). Main thread only.
 *
 * Why: a cached suggest still cost ≈ 0.1 ms of main thread, and a profile of the benchmark's
 * cached rows put ≈ 15 % of it in parsing and validating the query string, building the
 * answer cache's key, looking it up and assembling the body — work whose result is fixed by
 * the target while the index generation, the settings and the query suggestions stay the
 * same. A hit checks exactly those (the project still exists; the same settings object, index
 * promise and generation; the same `querySuggestions`) and writes the stored headers and body
 * with a new request id and its access-log line; anything else declines to the full lean path,
 * which stores its answer. (Nothing else of the request matters: since session 11 a GET answer
 * no longer echoes `Access-Control-Request-Headers`, see src/http/cors.ts.)
 * `querySuggestions` are computed again and compared only when the project's suggestion index
 * changed since the entry was last found current (its object and `version`): at most once per
 * query-log batch (≈ 1 s) under logged traffic, never while nothing is logged. (Session 11:
 * with the lazily built `req.headers` and the snapshot pin for the generation check, this was
 * what a replay did beyond a bare node:http handler under wrk.)
 */
export class StoredResponses {
  private readonly entries = new Map<string, StoredResponse>();
  private bytes = 0;

  /** @param maxBytes estimated memory of all entries (UTF-16 strings plus bookkeeping); 0 disables. */
  constructor(readonly maxBytes = 8 * 1024 * 1024) {}

  /** Calls of {@link get} (tests, diagnostics). */
  lookups = 0;

  /** Entries put at the recent end so far (by {@link set}, and by {@link get} when it moves one). */
  private uses = 0;

  /**
   * The entry stored under `url`, or undefined. A hit moves the entry to the recent end only
   * when more than half the map's size of entries were put there since it last was (so it
   * is in about the older half of the LRU order); a hot entry stays where it is, not next to
   * go. Why: the Map delete and insert of every hit cost ≈ 0.3–0.6 µs of a ≈ 20-µs replay on a
   * map of thousands of entries (session 11, CPU profile).
   */
  get(url: string): StoredResponse | undefined {
    this.lookups++;
    const e = this.entries.get(url);
    if (e && this.uses - e.used! > this.entries.size >>> 1) {
      this.entries.delete(url);
      this.entries.set(e.url, e);
      e.used = ++this.uses;
    }
    return e;
  }

  /** Stores `e` under `e.url` (replacing what was there), then evicts the least recently used. */
  set(e: StoredResponse): void {
    e.used = ++this.uses;
    const old = this.entries.get(e.url);
    if (old) {
      this.entries.delete(e.url);
      this.bytes -= old.bytes;
    }
    if (e.bytes > this.maxBytes / 4) return;
    this.entries.set(e.url, e);
    this.bytes += e.bytes;
    while (this.bytes > this.maxBytes) {
      const [url, oldest] = this.entries.entries().next().value!;
      this.entries.delete(url);
      this.bytes -= oldest.bytes;
    }
  }

  /** Entries and their estimated bytes (tests, diagnostics). */
  stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

/**
 * The suggest route: one answer cache per app (all projects share its entry budget), the Koa
 * route and the lean path in front of Koa. Main thread.
 */
export class SuggestRoute {
  readonly cache = new SuggestCache();
  /** Lean-path answers by raw request target. */
  readonly responses = new StoredResponses();
  /** Requests answered by the lean path (tests, diagnostics), replays included. */
  leanAnswers = 0;
  /** Requests answered by replaying a stored response (tests, diagnostics). */
  replays = 0;
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
      ctx.body = this.body(req, answer).body;
    });
  }

  /**
   * The lean path for `req`: true when it took the request (it answers from the cache at once,
   * or after a miss's search; a miss whose search fails is handed to `fallback`, the Koa
   * handler, which renders the error), false when Koa must handle it (nothing was written).
   */
  lean(req: IncomingMessage, res: ServerResponse, fallback: (req: IncomingMessage, res: ServerResponse) => unknown): boolean {
    return req.method === 'GET' && req.url !== undefined && this.answerTarget(req.url, res, () => fallback(req, res));
  }

  /**
   * {@link lean} for a GET of raw target `url` (also called by the connection front,
   * src/http/front.ts, with its own response): true when it took the request, false when it
   * did not (nothing written); `fail` is called, nothing written, when a taken request's search
   * fails or its answer cannot be written.
   */
  answerTarget(url: string, res: LeanResponse, fail: () => void): boolean {
    // The prefix first: every search request passes here, and must not pay a lookup (the URL
    // hashed, probes in a map of thousands) in the suggest route's stored answers.
    if (!url.startsWith(LEAN_PREFIX)) return false;
    const stored = this.responses.get(url);
    if (stored && this.replay(stored, res)) return true;
    const start = leanStart({ method: 'GET', url }, LEAN_PREFIX, (src) => this.read(src), this.opened, this.services.indexes);
    if (!start) return false;
    const { sr, index, pending, started } = start;
    const snap = index.acquire();
    const from = { index, pending, generation: snap.generation };
    let hit: SuggestAnswer | undefined;
    try {
      hit = this.cache.peek(snap, sr.settings, sr.params, index);
      if (hit) this.send(res, url, sr, from, hit, started);
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
          this.send(res, url, sr, from, answer, started);
        } catch {
          // Nothing was written (writeHead validates before it sends): the chain answers,
          // rendering whatever fails again as the route's error. Never an unhandled rejection.
          if (!res.headersSent) fail();
        }
      },
      () => {
        snap.release();
        fail();
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

  /**
   * Writes `stored` again when nothing it depends on has changed (see {@link StoredResponses});
   * false, with nothing written, when something has or a check throws.
   */
  private replay(stored: StoredResponse, res: LeanResponse): boolean {
    const started = process.hrtime.bigint();
    const { projects, indexes, analytics } = this.services;
    const { siteId, settings } = stored;
    try {
      // What the parameter readers and leanStart look at, in their order. The project still
      // exists when its settings are still the stored object: deleting a project drops its
      // settings from the registry's cache (getSettings then throws), and a project created
      // again gets a new object.
      if (projects.getSettings(siteId) !== settings || indexes.get(siteId) !== stored.pending) return false;
      if (stored.index.generation !== stored.generation) return false;
      if (stored.maxQuerySuggestions > 0) {
        const suggestions = analytics.suggestionStamp(siteId);
        if (suggestions !== stored.suggestionIndex || suggestions.version !== stored.suggestionVersion) {
          const qs = analytics.querySuggestions(siteId, stored.query, { max: stored.maxQuerySuggestions, minSearches: settings.suggest.minSearches });
          const was = stored.querySuggestions;
          if (qs.length !== was.length) return false;
          for (let i = 0; i < qs.length; i++) if (qs[i]!.query !== was[i]!.query) return false;
          stored.suggestionIndex = suggestions;
          stored.suggestionVersion = suggestions.version;
        }
      }
      writeLean(res, this.services.log, '/sites/suggest', siteId, stored.headers, stored.body, started);
    } catch {
      // Nothing was written (writeHead validates before it sends): the full path decides.
      return false;
    }
    this.leanAnswers++;
    this.replays++;
    return true;
  }

  /** The response body: the cached results serialised once, the query and `querySuggestions` new. */
  private body(sr: SuggestRequest, answer: SuggestAnswer): { body: string; querySuggestions: QuerySuggestion[] } {
    const qs =
      sr.maxQuerySuggestions > 0
        ? this.services.analytics.querySuggestions(sr.siteId, sr.params.query, { max: sr.maxQuerySuggestions, minSearches: sr.settings.suggest.minSearches })
        : [];
    return { body: suggestBody(sr.params.query, answer, qs), querySuggestions: qs };
  }

  /**
   * Writes the 200 answer the way the Koa chain does for this route (src/http/lean.ts) and
   * stores it under the raw request target for {@link replay}.
   */
  private send(res: LeanResponse, url: string, sr: SuggestRequest, from: Pick<StoredResponse, 'index' | 'pending' | 'generation'>, answer: SuggestAnswer, started: bigint): void {
    const { body: text, querySuggestions } = this.body(sr, answer);
    const body = Buffer.from(text);
    // The Buffer's length: the body is not encoded a second time to count its bytes.
    const headers = leanHeaders(body);
    writeLean(res, this.services.log, '/sites/suggest', sr.siteId, headers, body, started);
    this.leanAnswers++;
    this.responses.set({
      url, siteId: sr.siteId, settings: sr.settings, ...from,
      query: sr.params.query, maxQuerySuggestions: sr.maxQuerySuggestions, querySuggestions, headers, body,
      // The URL (UTF-16), the body's bytes, the header list and the objects around them.
      bytes: 2 * url.length + body.length + 512,
    });
  }
}
