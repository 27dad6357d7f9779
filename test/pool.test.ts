import { isMainThread, threadId } from 'node:worker_threads';
import t from 'tap';
import { createPool, runTask, workerFile } from '../src/pool.js';

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
