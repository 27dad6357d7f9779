/**
 * The connection front of the HTTP server: answers plain keep-alive `GET /sites/suggest?…`
 * requests straight from the socket, and hands every other connection to node:http at the
 * first request it does not answer. Main thread.
 *
 * Why: suggest is called on every keystroke, and its lean path (src/http/suggest.ts) already
 * answers a repeated prefix from stored bytes. Of the ≈ 17 µs of main thread such a replay took
 * under wrk (session 12, `perf`), ≈ 8 µs were the `writev` system call and ≈ 5–6 µs node:http's
 * request parsing, request and response objects and streams around a request that needs none of
 * them: the route reads nothing of a request but its target. Here a request head is read as a
 * string and checked against a strict subset of HTTP/1.1 (below); the answer is written as one
 * header block and the body, with the headers node:http would send (tests compare raw bytes).
 *
 * What the front answers, and nothing else (anything else hands the connection over, from the
 * first byte of the request it does not answer, to node:http, which then owns it for good):
 * - a complete request head of at most {@link MAX_HEAD_BYTES} in the bytes received (a head
 *   cut by the end of a read is kept for the next one, once: a head that needs three reads
 *   goes to node:http, which times slow clients);
 * - request line exactly `GET <target> HTTP/1.1`, the target starting with `/sites/suggest?`
 *   and made of visible ASCII only (no byte node:http would decode differently);
 * - header lines `name: value` with a token name and a value without control characters (what
 *   node:http's strict parser accepts), at least one `Host`, none of `Content-Length`,
 *   `Transfer-Encoding`, `Upgrade`, `Expect`, and `Connection` only as `keep-alive` or `close`;
 * - a request the suggest route takes ({@link SuggestRoute.answerTarget}: valid parameters of an
 *   open project): a stored answer, a cached one, or one searched for. A search that fails
 *   hands the request over (nothing was written), so node:http and the Koa chain render the
 *   error as they do for any request.
 *
 * Requests on one connection are answered in order: while a search runs, later bytes wait
 * (reading pauses past {@link MAX_HEAD_BYTES} of them), and reading pauses while answers wait
 * for a client that does not read them. A server with `maxRequestsPerSocket` set, or closing,
 * hands every new connection over at once.
 * Timeouts as node:http's: `headersTimeout` until the first answer, then the keep-alive
 * timeout (plus node's one-second margin). Graceful shutdown ({@link ConnectionFront.closeIdle})
 * closes a connection idle after an answer, or after the answer being searched, and hands one
 * without a whole request yet to node:http; {@link ConnectionFront.closeAll} closes all.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { LeanResponse } from './lean.js';

/** What the front needs of the suggest route (src/http/suggest.ts). */
export interface FrontRoute {
  /**
   * Answers the request with target `url` through `res` (at once or later), or false when it
   * does not take it (nothing written). `fail` is called, with nothing written, when a taken
   * request cannot be answered after all.
   */
  answerTarget(url: string, res: LeanResponse, fail: () => void): boolean;
}

/** The longest request head the front reads (node:http's default limit is 16 KiB). */
export const MAX_HEAD_BYTES = 16 * 1024;

const PREFIX = 'GET /sites/suggest?';
const VERSION = ' HTTP/1.1';
/** A header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A control character node:http's parser rejects in a header value (HTAB is allowed). */
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Headers that make a request node:http's: a body, a protocol change, an interim answer. */
const REFUSED_HEADERS = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect']);
/** Lengths of the header names {@link readHead} looks at (the others are only validated). */
const WATCHED_LENGTHS = new Set(['host', 'connection', ...REFUSED_HEADERS].map((n) => n.length));
/** node:http's margin over the advertised keep-alive timeout (lib/_http_server.js). */
const KEEP_ALIVE_MARGIN_MS = 1000;

/** The `Date` header's value, computed once a second like node:http's. */
let dateValue = '';
let dateUntil = 0;
function httpDate(): string {
  const now = Date.now();
  if (now >= dateUntil) {
    dateValue = new Date(now).toUTCString();
    dateUntil = now - (now % 1000) + 1000;
  }
  return dateValue;
}

