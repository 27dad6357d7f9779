/**
 * A search node's query-log batch counts exactly once on the primary across a primary crash: a
 * child primary is killed with SIGKILL after the batch's entries are committed and before it
 * answers (SITESIFT_TEST_PAUSE_IN=querylog-ack stalls there), so the node never got its 200 and
 * sends the same batch again to the restarted primary. The reports count every entry once.
 * And a search node killed with SIGKILL while the primary is unreachable keeps every search it
 * answered and delivers them, once, after it restarts.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { api, spawnServer, startTestServer, tempDataDir, type SpawnedServer } from '../helpers/server.js';

async function until(cond: () => boolean, what: string, child: SpawnedServer): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}\n${child.stdout().slice(-2000)}\n${child.stderr().slice(-2000)}`);
}

t.test('a batch whose answer a primary crash lost is counted once when the node sends it again', async (t) => {
  const dataDir = tempDataDir(t);
  let child = await spawnServer(dataDir, { SITESIFT_TEST_PAUSE_IN: 'querylog-ack' });
  t.teardown(() => child.kill('SIGKILL'));
  const masterKey = fs.readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
  const nodeKey = (await api(child.url, '/admin/nodes', { method: 'POST', token: masterKey, json: { name: 'eu-1' } })).body.key as string;
  t.equal((await api(child.url, '/admin/projects', { method: 'POST', token: masterKey, json: { siteId: 'shop' } })).status, 201);

  const at = Date.now() - 60_000;
  const entry = (site: string, query: string, results: number) => ({ kind: 'search', site, at, query, results, filters: null, sort: null, visitor: 'v1' });
  const body = {
    batchId: 'batch-crash-0001',
    entries: [
      entry('default', 'crash counted once', 4),
      entry('shop', 'shop crash query', 0),
      entry('default', 'crash counted once', 4),
      entry('default', 'crash counted once', 4),
      { kind: 'event', site: 'default', at, query: 'crash counted once', action: 'select', link: 'https://x.test/a', position: 1, visitor: 'v1' },
    ],
  };
  const lost = api(child.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: body }).then(
    (r) => r.status,
    () => 'no answer',
  );
  await until(() => child.stdout().includes('querylog paused'), 'the batch to be committed', child);
  t.equal(await child.kill('SIGKILL'), 'SIGKILL');
  t.equal(await lost, 'no answer', 'the node never got its acknowledgement');

  child = await spawnServer(dataDir);
  const again = await api(child.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: body });
  t.same([again.status, again.body.accepted, again.body.duplicate], [200, 0, true], 'the retry is recognised as delivered');
  const report = (route: string, site: string) => api(child.url, `/sites/queries/${route}?site=${site}&limit=100&interval=day`, { token: masterKey });
  const top = await report('top', 'default');
  t.same(top.body.queries.filter((q: { query: string }) => q.query === 'crash counted once').map((q: { count: number }) => q.count), [3], 'top queries count each search once');
  t.equal((await report('timechart', 'default')).body.total, 3, 'so does the time chart');
  const noResults = await report('noResults', 'shop');
  t.same(noResults.body.queries.map((q: { query: string; count: number }) => [q.query, q.count]), [['shop crash query', 1]], "and the other project's part too");

  // A new batch after the restart still counts (the check is per batch id, not a switch).
  const next = await api(child.url, '/cluster/querylog', { method: 'POST', token: nodeKey, json: { batchId: 'batch-crash-0002', entries: [entry('default', 'crash counted once', 4)] } });
  t.same([next.body.accepted, next.body.duplicate], [1, false]);
  t.equal((await report('timechart', 'default')).body.total, 4);
  t.equal(await child.kill('SIGTERM'), 0);
});

/** An http URL on 127.0.0.1 that nothing listens on (connection refused). */
async function deadUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

t.test('a search node killed while the primary is unreachable delivers every search it answered, once, after it restarts', async (t) => {
  const primary = await startTestServer({ t });
  const nodeKey = (await api(primary.url, '/admin/nodes', { method: 'POST', token: primary.masterKey, json: { name: 'eu-2' } })).body.key as string;
  const topCount = async () => {
    primary.services.analytics.flush();
    const r = await api(primary.url, '/sites/queries/top?limit=100', { token: primary.token });
    return (r.body.queries as Array<{ query: string; count: number }>).find((q) => q.query === 'node down query')?.count ?? 0;
  };
  const nodeDir = tempDataDir(t);
  const env = { SITESIFT_NODE_KEY: nodeKey, SITESIFT_QUERYLOG_PUSH_MS: '50' };
  // The node's own "default" project stands in for the snapshot's (the export is another part).
  let node = await spawnServer(nodeDir, { ...env, SITESIFT_PRIMARY_URL: await deadUrl() });
  t.teardown(() => node.kill('SIGKILL'));
  for (let i = 0; i < 3; i++) t.equal((await api(node.url, '/sites?site=default&query=node+down+query')).status, 200, `search ${i + 1} answered`);
  await until(() => node.stdout().includes('query-log push to the primary failed'), 'a failed push', node);
  t.equal(await node.kill('SIGKILL'), 'SIGKILL');
  t.equal(await topCount(), 0, 'nothing reached the primary yet');

  node = await spawnServer(nodeDir, { ...env, SITESIFT_PRIMARY_URL: primary.url });
  let n = 0;
  for (let i = 0; i < 200 && n < 3; i++) {
    n = await topCount();
    if (n < 3) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(n, 3, 'the three searches arrived after the restart');
  // Later pushes (the outbox is empty) add nothing.
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await topCount(), 3, 'and were counted once');
  t.equal(await node.kill('SIGTERM'), 0);
});
