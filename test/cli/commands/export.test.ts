/**
 * `sitesift export` end to end: the CLI (runCli, in-process) against a real server on
 * 127.0.0.1, a relative --out resolved where the CLI runs, --all, --json and usage errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runCliAgainst } from '../../helpers/cli.js';
import { api, startTestServer, tempDataDir } from '../../helpers/server.js';

t.test('export <siteId>, --all, --json, usage errors', async (t) => {
  const s = await startTestServer({ t });
  t.equal((await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'other' } })).status, 201);
  await api(s.url, `/sites/pageJson?token=${s.token}&refresh=true`, { method: 'POST', json: { url: 'https://a.test/x', title: 'Hello', content: 'Some words.' } });
  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return runCliAgainst(s, ['export', ...args]);
  }
  const dir = tempDataDir(t);
  const rel = path.relative(process.cwd(), dir);
  let r = await cli(['default', '--out', rel]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^exported default generation 1: 1 segments, 2 new blobs, \d+ bytes written$/m);
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
  t.same(Object.keys(index.projects), ['default'], 'a relative --out is resolved where the CLI runs');

  r = await cli(['--all', '--out', dir, '--json']);
  t.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout);
  t.same(res.projects.map((p: { siteId: string }) => p.siteId), ['default', 'other']);
  t.equal(res.projects[0].blobsWritten, 0, 'nothing new for default');

  t.equal((await cli(['default'])).code, 2, 'no --out');
  t.equal((await cli(['--out', dir])).code, 2, 'neither a siteId nor --all');
  t.equal((await cli(['a', 'b', '--out', dir])).code, 2, 'two siteIds');
  r = await cli(['missing', '--out', dir]);
  t.equal(r.code, 1);
  t.match(r.stderr, /No project "missing"/);
});
