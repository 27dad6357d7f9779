/**
 * Stored responses of the suggest lean path (src/http/suggest.ts, `StoredResponses`): a request
 * whose raw target was answered before gets the same bytes (a new request id, its own
 * access-log line) while nothing the answer depends on changed, and a freshly computed answer
 * — equal to the Koa chain's — after an index change, a settings change, new query
 * suggestions, another `Access-Control-Request-Headers`, another promise for the project's
 * index or a deleted project.
 */
import Koa from 'koa';
import t from 'tap';
import { createApp } from '../../src/http/app.js';
import { StoredResponses } from '../../src/http/suggest.js';
import { createLogger } from '../../src/log.js';
import { startTestServer } from '../helpers/server.js';
import { get, lineSink, listen, masked, page, raw } from '../helpers/raw-http.js';

t.test('stored responses: replayed while valid, recomputed after every kind of change', async (t) => {
  const { sink, lines } = lineSink();
  const s = await startTestServer({ t, start: { log: createLogger('info', sink) } });
  const index = async (pages: unknown[]) => {
    const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
    t.equal(r.status, 200, 'indexed');
  };
  await index([page('install', 'Installing the widget', 'Install it.'), page('config', 'Widget configuration', 'Configure it.', { contentGroup: 'Docs' })]);
  const leanApp = createApp(s.services);
  const chainApp = createApp(s.services);
  const lean = await listen(leanApp.callback());
  const chain = await listen(Koa.prototype.callback.call(chainApp));
  t.teardown(() => Promise.all([lean.close(), chain.close()]));
  const route = leanApp.suggest;

  const target = '/sites/suggest?site=default&query=wid&maxQuerySuggestions=3';
  /** One request to both apps: the lean answer, checked against the chain's. */
  const ask = async (what: string, headers = '') => {
    const before = lines.length;
    const a = await raw(lean.port, get(target, headers));
    const b = await raw(chain.port, get(target, headers));
    t.equal(masked(a), masked(b), `${what}: the chain's bytes`);
    const logged = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
    t.equal(logged.length, 2, `${what}: one access-log line per request`);
    return { text: a, body: a.slice(a.indexOf('\r\n\r\n') + 4), reqId: /^X-Request-Id: (.*)\r$/im.exec(a)![1], log: logged[0]! };
  };

  await ask('opens the index (the chain)');
  const first = await ask('first lean answer (stored)');
  t.equal(route.replays, 0);
  const again = await ask('same target');
  t.equal(route.replays, 1, 'replayed');
  t.equal(again.body, first.body, 'same body');
  t.not(again.reqId, first.reqId, 'a new request id');
  t.equal(again.log.reqId, again.reqId, 'its access-log line carries it');
  t.match(again.log, { method: 'GET', path: '/sites/suggest', status: 200, siteId: 'default', msg: 'request' });

  // An index change: a new page matching the prefix.
  await index([page('wide', 'Widescreen widgets', 'Wide.')]);
  const afterIndex = await ask('after an index change');
  t.equal(route.replays, 1, 'not replayed');
  t.match(afterIndex.body, /Widescreen widgets/, 'the new page');
  await ask('stored again');
  t.equal(route.replays, 2);

  // A settings change: a custom result for this query.
  const patch = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ search: { resultMappings: [{ trigger: { type: 'equals', value: 'wid' }, action: { type: 'custom', html: '<b>Widget shop</b>', position: 1 } }] } }),
  });
  t.equal(patch.status, 200);
  const afterSettings = await ask('after a settings change');
  t.equal(route.replays, 2, 'not replayed');
  t.match(afterSettings.body, /Widget shop/, 'the custom result');

  // New query suggestions from the query log.
  t.match(afterSettings.body, /"querySuggestions":\[\]/, 'none yet');
  for (let i = 0; i < 2; i++) t.equal((await fetch(`${s.url}/sites?site=default&query=widget%20configuration`)).status, 200);
  s.services.analytics.flush();
  const afterLog = await ask('after the query log changed');
  t.equal(route.replays, 2, 'not replayed');
  t.match(afterLog.body, /"querySuggestions":\[\{"query":"widget configuration"\}\]/, 'the logged query');
  await ask('stored again');
  t.equal(route.replays, 3);

  // Another Access-Control-Request-Headers: echoed, so not the stored headers.
  const custom = await ask('other requested headers', 'Access-Control-Request-Headers: X-Custom\r\n');
  t.equal(route.replays, 3, 'not replayed');
  t.match(custom.text, /^Access-Control-Allow-Headers: X-Custom\r$/im);
  const plain = await ask('without them again');
  t.equal(route.replays, 3, 'not replayed: the stored answer was the other one');
  t.match(plain.text, /^Access-Control-Allow-Headers: Content-Type\r$/im);

  // Another promise for the project's index (what a closed and reopened store gets): the
  // stored answer belongs to the old one.
  await ask('stored again');
  t.equal(route.replays, 4);
  const replays = route.replays;
  const indexes = s.services.indexes;
  const original = indexes.get.bind(indexes);
  indexes.get = (siteId: string) => original(siteId).then((index) => index);
  await ask('another index promise');
  t.equal(route.replays, replays, 'not replayed');
  indexes.get = original;

  // A deleted project: the chain's 404, never the stored answer.
  t.equal((await fetch(`${s.url}/admin/projects/default`, { method: 'DELETE', headers: { authorization: `Bearer ${s.masterKey}` } })).status, 200);
  const gone = await ask('after the project was deleted');
  t.match(gone.text, /^HTTP\/1\.1 404 /, 'not found');
  t.equal(route.replays, replays, 'not replayed');
});

t.test('stored responses: an LRU bounded by estimated bytes', async (t) => {
  const entry = (url: string, body: string) => ({
    url, requestedHeaders: undefined, siteId: 's', settings: {} as never, pending: Promise.resolve({} as never), index: {} as never, generation: 1,
    query: 'q', maxQuerySuggestions: 0, querySuggestions: [], headers: [], body, bytes: 2 * (url.length + body.length) + 512,
  });
  const body = 'x'.repeat(500);
  const one = entry('/a', body).bytes;
  const stored = new StoredResponses(4 * one);
  for (const url of ['/a', '/b', '/c', '/d']) stored.set(entry(url, body));
  t.same(stored.stats(), { entries: 4, bytes: 4 * one });
  t.ok(stored.get('/a'), 'a used: b is now the oldest');
  stored.set(entry('/e', body));
  t.notOk(stored.get('/b'), 'the least recently used left');
  t.ok(stored.get('/a') && stored.get('/c') && stored.get('/d') && stored.get('/e'));
  t.same(stored.stats(), { entries: 4, bytes: 4 * one }, 'within the budget');
  stored.set(entry('/a', 'short'));
  t.equal(stored.get('/a')!.body, 'short', 'replaced');
  t.same(stored.stats(), { entries: 4, bytes: 3 * one + entry('/a', 'short').bytes }, 'the old entry\'s bytes left with it');
  stored.set(entry('/huge', 'y'.repeat(one)));
  t.notOk(stored.get('/huge'), 'an entry over a quarter of the budget is not stored');
  t.same(new StoredResponses(0).stats(), { entries: 0, bytes: 0 });
  const off = new StoredResponses(0);
  off.set(entry('/a', body));
  t.notOk(off.get('/a'), '0 disables');
});
