/**
 * The connection front (src/http/front.ts): which request heads it reads, that its answers are
 * node:http's bytes, that it keeps the order of requests on a connection across searches and
 * hand-overs, its timeouts and its shutdown. (test/http/suggest-lean.test.ts compares its
 * answers with the Koa chain's for every request of the lean-path tests.)
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { createApp } from '../../src/http/app.js';
import { MAX_HEAD_BYTES, mayStartHead, readHead } from '../../src/http/front.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { converse, keepAlive, listen, listenFront, masked, page, splitResponses } from '../helpers/raw-http.js';

t.test('readHead: the subset of HTTP/1.1 the front answers', async (t) => {
  const ok = 'GET /sites/suggest?site=a&query=b HTTP/1.1\r\nHost: x\r\n\r\n';
  const h = readHead(ok, 0);
  t.same(h, { target: '/sites/suggest?site=a&query=b', close: false, end: ok.length });
  t.same(readHead('junk' + ok, 4), { target: '/sites/suggest?site=a&query=b', close: false, end: ok.length + 4 }, 'from an offset');
  t.equal(readHead(ok.replace('Host: x', 'Host: x\r\nConnection: close'), 0)?.close, true, 'Connection: close');
  t.equal(readHead(ok.replace('Host: x', 'Host: x\r\nconnection:  Keep-Alive '), 0)?.close, false, 'Connection: keep-alive, any case and spacing');
  t.ok(readHead(ok.replace('Host: x', 'HOST:x\r\nUser-Agent: a\tb (c; ü)\r\nAccept: */*'), 0), 'other headers, tabs and latin-1 in values');
  const refused: Array<[string, string]> = [
    [ok.slice(0, -2), 'an incomplete head'],
    [ok.replace('GET', 'HEAD'), 'HEAD'],
    [ok.replace('GET', 'POST'), 'POST'],
    [ok.replace('/sites/suggest?', '/sites?'), 'another route'],
    [ok.replace('/sites/suggest?', '/sites/suggest/?'), 'another path'],
    [ok.replace('?site', '%3Fsite').replace('/sites/suggest', '/sites/suggest?'), ''],
    [ok.replace('HTTP/1.1', 'HTTP/1.0'), 'HTTP/1.0'],
    [ok.replace('HTTP/1.1', 'HTTP/1.1 '), 'a trailing space in the request line'],
    [ok.replace('query=b', 'query=b c'), 'a space in the target'],
    [ok.replace('query=b', 'query=\u00fc'), 'a non-ASCII target'],
    [ok.replace('query=b', 'query=\x7f'), 'DEL in the target'],
    [ok.replace('Host: x\r\n', ''), 'no Host'],
    [ok.replace('Host: x', 'Host: x\r\nContent-Length: 0'), 'Content-Length'],
    [ok.replace('Host: x', 'Host: x\r\nTransfer-Encoding: chunked'), 'Transfer-Encoding'],
    [ok.replace('Host: x', 'Host: x\r\nExpect: 100-continue'), 'Expect'],
    [ok.replace('Host: x', 'Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade'), 'Upgrade'],
    [ok.replace('Host: x', 'Host: x\r\nConnection: keep-alive, Upgrade'), 'another Connection value'],
    [ok.replace('Host: x', 'Host: x\r\nBad Name: y'), 'a space in a header name'],
    [ok.replace('Host: x', 'Host: x\r\n folded'), 'an obsolete line folding'],
    [ok.replace('Host: x', 'Host: x\r\nNoColon'), 'a line without a colon'],
    [ok.replace('Host: x', 'Host: x\ry'), 'a bare CR in a value'],
    [ok.replace('Host: x', 'Host: x\ny: z'), 'a bare LF'],
    [ok.replace('Host: x', 'Host: x\x01'), 'a control character in a value'],
    [ok.replace('Host: x', `Host: x\r\nCookie: ${'c'.repeat(MAX_HEAD_BYTES)}`), 'a head over the limit'],
  ];
  for (const [head, why] of refused) if (why) t.equal(readHead(head, 0), null, why);
});

