/**
 * Snapshots end to end, in process: export and re-export (only new blobs), a read-only search
 * node (not ready, 405 on writes, byte-identical answers, a corrupt blob refused, generations
 * swapped under concurrent requests) and restore.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PassThrough } from 'node:stream';
import { api, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { answers, loadFixture, page } from './fixture.js';
import { runCli } from '../../src/cli.js';

function blobs(dir: string): Set<string> {
  const out = new Set<string>();
  const root = path.join(dir, 'blobs', 'sha256');
  if (!fs.existsSync(root)) return out;
  for (const fan of fs.readdirSync(root)) for (const f of fs.readdirSync(path.join(root, fan))) out.add(f);
  return out;
}

function files(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.add(path.relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

async function exportTo(s: TestServer, out: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await api(s.url, '/admin/export', { method: 'POST', token: s.masterKey, json: { siteId: 'default', out, ...extra } });
  if (r.status !== 200) throw new Error(`export: ${r.status} ${r.text}`);
  return r.body;
}

async function startNode(t: Parameters<Parameters<typeof tap.test>[0]>[0], snapshot: string): Promise<TestServer> {
  // Polls are driven by the test (node.poll()); the timer's first poll runs at start.
  return startTestServer({ t, env: { SITESIFT_ROLE: 'search', SITESIFT_SNAPSHOT: snapshot, SITESIFT_SNAPSHOT_POLL_MS: '3600000' } });
}
const tap = t;

t.test('a re-export after a one-page change writes only the new segment and a new manifest', async (t) => {
  const s = await startTestServer({ t });
  await loadFixture(s);
  const out = tempDataDir(t);
  const first = await exportTo(s, out);
  t.equal(first.projects[0].blobsPresent, 0, 'first export: nothing there yet');
  const before = files(out);
  const blobsBefore = blobs(out);
  t.equal(blobsBefore.size, first.projects[0].segments + 1, 'one blob per segment plus the suggestion rows');

  const r = await api(s.url, `/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', json: [page(3, 'two')] });
  t.equal(r.status, 200);
  const second = await exportTo(s, out);
  const p = second.projects[0];
  t.equal(p.blobsWritten, 1, 'one new blob: the segment holding the changed page');
  t.equal(p.blobsPresent, p.segments, 'every other file was already there');
  const added = [...files(out)].filter((f) => !before.has(f)).sort();
  const newBlob = [...blobs(out)].filter((b) => !blobsBefore.has(b));
  t.equal(newBlob.length, 1);
  t.same(added, [`blobs/sha256/${newBlob[0]!.slice(0, 2)}/${newBlob[0]}`, p.manifest].sort(), 'only the blob and the manifest are new files');
  const segBytes = fs.statSync(path.join(out, 'blobs', 'sha256', newBlob[0]!.slice(0, 2), newBlob[0]!)).size;
  t.ok(second.bytesWritten < first.bytesWritten, `re-export wrote ${second.bytesWritten} bytes, the first ${first.bytesWritten}`);
  t.ok(second.bytesWritten < segBytes + 20_000, 'what was written is the new segment plus small JSON files');
  const index = JSON.parse(fs.readFileSync(path.join(out, 'index.json'), 'utf8'));
  t.equal(index.projects.default.manifest, p.manifest, 'index.json names the new manifest');
  t.equal(index.retired.length, 1, 'the previous manifest is retired, kept for the grace period');

  // With no grace, an export after a full merge prunes the retired manifests and the segments only they named.
  t.equal((await api(s.url, '/admin/projects/default/merge', { method: 'POST', token: s.masterKey })).status, 200);
  const third = await exportTo(s, out, { pruneGraceMs: 0 });
  t.equal(third.pruned.manifests, 2, 'retired manifests pruned');
  t.equal(third.pruned.blobs, 2, 'the two segments merged away pruned');
  t.same([...blobs(out)].sort(), [...new Set(JSON.parse(fs.readFileSync(path.join(out, third.projects[0].manifest), 'utf8')).segments.map((x: { sha256: string }) => x.sha256).concat([JSON.parse(fs.readFileSync(path.join(out, third.projects[0].manifest), 'utf8')).querySuggestions.sha256]))].sort(), 'only what the current manifest names is left');
  const m = JSON.parse(fs.readFileSync(path.join(out, third.projects[0].manifest), 'utf8'));
  for (const seg of m.segments) t.ok(fs.existsSync(path.join(out, 'blobs', 'sha256', seg.sha256.slice(0, 2), seg.sha256)), `kept ${seg.file}`);
});

t.test('a search node: not ready, read-only, identical answers, corrupt blobs refused', async (t) => {
  const primary = await startTestServer({ t });
  await loadFixture(primary);
  const out = tempDataDir(t);
  const node = await startNode(t, out);
  const nodeSvc = node.services.node!;

  // Before any snapshot: 503 not_ready with Retry-After, and the health check says so.
  await nodeSvc.poll();
  let r = await api(node.url, '/sites?site=default&query=widget');
  t.equal(r.status, 503);
  t.equal(r.body.code, 'not_ready');
  t.equal(r.body.status, 'failure');
  t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After');
  r = await api(node.url, '/sites/suggest?site=default&query=wi');
  t.equal(r.status, 503);
  r = await api(node.url, '/health');
  t.equal(r.status, 503);
  t.equal(r.body.code, 'not_ready');
  t.equal(r.body.snapshot.ready, false);

  const exported = await exportTo(primary, out);
  const polled = await nodeSvc.poll();
  t.same(polled.swapped, ['default']);
  r = await api(node.url, '/health');
  t.equal(r.status, 200);
  t.same(r.body.snapshot.projects, { default: exported.projects[0].generation });

  // Write routes: 405 in the API's error shape.
  const writes: Array<[string, string]> = [
    ['POST', `/sites/pagesJson?token=${primary.token}`],
    ['POST', `/sites/pageJson?token=${primary.token}`],
    ['DELETE', `/index/documents?token=${primary.token}`],
    ['PATCH', '/admin/projects/default/settings'],
    ['POST', '/admin/projects'],
    ['POST', '/admin/export'],
  ];
  for (const [method, p] of writes) {
    r = await api(node.url, p, { method, token: node.masterKey, json: {} });
    t.equal(r.status, 405, `${method} ${p}`);
    t.equal(r.body.code, 'method_not_allowed');
    t.equal(r.body.status, 'failure');
    t.type(r.body.message, 'string');
  }

  // Byte-identical answers over the query set (ranking, snippets, facets, totals, suggest).
  const want = await answers(primary.url);
  const got = await answers(node.url);
  t.same(got, want, 'node answers equal the primary’s, byte for byte');
  t.match(want.find((a) => a.startsWith('suggest query=wi'))!, /"querySuggestions":\[\{"query":"widget install"\}/, 'query suggestions came along');

  // A flipped byte in a newly shipped blob: detected, not served, the previous generation stays.
  r = await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, { method: 'POST', json: [page(1, 'changed')] });
  const before = blobs(out);
  const second = await exportTo(primary, out);
  const fresh = [...blobs(out)].filter((b) => !before.has(b));
  t.equal(fresh.length, 1);
  const blobFile = path.join(out, 'blobs', 'sha256', fresh[0]!.slice(0, 2), fresh[0]!);
  const bytes = fs.readFileSync(blobFile);
  bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
  fs.writeFileSync(blobFile, bytes);
  const bad = await nodeSvc.poll();
  t.same(bad.swapped, []);
  t.equal(bad.rejected.length, 1);
  t.match(bad.rejected[0]!.reason, /hash check/);
  r = await api(node.url, '/sites?site=default&log=false&query=changed');
  t.equal(r.body.totalResults, 0, 'still the previous generation');
  r = await api(node.url, '/health');
  t.match(r.body.snapshot.lastError, /hash check/, 'health says why');
  t.equal(r.body.snapshot.projects.default, exported.projects[0].generation);

  // Repaired: the next poll swaps to the new generation and answers like the primary again.
  bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
  fs.writeFileSync(blobFile, bytes);
  const good = await nodeSvc.poll();
  t.same(good.swapped, ['default']);
  r = await api(node.url, '/health');
  t.equal(r.body.snapshot.projects.default, second.projects[0].generation);
  t.same(await answers(node.url), await answers(primary.url), 'identical at the new generation too');
});

t.test('generations swap under concurrent requests: each answer is one generation or the other', async (t) => {
  const primary = await startTestServer({ t });
  const out = tempDataDir(t);
  const set = async (v: string) => {
    // The version is both in every page and in the settings (a custom result), so a mix of index and settings shows.
    let r = await api(primary.url, '/admin/projects/default/settings', {
      method: 'PATCH',
      token: primary.masterKey,
      json: { search: { resultMappings: [{ trigger: { type: 'contains', value: 'common' }, action: { type: 'custom', html: `settings-${v}`, position: 1 } }] } },
    });
    t.equal(r.status, 200);
    r = await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, {
      method: 'POST',
      json: Array.from({ length: 30 }, (_, i) => ({ url: `https://gen.test/p${i}`, title: `page ${i} ${v}`, content: `common text of version ${v}` })),
    });
    t.equal(r.status, 200);
    await exportTo(primary, out);
  };
  await set('alpha');
  const node = await startNode(t, out);
  await node.services.node!.poll();
  await set('beta');

  const seen: Record<string, number> = { alpha: 0, beta: 0 };
  const failures: string[] = [];
  let swapped = false;
  let after = 0;
  const worker = async () => {
    while (!swapped || after < 40) {
      if (swapped) after++;
      const r = await api(node.url, '/sites?site=default&log=false&query=common&limit=50&groupResults=false');
      if (r.status !== 200) {
        failures.push(`status ${r.status}: ${r.text}`);
        continue;
      }
      const results = r.body.results ?? Object.values(r.body.suggests ?? {}).flat();
      const versions = new Set<string>();
      for (const x of results as Array<{ name?: string; html?: string; type: string }>) {
        versions.add(x.type === 'custom' ? x.html!.replace('settings-', '') : x.name!.split(' ').pop()!);
      }
      if (versions.size !== 1 || r.body.totalResults !== 31) failures.push(`mixed answer: ${[...versions].join(',')} total ${r.body.totalResults}`);
      else seen[[...versions][0]!]!++;
      const sg = await api(node.url, '/sites/suggest?site=default&query=commo&groupResults=false');
      if (sg.status !== 200) failures.push(`suggest status ${sg.status}`);
    }
  };
  const workers = Array.from({ length: 6 }, worker);
  // Let some requests see the first generation, then swap while they keep coming.
  while (seen.alpha < 20) await new Promise((r) => setTimeout(r, 5));
  const polled = await node.services.node!.poll();
  swapped = true;
  await Promise.all(workers);
  t.same(polled.swapped, ['default']);
  t.same(failures, [], 'no request failed or saw a mix');
  t.ok(seen.alpha > 0 && seen.beta > 0, `answers from both generations (${seen.alpha} alpha, ${seen.beta} beta)`);
});

t.test('restore recreates a project that answers like the original', async (t) => {
  const primary = await startTestServer({ t });
  await loadFixture(primary);
  const out = tempDataDir(t);
  await exportTo(primary, out, { keys: true });
  const dataDir = tempDataDir(t);
  let printed = '';
  const io = { env: {}, stdout: new PassThrough(), stderr: new PassThrough() };
  io.stdout.on('data', (c: Buffer) => (printed += c.toString()));
  io.stderr.on('data', (c: Buffer) => (printed += c.toString()));
  const code = await runCli(['restore', 'default', '--from', out, '--keys', '--data-dir', dataDir], io);
  t.equal(code, 0, printed);
  t.match(printed, /restored default at generation \d+: 48 pages/);
  const again = await runCli(['restore', 'default', '--from', out, '--data-dir', dataDir], io);
  t.equal(again, 1, 'a second restore of an existing project is refused');

  const restored = await startTestServer({ t, dataDir });
  t.same(await answers(restored.url, false), await answers(primary.url, false), 'identical answers (query suggestions are not restored)');
  const r = await api(restored.url, `/sites/indexStatus?token=${primary.token}`);
  t.equal(r.status, 200, 'the original API key works on the restored project');
  const settings = await api(restored.url, '/admin/projects/default/settings', { token: restored.masterKey });
  const original = await api(primary.url, '/admin/projects/default/settings', { token: primary.masterKey });
  t.same(settings.body, original.body, 'settings restored as they were');
});
