import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';

t.test('write, flush, search view, delete, reopen', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  const store = await openStore(dir, pool);
  const seq = await store.write([
    { op: 'upsert', doc: doc('https://a.test/1', 'alpha beta') },
    { op: 'upsert', doc: doc('https://a.test/2', 'gamma') },
  ]);
  t.equal(seq, 2);
  t.ok(store.has('https://a.test/1'), 'acknowledged write is visible to has() before publishing');
  t.equal(store.stats().pages, 2);
  t.equal(store.stats().pending, 2);
  let snap = store.acquire();
  t.equal(snap.totalDocs, 0, 'not published yet');
  snap.release();
  await store.waitSearchable(seq);
  snap = store.acquire();
  t.equal(snap.totalDocs, 2);
  t.same([...liveRows(snap).keys()].sort(), ['https://a.test/1', 'https://a.test/2']);
  snap.release();
  await store.write([{ op: 'delete', url: 'https://a.test/1' }, { op: 'upsert', doc: doc('https://a.test/2', 'gamma delta') }]);
  t.notOk(store.has('https://a.test/1'));
  await store.flush();
  snap = store.acquire();
  const rows = liveRows(snap);
  t.same([...rows.keys()], ['https://a.test/2']);
  t.equal(rows.get('https://a.test/2')!.content, 'gamma delta');
  t.equal(snap.totalDocs, 1);
  snap.release();
  const listing = store.listEntries({});
  t.equal(listing.total, 1);
  t.match(listing.rows[0], { url: 'https://a.test/2', contentType: 'HTML', status: 200, source: 'api' });
  await store.close();

  const again = await openStore(dir, pool);
  t.notOk(again.has('https://a.test/1'));
  t.ok(again.has('https://a.test/2'));
  const s2 = again.acquire();
  t.equal(s2.totalDocs, 1);
  s2.release();
  t.same(fs.readdirSync(path.join(dir, 'wal')), [], 'write log fully covered and deleted');
  await again.merge({ full: true });
  t.equal(again.segments().length, 1);
  t.equal(again.segments()[0]!.deadCount, 0);
  await again.close();
});

t.test('entryOf, invalid ops, backpressure on a full buffer', async (t) => {
  const store = await openStore(tempDir(t), realPool(t), { maxBufferedDocs: 4 });
  await t.rejects(store.write([{ op: 'upsert', doc: { url: 'x' } as never }]), { code: 'invalid_document' });
  await t.rejects(store.write([{ op: 'nope' } as never]), { code: 'invalid_document' });
  t.equal(store.position.lastAckedSeq, 0, 'nothing logged');
  const seq = await store.write([{ op: 'upsert', doc: doc('https://e.test/1', 'one', { source: 'crawler', status: 200 }) }]);
  t.same(store.entryOf('https://e.test/1'), { seq, source: 'crawler', status: 200, at: Date.UTC(2026, 0, 1) });
  t.equal(store.entryOf('https://e.test/none'), null);
  // Many concurrent writers against a buffer of 4: all acknowledged, nothing lost.
  const writes = Array.from({ length: 40 }, (_, i) => store.write([{ op: 'upsert', doc: doc(`https://e.test/b${i}`, `b ${i}`) }]));
  await Promise.all(writes);
  await store.flush();
  t.ok(store.segments().length >= 2, `early flushes happened (${store.segments().length} segments)`);
  const snap = store.acquire();
  t.equal(liveRows(snap).size, 41);
  snap.release();
  t.same(store.entryOf('https://e.test/1'), { seq, source: 'crawler', status: 200, at: Date.UTC(2026, 0, 1) }, 'entryOf of a published row');
  await store.close();
});

t.test('a failed build publishes nothing, rejects its waiters, and the next flush retries', async (t) => {
  const dir = tempDir(t);
  const real = realPool(t);
  let failNext = true;
  const pool = {
    run(task: Parameters<typeof real.run>[0]) {
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('worker crashed'));
      }
      return real.run(task);
    },
  };
  const store = await openStore(dir, pool);
  const seq = await store.write([{ op: 'upsert', doc: doc('https://f.test/1', 'one') }]);
  await t.rejects(store.waitSearchable(seq), /worker crashed/);
  t.equal(store.stats().pending, 1, 'the op is back in the buffer');
  t.equal(store.segments().length, 0);
  t.same(fs.readdirSync(path.join(dir, 'segments')), []);
  await store.write([{ op: 'upsert', doc: doc('https://f.test/2', 'two') }]);
  await store.flush();
  const snap = store.acquire();
  t.same([...liveRows(snap).keys()].sort(), ['https://f.test/1', 'https://f.test/2']);
  snap.release();
  await store.close();
});