/** One request head the front may answer: its target, whether it asked to close, where it ends. */
interface Head {
  target: string;
  close: boolean;
  end: number;
}

/**
 * Reads the request head starting at `pos` of `s` (the received bytes as latin1): the head, or
 * null when the front must not answer it (incomplete, too long, or anything outside the subset
 * in the module comment).
 */
export function readHead(s: string, pos: number): Head | null {
  const end = s.indexOf('\r\n\r\n', pos);
  if (end === -1 || end - pos > MAX_HEAD_BYTES || !s.startsWith(PREFIX, pos)) return null;
  let line = s.indexOf('\r\n', pos);
  if (s.slice(line - VERSION.length, line) !== VERSION) return null;
  const target = s.slice(pos + 4, line - VERSION.length);
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return null;
  }
  let host = false;
  let close = false;
  while (line < end) {
    const start = line + 2;
    line = s.indexOf('\r\n', start);
    const colon = s.indexOf(':', start);
    if (colon === -1 || colon > line) return null;
    const name = s.slice(start, colon);
    const value = s.slice(colon + 1, line);
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) return null;
    // Only names as long as one the front looks at are lower-cased.
    if (!WATCHED_LENGTHS.has(name.length)) continue;
    const lower = name.toLowerCase();
    if (lower === 'host') host = true;
    else if (lower === 'connection') {
      const v = value.trim().toLowerCase();
      if (v === 'close') close = true;
      else if (v !== 'keep-alive') return null;
    } else if (REFUSED_HEADERS.has(lower)) return null;
  }
  return host ? { target, close, end: end + 4 } : null;
}

/**
 * Whether the bytes of `s` from `pos` on may be the start of a head {@link readHead} reads: no
 * blank line yet, within the size limit, and the request line's fixed start so far.
 */
export function mayStartHead(s: string, pos: number): boolean {
  const n = s.length - pos;
  if (n > MAX_HEAD_BYTES || s.indexOf('\r\n\r\n', pos) !== -1) return false;
  return n >= PREFIX.length ? s.startsWith(PREFIX, pos) : PREFIX.startsWith(s.slice(pos));
}

/** The front's answer to one request: a {@link LeanResponse} writing to the socket. */
class FrontResponse implements LeanResponse {
  headersSent = false;
  private headers: string[] = [];

  constructor(
    private readonly conn: FrontConnection,
    private readonly close: boolean,
  ) {}

  writeHead(status: number, headers: string[]): void {
    // The lean paths only answer 200 here.
    if (status !== 200) throw new Error(`front answers 200 only, not ${status}`);
    this.headers = headers;
  }

  end(body: string | Buffer): void {
    const h = this.headers;
    let head = 'HTTP/1.1 200 OK\r\n';
    for (let i = 0; i < h.length; i += 2) head += `${h[i]}: ${h[i + 1]}\r\n`;
    head += `Date: ${httpDate()}\r\n`;
    head += this.close ? 'Connection: close\r\n\r\n' : this.conn.front.keepAliveLines();
    this.headersSent = true;
    this.conn.write(head, body, this.close);
  }
}

/** One connection while the front owns it. */
class FrontConnection {
  /** Bytes received while a search runs, not yet read. */
  private pending: Buffer | null = null;
  /** The start of a request head the last read ended in (see {@link process}). */
  private partial: Buffer | null = null;
  /** A request is being answered asynchronously (its search runs). */
  private busy = false;
  /** The connection was handed to node:http, or closed: the front is done with it. */
  private gone = false;
  /** Close once the request in progress is answered (client ended, or shutdown). */
  private closeWhenIdle = false;
  /** The front has answered a request on this connection (its timeout is the keep-alive one). */
  private hasAnswered = false;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onEnd = () => this.ended();
  private readonly onError = () => this.destroy();
  /** Reading paused until the socket drains. */
  private draining = false;
  private readonly onDrain = () => {
    this.draining = false;
    if (!this.busy && !this.gone) this.socket.resume();
  };
  private readonly onClose = () => {
    this.gone = true;
    this.front.forget(this);
  };
  private readonly onTimeout = () => {
    if (!this.busy) this.destroy();
  };

