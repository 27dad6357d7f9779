/**
 * Query logs flowing from a search node to the primary: node keys (admin routes), the
 * primary's idempotent `POST /cluster/querylog`, and the node's durable outbox
 * (src/analytics/outbox.ts) with retries while the primary is unreachable.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { QueryLogOutbox, type ForwardedLogEntry } from '../../src/analytics/index.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let nodeKey: string;
t.before(async () => {
  s = await startTestServer();
  const created = await api(s.url, '/admin/nodes', { method: 'POST', token: s.masterKey, json: { name: 'eu-1' } });
  nodeKey = created.body.key;
});
t.teardown(() => s.close());

const search = (query: string, results = 3, at = Date.now()): ForwardedLogEntry => ({ kind: 'search', site: 'default', at, query, results, filters: null, sort: null, visitor: 'v1' });

async function top(): Promise<Array<{ query: string; count: number }>> {
  s.services.analytics.flush();
  const r = await api(s.url, '/sites/queries/top?limit=100', { token: s.token });
  return r.body.queries;
}

function countOf(rows: Array<{ query: string; count: number }>, query: string): number {
  return rows.find((r) => r.query === query)?.count ?? 0;
}

/**
 * The query's count in the top report once it reaches `expected` (a busy machine may delay the
 * query-log writer thread), or the last count after about 10 s.
 */
async function countReaching(query: string, expected: number): Promise<number> {
  let n = 0;
  for (let i = 0; i < 100; i++) {
    n = countOf(await top(), query);
    if (n >= expected) return n;
    await new Promise((r) => setTimeout(r, 100));
  }
  return n;
}

t.test('node keys: created with the master key, listed without the key, revocable; others refused', async (t) => {
  t.match(nodeKey, /^ssn_/);
  const list = await api(s.url, '/admin/nodes', { token: s.masterKey });
  t.equal(list.body.nodes.length, 1);
  t.equal(list.body.nodes[0].name, 'eu-1');
  t.notOk('key' in list.body.nodes[0]);
  t.equal((await api(s.url, '/admin/nodes', { method: 'POST', token: s.token, json: {} })).status, 403, 'a project key cannot create node keys');
  const other = await api(s.url, '/admin/nodes', { method: 'POST', token: s.masterKey, json: { name: 'tmp' } });
  const push = (key: string) => api(s.url, '/cluster/querylog', { method: 'POST', token: key, json: { batchId: 'batch-revoked-1', entries: [] } });
  t.equal((await push(other.body.key)).status, 200);
  t.equal((await api(s.url, `/admin/nodes/${other.body.id}`, { method: 'DELETE', token: s.masterKey })).status, 200);
  const refused = await push(other.body.key);
  t.equal(refused.status, 401);
  t.equal(refused.body.code, 'invalid_token');
  t.equal((await push(s.token)).status, 401, 'a project API key is not a node key');
});

t.test('a batch delivered twice counts once in the primary\'s reports', async (t) => {
  const body = { batchId: 'batch-twice-0001', entries: [search('twice delivered'), search('twice delivered'), search('nothing here', 0)] };
  const first = await api(s.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: body });
  t.same([first.status, first.body.accepted, first.body.duplicate], [200, 3, false]);
  const again = await api(s.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: body });
  t.same([again.status, again.body.accepted, again.body.duplicate], [200, 0, true]);
  t.equal(await countReaching('twice delivered', 2), 2);
  const nores = await api(s.url, '/sites/queries/noResults?limit=100', { token: s.token });
  t.equal(nores.body.queries.find((q: { query: string }) => q.query === 'nothing here')?.count, 1);
  const chart = await api(s.url, '/sites/queries/timechart?interval=day', { token: s.token });
  t.ok(chart.body.total >= 3, 'the time chart counts forwarded searches');
  const suggest = await api(s.url, '/sites/suggest?site=default&query=twice&maxQuerySuggestions=5');
  t.same(suggest.body.querySuggestions, [{ query: 'twice delivered' }], 'query suggestions include forwarded searches (2 of them: minSearches is 2)');
});

