import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { COMMANDS, runCli } from '../src/cli.js';
import { startTestServer } from './helpers/server.js';

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', (c: Buffer) => (stdout += c));
  err.on('data', (c: Buffer) => (stderr += c));
  const code = await runCli(argv, { env, stdout: out, stderr: err });
  return { code, stdout, stderr };
}

t.test('--help for the CLI and every command', async (t) => {
  const main = await cli(['--help']);
  t.equal(main.code, 0);
  for (const name of ['serve', 'project', 'keys', 'index', 'crawl', 'sitemap', 'merge', 'export', 'status']) {
    t.ok(COMMANDS.has(name), `command ${name} exists`);
    t.match(main.stdout, new RegExp(`^  ${name} `, 'm'), `${name} listed`);
    const help = await cli([name, '--help']);
    t.equal(help.code, 0, `${name} --help exits 0`);
    t.match(help.stdout, /Usage/, `${name} --help prints usage`);
    t.equal((await cli([name, '-h'])).code, 0);
  }
  t.match((await cli(['project', 'create', '--help'])).stdout, /project create/);
  const none = await cli([]);
  t.equal(none.code, 2);
  const unknown = await cli(['frobnicate']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command "frobnicate"/);
});

t.test('the built entry point runs (node --import tsx src/cli.ts --help)', async (t) => {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', '--help'], { encoding: 'utf8' });
  t.equal(res.status, 0, res.stderr);
  t.match(res.stdout, /sitesift keys create/);
});

t.test('project and keys commands against a running server', async (t) => {
  const s = await startTestServer({ t });
  const env = { SITESIFT_URL: s.url, SITESIFT_MASTER_KEY: s.masterKey };

  const created = await cli(['project', 'create', 'docs', '--name', 'Docs'], env);
  t.equal(created.code, 0, created.stderr);
  const token = /API key \(shown once\): (ss_\S+)/.exec(created.stdout)?.[1];
  t.ok(token, 'token printed once');
  t.ok(s.services.projects.resolveToken(token!), 'printed token works');

  const list = await cli(['project', 'list', '--url', s.url, '--data-dir', s.dataDir], { PORT: '1' });
  t.equal(list.code, 0, 'master key found through --data-dir/master.key, URL through --url');
  t.match(list.stdout, /^SITE\s+NAME\s+PAGES\s+CREATED/m);
  t.match(list.stdout, /^docs\s+Docs\s+0\s/m);
  const json = await cli(['project', 'list', '--json'], env);
  t.same(JSON.parse(json.stdout).projects.map((p: any) => p.siteId), ['default', 'docs']);

  const dup = await cli(['project', 'create', 'docs'], env);
  t.equal(dup.code, 1);
  t.match(dup.stderr, /already exists.*\(conflict\)/);
  t.equal((await cli(['project', 'create'], env)).code, 2, 'missing siteId is a usage error');
  t.equal((await cli(['project', 'frob'], env)).code, 2);
  t.equal((await cli(['project', 'list', '--bogus'], env)).code, 2, 'unknown flag');

  const kc = await cli(['keys', 'create', 'docs', '--label', 'ci'], env);
  t.equal(kc.code, 0, kc.stderr);
  const keyId = /created key (\S+)/.exec(kc.stdout)![1];
  const kl = await cli(['keys', 'list', 'docs'], env);
  t.match(kl.stdout, new RegExp(`^${keyId}\\s+ci\\s+ss_`, 'm'));
  t.notMatch(kl.stdout, /ss_[A-Za-z0-9_-]{20,}/, 'no full token in listings');
  const kr = await cli(['keys', 'rename', 'docs', keyId, 'deploy'], env);
  t.equal(kr.code, 0, kr.stderr);
  t.match((await cli(['keys', 'list', 'docs'], env)).stdout, new RegExp(`^${keyId}\\s+deploy`, 'm'));
  t.equal((await cli(['keys', 'rename', 'docs', keyId], env)).code, 2);
  const kd = await cli(['keys', 'delete', 'docs', keyId], env);
  t.equal(kd.code, 0, kd.stderr);
  const gone = await cli(['keys', 'delete', 'docs', keyId], env);
  t.equal(gone.code, 1);
  t.match(gone.stderr, /not_found/);

  const st = await cli(['status'], env);
  t.equal(st.code, 0, st.stderr);
  t.match(st.stdout, /ok, 2 project\(s\)/);

  const merged = await cli(['merge', 'docs'], env);
  t.equal(merged.code, 0, merged.stderr);
  t.match(merged.stdout, /merged docs/);

  t.equal((await cli(['project', 'delete', 'docs'], env)).code, 2, 'delete needs --yes');
  const pd = await cli(['project', 'delete', 'docs', '--yes'], env);
  t.equal(pd.code, 0, pd.stderr);
  t.notMatch((await cli(['project', 'list'], env)).stdout, /^docs/m);

  const wrongKey = await cli(['project', 'list'], { SITESIFT_URL: s.url, SITESIFT_MASTER_KEY: 'ssm_not-the-master-key' });
  t.equal(wrongKey.code, 1);
  t.match(wrongKey.stderr, /invalid_token/);
});

t.test('unreachable server and missing master key are clear errors', async (t) => {
  const down = await cli(['status'], { SITESIFT_URL: 'http://127.0.0.1:9', SITESIFT_MASTER_KEY: 'x'.repeat(20) });
  t.equal(down.code, 1);
  t.match(down.stderr, /not reachable at http:\/\/127\.0\.0\.1:9/);
  const list = await cli(['project', 'list'], { SITESIFT_URL: 'http://127.0.0.1:9', SITESIFT_MASTER_KEY: 'x'.repeat(20) });
  t.equal(list.code, 1);
  t.match(list.stderr, /cannot reach sitesift/);
  const nokey = await cli(['project', 'list', '--data-dir', '/nonexistent-dir'], { SITESIFT_URL: 'http://127.0.0.1:9' });
  t.equal(nokey.code, 1);
  t.match(nokey.stderr, /no master key/);
});
