/**
 * Snapshots over HTTP: an export to a URL that takes PUT (a tiny static server over a
 * directory, like an object store), a search node reading the same URL with GET, identical
 * answers, a re-export that PUTs only the new blob; and the scheduled export job.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { api, startTestServer, tempDataDir } from '../helpers/server.js';
import { answers, loadFixture, page, verifySnapshot } from './fixture.js';
import { startExportJob } from '../../jobs/index.js';

/** GET/HEAD/PUT over `dir`; counts PUTs by path prefix. */
async function staticServer(t: { teardown(fn: () => unknown): void }, dir: string): Promise<{ url: string; puts: string[] }> {
  const puts: string[] = [];
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url!, 'http://x').pathname).replace(/^\/+/, '');
    if (rel.split('/').includes('..')) return void res.writeHead(400).end();
    const file = path.join(dir, rel);
    if (req.method === 'PUT') {
      puts.push(rel);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file + '.part', Buffer.concat(chunks));
        fs.renameSync(file + '.part', file);
        res.writeHead(201).end();
      });
      return;
    }
    if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) return void res.writeHead(404).end();
    const body = fs.readFileSync(file);
    res.writeHead(200, { 'Content-Length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/export`, puts };
}

t.test('export by PUT to a URL, a node reading it over HTTP', async (t) => {
  const primary = await startTestServer({ t });
  await loadFixture(primary);
  const root = tempDataDir(t);
  const store = await staticServer(t, root);
  let r = await api(primary.url, '/admin/export', { method: 'POST', token: primary.masterKey, json: { siteId: 'default', out: store.url } });
  t.equal(r.status, 200, 'exported by PUT');
  t.same(Object.keys(verifySnapshot(path.join(root, 'export'))), ['default'], 'the PUT files form a valid snapshot');

  const node = await startTestServer({ t, env: { SITESIFT_ROLE: 'search', SITESIFT_SNAPSHOT: store.url, SITESIFT_SNAPSHOT_POLL_MS: '3600000' } });
  t.same((await node.services.node!.poll()).swapped, ['default']);
  t.same(await answers(node.url), await answers(primary.url), 'identical answers through an HTTP snapshot');

  await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, { method: 'POST', json: [page(2, 'again')] });
  store.puts.length = 0;
  r = await api(primary.url, '/admin/export', { method: 'POST', token: primary.masterKey, json: { siteId: 'default', out: store.url } });
  t.equal(r.status, 200);
  t.equal(store.puts.filter((p) => p.startsWith('export/blobs/')).length, 1, 'one blob PUT for a one-page change');
  t.same((await node.services.node!.poll()).swapped, ['default']);
  t.same(await answers(node.url), await answers(primary.url), 'and after the swap');
});

t.test('the scheduled export job exports every project on its tick', async (t) => {
  const primary = await startTestServer({ t });
  await loadFixture(primary);
  const out = tempDataDir(t);
  let tick: (() => void) | null = null;
  const job = startExportJob(
    { exporter: primary.services.exporter!, schedule: '*/5 * * * *', out, pruneGraceMs: 3_600_000 },
    { scheduler: (expr, fn) => ((tick = fn), { stop() {} }) },
  );
  t.teardown(() => job.stop());
  t.throws(() => startExportJob({ exporter: primary.services.exporter!, schedule: 'not cron', out, pruneGraceMs: 0 }), /not a cron expression/);
  t.notOk(fs.existsSync(path.join(out, 'index.json')), 'nothing before the tick');
  tick!();
  for (let i = 0; i < 400 && !fs.existsSync(path.join(out, 'index.json')); i++) await new Promise((res) => setTimeout(res, 25));
  t.same(Object.keys(verifySnapshot(out)), ['default'], 'the tick exported the project');
});
