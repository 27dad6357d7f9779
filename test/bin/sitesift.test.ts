/**
 * bin/sitesift, the launcher: it sets the glibc malloc tunables unless the user set them, runs
 * the CLI of the package it belongs to (also through an npm-style symlink) or node itself
 * (`--node`), and `exec`s, so the started program is the launcher's own process. A fake `NODE`
 * (a shell script that prints what it was given) stands in for node, so this needs no dist/.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LAUNCHER = path.join(ROOT, 'bin/sitesift');
/** The V8 flag the launcher gives node with SITESIFT_HEAP_GROWING_PERCENT=50 (see bin/sitesift). */
const HEAP_FLAG = '--heap-growing-percent=50';

interface Seen {
  pid: number;
  argv: string[];
  mmap: string | null;
  trim: string | null;
  /** SITESIFT_HEAP_GROWING_PERCENT as node sees it (the launcher consumes it). */
  growing: string | null;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'sitesift-launcher-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// Prints its PID, its arguments , the two variables ("<unset>" when unset) and its arguments, one per line.
const fakeNode = path.join(dir, 'fake-node');
writeFileSync(
  fakeNode,
  '#!/bin/sh\necho "pid=$$"\necho "mmap=${MALLOC_MMAP_THRESHOLD_-<unset>}"\necho "trim=${MALLOC_TRIM_THRESHOLD_-<unset>}"\necho "growing=${SITESIFT_HEAP_GROWING_PERCENT-<unset>}"\nfor a in "$@"; do echo "arg=$a"; done\n',
);
chmodSync(fakeNode, 0o755);

/** Runs the launcher (or a path to it) with a clean environment plus `env`; resolves what the fake node saw and the spawned PID. */
function launch(file: string, args: string[], env: Record<string, string> = {}): Promise<{ seen: Seen; spawnedPid: number }> {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, NODE: fakeNode };
  const child = spawn(file, args, { env: { ...base, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(Object.assign(new Error(`launcher exited ${code}: ${err}`), { code, stderr: err }));
      const lines = out.trim().split('\n');
      const value = (k: string) => {
        const v = lines.find((l) => l.startsWith(`${k}=`))!.slice(k.length + 1);
        return v === '<unset>' ? null : v;
      };
      resolve({
        seen: { pid: Number(value('pid')), argv: lines.filter((l) => l.startsWith('arg=')).map((l) => l.slice(4)), mmap: value('mmap'), trim: value('trim'), growing: value('growing') },
        spawnedPid: child.pid!,
      });
    });
  });
}

t.test('runs the CLI of its package with the malloc tunables set, in its own process', async (t) => {
  const { seen, spawnedPid } = await launch(LAUNCHER, ['serve', '--port', '0']);
  t.same(seen.argv, [path.join(ROOT, 'dist/src/cli.js'), 'serve', '--port', '0'], 'no V8 flag by default');
  t.equal(seen.mmap, '131072');
  t.equal(seen.trim, '131072');
  t.equal(seen.pid, spawnedPid, 'exec: node runs as the launched process, no second process');
});

t.test('keeps values the user set, empty ones included', async (t) => {
  const a = await launch(LAUNCHER, ['status'], { MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '' });
  t.equal(a.seen.mmap, '65536');
  t.equal(a.seen.trim, '');
  const b = await launch(LAUNCHER, ['status'], { MALLOC_TRIM_THRESHOLD_: '1048576' });
  t.equal(b.seen.mmap, '131072');
  t.equal(b.seen.trim, '1048576');
});

t.test('SITESIFT_HEAP_GROWING_PERCENT sets the growing factor or drops the flag, and is not passed on', async (t) => {
  const entry = path.join(ROOT, 'dist/src/cli.js');
  const cases: Array<[string, string[]]> = [
    ['100', ['--heap-growing-percent=100', entry, 'serve']],
    ['50', [HEAP_FLAG, entry, 'serve']],
    ['0', [entry, 'serve']],
    ['', [entry, 'serve']],
  ];
  for (const [value, argv] of cases) {
    const { seen } = await launch(LAUNCHER, ['serve'], { SITESIFT_HEAP_GROWING_PERCENT: value });
    t.same(seen.argv, argv, `"${value}"`);
    t.equal(seen.growing, null, 'unset for the server (it rejects unknown SITESIFT_* variables)');
  }
  const { seen } = await launch(LAUNCHER, ['--node', 'x.js'], { SITESIFT_HEAP_GROWING_PERCENT: '0' });
  t.same(seen.argv, ['x.js'], '--node form too');
  await t.rejects(launch(LAUNCHER, ['serve'], { SITESIFT_HEAP_GROWING_PERCENT: '5x' }), { code: 2, stderr: /SITESIFT_HEAP_GROWING_PERCENT must be a whole number, got "5x"/ });
});

t.test('through a symlink (npm bin link) it still finds its package', async (t) => {
  const link = path.join(dir, 'sitesift');
  symlinkSync(LAUNCHER, link);
  const { seen } = await launch(link, ['--help']);
  t.same(seen.argv, [path.join(ROOT, 'dist/src/cli.js'), '--help']);
});

t.test('--node runs node with the given arguments under the same environment', async (t) => {
  const { seen, spawnedPid } = await launch(LAUNCHER, ['--node', '--import', 'tsx', 'src/main.ts', '--port', '0']);
  t.same(seen.argv, ['--import', 'tsx', 'src/main.ts', '--port', '0']);
  t.equal(seen.mmap, '131072');
  t.equal(seen.trim, '131072');
  t.equal(seen.pid, spawnedPid);
});

t.test('with the real node, the server process sees the variables', async (t) => {
  const child = spawn(LAUNCHER, ['--node', '-e', 'process.stdout.write(process.env.MALLOC_MMAP_THRESHOLD_ + " " + process.env.MALLOC_TRIM_THRESHOLD_)'], {
    env: { PATH: process.env.PATH, NODE: process.execPath },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  const code = await new Promise((r) => child.once('close', r));
  t.equal(code, 0);
  t.equal(out, '131072 131072');
});

t.test('with the real node and SITESIFT_HEAP_GROWING_PERCENT=50, the heap flag is in effect and pool and plain worker threads still start', async (t) => {
  // A pool thread gets an explicit execArgv (src/pool.ts strips V8 flags, which workers refuse
  // there); a plain worker inherits the process's execArgv.
  const script = [
    `import { createPool, runTask } from ${JSON.stringify(path.join(ROOT, 'src/pool.ts'))};`,
    "import { Worker } from 'node:worker_threads';",
    "const pool = createPool({ workers: 1 });",
    "const r = await runTask(pool, 'ping', { echo: 'x' });",
    "await pool.destroy();",
    "const w = await new Promise((res, rej) => new Worker('require(\"node:worker_threads\").parentPort.postMessage(process.execArgv)', { eval: true }).once('message', res).once('error', rej));",
    "process.stdout.write(JSON.stringify({ main: process.execArgv.filter((a) => a.startsWith('--heap')), echo: r.echo, worker: w.filter((a) => a.startsWith('--heap')) }));",
  ].join('\n');
  const file = path.join(dir, 'pool-under-launcher.mts');
  writeFileSync(file, script);
  const child = spawn(LAUNCHER, ['--node', '--import', 'tsx', file], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE: process.execPath, SITESIFT_HEAP_GROWING_PERCENT: '50' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const code = await new Promise((r) => child.once('close', r));
  t.equal(code, 0, err);
  t.same(JSON.parse(out), { main: [HEAP_FLAG], echo: 'x', worker: [HEAP_FLAG] });
});
