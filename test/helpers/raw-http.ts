/**
 * Raw HTTP/1.1 helpers for the lean-path tests (test/http/*-lean.test.ts), which send the same
 * bytes to an app with the lean paths and to the Koa chain alone and compare the responses.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { Writable } from 'node:stream';

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
