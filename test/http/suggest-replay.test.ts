/**
 * Stored responses of the suggest lean path (src/http/suggest.ts, `StoredResponses`): a request
 * whose raw target was answered before gets the same bytes (a new request id, its own
 * access-log line) while nothing the answer depends on changed, and a freshly computed answer
 * — equal to the Koa chain's — after an index change, a settings change, new query
 * suggestions, another promise for the project's index or a deleted project; and the same
 * stored answer whatever `Access-Control-Request-Headers` says (GET answers do not echo it).
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
    // `ms` to the microsecond on both paths (src/http/lean.ts, accessMs).
    for (const line of lines.slice(before)) t.match(line, /"ms":\d+(\.\d{1,3})?,/, `${what}: ms rounded to the microsecond`);
    return { text: a, body: a.slice(a.indexOf('\r\n\r\n') + 4), reqId: /^X-Request-Id: (.*)\r$/im.exec(a)![1], log: logged[0]! };
  };

  // A search request never looks in the suggest route's stored answers.
  const lookups = route.responses.lookups;
  t.match(await raw(lean.port, get('/sites?site=default&query=wid')), /^HTTP\/1\.1 200 /, 'a search');
  t.equal(route.responses.lookups, lookups, 'no stored-answer lookup for a search');

  await ask('opens the index (the chain)');
  t.equal(route.responses.lookups, lookups + 1, 'one lookup per suggest request');
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
  // Replays compute querySuggestions only when the suggestion index moved since they were last
  // found current (SuggestionIndex.version): count the computations.
  const analytics = s.services.analytics;
  const compute = analytics.querySuggestions.bind(analytics);
  let computed = 0;
  analytics.querySuggestions = (...args) => {
    computed++;
    return compute(...args);
  };
  t.teardown(() => {
    analytics.querySuggestions = compute;
  });
  await ask('stored again');
  t.equal(route.replays, 3);
  const atStamp = computed;
  await ask('replayed, the log unchanged');
  await ask('replayed again');
  t.equal(route.replays, 5);
  t.equal(computed - atStamp, 2, 'only the chain computed them (once per request); the replays reused the stamp');
  // A logged search of another query moves the index but not this target's suggestions.
  t.equal((await fetch(`${s.url}/sites?site=default&query=installing`)).status, 200);
  analytics.flush();
  const beforeMove = computed;
  await ask('after an unrelated logged search');
  t.equal(route.replays, 6, 'still replayed: the suggestions were computed again and are equal');
  t.equal(computed - beforeMove, 2, 'computed by the replay (the index moved) and by the chain');
  await ask('and stamped again');
  t.equal(route.replays, 7);
  t.equal(computed - beforeMove, 3, 'only the chain computed them');

  // Access-Control-Request-Headers: a preflight's business, not echoed on a GET answer, so
  // the stored answer serves requests with and without it.
  const custom = await ask('other requested headers', 'Access-Control-Request-Headers: X-Custom\r\n');
  t.equal(route.replays, 8, 'replayed');
  t.notMatch(custom.text, /^Access-Control-Allow-Headers:/im, 'not echoed');
  t.match(custom.text, /^Access-Control-Allow-Origin: \*\r$/im);
  await ask('without them again');
  t.equal(route.replays, 9, 'replayed');

  // Another promise for the project's index (what a closed and reopened store gets): the
  // stored answer belongs to the old one.
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

const entry = (url: string, body: string) => ({
  url, siteId: 's', settings: {} as never, pending: Promise.resolve({} as never), index: {} as never, generation: 1,
  query: 'q', maxQuerySuggestions: 0, querySuggestions: [], headers: [], body: Buffer.from(body), bytes: 2 * url.length + Buffer.byteLength(body) + 512,
});

t.test('stored responses: an LRU bounded by estimated bytes', async (t) => {
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
  t.equal(stored.get('/a')!.body.toString(), 'short', 'replaced');
  t.same(stored.stats(), { entries: 4, bytes: 3 * one + entry('/a', 'short').bytes }, 'the old entry\'s bytes left with it');
  stored.set(entry('/huge', 'y'.repeat(one)));
  t.notOk(stored.get('/huge'), 'an entry over a quarter of the budget is not stored');
  t.same(new StoredResponses(0).stats(), { entries: 0, bytes: 0 });
  const off = new StoredResponses(0);
  off.set(entry('/a', body));
  t.notOk(off.get('/a'), '0 disables');
});

t.test('stored responses: a hit moves only entries of the older half to the recent end', async (t) => {
  const body = 'x'.repeat(100);
  // URLs of one length: every entry has the same estimated size.
  const u = (i: number) => `/${String(i).padStart(2, '0')}`;
  const one = entry(u(0), body).bytes;
  const stored = new StoredResponses(8 * one);
  for (let i = 0; i < 8; i++) stored.set(entry(u(i), body));
  // /06 is in the recent half: hits leave it where it is (strict LRU would move it past /07).
  // /01 is in the older half: a hit moves it to the recent end.
  for (let i = 0; i < 100; i++) t.ok(stored.get(u(6)));
  t.ok(stored.get(u(1)));
  for (let i = 8; i < 14; i++) stored.set(entry(u(i), body));
  // Six new entries evicted the six oldest in that order: /00, /02, /03, /04, /05, /06.
  for (const gone of [0, 2, 3, 4, 5, 6].map(u)) t.notOk(stored.get(gone), `${gone} evicted`);
  t.ok(stored.get(u(1)), '/01 stayed: its hit moved it');
  t.ok(stored.get(u(7)), '/07 stayed: never moved, but after /06');
  t.same(stored.stats(), { entries: 8, bytes: 8 * one });
  // Hits keep an entry alive however often others are added, as long as each comes before
  // the entry falls out of the recent half.
  for (let i = 14; i < 60; i++) {
    stored.set(entry(u(i), body));
    t.ok(stored.get(u(1)), `/01 kept while in use (${i})`);
  }
});
