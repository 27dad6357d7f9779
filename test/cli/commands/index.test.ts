/**
 * `sitesift index` end to end: the CLI (runCli, in-process) posts fixture files to a real
 * server on 127.0.0.1 with the master key; the server's listing shows what was indexed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runCli } from '../../../src/cli.js';
import { runCliAgainst } from '../../helpers/cli.js';
import { api, startTestServer, type TestServer } from '../../helpers/server.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'ingest');

let s: TestServer;
t.before(async () => {
  s = await startTestServer();
  await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'imp' } });
});
t.teardown(() => s.close());

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCliAgainst(s, ['index', ...args]);
}

async function listed(fragment: string): Promise<string[]> {
  const r = await api(s.url, `/sites/indexedContent?site=imp&limit=1000&url=${encodeURIComponent(fragment)}`, { token: s.masterKey });
  return r.body.pages.map((p: { url: string }) => p.url);
}

t.test('JSON file with a relative URL and one bad entry', async (t) => {
  const r = await cli(['imp', path.join(fixtures, 'pages.json'), '--base-url', 'https://docs.example.com/']);
  t.equal(r.code, 1, r.stderr);
  t.match(r.stdout, /4 entries.*3 indexed, 1 rejected/);
  t.match(r.stdout, /rejected pages\.json\[2\] \(https:\/\/docs\.example\.com\/guide\/upgrade\.html\): .*title/);
  t.match(r.stderr, /100% done: 3 indexed, 1 rejected — found 4, fetched 4, indexed 3, failed 1/);
  // The import is listed with the server's tasks, with the same figures.
  const taskId = /reindex task (t_[0-9a-f]{20})/.exec(r.stderr)?.[1];
  t.ok(taskId, r.stderr);
  const task = (await api(s.url, `/tasks/${taskId}?site=imp`, { token: s.masterKey })).body;
  t.match(task, { type: 'reindex', state: 'done', message: '3 indexed, 1 rejected', progress: { found: 4, fetched: 4, indexed: 3, skipped: {}, failed: 1 } });
  t.same(await listed('docs.example.com/guide/'), [
    'https://docs.example.com/guide/backup.html',
    'https://docs.example.com/guide/configure.html',
    'https://docs.example.com/guide/install.html',
  ]);
});

t.test('gzipped JSONL with a bad line and an invalid entry; summary as JSON', async (t) => {
  const r = await cli(['imp', path.join(fixtures, 'pages.jsonl.gz'), '--base-url', 'https://db.example.com/', '--batch-size', '2', '--json']);
  t.equal(r.code, 1);
  const summary = JSON.parse(r.stdout);
  t.equal(summary.indexed, 3);
  t.same(summary.rejected.map((x: { origin: string }) => x.origin).sort(), ['pages.jsonl.gz:3', 'pages.jsonl.gz:6']);
  t.equal((await listed('db.example.com/ref/')).length, 3);
});

t.test('directory: every file, the bad entry reported, documents searchable at the end', async (t) => {
  const r = await cli(['imp', path.join(fixtures, 'dir')]);
  t.equal(r.code, 1);
  t.match(r.stdout, /3 indexed, 1 rejected/);
  t.match(r.stdout, /b\.jsonl:2 \(https:\/\/dir\.example\.com\/c\.html\): language/);
  t.same(await listed('dir.example.com'), ['https://dir.example.com/a.html', 'https://dir.example.com/b.html', 'https://dir.example.com/d.html']);
  // The last batch was sent with refresh=true: everything is searchable now.
  const index = await s.services.indexes.get('imp');
  const snap = index.acquire();
  t.equal(snap.totalDocs, 3 + 3 + 3);
  snap.release();
});

t.test('a clean import exits 0; usage and server errors', async (t) => {
  const ok = await cli(['imp', path.join(fixtures, 'dir', 'a.json')]);
  t.equal(ok.code, 0);
  t.match(ok.stdout, /1 indexed, 0 rejected/);
  const unknown = await cli(['nosuch', path.join(fixtures, 'dir', 'a.json')]);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /unknown_site/);
  const missing = await cli(['imp', path.join(fixtures, 'does-not-exist.json')]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /cannot read/);
  const usage = await cli(['imp']);
  t.equal(usage.code, 2);
  const badBatch = await cli(['imp', path.join(fixtures, 'dir'), '--batch-size', '101']);
  t.equal(badBatch.code, 2);
});

t.test('--replace: the project holds exactly the file afterwards; a failed import changes nothing', async (t) => {
  await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'rep' } });
  const put = (urls: string[]) =>
    api(s.url, '/sites/pagesJson?site=rep&refresh=true', { method: 'POST', token: s.masterKey, json: urls.map((url) => ({ url, title: 'old', content: 'old text' })) });
  await put(['https://rep.example.com/a', 'https://rep.example.com/gone']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-replace-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'pages.jsonl');
  fs.writeFileSync(
    file,
    ['a', 'b', 'c'].map((n) => JSON.stringify({ url: `https://rep.example.com/${n}`, title: `new ${n}`, content: 'replacement text' })).join('\n') + '\n',
  );
  const { code, stdout: out, stderr: err } = await cli(['rep', file, '--replace']);
  t.equal(code, 0, err);
  t.match(err, /100% done: 3 indexed/);
  t.match(out, /Replaced the index: 3 searchable pages, 1 pages not in the input removed/);
  const r = await api(s.url, '/sites/indexedContent?site=rep&limit=100', { token: s.masterKey });
  t.same(r.body.pages.map((p: { url: string }) => p.url), ['https://rep.example.com/a', 'https://rep.example.com/b', 'https://rep.example.com/c']);
  const found = await api(s.url, '/sites?site=rep&query=replacement');
  t.equal(found.body.totalResults, 3);

  // An import refused half-way (a second replace is already running) leaves the index as it is.
  const begun = await api(s.url, '/index/replace?site=rep', { method: 'POST', token: s.masterKey });
  t.equal(begun.status, 200);
  const refused = await runCli(['index', 'rep', file, '--replace', '--url', s.url], { env: { SITESIFT_MASTER_KEY: s.masterKey }, stdout: new PassThrough(), stderr: new PassThrough() });
  t.equal(refused, 1);
  const aborted = await api(s.url, `/index/replace?site=rep&replaceId=${begun.body.replaceId}`, { method: 'DELETE', token: s.masterKey });
  t.equal(aborted.status, 200);
  const after = await api(s.url, '/sites/indexedContent?site=rep&limit=100', { token: s.masterKey });
  t.equal(after.body.pages.length, 3);
});
