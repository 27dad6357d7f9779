/**
 * The first-try path of the README on a packed tarball: `npm pack` (its prepack builds dist/),
 * then, in an empty folder, `npx ./sitesift-<version>.tgz --version` and
 * `npx ./sitesift-<version>.tgz serve`, which installs the package with its dependencies
 * (better-sqlite3 compiled from source when no prebuilt binary can be downloaded), serves on the
 * default settings with the data in ./data of that folder, indexes a pushed page and finds it.
 *
 * Slow (minutes: the build, the install and the native compile); npm's cache makes the package
 * downloads of a second run fast. Needs the npm registry or a warm npm cache.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

t.setTimeout(45 * 60_000);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const tgzName = `sitesift-${version}.tgz`;

// The environment of a user's shell: none of the test runner's sitesift or npm project settings.
const env: NodeJS.ProcessEnv = {};
for (const [k, v] of Object.entries(process.env)) {
  if (!k.startsWith('SITESIFT_') && !k.startsWith('npm_') && !['HOST', 'PORT', 'LOG_LEVEL', 'NODE_OPTIONS', 'TAP', 'TS_NODE_PROJECT'].includes(k) && !k.startsWith('TAP_')) env[k] = v;
}

const npxCache = path.join(execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8', env }).trim(), '_npx');
const npxBefore = new Set(existsSync(npxCache) ? readdirSync(npxCache) : []);
const work = mkdtempSync(path.join(os.tmpdir(), 'sitesift-pack-'));
const empty = path.join(work, 'first-try');

t.teardown(() => {
  rmSync(work, { recursive: true, force: true });
  // npx installed the tarball under a folder of its own in npm's cache: remove the ones this run made.
  for (const entry of existsSync(npxCache) ? readdirSync(npxCache) : []) {
    if (!npxBefore.has(entry) && existsSync(path.join(npxCache, entry, 'node_modules', 'sitesift'))) rmSync(path.join(npxCache, entry), { recursive: true, force: true });
  }
});

/**
 * The tracked files copied beside the test, with the installed node_modules linked in: the
 * prepack build then writes its dist/ there, never into the checkout whose dist/ and dist/web
 * other test files run from at the same time.
 */
function checkoutCopy(): string {
  const copy = path.join(work, 'checkout');
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of tracked) {
    if (!existsSync(path.join(root, f))) continue;
    mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
    cpSync(path.join(root, f), path.join(copy, f));
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
  return copy;
}

t.test('npm pack: built dist, web assets and bin; no tests, benchmarks or TypeScript sources', async (t) => {
  execFileSync('npm', ['pack', '--pack-destination', work], { cwd: checkoutCopy(), env, stdio: ['ignore', 'ignore', 'inherit'] });
  const files = execFileSync('tar', ['tzf', path.join(work, tgzName)], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const f of ['package/package.json', 'package/bin/sitesift', 'package/dist/src/cli.js', 'package/dist/src/server.js', 'package/dist/workers/index.js', 'package/dist/jobs/index.js', 'package/dist/web/manifest.json', 'package/README.md']) {
    t.ok(files.includes(f), f);
  }
  t.same(files.filter((f) => /^package\/(test|bench|src|workers|jobs|data)\//.test(f)), [], 'nothing of test/, bench/, the sources or data/');
  t.same(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts')), [], 'no TypeScript source');
});

t.test('npx ./sitesift-<version>.tgz in an empty folder: --version, then serve, push a page, find it', async (t) => {
  execFileSync('mkdir', ['-p', empty]);
  copyFileSync(path.join(work, tgzName), path.join(empty, tgzName));
  const out = execFileSync('npx', ['-y', `./${tgzName}`, '--version'], { cwd: empty, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  t.equal(out.trim().split('\n').at(-1), version, '--version prints the version');

  // PORT=0: the embedded default port may be taken on a shared machine; everything else is default.
  const child = spawn('npx', ['-y', `./${tgzName}`, 'serve'], { cwd: empty, env: { ...env, PORT: '0' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await exited;
  });
  const started = Date.now();
  let url = '';
  while (!url) {
    const line = stdout.split('\n').find((l) => l.includes('"msg":"listening"'));
    if (line) url = (JSON.parse(line) as { url: string }).url;
    else if (child.exitCode !== null) t.fail(`serve exited ${child.exitCode}\n${stdout}\n${stderr}`);
    else if (Date.now() - started > 10 * 60_000) t.fail(`no "listening" line\n${stdout}\n${stderr}`);
    if (child.exitCode !== null || Date.now() - started > 10 * 60_000) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'the default host');
  const token = /API key\s*:\s*(\S+)/.exec(stdout)?.[1];
  t.ok(token, 'the first-start banner shows the API key');
  t.ok(existsSync(path.join(empty, 'data', 'master.key')), 'data in ./data of the current folder');

  const doc = { url: 'https://example.com/hello', title: 'Hello sitesift', content: 'My first indexed page, from a packed tarball.' };
  const push = await fetch(`${url}/sites/pageJson?token=${token}&refresh=true`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(doc) });
  t.same(await push.json(), { status: 'success', indexed: 1 });
  const found = (await (await fetch(`${url}/sites?site=default&query=tarball`)).json()) as { totalResults: number; suggests: Record<string, Array<{ link: string }>> };
  t.equal(found.totalResults, 1, 'the pushed page is found');
  t.equal(found.suggests._?.[0]?.link, doc.url);
  const panel = await fetch(`${url}/`);
  t.equal(panel.status, 200, 'the web assets are served');
});
