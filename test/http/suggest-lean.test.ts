/**
 * The lean path of `GET /sites/suggest` (src/http/suggest.ts) answers in front of the Koa
 * middleware chain: these tests send the same raw requests to an app with the lean path and to
 * the chain alone (over the same services) and compare the raw responses byte for byte (only
 * `Date` and the request id differ) and the access-log lines, for misses, hits and errors.
 */
import Koa from 'koa';
import t from 'tap';
import { createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { startTestServer } from '../helpers/server.js';
import { get, lineSink, listen, listenFront, masked, page, raw } from '../helpers/raw-http.js';

const { sink, lines: logLines } = lineSink();

t.test('lean path: the same bytes and access-log lines as the Koa chain, for misses, hits and errors', async (t) => {
  const s = await startTestServer({ t, start: { log: createLogger('info', sink) } });
  const pages = [
    page('install', 'Installing the widget', 'Install it with the installer.'),
    page('config', 'Widget configuration', 'Configure the widget.', { contentGroup: 'Docs' }),
    page('gadget', 'Gadgets and widgets', 'Gadget text.', { contentGroup: 'Blog' }),
    page('uni', 'Über Straße', 'Ünïcode text.'),
  ];
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
  t.equal(r.status, 200, 'indexed');
  // Logged searches, so that querySuggestions are not empty.
  for (let i = 0; i < 2; i++) t.equal((await fetch(`${s.url}/sites?site=default&query=widget%20configuration`)).status, 200);
  s.services.analytics.flush();
  // A custom result (suggestionHtml) on one query.
  const patch = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ search: { resultMappings: [{ trigger: { type: 'equals', value: 'gadg' }, action: { type: 'custom', html: '<b>Gadget shop</b>', position: 1 } }] } }),
  });
  t.equal(patch.status, 200);

  const leanApp = createApp(s.services);
  const chainApp = createApp(s.services);
  const lean = await listen(leanApp.callback());
  // The chain alone: Koa's own handler, without the lean path in front.
  const chain = await listen(Koa.prototype.callback.call(chainApp));
  // The connection front over a third app (src/http/front.ts): the requests below ask to close
  // their connections, which the front answers too.
  const frontApp = createApp(s.services);
  const front = await listenFront(frontApp);
  t.teardown(() => Promise.all([lean.close(), chain.close(), front.close()]));

  const requests: Array<[string, string?, string?]> = [
    ['/sites/suggest?site=default&query=wid'],
    ['/sites/suggest?site=default&query=wid&maxQuerySuggestions=3'],
    ['/sites/suggest?site=default&query=Widget+c&maxQuerySuggestions=10&limit=1'],
    ['/sites/suggest?site=default&query=wid&groupResults=false&limit=2'],
    ['/sites/suggest?site=default&query=wid&includeContent=true&highlightQueryTerms=1'],
    ['/sites/suggest?site=default&query=wid&includeContentGroups=%5B%22Docs%22%5D'],
    ['/sites/suggest?site=default&query=wid&excludeContentGroups=%5B%22Docs%22%2C%22_%22%5D'],
    ['/sites/suggest?site=default&query=%C3%BCber%20str'],
    ['/sites/suggest?site=default&query=%22widget%20con'],
    ['/sites/suggest?site=default&query=gadg'],
    ['/sites/suggest?site=default&query=nothingmatches'],
    ['/sites/suggest?site=default&query=wid&unrelated=1&unrelated=2'],
    ['/sites/suggest?site=default&query=wid', 'Access-Control-Request-Headers: X-Custom\r\n'],
    // Errors (the chain renders them: the lean path declines). Valid GETs above this line.
    ['/sites/suggest?site=default&query=wid&limit=3'],
    ['/sites/suggest?site=default&query=wid&query=gad'],
    ['/sites/suggest?site=default&query=%20'],
    ['/sites/suggest?site=default'],
    ['/sites/suggest?site=nope&query=wid'],
    ['/sites/suggest?query=wid'],
    ['/sites/suggest?site=default&query=wid&includeContentGroups=%7Bx'],
    ['/sites/suggest?site=default&query=wid&maxQuerySuggestions=11'],
    ['/sites/suggest?site=default&query=wid&filters=%5B%7B%22fid%239%22%3A%5B%22x%22%5D%7D%5D'],
    // Not GET, or not the plain path: the chain.
    ['/sites/suggest?site=default&query=wid', '', 'HEAD'],
    ['/sites/suggest?site=default&query=wid', '', 'OPTIONS'],
    ['/sites/suggest?site=default&query=wid', '', 'POST'],
    ['/sites/suggest/?site=default&query=wid'],
  ];
  // Twice: the first round fills both caches (misses), the second answers from them (hits).
  for (const round of ['miss', 'hit']) {
    for (const [path, headers, method] of requests) {
      const before = logLines.length;
      const a = await raw(lean.port, get(path, headers, method));
      const b = await raw(chain.port, get(path, headers, method));
      const c = await raw(front.port, get(path, headers, method));
      t.equal(masked(a), masked(b), `${round}: ${method ?? 'GET'} ${path}${headers ? ' ' + headers.trim() : ''}`);
      t.equal(masked(c), masked(b), `${round}, front: ${method ?? 'GET'} ${path}`);
      const lines = logLines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
      t.equal(lines.length, 3, 'one access-log line each');
      const shape = (l: Record<string, unknown>) => ({ ...l, time: '-', reqId: '-', ms: '-' });
      t.same(shape(lines[0]!), shape(lines[1]!), 'the same access-log line');
      t.same(shape(lines[2]!), shape(lines[1]!), 'the same access-log line from the front');
      t.match(String(lines[0]!.reqId), /^[0-9a-f-]{36}$/, 'with a request id');
    }
  }
  // The first 13 requests are valid GETs.
  const valid = 13;
  // The very first request of a project goes through the chain (the index was not open yet);
  // every other valid GET is answered by the lean path, misses and hits.
  t.equal(leanApp.suggest.leanAnswers, 2 * valid - 1, 'valid GETs answered by the lean path');
  t.equal(chainApp.suggest.leanAnswers, 0);
  // The second round replays a stored response for every valid GET: the first request went
  // through the chain, but the last valid one has the same target (its other
  // Access-Control-Request-Headers change nothing of a GET answer) and stored it.
  t.equal(leanApp.suggest.replays, valid, 'second round replayed from the stored responses');
  // The front answers what the lean path answers (the first request, which opened the index,
  // was node:http's) and hands every other connection over.
  t.equal(front.front.answered, 2 * valid - 1, 'valid GETs answered by the front');
  t.equal(front.front.handedOver, 2 * (requests.length - valid) + 1, 'the rest handed to node:http');

  // Query strings the lean path parses itself (or declines): the same values as Koa's parser.
  const edge = [
    '/sites/suggest?site=default&query=widget+c',
    '/sites/suggest?site=default&query=widget%2Bc',
    '/sites/suggest?%73ite=default&qu%65ry=wid',
    '/sites/suggest?&&site=default&&query=wid&',
    '/sites/suggest?site=default&query=wid&includeContent',
    '/sites/suggest?site=default&query=wid&__proto__=x&constructor=y',
    '/sites/suggest?site=default&query=%E0%A4%A',
    '/sites/suggest?site=default&query=%zzwid',
    '/sites/suggest?site=default&query=%ED%A0%80',
    '/sites/suggest??site=default&query=wid',
    '/sites/suggest?site=default&query=wid=x',
    '/sites/suggest?site=default&query=%C3%BC',
    '/sites/suggest?site=default&query=wid&limit=1&limit=',
  ];
  for (const round of ['miss', 'hit']) {
    for (const path of edge) {
      const a = await raw(lean.port, get(path));
      const b = await raw(chain.port, get(path));
      const c = await raw(front.port, get(path));
      t.equal(masked(a), masked(b), `${round}: ${path}`);
      t.equal(masked(c), masked(b), `${round}, front: ${path}`);
    }
  }
});

