/**
 * Answers for malformed HTTP (main thread). node:http rejects what it cannot parse — a broken
 * request line, bare-LF line ends, oversized headers, a head that does not arrive in time —
 * before any request or Koa context exists, so the app's error middleware never sees it.
 * {@link answerClientErrors} gives those connections the project's error body
 * (`{"status":"failure","code","message"}`, codes in src/core/errors.ts) with the fitting status,
 * then closes them.
 *
 * Logging: such requests come from scanners and broken clients, often in floods, and say
 * nothing about the server's health. They are counted, and at most one warning line per
 * {@link CLIENT_ERROR_LOG_MS} is written, without a stack, carrying the count since the last one.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS, type ErrorCode, type Logger } from '../core/index.js';

/** At most one warning line about malformed requests per this many ms. */
export const CLIENT_ERROR_LOG_MS = 60_000;

/** The error code for node:http's client error code (`err.code` of a `clientError` event). */
export function clientErrorCode(code: string | undefined): ErrorCode {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'headers_too_large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'payload_too_large';
    default:
      return 'bad_request';
  }
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  bad_request: 'The request is not valid HTTP/1.1; check the request line, the headers and their CRLF line ends.',
  headers_too_large: `The request's headers exceed ${http.maxHeaderSize} bytes; send fewer or shorter headers.`,
  request_timeout: 'The request did not arrive in time; send the whole request without pauses.',
  payload_too_large: 'A chunk extension of the request body is too large.',
};

/** The whole HTTP/1.1 response for `code`, closing the connection. */
export function clientErrorResponse(code: ErrorCode): string {
  const body = JSON.stringify({ status: 'failure', code, message: MESSAGES[code] ?? code });
  const status = ERROR_STATUS[code];
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** Responses by code, built once (a flood of bad requests builds no strings). */
const RESPONSES = new Map<ErrorCode, string>();

/** The response node:http is writing on a connection, if any (node:http's own field). */
type InFlight = (http.ServerResponse & { req: http.IncomingMessage }) | null | undefined;
const inFlight = (socket: Duplex): InFlight => (socket as { _httpMessage?: InFlight })._httpMessage;

/**
 * Installs the `clientError` handler on `server`:
 * - a connection reset by the client is closed, silently;
 * - otherwise the client gets the JSON error (400 `bad_request` for a parse error, 431
 *   `headers_too_large`, 408 `request_timeout`), and the connection is closed. Responses to
 *   complete requests before the malformed one on the same connection are finished first;
 *   when a response has already started and cannot be finished (its request is the broken
 *   one, or it timed out), the connection is closed without a second answer.
 *
 * Returns the count of malformed requests so far (tests, diagnostics).
 *
 * @example
 * const server = http.createServer(app.callback());
 * answerClientErrors(server, log, Date.now);
 */
export function answerClientErrors(server: http.Server, log: Logger, clock: () => number): { readonly count: number } {
  const counter = { count: 0 };
  let loggedAt = -Infinity;
  let unlogged = 0;
  const answering = new WeakSet<Duplex>();

  const note = (err: NodeJS.ErrnoException, code: ErrorCode): void => {
    counter.count++;
    unlogged++;
    const now = clock();
    if (now - loggedAt < CLIENT_ERROR_LOG_MS) return;
    // `count`: malformed requests since the previous line, this one included.
    log.warn({ code, reason: err.code ?? err.message, count: unlogged }, 'malformed HTTP requests');
    loggedAt = now;
    unlogged = 0;
  };

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A parser that failed fails again on every later byte: one answer per connection.
    if (answering.has(socket)) return;
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    answering.add(socket);
    const code = clientErrorCode(err.code);
    note(err, code);
    const answer = (): void => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const res = inFlight(socket);
      if (res && !res.writableFinished) {
        // A complete request before the malformed one: its answer first (then node:http
        // attaches the next queued response, if any, to the socket).
        if (res.req.complete && code !== 'request_timeout') {
          res.once('finish', answer);
          return;
        }
        if (res.headersSent) {
          socket.destroy();
          return;
        }
      }
      let text = RESPONSES.get(code);
      if (text === undefined) RESPONSES.set(code, (text = clientErrorResponse(code)));
      socket.end(text, () => socket.destroy());
    };
    answer();
  });
  return counter;
}