t.test('a build task carries seqs, not documents: the worker reads them from the write log', async (t) => {
  const real = realPool(t);
  const tasks: Array<Record<string, unknown>> = [];
  const pool = {
    run(task: Parameters<typeof real.run>[0]) {
      tasks.push(task as Record<string, unknown>);
      return real.run(task);
    },
  };
  const store = await openStore(tempDir(t), pool);
  const big = 'lorem ipsum dolor '.repeat(600); // ~10 KB per page
  await store.write(Array.from({ length: 50 }, (_, i) => ({ op: 'upsert' as const, doc: doc(`https://p.test/${i}`, `${big} page${i}`) })));
  await store.write([{ op: 'upsert', doc: doc('https://p.test/3', 'replaced three') }]);
  await store.flush();
  t.equal(tasks.length, 1);
  const task = tasks[0]!;
  t.equal(task.task, 'build-segment');
  t.notOk('entries' in task, 'no documents in the payload');
  t.ok(JSON.stringify(task).length < 5_000, `payload is small (${JSON.stringify(task).length} chars for ~500 KB of pages)`);
  t.equal((task.seqs as number[]).length, 50, 'one upsert per URL (the newest)');
  t.notOk((task.seqs as number[]).includes(4), 'the replaced version of page 3 (seq 4) is not built');
  const snap = store.acquire();
  const rows = liveRows(snap);
  t.equal(rows.size, 50);
  t.equal(rows.get('https://p.test/3')?.content, 'replaced three');
  t.equal(rows.get('https://p.test/7')?.content, `${big} page7`, 'content read back from the log into the segment');
  snap.release();
  const listing = store.listEntries({ urlContains: 'p.test/1' });
  t.ok(listing.total > 0);
  await store.close();
});

t.test('the buffer flushes early on text size, not only on document count', async (t) => {
  const real = realPool(t);
  let built!: () => void;
  const buildStarted = new Promise<void>((r) => (built = r));
  const pool = {
    run(task: Parameters<typeof real.run>[0]) {
      if ((task as { task?: string }).task === 'build-segment') built();
      return real.run(task);
    },
  };
  // refreshMs is 60 s in openStore and 3 documents are far below maxBufferedDocs: only the
  // text bound (3 × 4 KB ≥ 16 KB / 2) can start this build.
  const store = await openStore(tempDir(t), pool, { maxBufferedBytes: 16_000 });
  t.equal(store.stats().pending, 0);
  await store.write([0, 1, 2].map((i) => ({ op: 'upsert' as const, doc: doc(`https://s.test/${i}`, 'x'.repeat(4_000)) })));
  await buildStarted;
  await store.flush();
  t.equal(store.segments().length, 1);
  t.equal(store.stats().pending, 0);
  await store.close();
});

