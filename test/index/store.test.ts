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
