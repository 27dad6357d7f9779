/**
 * What the lean paths of the two public read routes share (`GET /sites` in src/http/search.ts,
 * `GET /sites/suggest` in src/http/suggest.ts). Main thread.
 *
 * A lean path answers a valid request of an open project in front of the Koa middleware chain
 * (src/http/app.ts): the generic stack (context objects, six middleware, the router matching
 * every route, the access log through a child logger) costs ≈ 0.1–0.2 ms of main thread per
 * request, more than the route's own work when the answer is cached or the search ran on a
 * search thread. It does what the chain does for its route and nothing else: the route's own
 * parameter readers (an error declines, so Koa renders it), a request id in `X-Request-Id`,
 * the CORS headers, the same headers in the same order, the same body bytes and the same
 * access-log line (tests compare raw responses of both paths).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import type { ProjectIndex } from '../index/contract.js';
import type { Logger } from '../log.js';
import { RESPONSE_CORS_HEADERS } from './cors.js';

/**
 * What a lean path writes its answer through: node:http's `ServerResponse`, or the connection
 * front's own (src/http/front.ts), which writes to the socket.
 */
export interface LeanResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: string[]): unknown;
  end(body: string | Buffer): unknown;
}

/** What the parameter readers use of a Koa context (a lean path builds just this). */
export type ParamSource = Pick<Context, 'query' | 'state'>;

/**
 * Characters after which parseurl (Koa's URL parser) falls back to `url.parse`, which may
 * re-escape the query: such URLs take the Koa path, so both paths always read the same values.
 */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/** A request a lean path took: its validated parameters, its project's open index, its arrival time. */
export interface LeanStart<R> {
  sr: R;
  index: ProjectIndex;
  /** The registry's promise `index` came from (a deleted and re-created project gets a new one). */
  pending: Promise<ProjectIndex>;
  /** `process.hrtime.bigint()` on arrival (the access log's `ms`). */
  started: bigint;
}

/**
 * The first steps of a lean path, or null when it must decline (nothing written): a GET whose
 * URL starts with `prefix` (the route's path and `?`) and has nothing that makes Koa's URL
 * parser take another road, a query string {@link parseQuery} reads as Koa would, parameters
 * the route's own `read` accepts (anything it throws declines, and Koa renders the error), and
 * a project whose index a Koa request has opened.
 */
export function leanStart<R extends { siteId: string }>(
  req: Pick<IncomingMessage, 'method' | 'url'>,
  prefix: string,
  read: (src: ParamSource) => R,
  opened: OpenedIndexes,
  indexes: { get(siteId: string): Promise<ProjectIndex> },
): LeanStart<R> | null {
  const url = req.url;
  if (req.method !== 'GET' || url === undefined || !url.startsWith(prefix) || UNUSUAL_URL.test(url)) return null;
  const started = process.hrtime.bigint();
  try {
    const query = parseQuery(url.slice(prefix.length));
    if (query === null) return null;
    // The route's readers over a context of just `query` and `state`.
    const sr = read({ query, state: {} } as ParamSource);
    const pending = indexes.get(sr.siteId);
    const index = opened.get(pending);
    return index ? { sr, index, pending, started } : null;
  } catch {
    return null;
  }
}

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
 * Project indexes a route's Koa handler has awaited, by the registry's promise for them: a
 * lean path needs the index synchronously. Keyed by the promise (`indexes.get` returns the
 * same one while the store is open), so a deleted and re-created project — a new promise — is
 * never answered from the old store.
 */
export class OpenedIndexes {
  private readonly opened = new WeakMap<Promise<ProjectIndex>, ProjectIndex>();

  /** Awaits `pending` (the Koa route's way) and remembers the index for the lean path. */
  async open(pending: Promise<ProjectIndex>): Promise<ProjectIndex> {
    const index = await pending;
    this.opened.set(pending, index);
    return index;
  }

  /** The index behind `pending` if a Koa request has awaited it, else undefined. */
  get(pending: Promise<ProjectIndex>): ProjectIndex | undefined {
    return this.opened.get(pending);
  }
}

/**
 * `req.headers['user-agent']` (what a logged search hashes into its visitor id), read from
 * `req.rawHeaders`: node:http builds `req.headers` on first use, an object of every header,
 * ≈ 0.6 µs of main thread per request in a trivial handler under wrk — about half of what
 * logging a cached search cost the main thread (session 11). The same value: undefined when
 * absent, else the first line's (node:http drops repeated `User-Agent` lines).
 */
export function userAgentOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 10 && name.toLowerCase() === 'user-agent') return raw[i + 1]!;
  }
  return undefined;
}

/**
 * An access-log line's `ms` for a request that arrived at `started`
 * (`process.hrtime.bigint()`): milliseconds rounded to the microsecond, the Koa chain's and the
 * lean paths' alike. Why rounded: finer digits are noise in an access log, and the shortest
 * decimal of an arbitrary double (`0.013927…`) was ≈ 0.3 µs of a ≈ 17-µs replayed suggest
 * (session 12, `perf`); a value in whole microseconds prints in a few digits, mostly from V8's
 * number-string cache.
 */
export function accessMs(started: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - started) / 1e3) / 1e3;
}

/**
 * The header list of a 200 JSON answer as the Koa chain sends it for a public route
 * (src/http/app.ts): `X-Request-Id` (its value, index 1, is a placeholder that
 * {@link writeLean} sets per request), `Access-Control-Allow-Origin`, `Content-Type`,
 * `Content-Length`. Nothing else in it depends on the request, so a stored answer keeps one
 * list and writes it again.
 */
export function leanHeaders(body: string | Buffer): string[] {
  return ['X-Request-Id', '', ...RESPONSE_CORS_HEADERS, 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body))];
}

/**
 * Writes a 200 JSON answer the way the Koa chain does for a public route (src/http/app.ts):
 * the headers of {@link leanHeaders}, then the access-log line of the chain's access-log
 * middleware (its child logger puts `reqId` first).
 * `started` is the request's `process.hrtime.bigint()` on arrival.
 */
export function sendLean(res: LeanResponse, log: Logger, path: string, siteId: string, body: string, started: bigint): void {
  writeLean(res, log, path, siteId, leanHeaders(body), body, started);
}

/**
 * {@link sendLean} with the header list already built by {@link leanHeaders} (a stored answer
 * replays its own): a new request id into the list's placeholder (node:http's `writeHead`
 * reads the list once, synchronously, so the next request may overwrite it), the body, the
 * access-log line. A Buffer body (a stored answer's bytes) is written as it is; a string body
 * is joined to the header block and encoded on every write.
 */
export function writeLean(res: LeanResponse, log: Logger, path: string, siteId: string, headers: string[], body: string | Buffer, started: bigint): void {
  const reqId = randomUUID();
  headers[1] = reqId;
  // One array for writeHead: no per-header bookkeeping of setHeader (Node still validates).
  res.writeHead(200, headers);
  res.end(body);
  const ms = accessMs(started);
  // The access-log line of the chain, serialised by hand (`ms` is a finite number, so its JSON
  // is its string): ≈ 8 % of a replayed suggest's main thread went to the general serialiser.
  log.infoJson(
    { reqId, method: 'GET', path, status: 200, ms, siteId },
    `"reqId":"${reqId}","method":"GET","path":${JSON.stringify(path)},"status":200,"ms":${ms},"siteId":${JSON.stringify(siteId)}`,
    'request',
  );
}
