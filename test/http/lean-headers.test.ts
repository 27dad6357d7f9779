/**
 * `userAgentOf` (src/http/lean.ts) reads `User-Agent` from `req.rawHeaders` instead of making
 * node:http build `req.headers`: it must give exactly the value `req.headers` gives, for raw
 * requests sent over a socket (a logged search hashes it into the visitor id).
 */
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { userAgentOf } from '../../src/http/lean.js';
import { listen, raw } from '../helpers/raw-http.js';

t.test('userAgentOf equals req.headers[user-agent]', async (t) => {
  const seen: Array<{ ours: string | undefined; node: string | undefined }> = [];
  const server = await listen((req: IncomingMessage, res) => {
    // Ours first: reading req.headers first must not be what makes it right.
    const ours = userAgentOf(req);
    seen.push({ ours, node: req.headers['user-agent'] });
    res.end('ok');
  });
  t.teardown(() => server.close());
  const cases: Array<[string, string | undefined]> = [
    ['', undefined],
    ['User-Agent: Mozilla/5.0 (X11)\r\n', 'Mozilla/5.0 (X11)'],
    ['user-agent: curl/8.0\r\n', 'curl/8.0'],
    ['USER-AGENT: Shouting\r\n', 'Shouting'],
    ['User-Agent: first\r\nAccept: */*\r\nuser-agent: second\r\n', 'first'],
    ['User-Agent: \r\n', ''],
    ['User-Agents: plural\r\nX-User-Agent: prefixed\r\n', undefined],
    ['User-Agent:   padded   \r\n', 'padded'],
  ];
  for (const [headers] of cases) {
    const request = `GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`;
    t.match(await raw(server.port, request), /^HTTP\/1\.1 200 /);
  }
  t.equal(seen.length, cases.length);
  cases.forEach(([headers, want], i) => {
    t.equal(seen[i]!.ours, seen[i]!.node, `same as node:http for ${JSON.stringify(headers)}`);
    t.equal(seen[i]!.ours, want, 'the expected value');
  });
});
