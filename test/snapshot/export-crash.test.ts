/**
 * kill -9 during an export leaves the previous snapshot whole: a child server is killed with a
 * new blob written but not renamed into place, and again with blobs and the new manifest in
 * place but index.json not yet replaced. Each time the snapshot still verifies, still names the
 * previous generation, and a search node serves it; the next export completes. The export
 * stalls at those points through SITESIFT_TEST_PAUSE_IN=export-blob|export-index. And while an
 * export is stalled half-way, the primary still acknowledges writes and deletes and answers
 * searches: the export blocks neither.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { api, spawnServer, startTestServer, tempDataDir, type SpawnedServer } from '../helpers/server.js';
import { page, verifySnapshot } from './fixture.js';

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('a killed export leaves the previous snapshot valid', async (t) => {
  const dataDir = tempDataDir(t);
  const out = tempDataDir(t);
  let child: SpawnedServer = await spawnServer(dataDir);
  const token = /API key\s*:\s*(\S+)/.exec(child.stdout())![1]!;
  const masterKey = fs.readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
  const push = async (version: string) => {
    const r = await api(child.url, `/sites/pagesJson?token=${token}&refresh=true`, { method: 'POST', json: Array.from({ length: 12 }, (_, i) => ({ ...page(i, version), filters: undefined, dataPoints: undefined })) });
    t.equal(r.status, 200);
  };
  const exportNow = () => api(child.url, '/admin/export', { method: 'POST', token: masterKey, json: { siteId: 'default', out } });
  await push('one');
  t.equal((await exportNow()).status, 200);
  const first = verifySnapshot(out);
  const indexBytes = fs.readFileSync(path.join(out, 'index.json'));
  t.equal(await child.kill('SIGTERM'), 0);

  for (const point of ['export-blob', 'export-index'] as const) {
    child = await spawnServer(dataDir, { SITESIFT_TEST_PAUSE_IN: point });
    await push(point.replace('export-', 'v'));
    void exportNow().catch(() => undefined);
    await until(() => child.stdout().includes('export paused'), `the export to pause at ${point}`);
    t.equal(await child.kill('SIGKILL'), 'SIGKILL', `killed at ${point}`);
    t.same(fs.readFileSync(path.join(out, 'index.json')), indexBytes, `${point}: index.json untouched`);
    t.same(verifySnapshot(out), first, `${point}: the previous snapshot verifies`);
    if (point === 'export-blob') {
      const temps = fs.readdirSync(path.join(out, 'blobs', 'sha256'), { recursive: true }).map(String).filter((f) => path.basename(f).startsWith('.tmp-'));
      t.equal(temps.length, 1, 'the interrupted blob is a temp file nobody reads');
    } else {
      t.equal(fs.readdirSync(path.join(out, 'projects', 'default', 'manifests')).filter((f) => f.endsWith('.json')).length, 2, 'the new manifest was written, but nothing points to it');
    }
  }

  // A node serves the previous generation.
  const node = await startTestServer({ t, env: { SITESIFT_ROLE: 'search', SITESIFT_SNAPSHOT: out, SITESIFT_SNAPSHOT_POLL_MS: '3600000' } });
  await node.services.node!.poll();
  let r = await api(node.url, '/sites?site=default&log=false&query=guide&limit=1&groupResults=false');
  t.equal(r.status, 200);
  t.match(r.body.suggests._[0].name, / one$/, 'the node serves the generation of the last complete export');

  // The next export completes, and the node moves to it.
  child = await spawnServer(dataDir);
  t.equal((await exportNow()).status, 200);
  t.equal(await child.kill('SIGTERM'), 0);
  const last = verifySnapshot(out);
  t.ok(last.default! > first.default!, 'a newer generation');
  t.same((await node.services.node!.poll()).swapped, ['default']);
  r = await api(node.url, '/sites?site=default&log=false&query=guide&limit=1&groupResults=false');
  t.match(r.body.suggests._[0].name, / vindex$/, 'and the node serves it');
});

t.test('an export in progress blocks neither writes nor searches on the primary', async (t) => {
  const dataDir = tempDataDir(t);
  const out = tempDataDir(t);
  const child = await spawnServer(dataDir, { SITESIFT_TEST_PAUSE_IN: 'export-blob' });
  t.teardown(() => child.kill('SIGKILL'));
  const token = /API key\s*:\s*(\S+)/.exec(child.stdout())![1]!;
  const masterKey = fs.readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
  const pages = Array.from({ length: 12 }, (_, i) => ({ ...page(i, 'one'), filters: undefined, dataPoints: undefined }));
  t.equal((await api(child.url, `/sites/pagesJson?token=${token}&refresh=true`, { method: 'POST', json: pages })).status, 200);
  void api(child.url, '/admin/export', { method: 'POST', token: masterKey, json: { siteId: 'default', out } }).catch(() => undefined);
  await until(() => child.stdout().includes('export paused'), 'the export to stall half-way');

  // The export holds its generation and has written part of it; the primary goes on.
  const added = { url: 'https://docs.test/during/export', title: 'Written during the export', content: 'zanzibar arrives while the export runs' };
  t.equal((await api(child.url, `/sites/pagesJson?token=${token}&refresh=true`, { method: 'POST', json: [added] })).status, 200, 'a write is acknowledged');
  let r = await api(child.url, '/sites?site=default&log=false&query=zanzibar&groupResults=false');
  t.same([r.status, r.body.totalResults], [200, 1], 'and searchable');
  r = await api(child.url, '/sites?site=default&log=false&query=guide&limit=50&groupResults=false');
  t.same([r.status, r.body.totalResults], [200, 12], 'the pages of the exported generation are searched as before');
  const gone = await api(child.url, `/index/documents?token=${token}&url=${encodeURIComponent(String(page(0, 'one').url))}`, { method: 'DELETE' });
  t.equal(gone.status, 200, 'a delete is acknowledged');
  t.notOk(fs.existsSync(path.join(out, 'index.json')), 'the export has not finished (it is still stalled)');
});
