/**
 * The lean path of `GET /sites` (src/http/search.ts, shared parts in src/http/lean.ts) answers
 * in front of the Koa middleware chain: these tests send the same raw requests to an app with
 * the lean path and to the chain alone (over the same services) and compare the raw responses
 * byte for byte (only `Date` and the request id differ), the access-log lines and the query-log
 * records, for misses and answer-cache hits and errors.
 */
import Koa from 'koa';
import t from 'tap';
import type { SearchLogEntry } from '../../src/analytics/service.js';
import { createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { startTestServer } from '../helpers/server.js';
import { get, lineSink, listen, masked, page, raw } from '../helpers/raw-http.js';

const { sink, lines: logLines } = lineSink();

t.test('lean path: the same bytes, access-log lines and query-log records as the Koa chain', async (t) => {
  const s = await startTestServer({ t, start: { log: createLogger('info', sink) } });
  const pages = [
    page('install', 'Installing the widget', 'Install it with the installer. <b>bold</b> & more.'),
    page('config', 'Widget configuration', 'Configure the widget.', { contentGroup: 'Docs' }),
    page('gadget', 'Gadgets and widgets', 'Gadget text.', { contentGroup: 'Blog' }),
    page('uni', 'Über Straße', 'Ünïcode text.'),
  ];
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
  t.equal(r.status, 200, 'indexed');
  const patch = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ search: { resultMappings: [{ trigger: { type: 'equals', value: 'gadget' }, action: { type: 'custom', html: '<b>Gadget shop</b>', position: 1 } }] } }),
  });
  t.equal(patch.status, 200);

  // Every query-log record, as the route hands it over.
  const analytics = s.services.analytics;
  const record = analytics.record.bind(analytics);
  const recorded: Array<[string, SearchLogEntry]> = [];
  analytics.record = (siteId, entry) => {
    recorded.push([siteId, entry]);
    record(siteId, entry);
  };
  t.teardown(() => {
    analytics.record = record;
  });

  const leanApp = createApp(s.services);
  const chainApp = createApp(s.services);
  const lean = await listen(leanApp.callback());
  // The chain alone: Koa's own handler, without the lean paths in front.
  const chain = await listen(Koa.prototype.callback.call(chainApp));
  t.teardown(() => Promise.all([lean.close(), chain.close()]));

  const requests: Array<[string, string?, string?]> = [
    ['/sites?site=default&query=widget'],
    ['/sites?site=default&query=widget&log=false'],
    ['/sites?site=default&query=widget&includeContent=true&highlightQueryTerms=true&filterOptions=true'],
    ['/sites?site=default&query=wid&limit=1&offset=1'],
    ['/sites?site=default&query=widget&groupResults=false'],
    ['/sites?site=default&query=widget&limitPerGroup=true&groupResults=true'],
    ['/sites?site=default&query=widget&includeContentGroups=%5B%22Docs%22%5D'],
    ['/sites?site=default&query=widget&excludeContentGroups=%5B%22Docs%22%2C%22_%22%5D'],
    ['/sites?site=default&query=%C3%BCber%20strasse'],
    ['/sites?site=default&query=%22widget%20configuration%22'],
    ['/sites?site=default&query=gadget'],
    ['/sites?site=default&query=*&sortOrder=DESC'],
    ['/sites?site=default&query=nothingmatches'],
    ['/sites?site=default&query=widget&unrelated=1&unrelated=2'],
    ['/sites?site=default&query=widget', 'Access-Control-Request-Headers: X-Custom\r\nUser-Agent: tester/1.0\r\n'],
    // Errors (the chain renders them: the lean path declines, or hands over after the search).
    ['/sites?site=default&query=widget&sort=nosuchfield'],
    ['/sites?site=default&query=widget&limit=101'],
    ['/sites?site=default&query=widget&offset=9999&limit=2'],
    ['/sites?site=default&query=widget&query=gadget'],
    ['/sites?site=default&query=%20'],
    ['/sites?site=default'],
    ['/sites?site=nope&query=widget'],
    ['/sites?query=widget'],
    ['/sites?site=default&query=widget&sortOrder=UP'],
    ['/sites?site=default&query=widget&includeContentGroups=%7Bx'],
    ['/sites?site=default&query=widget&filters=%5B%7B%22fid%239%22%3A%5B%22x%22%5D%7D%5D'],
    // Not GET, or not the plain path: the chain.
    ['/sites?site=default&query=widget', '', 'HEAD'],
    ['/sites?site=default&query=widget', '', 'OPTIONS'],
    ['/sites?site=default&query=widget', '', 'DELETE'],
    ['/sites/?site=default&query=widget'],
    ['/sites?site=default&query=wid%20get#frag'],
  ];
  // Twice: the first round fills the answer cache (misses), the second answers from it (hits).
  for (const round of ['miss', 'hit']) {
    for (const [path, headers, method] of requests) {
      const before = logLines.length;
      const recordsBefore = recorded.length;
      const a = await raw(lean.port, get(path, headers, method));
      const between = recorded.length;
      const b = await raw(chain.port, get(path, headers, method));
      const what = `${round}: ${method ?? 'GET'} ${path}${headers ? ' ' + headers.trim() : ''}`;
      t.equal(masked(a), masked(b), what);
      const lines = logLines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
      t.equal(lines.length, 2, 'one access-log line each');
      const shape = (l: Record<string, unknown>) => ({ ...l, time: '-', reqId: '-', ms: '-' });
      t.same(shape(lines[0]!), shape(lines[1]!), 'the same access-log line');
      t.match(String(lines[0]!.reqId), /^[0-9a-f-]{36}$/, 'with a request id');
      t.same(recorded.slice(recordsBefore, between), recorded.slice(between), 'the same query-log records');
      t.ok(recorded.length - between <= 1, 'at most one record per request');
    }
  }
  // The first 15 requests are valid GETs; every one but the project's very first (the index
  // was not open yet) is answered by the lean path, misses and hits.
  const valid = 15;
  t.equal(leanApp.search.leanAnswers, 2 * valid - 1, 'valid GETs answered by the lean path');
  t.equal(chainApp.search.leanAnswers, 0);
  const logged = recorded.filter(([, e]) => e.query === 'widget' && e.userAgent === 'tester/1.0');
  t.equal(logged.length, 4, 'the User-Agent reaches the query log on both paths');
  t.ok(recorded.every(([, e]) => e.ip === '127.0.0.1' || e.ip === '::ffff:127.0.0.1'), 'the socket address as the IP');
});