t.test('the outbox keeps entries across a restart while the primary is unreachable, retries with the same batch id, and a lost answer does not double-count', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-outbox-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sentIds: string[] = [];
  let mode: 'down' | 'lose-answer' | 'up' = 'down';
  const fakeFetch: typeof fetch = async (input, init) => {
    sentIds.push(JSON.parse(String(init!.body)).batchId);
    if (mode === 'down') throw new TypeError('fetch failed: ECONNREFUSED');
    const real = await fetch(input, init);
    if (mode === 'lose-answer') {
      await real.text();
      throw new TypeError('fetch failed: socket hang up');
    }
    return real;
  };
  const open = () => new QueryLogOutbox({ dataDir: dir, primaryUrl: s.url, nodeKey, fetch: fakeFetch, batchSize: 2 });
  let box = open();
  box.add(search('outbox query'));
  box.add(search('outbox query'));
  box.add(search('outbox other'));
  t.match(await box.pushOnce(), { sent: 0, error: /ECONNREFUSED/ });
  t.equal(box.pending, 3);
  await box.close();

  box = open(); // the node restarted: nothing it took is lost
  t.equal(box.pending, 3);
  mode = 'lose-answer';
  t.match(await box.pushOnce(), { sent: 0, error: /hang up/ });
  t.equal(await countReaching('outbox query', 2), 2, 'the primary counted the batch whose answer was lost');
  mode = 'up';
  const retried = await box.pushOnce();
  t.match(retried, { sent: 2 });
  t.equal(new Set(sentIds.slice(0, 3)).size, 1, 'every attempt of the first batch carried one id');
  t.equal(await countReaching('outbox query', 3), 2, 'the retry was not counted again');
  t.match(await box.pushOnce(), { sent: 1 });
  t.match(await box.pushOnce(), { sent: 0, idle: true });
  t.equal(box.pending, 0);
  t.equal(await countReaching('outbox other', 1), 1);
  await box.close();
});

t.test('a node server queues searches and events and pushes them to the primary', async (t) => {
  const node = await startTestServer({
    t,
    env: { SITESIFT_PRIMARY_URL: s.url, SITESIFT_NODE_KEY: nodeKey, SITESIFT_QUERYLOG_PUSH_MS: '50' },
  });
  // The node's own "default" project stands in for the snapshot's (the export is another part).
  await api(node.url, '/sites?site=default&query=from+the+node');
  await api(node.url, '/sites?site=default&query=from+the+node');
  const ev = await api(node.url, '/sites/queries/log', { method: 'POST', json: { site: 'default', query: 'from the node', action: 'select', link: 'https://x.test/a', position: 1 } });
  t.equal(ev.status, 200);
  t.equal(await countReaching('from the node', 2), 2, 'the searches made on the node are in the primary\'s top queries');
});

t.test('a batch spanning two projects counts once in each, even when one project already had its part', async (t) => {
  const created = await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'shop-two' } });
  t.equal(created.status, 201);
  const at = Date.now() - 60_000;
  const inDefault = [search('spanning default', 3, at), search('spanning default', 3, at)];
  const inShop = [{ ...search('spanning shop', 1, at), site: 'shop-two' }, { ...search('spanning shop', 1, at), site: 'shop-two' }, { ...search('spanning shop', 1, at), site: 'shop-two' }];
  const batchId = 'batch-spanning-0001';
  // An earlier delivery of this batch that was cut off (a primary crash) after the shop's part
  // committed and before the default project's: system.db never listed the id.
  t.same(s.services.analytics.ingestBatch(batchId, inShop), { accepted: 3, parts: 1, duplicateParts: 0 });
  const shopTop = async () => countOf((await api(s.url, '/sites/queries/top?site=shop-two&limit=100', { token: s.masterKey })).body.queries, 'spanning shop');
  t.equal(await shopTop(), 3);

  const body = { batchId, entries: [inDefault[0], ...inShop, inDefault[1]] };
  const first = await api(s.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: body });
  t.same([first.status, first.body.accepted, first.body.duplicate], [200, 2, false], "only the default project's part is new");
  t.equal(await countReaching('spanning default', 2), 2, 'counted once in the default project');
  t.equal(await shopTop(), 3, 'and not again in the shop');

  const again = await api(s.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: body });
  t.same([again.status, again.body.accepted, again.body.duplicate], [200, 0, true]);
  t.same(s.services.analytics.ingestBatch(batchId, body.entries), { accepted: 0, parts: 2, duplicateParts: 2 }, 'each project log knows the batch by itself');
  t.equal(countOf(await top(), 'spanning default'), 2);
  t.equal(await shopTop(), 3);
});
