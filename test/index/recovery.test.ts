import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';
import { readManifest } from '../../src/index/manifest.js';
import { encodeBatch } from '../../src/index/write-log.js';

t.test('start-up ignores and cleans a torn temp manifest and unlisted segment files', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  const store = await openStore(dir, pool);
  await store.write([{ op: 'upsert', doc: doc('https://a.test/1', 'one') }]);
  await store.flush();
  await store.close();
  const before = fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8');
  const listed = readManifest(dir).segments.map((s) => s.file);

  // Leftovers of a crash: a half-written temp manifest naming a segment that never landed,
  // a sealed but never-published segment, a build's temp file and its journal.
  fs.writeFileSync(path.join(dir, 'manifest.json.tmp-999'), '{"format":1,"generation":7,"committedSeq":99,"segm');
  fs.copyFileSync(path.join(dir, 'segments', listed[0]!), path.join(dir, 'segments', 'orphan.seg'));
  fs.writeFileSync(path.join(dir, 'segments', 'x.seg.tmp'), 'garbage');
  fs.writeFileSync(path.join(dir, 'segments', 'x.seg.tmp-journal'), 'garbage');

  const again = await openStore(dir, pool);
  t.equal(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'), before, 'manifest untouched');
  t.same(fs.readdirSync(dir).filter((n) => n.startsWith('manifest')), ['manifest.json'], 'temp manifest deleted');
  t.same(fs.readdirSync(path.join(dir, 'segments')), listed, 'unlisted segment files deleted');
  const snap = again.acquire();
  t.same([...liveRows(snap).keys()], ['https://a.test/1'], 'the orphan copy does not make the URL appear twice');
  t.equal(snap.totalDocs, 1);
  snap.release();
  await again.close();
});

t.test('a torn or corrupt write-log tail is ignored; acknowledged lines before it are replayed', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  fs.mkdirSync(path.join(dir, 'wal'), { recursive: true });
  const good = encodeBatch({ seq: 1, at: 1000, ops: [{ op: 'upsert', doc: doc('https://a.test/ok', 'kept') }, { op: 'upsert', doc: doc('https://a.test/ok2', 'kept') }] });
  const torn = encodeBatch({ seq: 3, at: 1001, ops: [{ op: 'upsert', doc: doc('https://a.test/torn', 'lost') }] });
  // The appended bytes of the second batch were cut half-way (not acknowledged).
  fs.writeFileSync(path.join(dir, 'wal', '0000000000000001-aaaaaa.log'), Buffer.concat([good, torn.subarray(0, torn.length - 9)]));
  // A file whose tail was padded with zeros, and a line whose checksum does not match.
  const bad = Buffer.from(encodeBatch({ seq: 4, at: 1002, ops: [{ op: 'delete', url: 'https://a.test/ok' }] }));
  bad[20] = bad[20]! ^ 1;
  fs.writeFileSync(path.join(dir, 'wal', '0000000000000004-bbbbbb.log'), Buffer.concat([bad, Buffer.alloc(64)]));

  const store = await openStore(dir, pool);
  t.ok(store.has('https://a.test/ok'));
  t.ok(store.has('https://a.test/ok2'));
  t.notOk(store.has('https://a.test/torn'));
  const seq = await store.write([{ op: 'upsert', doc: doc('https://a.test/new', 'x') }]);
  t.ok(seq >= 3, 'seqs continue after the replayed ones');
  await store.waitSearchable(seq);
  const snap = store.acquire();
  t.same([...liveRows(snap).keys()].sort(), ['https://a.test/new', 'https://a.test/ok', 'https://a.test/ok2']);
  snap.release();
  await store.close();
  t.same(fs.readdirSync(path.join(dir, 'wal')), [], 'replayed logs deleted once covered');
});

t.test('a manifest listing a missing segment refuses to open', async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  const store = await openStore(dir, pool);
  await store.write([{ op: 'upsert', doc: doc('https://a.test/1', 'one') }]);
  await store.close();
  for (const f of fs.readdirSync(path.join(dir, 'segments'))) fs.rmSync(path.join(dir, 'segments', f));
  await t.rejects(openStore(dir, pool), /missing/);
});
