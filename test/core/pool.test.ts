import { isMainThread, threadId } from 'node:worker_threads';
import t from 'tap';
import { createPool, runTask, workerExecArgv, workerFile } from '../../src/core/pool.js';

t.test('the pool runs TypeScript tasks through the dispatcher', async (t) => {
  t.match(workerFile(), /workers\/index\.ts$/, 'resolves the .ts dispatcher under tsx');
  const pool = createPool({ workers: 2 });
  t.teardown(() => pool.destroy());
  const res = await runTask<{ pong: boolean; threadId: number; echo: unknown }>(pool, 'ping', { echo: { n: 1 } });
  t.equal(res.pong, true);
  t.same(res.echo, { n: 1 }, 'payload reaches the task');
  t.ok(isMainThread);
  t.not(res.threadId, threadId, 'ran on a worker thread');
  await t.rejects(runTask(pool, 'no-such-task' as never), /unknown worker task "no-such-task"/);
});

t.test('pool threads start without the V8 heap flags they refuse', async (t) => {
  t.same(workerExecArgv(['--max-old-space-size=256', '--enable-source-maps'], false), ['--enable-source-maps']);
  t.same(workerExecArgv(['--max_old_space_size', '128', '--max-semi-space-size=8', '--expose-gc'], false), []);
  t.same(workerExecArgv(['--import', 'tsx', '--max-old-space-size=256'], true), ['--import', 'tsx']);
  t.same(workerExecArgv(['--conditions=dev'], true), ['--conditions=dev', '--import', 'tsx']);
  // End to end: a server process started with a heap limit still runs pool tasks.
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const { execFileSync } = await import('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pool-heap-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = path.join(dir, 'run.mts');
  fs.writeFileSync(
    script,
    [
      `import { createPool, runTask } from ${JSON.stringify(new URL('../../src/core/pool.ts', import.meta.url).pathname)};`,
      'const pool = createPool({ workers: 1 });',
      "const r = await runTask<{ pong: boolean }>(pool, 'ping', {});",
      'await pool.destroy();',
      'console.log(JSON.stringify(r.pong));',
    ].join('\n'),
  );
  const out = execFileSync(process.execPath, ['--max-old-space-size=200', '--import', 'tsx', script], { encoding: 'utf8' });
  t.equal(out.trim(), 'true', 'ping answered by a worker of a heap-limited process');
});

t.test('threads that index or crawl yield the CPU to searches (nice value per thread)', async (t) => {
  const os = await import('node:os');
  const { BACKGROUND_NICE } = await import('../../workers/index.js');
  const main = os.getPriority();
  const pool = createPool({ workers: 1 });
  t.teardown(() => pool.destroy());
  type Ping = { priority: number; threadId: number };
  const before = await runTask<Ping>(pool, 'ping');
  t.equal(before.priority, main, 'a fresh pool thread runs at the process priority');
  // Any background task lowers its thread's priority first (this one fails on its payload).
  await t.rejects(runTask(pool, 'merge-segments', {}));
  const after = await runTask<Ping>(pool, 'ping');
  t.equal(after.threadId, before.threadId, 'same thread');
  t.equal(after.priority, Math.max(main, BACKGROUND_NICE), 'background thread niced');
  t.equal(os.getPriority(), main, 'the main thread keeps its priority');
  // SITESIFT_WORKER_NICE=0 keeps background threads at normal priority.
  const plain = createPool({ workers: 1, nice: 0 });
  t.teardown(() => plain.destroy());
  await t.rejects(runTask(plain, 'merge-segments', {}));
  t.equal((await runTask<Ping>(plain, 'ping')).priority, main, 'nice 0: not lowered');
});

t.test('pool threads run with a capped V8 young generation (memory per thread)', async (t) => {
  const { WORKER_YOUNG_GENERATION_MB } = await import('../../src/core/pool.js');
  type Ping = { youngGenerationMb: number };
  const capped = createPool({ workers: 1 });
  t.teardown(() => capped.destroy());
  const a = await runTask<Ping>(capped, 'ping');
  t.ok(WORKER_YOUNG_GENERATION_MB > 0 && WORKER_YOUNG_GENERATION_MB < 48, 'default cap below V8\'s 48 MB');
  t.equal(a.youngGenerationMb, WORKER_YOUNG_GENERATION_MB, 'default cap applied');
  const custom = createPool({ workers: 1, youngGenerationMb: 12 });
  t.teardown(() => custom.destroy());
  t.equal((await runTask<Ping>(custom, 'ping')).youngGenerationMb, 12);
  // 0 leaves V8's own sizing: the thread reports the limit V8 chose, well above the cap.
  const plain = createPool({ workers: 1, youngGenerationMb: 0 });
  t.teardown(() => plain.destroy());
  t.ok((await runTask<Ping>(plain, 'ping')).youngGenerationMb > WORKER_YOUNG_GENERATION_MB, 'V8 default is larger');
});

t.test("pool threads' V8 heap is limited, so it does not grow to several times its live objects", async (t) => {
  const { POOL_OLD_GENERATION_MB, WORKER_YOUNG_GENERATION_MB } = await import('../../src/core/pool.js');
  const pool = createPool({ workers: 1 });
  t.teardown(() => pool.destroy());
  const { heapLimitMb } = await runTask<{ heapLimitMb: number }>(pool, 'ping');
  // heap_size_limit is the old generation's limit plus the young generation's reservation.
  t.ok(heapLimitMb >= POOL_OLD_GENERATION_MB && heapLimitMb <= POOL_OLD_GENERATION_MB + 2 * WORKER_YOUNG_GENERATION_MB, `limit ${heapLimitMb} MB (old generation ${POOL_OLD_GENERATION_MB})`);
});

t.test('idle pool threads run their event loop (async atomics: V8 can shrink a heap after a task)', async (t) => {
  const pool = createPool({ workers: 1 });
  t.teardown(() => pool.destroy());
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const task = new URL('../fixtures/pool-timer-task.cjs', import.meta.url).href;
  t.equal(await pool.run({ flag }, { filename: task }), 'returned');
  // With Piscina's default (sync atomics) the thread blocks after the task and the timer
  // never fires while it is idle: this wait would time out.
  // Atomics.waitAsync is in Node 20 but not in this project's TypeScript lib.
  const { waitAsync } = Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, ms: number): { async: boolean; value: Promise<string> | string } };
  // ('not-equal': the timer already ran before the wait began.)
  const waited = waitAsync(flag, 0, 0, 20_000);
  // A pending waitAsync does not keep the process alive by itself.
  const alive = setInterval(() => {}, 1000);
  t.not(waited.async ? await waited.value : waited.value, 'timed-out');
  clearInterval(alive);
  t.equal(flag[0], 1, 'the timer set after the task ran');
});