/** A server with one indexed page set, the reference (node:http + lean path) and a front server over the same services. */
async function setup(t: Test): Promise<{ s: TestServer; ref: { port: number }; fr: Awaited<ReturnType<typeof listenFront>>; app: ReturnType<typeof createApp> }> {
  const s = await startTestServer({ t });
  const pages = [page('install', 'Installing the widget'), page('config', 'Widget configuration'), page('gadget', 'Gadgets and widgets'), page('uni', 'Über Straße')];
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
  t.equal(r.status, 200, 'indexed');
  const ref = await listen(createApp(s.services).callback());
  const app = createApp(s.services);
  const fr = await listenFront(app);
  t.teardown(() => Promise.all([ref.close(), fr.close()]));
  // The first request of an app opens the project's index through the Koa route (the lean
  // path answers from then on); it closes its connection (node:http answers).
  await fetch(`http://127.0.0.1:${fr.port}/sites/suggest?site=default&query=g`, { headers: { connection: 'close' } });
  await fetch(`http://127.0.0.1:${ref.port}/sites/suggest?site=default&query=g`, { headers: { connection: 'close' } });
  return { s, ref, fr, app };
}

/** Resolves once `done()` is true (checked every 10 ms, at most 10 s). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** Holds every search of `s` until `release()`; `hold()` closes the gate again. Undone at the end of `t`. */
function gateSearches(t: Test, s: TestServer): { release: () => void; hold: () => void } {
  const searcher = s.services.searcher;
  const run = searcher.run.bind(searcher);
  let open!: () => void;
  let gate!: Promise<void>;
  const hold = () => {
    gate = new Promise<void>((r) => (open = r));
  };
  hold();
  searcher.run = (async (...args: Parameters<typeof run>) => {
    await gate;
    return run(...args);
  }) as typeof searcher.run;
  t.teardown(() => {
    searcher.run = run;
  });
  return { release: () => open(), hold };
}

const q = (query: string, extra = '') => `/sites/suggest?site=default&query=${encodeURIComponent(query)}${extra}`;
const bodyOf = (r: string) => JSON.parse(r.slice(r.indexOf('\r\n\r\n') + 4)) as { query?: string; code?: string };

t.test('front: keep-alive answers are node:http\'s bytes, misses, stored and cached answers alike', async (t) => {
  const { ref, fr } = await setup(t);
  const handed = fr.front.handedOver;
  const paths = [q('wid'), q('wid'), q('Über str'), q('wid', '&limit=1&groupResults=false'), q('gadg', '&maxQuerySuggestions=0'), q('gadg', '&maxQuerySuggestions=0')];
  const a = await converse(fr.port, paths.map((p) => keepAlive(p)), paths.length, paths.map((_, i) => i));
  const b = await converse(ref.port, paths.map((p) => keepAlive(p)), paths.length, paths.map((_, i) => i));
  t.equal(a.responses.length, paths.length, 'every request answered');
  for (let i = 0; i < paths.length; i++) {
    t.equal(masked(a.responses[i]!), masked(b.responses[i]!), paths[i]!);
    t.match(a.responses[i]!, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n/, 'keep-alive, as node:http says it');
  }
  t.equal(fr.front.answered, paths.length, 'all by the front');
  t.equal(fr.front.handedOver, handed, 'no hand-over');
  t.equal(a.closed, false, 'the connection stays open');
});

