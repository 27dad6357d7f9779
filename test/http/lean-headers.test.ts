/**
 * `requestedHeadersOf` (src/http/lean.ts) reads `Access-Control-Request-Headers` from
 * `req.rawHeaders` instead of making node:http build `req.headers`: it must give exactly the
 * value `req.headers` gives, for raw requests sent over a socket.
 */
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { requestedHeadersOf } from '../../src/http/lean.js';
import { get, listen, raw } from '../helpers/raw-http.js';

t.test('requestedHeadersOf equals req.headers[access-control-request-headers]', async (t) => {
  const seen: Array<{ ours: string | undefined; node: string | undefined }> = [];
  const server = await listen((req: IncomingMessage, res) => {
    // Ours first: reading req.headers first must not be what makes it right.
    const ours = requestedHeadersOf(req);
    seen.push({ ours, node: req.headers['access-control-request-headers'] });
    res.end('ok');
  });
  t.teardown(() => server.close());
  const cases: Array<[string, string | undefined]> = [
    ['', undefined],
    ['Access-Control-Request-Headers: X-Custom\r\n', 'X-Custom'],
    ['access-control-request-headers: content-type, x-a\r\n', 'content-type, x-a'],
    ['ACCESS-CONTROL-REQUEST-HEADERS: X-Up\r\n', 'X-Up'],
    ['Access-Control-Request-Headers: X-One\r\nAccept: */*\r\naccess-control-request-headers: X-Two\r\n', 'X-One, X-Two'],
    ['Access-Control-Request-Headers: \r\n', ''],
    ['Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headerz: X\r\n', undefined],
    ['Access-Control-Request-Headers:   padded   \r\n', 'padded'],
  ];
  for (const [headers] of cases) t.match(await raw(server.port, get('/x', headers)), /^HTTP\/1\.1 200 /);
  t.equal(seen.length, cases.length);
  cases.forEach(([headers, want], i) => {
    t.equal(seen[i]!.ours, seen[i]!.node, `same as node:http for ${JSON.stringify(headers)}`);
    t.equal(seen[i]!.ours, want, 'the expected value');
  });
});
