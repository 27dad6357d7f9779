/**
 * `sitesift restore` from a snapshot served over HTTP (as search nodes read it): the restored
 * project answers like the original and has its settings; without `--keys` the original tokens
 * are unknown and new keys work; a blob that arrives with one flipped byte is refused and
 * leaves nothing behind, so a later restore from the repaired source succeeds.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { spawn } from 'node:child_process';
import t, { type Test } from 'tap';
import { runCli } from '../../src/cli.js';
import { ProjectRegistry } from '../../src/projects/index.js';
import { api, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { answers, loadFixture, page } from './fixture.js';

/**
 * Read-only static server over `dir` (GET/HEAD). A path in `flip` is served with one byte
 * flipped; a path in `stall` sends its headers and half its body, then nothing more.
 */
async function staticServer(t: { teardown(fn: () => unknown): void }, dir: string): Promise<{ url: string; flip: Set<string>; stall: Set<string>; gets: string[] }> {
  const flip = new Set<string>();
  const stall = new Set<string>();
  const gets: string[] = [];
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url!, 'http://x').pathname).replace(/^\/+/, '');
    if (rel.split('/').includes('..')) return void res.writeHead(400).end();
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405).end();
    gets.push(rel);
    const file = path.join(dir, rel);
    if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) return void res.writeHead(404).end();
    const body = fs.readFileSync(file);
    if (flip.has(rel)) body[body.length >> 1]! ^= 0x01;
    res.writeHead(200, { 'Content-Length': body.length });
    if (stall.has(rel)) return void res.write(body.subarray(0, body.length >> 1));
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/backup/`, flip, stall, gets };
}

async function restoreCli(args: string[]): Promise<{ code: number; printed: string }> {
  let printed = '';
  const io = { env: {}, stdout: new PassThrough(), stderr: new PassThrough() };
  io.stdout.on('data', (c: Buffer) => (printed += c.toString()));
  io.stderr.on('data', (c: Buffer) => (printed += c.toString()));
  const code = await runCli(['restore', ...args], io);
  return { code, printed };
}

/** Settings that change answers (synonyms, field weights) on top of the fixture's. */
const CHANGED = { search: { synonyms: [{ from: 'gadget', to: ['widget'] }], fieldWeights: { title: 2, keywords: 6, headings: 4, url: 3, content: 5 } } };
/** Queries whose answers depend on CHANGED. */
const SETTINGS_QUERIES = ['query=gadget', 'query=crawler%20guide&groupResults=false'];

async function settingsAnswers(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of SETTINGS_QUERIES) out.push(`${q} → ${(await api(base, `/sites?site=default&log=false&${q}`)).text}`);
  return out;
}

/** A primary with the fixture, the changed settings and two segments (a page re-sent later). */
async function original(t: Test): Promise<TestServer> {
  const s = await startTestServer({ t });
  await loadFixture(s);
  let r = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: s.masterKey, json: CHANGED });
  t.equal(r.status, 200, 'settings changed on the original');
  r = await api(s.url, `/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', json: [page(3, 'two')] });
  t.equal(r.status, 200);
  const gadget = await api(s.url, '/sites?site=default&log=false&query=gadget');
  t.ok(gadget.body.totalResults > 0, 'the synonym is in effect on the original');
  return s;
}

t.test('restore --from http://…: identical answers and settings; without --keys the snapshot’s keys are left out', async (t) => {
  const primary = await original(t);
  const root = tempDataDir(t);
  const r = await api(primary.url, '/admin/export', { method: 'POST', token: primary.masterKey, json: { siteId: 'default', out: path.join(root, 'backup'), keys: true } });
  t.equal(r.status, 200, 'exported with keys (restored without them below)');
  t.ok(r.body.projects[0].segments >= 2, 'more than one segment to fetch');
  const store = await staticServer(t, root);

  const dataDir = tempDataDir(t);
  const { code, printed } = await restoreCli(['default', '--from', store.url, '--data-dir', dataDir]);
  t.equal(code, 0, printed);
  t.match(printed, /restored default at generation \d+: 48 pages in \d+ segments/);
  t.ok(store.gets.some((g) => g.startsWith('backup/blobs/sha256/')), 'segments fetched over HTTP');
  const newKey = /new API key \(shown once\): (\S+)/.exec(printed)?.[1];
  t.ok(newKey, 'a new key is printed');

  const restored = await startTestServer({ t, dataDir });
  t.same(await answers(restored.url, false), await answers(primary.url, false), 'identical answers (query suggestions are not restored)');
  t.same(await settingsAnswers(restored.url), await settingsAnswers(primary.url), 'answers that depend on the changed settings are identical');
  const settings = await api(restored.url, '/admin/projects/default/settings', { token: restored.masterKey });
  const want = await api(primary.url, '/admin/projects/default/settings', { token: primary.masterKey });
  t.equal(settings.status, 200);
  t.same(settings.body, want.body, 'GET settings equals the original’s');
  t.same(settings.body.search.synonyms, CHANGED.search.synonyms, 'the changed synonyms came along');
  t.same(settings.body.search.fieldWeights, CHANGED.search.fieldWeights, 'the changed field weights came along');

  // The snapshot carries the keys, but restore was not asked for them: the original token is an unknown key; the printed key and a newly created one work.
  let k = await api(restored.url, `/sites/indexStatus?token=${primary.token}`);
  t.equal(k.status, 401, 'the original key is unknown on the restored project');
  t.equal(k.body.code, 'invalid_token');
  k = await api(restored.url, `/sites/indexStatus?token=${newKey}`);
  t.equal(k.status, 200, 'the key printed by restore works');
  const created = await api(restored.url, '/admin/projects/default/keys', { method: 'POST', token: restored.masterKey, json: { label: 'after restore' } });
  t.equal(created.status, 201, 'a new key can be created');
  k = await api(restored.url, `/sites/indexStatus?token=${created.body.token}`);
  t.equal(k.status, 200, 'the created key works');
  const listed = await api(restored.url, '/admin/projects/default/keys', { token: restored.masterKey });
  t.same(listed.body.keys.map((x: { label: string }) => x.label).sort(), ['after restore', 'default'], 'only the new keys exist');
});