t.test('front: pipelined requests keep their order across a search and a hand-over', async (t) => {
  const { ref, fr } = await setup(t);
  // One write: a miss (searched on a search thread), a stored answer, another miss, a search
  // (not the front's: handed over), then suggests node:http now answers.
  const paths = [q('inst'), q('inst'), q('confi'), '/sites?site=default&query=widget', q('inst'), q('nomatch')];
  const wire = paths.map((p) => keepAlive(p)).join('');
  const before = { answered: fr.front.answered, handed: fr.front.handedOver };
  const a = await converse(fr.port, [wire], paths.length);
  const b = await converse(ref.port, [wire], paths.length);
  t.equal(a.responses.length, paths.length);
  for (let i = 0; i < paths.length; i++) t.equal(masked(a.responses[i]!), masked(b.responses[i]!), `in order: ${paths[i]}`);
  t.same(a.responses.map((r) => bodyOf(r).query), ['inst', 'inst', 'confi', 'widget', 'inst', 'nomatch']);
  t.equal(fr.front.answered - before.answered, 3, 'three by the front');
  t.equal(fr.front.handedOver - before.handed, 1, 'then node:http took the connection');
});

t.test('front: bytes that arrive while a search runs wait for it (and pause reading when many)', async (t) => {
  const { s, fr } = await setup(t);
  const { release } = gateSearches(t, s);
  // A miss held at the gate, then more than MAX_HEAD_BYTES of stored-answer requests behind it.
  const n = Math.ceil((2 * MAX_HEAD_BYTES) / keepAlive(q('g')).length);
  const sock = net.connect(fr.port, '127.0.0.1');
  const got: Buffer[] = [];
  sock.on('data', (c: Buffer) => got.push(c));
  await new Promise((r) => sock.once('connect', r));
  const reads = fr.front.reads;
  sock.write(keepAlive(q('gadg')));
  await until(() => fr.front.reads > reads);
  sock.write(keepAlive(q('g')).repeat(n));
  await until(() => fr.front.pauses > 0);
  t.equal(got.length, 0, 'nothing answered while the first request\'s search waits');
  t.equal(fr.front.pauses, 1, 'reading paused');
  release();
  for (let i = 0; i < 200 && splitResponses(Buffer.concat(got)).responses.length < n + 1; i++) await new Promise((r) => setTimeout(r, 20));
  const responses = splitResponses(Buffer.concat(got)).responses;
  sock.destroy();
  t.equal(responses.length, n + 1, 'every request answered');
  t.same(responses.map((r) => bodyOf(r).query), ['gadg', ...Array(n).fill('g')], 'in order');
});