t.test('lean path: a deleted and re-created project is never answered from the old index', async (t) => {
  const s = await startTestServer({ t });
  const index = async (pages: unknown[], token: string) => {
    const r = await fetch(`${s.url}/sites/pagesJson?token=${token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
    t.equal(r.status, 200, 'indexed');
  };
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${s.url}${path}`, { method, headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const created = (await (await admin('POST', '/admin/projects', { siteId: 'docs', name: 'Docs' })).json()) as { apiKey: { token: string } };
  await index([page('a', 'Widget guide')], created.apiKey.token);
  const search = async () => (await (await fetch(`${s.url}/sites?site=docs&query=widget&log=false`)).json()) as { totalResults: number; results: Record<string, Array<{ name: string }>> };
  t.equal((await search()).totalResults, 1);
  t.equal((await search()).totalResults, 1, 'again (lean path)');
  t.equal((await admin('DELETE', '/admin/projects/docs')).status, 200, 'deleted');
  t.equal((await fetch(`${s.url}/sites?site=docs&query=widget`)).status, 404, 'gone at once');
  const again = (await (await admin('POST', '/admin/projects', { siteId: 'docs', name: 'Docs' })).json()) as { apiKey: { token: string } };
  await index([page('b', 'Widgetron widget'), page('c', 'Widgetorium widget')], again.apiKey.token);
  const b = await search();
  t.equal(b.totalResults, 2, "the new project's pages, not the old index's");
  t.same(await search(), b, 'and the same from the lean path');
});

t.test('lean path: a search that fails is run again and rendered by the chain', async (t) => {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([page('a', 'Widget guide')]) });
  t.equal(r.status, 200);
  t.equal((await fetch(`${s.url}/sites?site=default&query=widget`)).status, 200, 'the index is open: the lean path takes the next ones');
  const searcher = s.services.searcher;
  const original = searcher.run.bind(searcher);
  let calls = 0;
  searcher.run = () => {
    calls++;
    return Promise.reject(new Error('search thread gone'));
  };
  t.teardown(() => {
    searcher.run = original;
  });
  const res = await fetch(`${s.url}/sites?site=default&query=guide`);
  t.equal(res.status, 500, 'the chain renders the failure');
  const body = (await res.json()) as { code: string; requestId: string };
  t.equal(body.code, 'internal');
  t.equal(res.headers.get('x-request-id'), body.requestId, "with the chain's request id");
  t.equal(calls, 2, 'the lean path tried, then the chain');
  searcher.run = original;
  t.equal((await fetch(`${s.url}/sites?site=default&query=guide`)).status, 200, 'the server still answers');
});