t.test('lean path: a deleted and re-created project is never answered from the old index', async (t) => {
  const s = await startTestServer({ t });
  const index = async (pages: unknown[], token: string) => {
    const r = await fetch(`${s.url}/sites/pagesJson?token=${token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
    t.equal(r.status, 200, 'indexed');
  };
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${s.url}${path}`, { method, headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const created = await (await admin('POST', '/admin/projects', { siteId: 'docs', name: 'Docs' })).json() as { apiKey: { token: string } };
  const token = created.apiKey.token;
  t.ok(token, 'project key');
  await index([page('a', 'Widget guide')], token);
  const suggest = async () => (await (await fetch(`${s.url}/sites/suggest?site=docs&query=wid`)).json()) as { totalResults: number; suggests: Record<string, Array<{ name: string }>> };
  t.equal((await suggest()).totalResults, 1);
  t.equal((await suggest()).totalResults, 1, 'again (lean path, from the cache)');
  t.equal((await admin('DELETE', '/admin/projects/docs')).status, 200, 'deleted');
  t.equal((await fetch(`${s.url}/sites/suggest?site=docs&query=wid`)).status, 404, 'gone at once');
  const again = await (await admin('POST', '/admin/projects', { siteId: 'docs', name: 'Docs' })).json() as { apiKey: { token: string } };
  await index([page('b', 'Widgetron'), page('c', 'Widgetorium')], again.apiKey.token);
  const b = await suggest();
  t.equal(b.totalResults, 2, 'the new project\'s pages, not the old cached answer');
  t.same(Object.values(b.suggests).flat().map((r) => r.name).sort(), ['Widgetorium', 'Widgetron']);
  t.same(await suggest(), b, 'and the same from the lean path');
});

t.test('lean path: a failure after the search (miss or hit) is rendered by the chain as a 500', async (t) => {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([page('a', 'Widget guide')]) });
  t.equal(r.status, 200);
  t.equal((await fetch(`${s.url}/sites/suggest?site=default&query=wid`)).status, 200, 'the index is open: the lean path takes the next ones');
  const analytics = s.services.analytics;
  const original = analytics.querySuggestions.bind(analytics);
  analytics.querySuggestions = () => {
    throw new Error('query log unavailable');
  };
  t.teardown(() => {
    analytics.querySuggestions = original;
  });
  for (const q of ['widg', 'widg']) {
    const res = await fetch(`${s.url}/sites/suggest?site=default&query=${q}`);
    t.equal(res.status, 500, 'miss, then hit: the chain renders the error');
    const body = (await res.json()) as { code: string; requestId: string };
    t.equal(body.code, 'internal');
    t.equal(res.headers.get('x-request-id'), body.requestId, 'with the chain\'s request id');
  }
  analytics.querySuggestions = original;
  t.equal((await fetch(`${s.url}/sites/suggest?site=default&query=widg`)).status, 200, 'the server still answers');
});
