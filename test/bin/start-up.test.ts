/**
 * Start-up as `make start` runs it twice: the build step is skipped when nothing changed
 * (make's own dependency tracking), and a second server on a data dir in use refuses at once
 * with one line and no stack.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';

t.test('make build compiles only when a source is newer than the build stamp', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sitesift-stamp-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const stamp = path.join(dir, 'stamp');
  writeFileSync(stamp, ''); // newer than every checked-out source
  const dry = (...extra: string[]) =>
    spawnSync('make', ['-n', ...extra, 'build', `BUILD_STAMP=${stamp}`], { encoding: 'utf8', env: { ...process.env, MAKEFLAGS: '' } });
  const unchanged = dry();
  t.equal(unchanged.status, 0, unchanged.stderr);
  t.notMatch(unchanged.stdout, /tsc -p tsconfig\.build\.json/, 'nothing changed: no compile');
  const touched = dry('-W', 'src/main.ts');
  t.equal(touched.status, 0, touched.stderr);
  t.match(touched.stdout, /tsc -p tsconfig\.build\.json/, 'a changed source: compile');
});

t.test('serve on a data dir in use refuses with one line and no stack', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-inuse-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // This test process is alive, so its pid in the lock file marks the dir as in use.
  writeFileSync(path.join(dataDir, 'sitesift.lock'), String(process.pid));
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--port', '0', '--data-dir', dataDir], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(res.status, 1, 'exit 1');
  const lines = res.stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line on stderr: ${res.stderr}`);
  t.match(lines[0], /^sitesift: cannot start: data directory .* is in use by another sitesift process \(pid \d+\)/);
  t.notMatch(res.stdout + res.stderr, /\n\s+at /, 'no stack trace');
  t.equal(res.stdout.trim(), '', 'nothing logged on stdout');
});