t.test('a document written while its older version is being built is neither lost nor duplicated', async (t) => {
  const real = realPool(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const buildStarted = new Promise<void>((r) => (started = r));
  let first = true;
  const pool = {
    async run(task: Parameters<typeof real.run>[0]) {
      const result = await real.run(task);
      if (first) {
        first = false;
        started();
        await gate;
      }
      return result;
    },
  };
  const dir = tempDir(t);
  const store = await openStore(dir, pool);
  await store.write([{ op: 'upsert', doc: doc('https://g.test/a', 'alpha one') }]);
  const flushing = store.flush();
  await buildStarted;
  // Lands in the current log file while the build of the old version is held.
  const seq = await store.write([{ op: 'upsert', doc: doc('https://g.test/a', 'alpha two') }]);
  release();
  await flushing;
  await store.waitSearchable(seq);
  const snap = store.acquire();
  t.same([...liveRows(snap).values()].map((r) => r.content), ['alpha two']);
  snap.release();
  await store.close();
  const reopened = await openStore(dir, real);
  const snap2 = reopened.acquire();
  t.same([...liveRows(snap2).values()].map((r) => r.content), ['alpha two'], 'same after reopen');
  snap2.release();
  await reopened.close();
});

/** A real pool that records the seqs of every build-segment task it runs. */
function recordingPool(t: Parameters<typeof realPool>[0]) {
  const real = realPool(t);
  const tasks: Array<{ seqs: number[] }> = [];
  const pool = {
    run(task: Parameters<typeof real.run>[0]) {
      if ((task as { task?: string }).task === 'build-segment') tasks.push(task as unknown as { seqs: number[] });
      return real.run(task);
    },
  };
  return { pool, tasks, real };
}

t.test('a bulk flush is built as parallel parts and published by one commit', async (t) => {
  const { pool, tasks, real } = recordingPool(t);
  const dir = tempDir(t);
  const store = await openStore(dir, pool, { maxBufferedDocs: 100_000 });
  await store.write(Array.from({ length: 100 }, (_, i) => ({ op: 'upsert' as const, doc: doc(`https://q.test/old${i}`, `old ${i}`) })));
  await store.flush();
  t.equal(store.segments().length, 1, 'a small flush is one segment');
  const gen = store.position.generation;
  const ops = Array.from({ length: 1200 }, (_, i) => ({ op: 'upsert' as const, doc: doc(`https://q.test/${i}`, `page ${i} text`) }));
  const seqs: number[] = [];
  for (let i = 0; i < ops.length; i += 100) seqs.push(await store.write(ops.slice(i, i + 100)));
  // Replace one old page and delete another in the same flush.
  await store.write([{ op: 'upsert', doc: doc('https://q.test/old1', 'old one replaced') }, { op: 'delete', url: 'https://q.test/old2' }]);
  await store.flush();
  t.equal(tasks.length, 3, 'one task for the small flush, two for the bulk one');
  const [a, b] = [tasks[1]!.seqs, tasks[2]!.seqs];
  t.equal(a.length + b.length, 1201);
  t.ok(a[a.length - 1]! < b[0]!, 'contiguous seq ranges');
  t.equal(store.segments().length, 3);
  t.equal(store.position.generation, gen + 1, 'both parts published by a single commit');
  const snap = store.acquire();
  const rows = liveRows(snap);
  t.equal(rows.size, 100 + 1200 - 1);
  t.equal(rows.get('https://q.test/old1')?.content, 'old one replaced');
  t.notOk(rows.has('https://q.test/old2'));
  t.equal(snap.totalDocs, 1299, 'statistics count every live row once');
  snap.release();
  await store.close();
  const reopened = await openStore(dir, real);
  const snap2 = reopened.acquire();
  t.equal(liveRows(snap2).size, 1299, 'same after reopen');
  snap2.release();
  await reopened.close();
});

t.test('flush({ minPartDocs }) builds a small flush as parallel parts, published by one commit', async (t) => {
  const { pool, tasks, real } = recordingPool(t);
  const dir = tempDir(t);
  const store = await openStore(dir, pool);
  await store.write(Array.from({ length: 120 }, (_, i) => ({ op: 'upsert' as const, doc: doc(`https://m.test/${i}`, `page ${i}`) })));
  const gen = store.position.generation;
  await store.flush({ minPartDocs: 50 });
  t.equal(tasks.length, 2, '120 upserts with parts of at least 50: two builds');
  t.equal(tasks[0]!.seqs.length + tasks[1]!.seqs.length, 120);
  t.ok(tasks[0]!.seqs.at(-1)! < tasks[1]!.seqs[0]!, 'contiguous seq ranges');
  t.equal(store.segments().length, 2);
  t.equal(store.position.generation, gen + 1, 'one commit');
  await store.write(Array.from({ length: 80 }, (_, i) => ({ op: 'upsert' as const, doc: doc(`https://m.test/x${i}`, `more ${i}`) })));
  await store.flush({ minPartDocs: 50 });
  t.equal(tasks.length, 3, '80 upserts cannot give two parts of 50: one build');
  const snap = store.acquire();
  t.equal(liveRows(snap).size, 200);
  snap.release();
  await store.close();
});

t.test('when one parallel part fails, nothing is published and the other part is deleted', async (t) => {
  const real = realPool(t);
  let calls = 0;
  const pool = {
    async run(task: Parameters<typeof real.run>[0]) {
      if ((task as { task?: string }).task === 'build-segment' && ++calls === 2) {
        // Let the first part finish first, so that it is renamed into place before the failure.
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('part two crashed');
      }
      return real.run(task);
    },
  };
  const dir = tempDir(t);
  const store = await openStore(dir, pool, { maxBufferedDocs: 100_000 });
  let seq = 0;
  for (let i = 0; i < 1000; i += 100) {
    seq = await store.write(Array.from({ length: 100 }, (_, j) => ({ op: 'upsert' as const, doc: doc(`https://v.test/${i + j}`, `v ${i + j}`) })));
  }
  await t.rejects(store.waitSearchable(seq), /part two crashed/);
  t.equal(store.segments().length, 0);
  t.equal(store.stats().pending, 1000, 'every op back in the buffer');
  t.same(fs.readdirSync(path.join(dir, 'segments')), [], 'the part that was built is gone');
  await store.flush();
  const snap = store.acquire();
  t.equal(liveRows(snap).size, 1000, 'the retry publishes everything');
  snap.release();
  await store.close();
});

t.test('gc leaves the side files of an in-flight build alone', async (t) => {
  const real = realPool(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const held = new Promise<void>((r) => (started = r));
  const pool = {
    async run(task: Parameters<typeof real.run>[0]) {
      const result = await real.run(task);
      started();
      await gate;
      return result;
    },
  };
  const dir = tempDir(t);
  const store = await openStore(dir, pool);
  await store.write([{ op: 'upsert', doc: doc('https://gc.test/1', 'one') }]);
  const flushing = store.flush();
  await held;
  const segDir = path.join(dir, 'segments');
  const tmp = fs.readdirSync(segDir).find((n) => n.endsWith('.seg.tmp'))!;
  t.ok(tmp, 'a build is in flight');
  fs.writeFileSync(path.join(segDir, `${tmp}-journal`), '');
  fs.writeFileSync(path.join(segDir, 'stray.seg'), '');
  t.equal(store.gc(), 1, 'only the stray file is removed');
  t.ok(fs.existsSync(path.join(segDir, `${tmp}-journal`)), "the build's journal survives");
  release();
  await flushing;
  t.equal(store.segments().length, 1);
  await store.close();
});
