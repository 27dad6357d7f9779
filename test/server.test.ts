import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig, createLogger } from '../src/core/index.js';
import { LOCK_FILE, MASTER_KEY_FILE, startServer } from '../src/server.js';
import { api, spawnServer, startTestServer, tempDataDir } from './helpers/server.js';

t.test('first start: master key file 0600, project default with one key, printed once', async (t) => {
  const dataDir = tempDataDir(t);
  const first = await startTestServer({ dataDir });
  const out = first.stdout();
  const keyFile = path.join(dataDir, MASTER_KEY_FILE);
  t.equal(statSync(keyFile).mode & 0o777, 0o600, 'master.key is 0600');
  t.equal(readFileSync(keyFile, 'utf8').trim(), first.masterKey);
  t.ok(out.includes(first.masterKey), 'master key printed');
  t.match(first.token, /^ss_/, 'API key printed');
  t.match(out, new RegExp(`curl .*${first.url}/sites/pageJson\\?token=${first.token}`), 'ready-to-paste curl line');
  t.same(first.services.projects.listProjects().map((p) => p.siteId), ['default']);
  t.equal(first.services.projects.listKeys('default').length, 1);
  t.equal((await api(first.url, '/admin/projects', { token: first.masterKey })).status, 200, 'master key works');
  t.equal((await api(first.url, '/admin/projects/default/keys', { token: first.token })).status, 200, 'API key works');
  await first.close();
  t.notOk(existsSync(path.join(dataDir, LOCK_FILE)), 'lock released on close');

  const second = await startTestServer({ dataDir });
  t.teardown(() => second.close());
  t.equal(second.stdout(), '', 'second start prints nothing');
  t.equal(second.masterKey, first.masterKey, 'master key read back from the file');
  t.equal(second.services.projects.listKeys('default').length, 1, 'no extra key');
});

t.test('SITESIFT_MASTER_KEY given: no key file, no default project, nothing printed', async (t) => {
  const dataDir = tempDataDir(t);
  const s = await startTestServer({ dataDir, env: { SITESIFT_MASTER_KEY: 'env-master-key-0123456789' } });
  t.teardown(() => s.close());
  t.equal(s.stdout(), '');
  t.notOk(existsSync(path.join(dataDir, MASTER_KEY_FILE)));
  t.same(s.services.projects.listProjects(), []);
  t.equal((await api(s.url, '/admin/projects', { token: 'env-master-key-0123456789' })).status, 200);
});

t.test('a data dir is opened by one server at a time; stale locks are taken over', async (t) => {
  const dataDir = tempDataDir(t);
  const a = await startTestServer({ dataDir });
  const config = loadConfig([], { HOST: '127.0.0.1', PORT: '0', SITESIFT_DATA_DIR: dataDir, SITESIFT_WORKERS: '1' });
  await t.rejects(startServer(config, { log: createLogger('silent'), jobs: false }), /in use by another sitesift process/);
  t.equal((await api(a.url, '/health')).status, 200, 'first server unaffected');
  await a.close();
  // A pid that cannot be running (beyond the kernel's pid_max) stands for a crashed owner.
  writeFileSync(path.join(dataDir, LOCK_FILE), '99999999');
  const b = await startTestServer({ dataDir });
  t.equal((await api(b.url, '/health')).status, 200, 'stale lock taken over');
  await b.close();
});

t.test('child process: SIGTERM and SIGINT shut down gracefully with exit code 0', async (t) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const dataDir = tempDataDir(t);
    const child = await spawnServer(dataDir);
    t.equal((await api(child.url, '/health')).status, 200);
    t.match(child.stdout(), /API key\s*:/, 'first-start banner on stdout');
    const code = await child.kill(signal);
    t.equal(code, 0, `${signal} → exit 0`);
    t.match(child.stdout(), /"msg":"stopped"/);
    t.notOk(existsSync(path.join(dataDir, LOCK_FILE)), 'lock released');
  }
});

t.test('child process: in-flight request finishes during shutdown', async (t) => {
  const dataDir = tempDataDir(t);
  const child = await spawnServer(dataDir);
  const key = readFileSync(path.join(dataDir, MASTER_KEY_FILE), 'utf8').trim();
  // A request whose body is still arriving when SIGTERM lands must still be answered.
  const { port } = new URL(child.url);
  const http = await import('node:http');
  const answered = new Promise<number>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/admin/projects', method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.on('socket', (socket) =>
      socket.once('connect', () => {
        req.write('{"siteId":');
        child.child.kill('SIGTERM');
        // Finish the body only once the server is shutting down (its log says so).
        const poll = setInterval(() => {
          if (!child.stdout().includes('signal received')) return;
          clearInterval(poll);
          req.end('"late"}');
        }, 10);
      }),
    );
  });
  t.equal(await answered, 201, 'in-flight request completed');
  t.equal(await child.exited, 0);
});

t.test('child process: invalid config prints one line naming the setting and exits 1', async (t) => {
  const dataDir = tempDataDir(t);
  await t.rejects(spawnServer(dataDir, { PORT: 'eighty' }), /exited \(1\)/);
  const { spawnSync } = await import('node:child_process');
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, SITESIFT_DATA_DIR: dataDir, SITESIFT_WORKRES: '2' },
    encoding: 'utf8',
  });
  t.equal(res.status, 1);
  const lines = res.stderr.trim().split('\n');
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /SITESIFT_WORKRES/);
});
