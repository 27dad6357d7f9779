import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, fakeClock, realPool, tempDir } from '../index/helpers.js';
import { IndexRegistry } from '../../src/index/index.js';
import { MERGE_SCHEDULE, startMergeJob, type Scheduler } from '../../jobs/merge.js';
import { GC_SCHEDULE, startGcJob } from '../../jobs/gc.js';

/** A scheduler the test drives by hand: `fire()` runs the registered tick. */
function manualScheduler() {
  const ticks: Array<{ expression: string; tick: () => void; stopped: boolean }> = [];
  const scheduler: Scheduler = (expression, tick) => {
    const entry = { expression, tick, stopped: false };
    ticks.push(entry);
    return { stop: () => void (entry.stopped = true) };
  };
  return { scheduler, ticks };
}

t.test('the merge job runs the policy over open projects on each tick', async (t) => {
  const dataDir = tempDir(t);
  const registry = new IndexRegistry({
    dataDir,
    pool: realPool(t),
    refreshMs: 60_000,
    clock: fakeClock(),
    mergePolicy: { segmentsPerTier: 2, maxMergeAtOnce: 10, floorBytes: 1 },
  });
  const index = await registry.getStore('site');
  for (let i = 0; i < 5; i++) {
    await index.write([{ op: 'upsert', doc: doc(`https://j.test/${i}`, `doc ${i}`) }]);
    await index.flush();
  }
  const idle = await registry.getStore('idle');
  t.equal(index.segments().length, 5);
  const { scheduler, ticks } = manualScheduler();
  const errors: unknown[] = [];
  const job = startMergeJob({ indexes: registry, onError: (_s, e) => errors.push(e) }, { scheduler });
  t.equal(ticks.length, 1);
  t.equal(ticks[0]!.expression, MERGE_SCHEDULE);
  ticks[0]!.tick();
  const merged = await job.runOnce(); // joins the pass the tick started
  t.same(merged, ['site'], 'only the project that needed it merged');
  t.ok(index.segments().length <= 2, `${index.segments().length} segments after the pass`);
  t.equal(idle.segments().length, 0);
  t.same(await job.runOnce(), [], 'nothing left to merge');
  t.same(errors, []);
  for (let i = 0; i < 5; i++) t.ok(index.has(`https://j.test/${i}`));
  await job.stop();
  t.ok(ticks[0]!.stopped);
  await registry.closeAll();
});

t.test('the gc job sweeps unreferenced segment files', async (t) => {
  const dataDir = tempDir(t);
  const registry = new IndexRegistry({ dataDir, pool: realPool(t), refreshMs: 60_000 });
  const index = await registry.getStore('site');
  await index.write([{ op: 'upsert', doc: doc('https://g.test/1', 'one') }]);
  await index.flush();
  const segDir = path.join(dataDir, 'projects', 'site', 'segments');
  fs.writeFileSync(path.join(segDir, 'left-over.seg'), 'x');
  const { scheduler, ticks } = manualScheduler();
  const job = startGcJob({ indexes: registry }, { scheduler });
  t.equal(ticks[0]!.expression, GC_SCHEDULE);
  t.equal(await job.runOnce(), 1);
  t.same(fs.readdirSync(segDir), [index.segments()[0]!.file]);
  t.ok(index.has('https://g.test/1'));
  await job.stop();
  await registry.closeAll();
});
