/**
 * Raw HTTP/1.1 helpers for the lean-path tests (test/http/*-lean.test.ts), which send the same
 * bytes to an app with the lean paths and to the Koa chain alone and compare the responses.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { Writable } from 'node:stream';
import type { SitesiftApp } from '../../src/http/app.js';
import { ConnectionFront } from '../../src/http/front.js';

/** A log stream that keeps every line it is given (for access-log comparisons). */
export function lineSink(): { sink: Writable; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { sink, lines };
}

/** A page for `pagesJson` with the seed's required fields. */
export const page = (slug: string, title: string, content = 'Some text.', extra: Record<string, unknown> = {}) => ({
  url: `https://site.test/${slug}`, title, content, contentGroup: '', imageUrl: '', appendPageContent: false, ...extra,
});

/** One raw HTTP/1.1 exchange; answers the response bytes as text. */
export function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let out = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => (out += c));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
    sock.write(request);
  });
}

/** A raw request: method, path, extra header lines (each ending in CRLF), then `Connection: close`. */
export const get = (path: string, headers = '', method = 'GET') => `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`;

/** The response without what differs per request (date, request id). */
export const masked = (r: string) => r.replace(/^Date: .*$/im, 'Date: -').replace(/^X-Request-Id: .*$/im, 'X-Request-Id: -').replace(/"requestId":"[^"]*"|request id [0-9a-f-]+/g, 'ID');

/** Serves `handler` on 127.0.0.1 on a free port. */
export async function listen(handler: http.RequestListener): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

/** Serves `app` the way src/server.ts does: node:http behind the connection front (src/http/front.ts). */
export async function listenFront(app: SitesiftApp): Promise<{ port: number; server: http.Server; front: ConnectionFront; close: () => Promise<void> }> {
  const server = http.createServer(app.callback());
  const front = new ConnectionFront(server, app.suggest);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
      front.closeAll();
    });
  return { port: (server.address() as AddressInfo).port, server, front, close };
}

/** The complete HTTP/1.1 responses at the start of `buf` (Content-Length bodies), as text, and the bytes used. */
export function splitResponses(buf: Buffer): { responses: string[]; used: number } {
  const responses: string[] = [];
  let pos = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', pos);
    if (end === -1) break;
    const head = buf.subarray(pos, end).toString('latin1');
    const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (buf.length < end + 4 + len) break;
    responses.push(buf.subarray(pos, end + 4 + len).toString());
    pos = end + 4 + len;
  }
  return { responses, used: pos };
}

/**
 * One connection: writes each of `parts` once the responses before it arrived (`parts[i]` is
 * sent when `after[i]` responses are in, default 0: at once), then resolves the first `n`
 * responses (and whether the server closed the connection by then).
 */
export function converse(port: number, parts: Array<string | Buffer>, n: number, after: number[] = []): Promise<{ responses: string[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let closed = false;
    let next = 0;
    const send = (have: number) => {
      while (next < parts.length && (after[next] ?? 0) <= have) sock.write(parts[next++]!);
    };
    const check = () => {
      const { responses } = splitResponses(buf);
      send(responses.length);
      if (responses.length >= n || closed) {
        sock.destroy();
        resolve({ responses: responses.slice(0, n), closed });
      }
    };
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      check();
    });
    sock.on('end', () => {
      closed = true;
      check();
    });
    sock.on('error', reject);
    sock.on('connect', () => send(0));
  });
}

/** A raw keep-alive GET (no `Connection` header) with extra header lines. */
export const keepAlive = (path: string, headers = '', method = 'GET') => `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`;
