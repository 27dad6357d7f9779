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
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LAUNCHER = path.join(ROOT, 'bin/sitesift');
/** The V8 flag the launcher gives node with SITESIFT_HEAP_GROWING_PERCENT=50 (see bin/sitesift). */
const HEAP_FLAG = '--heap-growing-percent=50';
/** The main thread's heap limit the launcher gives node by default (SITESIFT_MAIN_HEAP_MB, see bin/sitesift). */
const MAIN_HEAP_FLAG = '--max-old-space-size=768';
/** The main thread's young-generation cap the launcher always gives node (see bin/sitesift). */
const YOUNG_FLAG = '--max-semi-space-size=8';

interface Seen {
  pid: number;
  argv: string[];
  mmap: string | null;
  trim: string | null;
  /** SITESIFT_HEAP_GROWING_PERCENT as node sees it (the launcher consumes it). */
  growing: string | null;
  /** SITESIFT_MAIN_HEAP_MB as node sees it (the launcher consumes it too). */
  mainHeap: string | null;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'sitesift-launcher-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// Prints its PID, its arguments , the two variables ("<unset>" when unset) and its arguments, one per line.
const fakeNode = path.join(dir, 'fake-node');
writeFileSync(
  fakeNode,
  '#!/bin/sh\necho "pid=$$"\necho "mmap=${MALLOC_MMAP_THRESHOLD_-<unset>}"\necho "trim=${MALLOC_TRIM_THRESHOLD_-<unset>}"\necho "growing=${SITESIFT_HEAP_GROWING_PERCENT-<unset>}"\necho "mainHeap=${SITESIFT_MAIN_HEAP_MB-<unset>}"\nfor a in "$@"; do echo "arg=$a"; done\n',
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
        seen: { pid: Number(value('pid')), argv: lines.filter((l) => l.startsWith('arg=')).map((l) => l.slice(4)), mmap: value('mmap'), trim: value('trim'), growing: value('growing'), mainHeap: value('mainHeap') },
        spawnedPid: child.pid!,
      });
    });
  });
}

t.test('runs the CLI of its package with the malloc tunables set, in its own process', async (t) => {
  const { seen, spawnedPid } = await launch(LAUNCHER, ['serve', '--port', '0']);
  t.same(seen.argv, [YOUNG_FLAG, MAIN_HEAP_FLAG, path.join(ROOT, 'dist/src/cli.js'), 'serve', '--port', '0'], 'the main heap limit and young-generation cap, no growing flag by default');
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
    ['100', [YOUNG_FLAG, MAIN_HEAP_FLAG, '--heap-growing-percent=100', entry, 'serve']],
    ['50', [YOUNG_FLAG, MAIN_HEAP_FLAG, HEAP_FLAG, entry, 'serve']],
    ['0', [YOUNG_FLAG, MAIN_HEAP_FLAG, entry, 'serve']],
    ['', [YOUNG_FLAG, MAIN_HEAP_FLAG, entry, 'serve']],
  ];
  for (const [value, argv] of cases) {
    const { seen } = await launch(LAUNCHER, ['serve'], { SITESIFT_HEAP_GROWING_PERCENT: value });
    t.same(seen.argv, argv, `"${value}"`);
    t.equal(seen.growing, null, 'unset for the server (it rejects unknown SITESIFT_* variables)');
  }
  const { seen } = await launch(LAUNCHER, ['--node', 'x.js'], { SITESIFT_HEAP_GROWING_PERCENT: '0' });
  t.same(seen.argv, [YOUNG_FLAG, MAIN_HEAP_FLAG, 'x.js'], '--node form too');
  await t.rejects(launch(LAUNCHER, ['serve'], { SITESIFT_HEAP_GROWING_PERCENT: '5x' }), { code: 2, stderr: /SITESIFT_HEAP_GROWING_PERCENT must be a whole number, got "5x"/ });
});

t.test('SITESIFT_MAIN_HEAP_MB sets the main heap limit or drops it, and is not passed on', async (t) => {
  const entry = path.join(ROOT, 'dist/src/cli.js');
  const cases: Array<[string, string[]]> = [
    ['1024', [YOUNG_FLAG, '--max-old-space-size=1024', entry, 'serve']],
    ['0', [YOUNG_FLAG, entry, 'serve']],
    ['', [YOUNG_FLAG, entry, 'serve']],
  ];
  for (const [value, argv] of cases) {
    const { seen } = await launch(LAUNCHER, ['serve'], { SITESIFT_MAIN_HEAP_MB: value });
    t.same(seen.argv, argv, `"${value}"`);
    t.equal(seen.mainHeap, null, 'unset for the server (it rejects unknown SITESIFT_* variables)');
  }
  const both = await launch(LAUNCHER, ['--node', 'x.js'], { SITESIFT_MAIN_HEAP_MB: '512', SITESIFT_HEAP_GROWING_PERCENT: '50' });
  t.same(both.seen.argv, [YOUNG_FLAG, '--max-old-space-size=512', HEAP_FLAG, 'x.js'], '--node form, with the growing flag');
  await t.rejects(launch(LAUNCHER, ['serve'], { SITESIFT_MAIN_HEAP_MB: '1g' }), { code: 2, stderr: /SITESIFT_MAIN_HEAP_MB must be a whole number, got "1g"/ });
});