  constructor(
    readonly front: ConnectionFront,
    readonly socket: Socket,
  ) {
    socket.setTimeout(front.server.headersTimeout);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('timeout', this.onTimeout);
    socket.on('close', this.onClose);
  }

  private received(chunk: Buffer): void {
    this.front.reads++;
    // (A partial head is only kept when no search runs: process() returns as it keeps one.)
    if (this.partial !== null) {
      const buf = Buffer.concat([this.partial, chunk]);
      this.partial = null;
      return this.process(buf, true);
    }
    if (this.busy) {
      this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
      // A client that sends on while its search runs: stop reading until it is answered.
      if (this.pending.length > MAX_HEAD_BYTES && !this.socket.isPaused()) {
        this.socket.pause();
        this.front.pauses++;
      }
      return;
    }
    this.process(chunk);
  }

  /**
   * Answers the complete requests at the start of `buf`; keeps the start of a request head at
   * its end for the next read (`carried`: `buf` begins with such a start already kept once);
   * hands anything else to node:http.
   */
  private process(buf: Buffer, carried = false): void {
    const s = buf.toString('latin1');
    let pos = 0;
    while (pos < s.length && !this.gone) {
      const head = readHead(s, pos);
      if (head === null) {
        // A head cut by the end of a read (a pipelining client's burst, a segment boundary):
        // kept for the next read, once; cut again, node:http reads it (and times it).
        if (!carried && mayStartHead(s, pos)) {
          this.partial = buf.subarray(pos);
          return;
        }
        return this.handOver(buf.subarray(pos));
      }
      carried = false;
      const res = new FrontResponse(this, head.close);
      const start = pos;
      let failed = false;
      const taken = this.front.route.answerTarget(head.target, res, () => {
        failed = true;
        // Asynchronously: nothing was written; node:http gets this request and what followed.
        if (this.busy) {
          this.busy = false;
          const rest = this.pending;
          this.pending = null;
          this.handOver(rest === null ? buf.subarray(start) : Buffer.concat([buf.subarray(start), rest]));
        }
      });
      if (!taken || failed) return this.handOver(buf.subarray(start));
      pos = head.end;
      if (!res.headersSent) {
        // A search runs: later bytes wait for its answer (FrontResponse.end → write()). After
        // a request that asked to close there is nothing more to read (write() ends the
        // connection), unless its search fails and node:http gets it.
        this.busy = true;
        if (head.close) return;
        this.resume = () => {
          this.busy = false;
          const rest = buf.subarray(pos);
          const more = this.pending;
          this.pending = null;
          const next = more === null ? rest : Buffer.concat([rest, more]);
          if (this.socket.isPaused() && !this.draining) this.socket.resume();
          if (this.closeWhenIdle) {
            // Shutdown: requests sent behind it go to node:http, as they would have been
            // node:http's own (the client has not ended: bytes can still be put back).
            if (next.length > 0 && !this.socket.readableEnded) return this.handOver(next);
            return this.destroySoon();
          }
          if (next.length > 0) this.process(next);
        };
        return;
      }
      if (head.close) return;
    }
  }

  /** Called by {@link FrontResponse.end} when the answer of an asynchronous request was written. */
  private resume: (() => void) | null = null;

  write(head: string, body: string | Buffer, close: boolean): void {
    const socket = this.socket;
    // The client went away while its search ran: nothing to write to.
    if (socket.destroyed) return;
    this.front.answered++;
    if (!this.hasAnswered) {
      this.hasAnswered = true;
      socket.setTimeout(this.front.server.keepAliveTimeout + KEEP_ALIVE_MARGIN_MS);
    }
    socket.cork();
    socket.write(head, 'latin1');
    socket.write(body);
    socket.uncork();
    // A client that sends requests but does not read the answers: stop reading its requests
    // until the kernel took what is queued (node:http does the same).
    if (socket.writableNeedDrain && !this.draining) {
      this.draining = true;
      this.front.drainWaits++;
      socket.pause();
      socket.once('drain', this.onDrain);
    }
    if (close) {
      this.gone = true;
      this.front.forget(this);
      socket.end();
      return;
    }
    if (this.busy && this.resume) {
      const go = this.resume;
      this.resume = null;
      go();
    }
  }