t.test('restore --from http://…: a blob served with one flipped byte is refused, nothing is left behind', async (t) => {
  const primary = await original(t);
  const root = tempDataDir(t);
  const exported = await api(primary.url, '/admin/export', { method: 'POST', token: primary.masterKey, json: { siteId: 'default', out: path.join(root, 'backup'), keys: true } });
  t.equal(exported.status, 200);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'backup', exported.body.projects[0].manifest), 'utf8')) as { segments: Array<{ sha256: string }> };
  t.ok(manifest.segments.length >= 2);
  // The last segment: the ones before it are fetched and laid out before the corrupt one arrives.
  const last = manifest.segments[manifest.segments.length - 1]!.sha256;
  const store = await staticServer(t, root);
  store.flip.add(`backup/blobs/sha256/${last.slice(0, 2)}/${last}`);

  const dataDir = tempDataDir(t);
  const bad = await restoreCli(['default', '--from', store.url, '--keys', '--data-dir', dataDir]);
  t.equal(bad.code, 1, 'refused');
  t.match(bad.printed, /segment \S+ \(blobs\/sha256\/\S+ at http:\/\/127\.0\.0\.1:\d+\/backup\/?\) failed its hash check/, 'says which file failed, and where from');
  t.match(bad.printed, /nothing was restored/, 'and that nothing was restored');
  t.ok(store.gets.some((g) => g.endsWith(last)), 'the corrupt blob was fetched');
  const projectsDir = path.join(dataDir, 'projects');
  t.same(fs.existsSync(projectsDir) ? fs.readdirSync(projectsDir) : [], [], 'no project files left behind');
  const reg = ProjectRegistry.open(dataDir);
  t.notOk(reg.hasProject('default'), 'no project recorded');
  reg.close();

  // The same source, repaired: the restore succeeds (nothing from the failed run is in the way).
  store.flip.clear();
  const good = await restoreCli(['default', '--from', store.url, '--keys', '--data-dir', dataDir]);
  t.equal(good.code, 0, good.printed);
  t.same(fs.readdirSync(projectsDir), ['default'], 'only the project’s folder');
  const restored = await startTestServer({ t, dataDir });
  t.same(await answers(restored.url, false), await answers(primary.url, false), 'identical answers after the repaired restore');
  t.equal((await api(restored.url, `/sites/indexStatus?token=${primary.token}`)).status, 200, 'with --keys the original key works');
});

t.test('a restore killed mid-download leaves no project behind; the next restore succeeds', async (t) => {
  const primary = await original(t);
  const root = tempDataDir(t);
  const exported = await api(primary.url, '/admin/export', { method: 'POST', token: primary.masterKey, json: { siteId: 'default', out: path.join(root, 'backup') } });
  t.equal(exported.status, 200);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'backup', exported.body.projects[0].manifest), 'utf8')) as { segments: Array<{ sha256: string }> };
  const last = manifest.segments[manifest.segments.length - 1]!.sha256;
  const lastPath = `backup/blobs/sha256/${last.slice(0, 2)}/${last}`;
  const store = await staticServer(t, root);
  store.stall.add(lastPath);

  // A separate process, killed with SIGKILL while the last segment is half downloaded (the
  // segments before it are already on disk).
  const dataDir = tempDataDir(t);
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli.ts'), 'restore', 'default', '--from', store.url, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let childOut = '';
  child.stdout.on('data', (c: Buffer) => (childOut += c.toString()));
  child.stderr.on('data', (c: Buffer) => (childOut += c.toString()));
  const exited = new Promise<string | number>((r) => child.once('exit', (code, signal) => r(signal ?? code ?? -1)));
  for (let i = 0; i < 1200 && !store.gets.includes(lastPath); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  t.ok(store.gets.includes(lastPath), `the child reached the last segment (${childOut})`);
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL');
  const projectsDir = path.join(dataDir, 'projects');
  t.notOk(fs.existsSync(path.join(projectsDir, 'default')), 'no project folder under the siteId');
  const reg = ProjectRegistry.open(dataDir);
  t.notOk(reg.hasProject('default'), 'no project recorded');
  reg.close();

  store.stall.clear();
  const again = await restoreCli(['default', '--from', store.url, '--data-dir', dataDir]);
  t.equal(again.code, 0, again.printed);
  t.same(fs.readdirSync(projectsDir), ['default'], 'the killed run’s staging folder is gone too');
  const restored = await startTestServer({ t, dataDir });
  t.same(await answers(restored.url, false), await answers(primary.url, false), 'identical answers');
});

t.test('restore refuses a siteId that is not a valid project id before touching the data directory', async (t) => {
  const dataDir = tempDataDir(t);
  const src = tempDataDir(t);
  const r = await restoreCli(['../escape', '--from', src, '--data-dir', dataDir]);
  t.equal(r.code, 1);
  t.match(r.printed, /siteId/);
  t.notOk(fs.existsSync(path.join(dataDir, '..', 'escape')), 'nothing written outside the data directory');
});
