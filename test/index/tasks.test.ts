import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, tempDir } from './helpers.js';
import { WriteLog, encodeBatch } from '../../src/index/write-log.js';
import { loggedEntries, runBuildSegment } from '../../src/index/tasks.js';
import { SegmentReader, readRowColumns } from '../../src/index/segment-reader.js';

/** A write log with three files: seqs 1-3, 4-5 (rotated), 6 (current). */
async function threeFiles(dir: string): Promise<WriteLog> {
  const { log } = WriteLog.open(dir);
  await log.append({ seq: 1, at: 10, ops: [1, 2, 3].map((i) => ({ op: 'upsert' as const, doc: doc(`https://l.test/${i}`, `v1 page ${i}`) })) }, () => undefined);
  log.rotate();
  await log.append({ seq: 4, at: 20, ops: [{ op: 'upsert', doc: doc('https://l.test/1', 'v2 page 1') }, { op: 'delete', url: 'https://l.test/2' }] }, () => undefined);
  log.rotate();
  await log.append({ seq: 6, at: 30, ops: [{ op: 'upsert', doc: doc('https://l.test/9', 'newer than the build') }] }, () => undefined);
  return log;
}

t.test('loggedEntries reads exactly the wanted upserts from the log, in seq order', async (t) => {
  const log = await threeFiles(path.join(tempDir(t), 'wal'));
  t.teardown(() => log.close());
  const got = [...loggedEntries(log.filePaths(), [3, 4], [100, 200])];
  t.same(
    got.map((e) => [e.seq, e.at, e.firstAt, e.doc.url, e.doc.content]),
    [
      [3, 10, 100, 'https://l.test/3', 'v1 page 3'],
      [4, 20, 200, 'https://l.test/1', 'v2 page 1'],
    ],
  );
  t.same([...loggedEntries(log.filePaths(), [], [])], [], 'nothing wanted, nothing read');
});

t.test('loggedEntries parses only the log lines that can hold wanted seqs', async (t) => {
  // One file, three batches: seqs 1-3, 4-5, 6. A later part of a bulk flush (seqs 4-5) need not
  // parse the batch before it: the next line starts at 4, so that batch holds only 1-3.
  const dir = tempDir(t);
  const file = path.join(dir, 'a.log');
  const ups = (seq: number, n: number) => encodeBatch({ seq, at: seq, ops: Array.from({ length: n }, (_, i) => ({ op: 'upsert' as const, doc: doc(`https://l.test/${seq + i}`, `page ${seq + i}`) })) });
  fs.writeFileSync(file, Buffer.concat([ups(1, 3), ups(4, 2), ups(6, 1)]));
  const stats = { linesParsed: 0 };
  t.same([...loggedEntries([file], [4, 5], [1, 1], stats)].map((e) => e.seq), [4, 5]);
  t.equal(stats.linesParsed, 1, 'only the 4-5 batch was parsed');
  // A wanted seq inside the first batch: that batch is parsed (its successor starts above 3).
  const s2 = { linesParsed: 0 };
  t.same([...loggedEntries([file], [3, 4], [1, 1], s2)].map((e) => e.seq), [3, 4]);
  t.equal(s2.linesParsed, 2);
  // The last line of a file is parsed when still needed.
  const s3 = { linesParsed: 0 };
  t.same([...loggedEntries([file], [6], [1], s3)].map((e) => e.seq), [6]);
  t.equal(s3.linesParsed, 1);
});

t.test('loggedEntries fails loudly when an acknowledged upsert is not in the log', async (t) => {
  const log = await threeFiles(path.join(tempDir(t), 'wal'));
  t.teardown(() => log.close());
  t.throws(() => [...loggedEntries(log.filePaths(), [1, 7], [1, 1])], /missing 1 acknowledged upsert\(s\) \(first seq 7\)/);
  // Seq 5 is a delete in the log, not an upsert.
  t.throws(() => [...loggedEntries(log.filePaths(), [5], [1])], /first seq 5/);
  // A file deleted meanwhile (covered by a commit) holds nothing wanted and is skipped.
  const [first, ...rest] = log.filePaths();
  fs.rmSync(first!);
  t.same([...loggedEntries([first!, ...rest], [4], [1])].map((e) => e.seq), [4]);
});

t.test('loggedEntries skips torn or corrupt lines (never acknowledged)', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'a.log');
  const good = encodeBatch({ seq: 2, at: 5, ops: [{ op: 'upsert', doc: doc('https://l.test/ok', 'ok') }] });
  const bad = Buffer.from(encodeBatch({ seq: 1, at: 5, ops: [{ op: 'upsert', doc: doc('https://l.test/bad', 'bad') }] }));
  bad[30] = bad[30]! ^ 2;
  fs.writeFileSync(file, Buffer.concat([bad, good]));
  t.same([...loggedEntries([file], [2], [5])].map((e) => e.doc.url), ['https://l.test/ok']);
  t.throws(() => [...loggedEntries([file], [1], [5])], /first seq 1/, 'the corrupt line does not count as the op');
});

t.test('runBuildSegment builds a segment from the log without documents in its payload', async (t) => {
  const dir = tempDir(t);
  const log = await threeFiles(path.join(dir, 'wal'));
  t.teardown(() => log.close());
  const seg = path.join(dir, 'x.seg');
  const info = runBuildSegment({
    task: 'build-segment',
    path: seg,
    logFiles: log.filePaths(),
    seqs: [3, 4],
    firstAts: [10, 10],
    deletes: [{ seq: 5, at: 20, url: 'https://l.test/2' }],
    defaultLanguage: 'en',
  });
  t.match(info, { docCount: 2, searchableCount: 2, deleteCount: 1, minSeq: 3, maxSeq: 5 });
  // The rows' liveness columns come back with the info, read from the sealed file in the pool
  // thread, so the main thread's commit does not scan the file.
  t.same(info.rows, readRowColumns(seg, 2), 'liveness columns of the sealed file');
  t.same(info.rows.urls, ['https://l.test/3', 'https://l.test/1']);
  t.same([...info.rows.seqs], [3, 4]);
  t.same(info.rows.deletes, [{ seq: 5, at: 20, url: 'https://l.test/2' }]);
  const r = SegmentReader.open(seg);
  t.teardown(() => r.close());
  t.same(r.rows().map((row) => [row.url, row.seq, row.firstAt]), [
    ['https://l.test/3', 3, 10],
    ['https://l.test/1', 4, 10],
  ]);
  t.equal(r.entry(1).doc.content, 'v2 page 1');
  t.ok(r.hasTerm('v2'), 'postings built from the logged text');
});