  /** node:http takes the connection, `rest` (the unanswered bytes) first. */
  private handOver(rest: Buffer): void {
    const socket = this.socket;
    this.gone = true;
    this.front.forget(this);
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', this.onError);
    socket.off('timeout', this.onTimeout);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    socket.setTimeout(0);
    socket.pause();
    if (rest.length > 0) socket.unshift(rest);
    this.front.handOver(socket);
    // node:http reads through its 'data' listener: the bytes put back come first (resume
    // emits them on the next tick, before the event loop reads the socket again).
    socket.resume();
  }

  private ended(): void {
    if (this.busy) this.closeWhenIdle = true;
    else this.destroySoon();
  }

  /** Ends the connection after what was written (an idle one: at once). */
  destroySoon(): void {
    this.gone = true;
    this.front.forget(this);
    this.socket.end();
  }

  destroy(): void {
    this.gone = true;
    this.front.forget(this);
    this.socket.destroy();
  }

  /**
   * Shutdown, as node:http's `closeIdleConnections` treats its own connections: one that has
   * answered and waits for its next request closes now, one whose answer is being searched
   * closes after it. One that has not sent a whole request yet is handed to node:http, which
   * counts a new connection as busy (it may be a request on its way) and answers it.
   */
  closeIdle(): void {
    if (this.busy) this.closeWhenIdle = true;
    else if (!this.hasAnswered || this.partial !== null) this.handOver(this.partial ?? Buffer.alloc(0));
    else this.destroySoon();
  }
}

/**
 * Takes over `server`'s connections (its `connection` listener) and answers what the module
 * comment describes; node:http's own listener gets every connection the front hands over.
 */
export class ConnectionFront {
  /** Requests answered by the front (tests, diagnostics). */
  answered = 0;
  /** Connections handed to node:http (tests, diagnostics). */
  handedOver = 0;
  /** Times a connection stopped reading while its search ran (tests, diagnostics). */
  pauses = 0;
  /** Times a connection stopped reading until its answers drained (tests, diagnostics). */
  drainWaits = 0;
  /** Reads the front took from its connections (tests, diagnostics). */
  reads = 0;
  private readonly connections = new Set<FrontConnection>();
  private readonly httpListener: (socket: Socket) => void;
  private closing = false;

  constructor(
    readonly server: Server,
    readonly route: FrontRoute,
  ) {
    const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
    if (listeners.length !== 1) throw new Error(`expected node:http's one connection listener, found ${listeners.length}`);
    this.httpListener = listeners[0]!;
    server.removeListener('connection', this.httpListener);
    server.on('connection', (socket: Socket) => {
      // node:http counts requests per socket when told to (the front does not).
      if (this.closing || server.maxRequestsPerSocket) return this.handOver(socket);
      this.connections.add(new FrontConnection(this, socket));
    });
  }

  /** The end of a keep-alive header block, as node:http writes it for this server's timeout. */
  keepAliveLines(): string {
    const t = this.server.keepAliveTimeout;
    if (t !== this.linesFor) {
      this.linesFor = t;
      this.lines = t ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(t / 1000)}\r\n\r\n` : 'Connection: keep-alive\r\n\r\n';
    }
    return this.lines;
  }

  private linesFor = -1;
  private lines = '';

  handOver(socket: Socket): void {
    this.handedOver++;
    this.httpListener.call(this.server, socket);
  }

  forget(conn: FrontConnection): void {
    this.connections.delete(conn);
  }

  /** Graceful shutdown (see {@link FrontConnection.closeIdle}); new connections go to node:http. */
  closeIdle(): void {
    this.closing = true;
    for (const c of [...this.connections]) c.closeIdle();
  }

  /** Closes every connection the front still owns. */
  closeAll(): void {
    this.closing = true;
    for (const c of [...this.connections]) c.destroy();
  }

  /** Connections the front owns now (tests). */
  get size(): number {
    return this.connections.size;
  }
}
