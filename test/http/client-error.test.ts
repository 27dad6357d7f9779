/**
 * Malformed HTTP that node:http rejects (src/http/client-error.ts): the project's JSON error
 * body with the fitting status at once, the connection closed, and a flood of it logged as a
 * bounded number of one-line warnings without stacks.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import t from 'tap';
import { answerClientErrors, clientErrorCode, clientErrorResponse } from '../../src/http/client-error.js';
import { createLogger } from '../../src/core/index.js';
import { raw } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/server.js';

/** Status, headers and parsed JSON body of one raw response. */
function parse(response: string): { status: number; head: string; body: any } {
  const end = response.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response: ${JSON.stringify(response)}`);
  const head = response.slice(0, end);
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), head, body: JSON.parse(response.slice(end + 4)) };
}

let now = 1_700_000_000_000;
const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    cb();
  },
});
const s = await startTestServer({ start: { log: createLogger('info', sink), clock: () => now } });
t.teardown(() => s.close());
const port = Number(new URL(s.url).port);
const entries = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

t.test('a bare-LF request and garbage get the JSON 400 at once, and the connection is closed', async (t) => {
  for (const request of ['GET /health HTTP/1.1\nHost: 127.0.0.1\n\n', 'hello there\r\n\r\n', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', 'GET /health HTTP/9.9\r\n\r\n']) {
    // raw() resolves when the server closes the connection.
    const r = parse(await raw(port, request));
    t.equal(r.status, 400, JSON.stringify(request));
    t.match(r.head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
    t.match(r.head, /\r\nConnection: close(\r\n|$)/i);
    t.same(Object.keys(r.body), ['status', 'code', 'message']);
    t.match(r.body, { status: 'failure', code: 'bad_request', message: /not valid HTTP/ });
  }
});

t.test('idle keep-alive connections outlive a proxy\'s (nginx upstream keepalive_timeout 60 s)', async (t) => {
  const out = await raw(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\nGET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  t.match(out, /\r\nKeep-Alive: timeout=65\r\n/i, 'the first answer advertises 65 s');
  t.same([...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])), [200, 200]);
});

t.test('oversized headers: 431 headers_too_large', async (t) => {
  const r = parse(await raw(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(http.maxHeaderSize + 1)}\r\n\r\n`));
  t.equal(r.status, 431);
  t.match(r.body, { status: 'failure', code: 'headers_too_large' });
});

t.test('complete requests before the malformed one on the connection are answered first', async (t) => {
  const out = await raw(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nnonsense\r\n\r\n');
  const statuses = [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  t.same(statuses, [200, 200, 400], 'both answers, then the error');
  t.match(out.slice(out.lastIndexOf('HTTP/1.1 ')), /"code":"bad_request"/);
});

t.test('a flood of malformed requests: one one-line warning a minute, no stack', async (t) => {
  // A new minute: the first malformed request writes a line, the rest of the minute none.
  now += 60_000;
  const before = lines.length;
  const n = 1000;
  let next = 0;
  // 20 connections at a time.
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < n) {
        next++;
        t.equal(parse(await raw(port, 'BROKEN\r\n\r\n')).status, 400);
      }
    }),
  );
  t.equal((await fetch(`${s.url}/health`)).status, 200, 'the server is fine');
  const logged = entries().slice(before);
  const warnings = logged.filter((l) => l.msg === 'malformed HTTP requests');
  t.equal(warnings.length, 1, 'one line for 1,000 malformed requests');
  t.match(warnings[0], { level: 'warn', code: 'bad_request', reason: 'HPE_INVALID_METHOD' });
  t.notOk(lines.slice(before).some((l) => l.includes('"stack"')), 'no stack trace');
  t.notOk(logged.some((l) => l.level === 'error'), 'nothing at error level');
  // A minute later: one line with the count since the last one, this request included.
  now += 60_000;
  t.equal(parse(await raw(port, 'BROKEN AGAIN\r\n\r\n')).status, 400);
  const last = entries().slice(before).filter((l) => l.msg === 'malformed HTTP requests');
  t.equal(last.length, 2, 'one more line');
  t.equal(last[1]!.count, n, 'the 999 not logged and this one');
});

t.test('a request timeout (node:http ERR_HTTP_REQUEST_TIMEOUT): 408 request_timeout', async (t) => {
  t.equal(clientErrorCode('ERR_HTTP_REQUEST_TIMEOUT'), 'request_timeout');
  t.equal(clientErrorCode('HPE_HEADER_OVERFLOW'), 'headers_too_large');
  t.equal(clientErrorCode('HPE_INVALID_METHOD'), 'bad_request');
  t.equal(clientErrorCode(undefined), 'bad_request');
  // The handler over a real connection, given the timeout node:http reports.
  const server = http.createServer();
  const counter = answerClientErrors(server, createLogger('silent'), () => 0);
  const plain = net.createServer((socket) => server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket));
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => plain.close(() => r())));
  const r = parse(await raw((plain.address() as AddressInfo).port, 'GET /slow HTTP/1.1\r\n'));
  t.equal(r.status, 408);
  t.match(r.body, { status: 'failure', code: 'request_timeout' });
  t.equal(counter.count, 1);
  t.match(clientErrorResponse('bad_request'), /^HTTP\/1\.1 400 Bad Request\r\n/);
});