t.test('through a symlink (npm bin link) it still finds its package', async (t) => {
  const link = path.join(dir, 'sitesift');
  symlinkSync(LAUNCHER, link);
  const { seen } = await launch(link, ['--help']);
  t.same(seen.argv, [YOUNG_FLAG, MAIN_HEAP_FLAG, path.join(ROOT, 'dist/src/cli.js'), '--help']);
});

t.test('--node runs node with the given arguments under the same environment', async (t) => {
  const { seen, spawnedPid } = await launch(LAUNCHER, ['--node', '--import', 'tsx', 'src/main.ts', '--port', '0']);
  t.same(seen.argv, [YOUNG_FLAG, MAIN_HEAP_FLAG, '--import', 'tsx', 'src/main.ts', '--port', '0']);
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
  // A pool thread gets an explicit execArgv (src/core/pool.ts strips V8 flags, which workers refuse
  // there); a plain worker inherits the process's execArgv.
  const script = [
    `import { createPool, runTask } from ${JSON.stringify(path.join(ROOT, 'src/core/pool.ts'))};`,
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

t.test('with the real node, SITESIFT_MAIN_HEAP_MB limits the main thread\'s heap and threads the server starts keep V8\'s default', async (t) => {
  // A plain worker reporting its heap limit, with no resource limits of its own.
  const probe = "new Promise((res, rej) => new Worker('require(\"node:worker_threads\").parentPort.postMessage(require(\"node:v8\").getHeapStatistics().heap_size_limit)', { eval: true }).once('message', res).once('error', rej))";
  const threadFile = path.join(dir, 'heap-thread.ts');
  writeFileSync(threadFile, "import { parentPort } from 'node:worker_threads';\nimport v8 from 'node:v8';\nparentPort!.postMessage(v8.getHeapStatistics().heap_size_limit);\n");
  const script = [
    `import { createPool, runTask, startThread } from ${JSON.stringify(path.join(ROOT, 'src/core/pool.ts'))};`,
    "import { Worker } from 'node:worker_threads';",
    "import v8 from 'node:v8';",
    "const main = v8.getHeapStatistics().heap_size_limit;",
    `const before = await ${probe};`,
    "const pool = createPool({ workers: 1 });",
    "const r = await runTask(pool, 'ping', { echo: 'x' });",
    "await pool.destroy();",
    `const afterPool = await ${probe};`,
    // The flag again, as a process started with it has it, to check the plain-thread path too.
    "v8.setFlagsFromString('--max-old-space-size=512');",
    "v8.setFlagsFromString('--max-semi-space-size=8');",
    `const again = await ${probe};`,
    `const w = startThread(${JSON.stringify(pathToFileURL(dir).href + '/')}, 'heap-thread');`,
    "const thread = await new Promise((res, rej) => w.once('message', res).once('error', rej));",
    "await w.terminate();",
    `const afterThread = await ${probe};`,
    "process.stdout.write(JSON.stringify({ main, before, echo: r.echo, afterPool, again, thread, afterThread, mainNow: v8.getHeapStatistics().heap_size_limit }));",
  ].join('\n');
  const file = path.join(dir, 'heap-under-launcher.mts');
  writeFileSync(file, script);
  const run = (cmd: string, args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(cmd, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env } });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c));
      child.stderr.on('data', (c: Buffer) => (err += c));
      child.once('close', (code) => resolve({ code, out, err }));
    });
  // V8's default for such a worker on this machine: the same probe in a node without flags.
  const refFile = path.join(dir, 'heap-default.mjs');
  writeFileSync(refFile, `import { Worker } from 'node:worker_threads';\nprocess.stdout.write(String(await ${probe}));\n`);
  const ref = await run(process.execPath, [refFile], {});
  t.equal(ref.code, 0, ref.err);
  const defaultLimit = Number(ref.out);
  const res = await run(LAUNCHER, ['--node', '--import', 'tsx', file], { NODE: process.execPath, SITESIFT_MAIN_HEAP_MB: '512' });
  t.equal(res.code, 0, res.err);
  const got = JSON.parse(res.out) as Record<string, number>;
  const mb = (n: number) => n / 1048576;
  // heap_size_limit is the old-space limit plus the young generation's reservation.
  t.ok(mb(got.main!) >= 512 && mb(got.main!) < 600, `main thread limited: ${mb(got.main!)} MB`);
  t.ok(mb(got.before!) >= 512 && mb(got.before!) < 600, `a worker started before the pool would be limited too: ${mb(got.before!)} MB`);
  t.equal(got.echo, 'x', 'the pool thread ran');
  t.ok(defaultLimit > got.before!, `V8's default is larger: ${mb(defaultLimit)} MB`);
  t.equal(got.afterPool, defaultLimit, 'after createPool, new threads get V8\'s default');
  t.equal(got.again, got.before, 'the flag set again applies to new threads');
  t.ok(mb(got.thread!) > 600, `startThread resets it before its thread starts: ${mb(got.thread!)} MB`);
  t.equal(got.afterThread, defaultLimit);
  t.equal(got.mainNow, got.main, 'the main thread keeps its limit');
});