t.test('front: a head cut by one read is kept, cut by two goes to node:http, as do requests outside its subset', async (t) => {
  const { ref, fr } = await setup(t);
  /** Sends a keep-alive suggest cut at `cuts`, 50 ms apart, then one more whole; the two answers. */
  const split = async (port: number, cuts: number[]) => {
    const sock = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    sock.on('data', (c: Buffer) => got.push(c));
    await new Promise((r) => sock.once('connect', r));
    const req = keepAlive(q('widget'));
    let from = 0;
    for (const cut of cuts) {
      const reads = fr.front.reads;
      sock.write(req.slice(from, cut));
      from = cut;
      // Each part read on its own: the front's read of it, or (node:http alone) 50 ms.
      if (port === fr.port) await until(() => fr.front.reads > reads);
      else await new Promise((r) => setTimeout(r, 50));
    }
    sock.write(req.slice(from) + keepAlive(q('widget')));
    for (let i = 0; i < 200 && splitResponses(Buffer.concat(got)).responses.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    sock.destroy();
    return splitResponses(Buffer.concat(got)).responses;
  };
  for (const [cuts, handed] of [[[3], 0], [[20], 0], [[5, 30], 1], [[25, 45], 1]] as Array<[number[], number]>) {
    const before = { answered: fr.front.answered, handed: fr.front.handedOver };
    const a = await split(fr.port, cuts);
    const b = await split(ref.port, cuts);
    t.equal(a.length, 2, `cut at ${cuts}: both answered`);
    t.same(a.map(masked), b.map(masked), 'node:http\'s answers');
    t.equal(fr.front.handedOver - before.handed, handed, handed ? 'handed over' : 'not handed over');
    t.equal(fr.front.answered - before.answered, handed ? 0 : 2, handed ? 'answered by node:http' : 'answered by the front');
  }
  const others = [
    `GET ${q('wid')} HTTP/1.0\r\nHost: x\r\n\r\n`,
    `HEAD ${q('wid')} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    `GET ${q('wid')} HTTP/1.1\r\n\r\n`,
    `GET ${q('wid')} HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n`,
    `POST ${q('wid')} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`,
    `GET ${q('wid', '&limit=9')} HTTP/1.1\r\nHost: x\r\n\r\n`,
  ];
  for (const req of others) {
    const before = fr.front.handedOver;
    const x = await converse(fr.port, [req], 1);
    const y = await converse(ref.port, [req], 1);
    t.equal(masked(x.responses[0] ?? ''), masked(y.responses[0] ?? ''), req.split('\r\n')[0]!);
    t.equal(fr.front.handedOver, before + 1, 'handed over');
  }
});

t.test('front: a search that fails hands the request over, and the chain renders the error', async (t) => {
  const { s, fr } = await setup(t);
  const searcher = s.services.searcher;
  const run = searcher.run.bind(searcher);
  searcher.run = (async () => {
    throw new Error('search threads down');
  }) as typeof searcher.run;
  t.teardown(() => {
    searcher.run = run;
  });
  const before = fr.front.handedOver;
  const { responses } = await converse(fr.port, [keepAlive(q('zzzmiss')) + keepAlive(q('g'))], 2);
  t.match(responses[0], /^HTTP\/1\.1 500 /, 'the chain\'s error');
  t.equal(bodyOf(responses[0]!).code, 'internal');
  t.match(responses[1], /^HTTP\/1\.1 200 /, 'then the next request');
  t.equal(bodyOf(responses[1]!).query, 'g');
  t.equal(fr.front.handedOver, before + 1);
  // The same with `Connection: close`: the chain's error, then the connection closes.
  const closing = await converse(fr.port, [`GET ${q('zzzmiss2')} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`], 2);
  t.equal(closing.responses.length, 1);
  t.match(closing.responses[0], /^HTTP\/1\.1 500 [^]*Connection: close\r\n/, 'the chain\'s error, closing');
  t.equal(closing.closed, true, 'closed');
  t.equal(fr.front.handedOver, before + 2);
});

t.test('front: a client gone during its search, timeouts and shutdown', async (t) => {
  const { s, fr } = await setup(t);
  const gate = gateSearches(t, s);
  // Gone during the search: nothing breaks, the next connection is answered.
  const sock = net.connect(fr.port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write(keepAlive(q('gone')));
  await new Promise((r) => setTimeout(r, 50));
  sock.destroy();
  await new Promise((r) => setTimeout(r, 50));
  gate.release();
  const after = await converse(fr.port, [keepAlive(q('gone'))], 1);
  t.match(after.responses[0], /^HTTP\/1\.1 200 /, 'the server answers on');

  // Timeouts: headersTimeout before a first answer, the keep-alive timeout (+1 s) after one.
  fr.server.headersTimeout = 100;
  fr.server.keepAliveTimeout = 100;
  const closedAfter = async (write?: string) => {
    const c = net.connect(fr.port, '127.0.0.1');
    c.on('data', () => {});
    c.on('error', () => {});
    await new Promise((r) => c.once('connect', r));
    if (write) c.write(write);
    const t0 = Date.now();
    await new Promise((r) => c.once('close', r));
    return Date.now() - t0;
  };
  t.ok((await closedAfter()) >= 90, 'a silent connection is closed after headersTimeout');
  t.ok((await closedAfter(keepAlive(q('wid')))) >= 1000, 'an answered one after the keep-alive timeout and node:http\'s margin');
  fr.server.headersTimeout = 30_000;
  fr.server.keepAliveTimeout = 5_000;

  // Shutdown, as node:http's closeIdleConnections: a connection idle after an answer closes at
  // once, a busy one after its answer; one without a request yet goes to node:http (which
  // counts a new connection as busy), and a request it then sends is answered.
  const idle = net.connect(fr.port, '127.0.0.1');
  const busy = net.connect(fr.port, '127.0.0.1');
  const fresh = net.connect(fr.port, '127.0.0.1');
  const busyGot: Buffer[] = [];
  const freshGot: Buffer[] = [];
  busy.on('data', (c: Buffer) => busyGot.push(c));
  fresh.on('data', (c: Buffer) => freshGot.push(c));
  let idleGot = 0;
  idle.on('data', () => idleGot++);
  await Promise.all([idle, busy, fresh].map((c) => new Promise((r) => c.once('connect', r))));
  idle.write(keepAlive(q('wid')));
  for (let i = 0; i < 200 && idleGot === 0; i++) await new Promise((r) => setTimeout(r, 10));
  gate.hold();
  const reads = fr.front.reads;
  busy.write(keepAlive(q('shutdown')) + keepAlive(q('behind')));
  await until(() => fr.front.reads > reads);
  const idleClosed = new Promise((r) => idle.once('close', r));
  t.equal(fr.front.size, 3, 'the front owns all three');
  const handed = fr.front.handedOver;
  fr.front.closeIdle();
  t.equal(fr.front.handedOver, handed + 1, 'the one without a request goes to node:http');
  await idleClosed;
  t.pass('the idle connection closed');
  gate.release();
  await until(() => splitResponses(Buffer.concat(busyGot)).responses.length === 2);
  busy.destroy();
  t.match(Buffer.concat(busyGot).toString(), /^HTTP\/1\.1 200 [^]*"query":"shutdown"/, 'the busy one got its answer first');
  t.equal(fr.front.size, 0);
  t.equal(fr.front.handedOver, handed + 2, 'the request sent behind the busy one went to node:http');
  const busyAnswers = splitResponses(Buffer.concat(busyGot)).responses;
  t.same(busyAnswers.map((r) => bodyOf(r).query), ['shutdown', 'behind'], 'and was answered');
  fresh.write(keepAlive(q('late')));
  for (let i = 0; i < 200 && splitResponses(Buffer.concat(freshGot)).responses.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.match(splitResponses(Buffer.concat(freshGot)).responses[0], /^HTTP\/1\.1 200 [^]*"query":"late"/, 'node:http answers the request that came after');
  fresh.destroy();
});

t.test('startServer serves through the front', async (t) => {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([page('a', 'Widget guide')]) });
  t.equal(r.status, 200);
  await fetch(`${s.url}/sites/suggest?site=default&query=w`, { headers: { connection: 'close' } });
  const url = new URL(s.url);
  const { responses } = await converse(Number(url.port), [keepAlive(q('wid'))], 1);
  t.equal(bodyOf(responses[0]!).query, 'wid');
  t.equal(s.front.answered, 1, 'answered by the front');
  // Graceful close with a keep-alive connection open (the front ends it).
  const sock = net.connect(Number(url.port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  let answered = false;
  sock.on('data', () => (answered = true));
  sock.write(keepAlive(q('wid')));
  await until(() => answered);
  const closed = new Promise((r) => sock.once('close', r));
  await s.close();
  await closed;
  t.pass('closed with the server');
});

t.test('front: a client that does not read its answers is not read until they drain', async (t) => {
  const { fr } = await setup(t);
  await converse(fr.port, [keepAlive(q('g'))], 1);
  // ≈ 25 MB of answers: more than the kernel buffers of a loopback connection hold.
  const n = 40_000;
  const answered = fr.front.answered;
  const sock = net.connect(fr.port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.pause();
  sock.write(keepAlive(q('g')).repeat(n));
  for (let i = 0; i < 500 && fr.front.drainWaits === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(fr.front.drainWaits >= 1, 'reading paused until the answers drain');
  await new Promise((r) => setTimeout(r, 300));
  t.ok(fr.front.answered - answered < n, `the requests not read yet wait (${fr.front.answered - answered} of ${n} answered)`);
  let count = 0;
  let rest = Buffer.alloc(0);
  sock.on('data', (c: Buffer) => {
    rest = Buffer.concat([rest, c]);
    const { responses, used } = splitResponses(rest);
    for (const r of responses) if (bodyOf(r).query === 'g') count++;
    rest = rest.subarray(used);
  });
  sock.resume();
  for (let i = 0; i < 1500 && count < n; i++) await new Promise((r) => setTimeout(r, 20));
  sock.destroy();
  t.equal(count, n, 'then every request answered');
});

t.test('front: a server that limits requests per connection gets every connection', async (t) => {
  const { fr } = await setup(t);
  fr.server.maxRequestsPerSocket = 10;
  const before = { answered: fr.front.answered, handed: fr.front.handedOver };
  const { responses } = await converse(fr.port, [keepAlive(q('wid'))], 1);
  t.match(responses[0], /^HTTP\/1\.1 200 [^]*Keep-Alive: timeout=5, max=10\r\n/, 'node:http\'s answer');
  t.equal(fr.front.answered, before.answered);
  t.equal(fr.front.handedOver, before.handed + 1);
  fr.server.maxRequestsPerSocket = 0;
});

t.test('mayStartHead: what the front keeps of a cut head', async (t) => {
  const ok = 'GET /sites/suggest?site=a&query=b HTTP/1.1\r\nHost: x\r\n\r\n';
  for (const n of [1, 4, 10, 19, 30, ok.length - 2]) t.ok(mayStartHead(ok.slice(0, n), 0), `the first ${n} bytes`);
  t.notOk(mayStartHead(ok, 0), 'a complete head (readHead decides)');
  t.notOk(mayStartHead('GET /sites?site=a', 0), 'another route');
  t.notOk(mayStartHead('POST /', 0), 'another method');
  t.notOk(mayStartHead('GET /sites/suggest?' + 'a'.repeat(MAX_HEAD_BYTES), 0), 'over the limit');
  t.ok(mayStartHead('xxGET /si', 2), 'from an offset');
});

t.test('readHead accepts nothing node:http would read differently (random edits of a request)', async (t) => {
  // node:http alone (no front), recording what it parsed.
  const seen: string[] = [];
  const node = await listen((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.httpVersion} host=${req.headers.host}`);
    res.end('ok');
  });
  t.teardown(() => node.close());
  const base = 'GET /sites/suggest?site=a&query=b HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n';
  const pieces = ['\r', '\n', '\r\n', ' ', '\t', ':', '\x00', '\x7f', '\u00e9', 'a', '/', '?', '%', 'Content-Length: 1', 'Transfer-Encoding: chunked', 'Host: y', '\r\n ', 'HTTP/1.1', 'GET '];
  let seed = 42;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  let accepted = 0;
  for (let i = 0; i < 400; i++) {
    // One to three edits: insert, delete or replace at random places.
    let s = base;
    for (let k = 0, edits = 1 + rnd(3); k < edits; k++) {
      const at = rnd(s.length);
      const op = rnd(3);
      const piece = pieces[rnd(pieces.length)]!;
      s = op === 0 ? s.slice(0, at) + piece + s.slice(at) : op === 1 ? s.slice(0, at) + s.slice(at + 1 + rnd(4)) : s.slice(0, at) + piece + s.slice(at + 1);
    }
    const head = readHead(s, 0);
    if (head === null) continue;
    accepted++;
    seen.length = 0;
    // The bytes the front read as this latin1 string, up to the end of the head it read.
    const { responses } = await converse(node.port, [Buffer.from(s.slice(0, head.end), 'latin1')], 1);
    t.match(responses[0] ?? '', /^HTTP\/1\.1 200 /, `node:http accepts ${JSON.stringify(s.slice(0, head.end))}`);
    t.equal(seen[0]?.split(' ')[1], head.target, 'and reads the same target');
    t.equal(seen[0]?.split(' ')[0], 'GET');
  }
  t.ok(accepted >= 50, `${accepted} of 400 edited requests read by the front`);
});
