import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, doc } from './helpers.js';
import { WriteLog, decodeLine, decodeLogFile, encodeBatch, peekLineSeq, readLogLines } from '../../src/index/write-log.js';

t.test('group commit: concurrent appends share fsyncs, apply in seq order', async (t) => {
  const dir = path.join(tempDir(t), 'wal');
  const { log, ops } = WriteLog.open(dir);
  t.same(ops, []);
  const applied: number[] = [];
  const appends = Array.from({ length: 50 }, (_, i) =>
    log.append({ seq: i + 1, at: 1, ops: [{ op: 'delete', url: `https://w.test/${i}` }] }, () => applied.push(i + 1)),
  );
  await Promise.all(appends);
  t.same(applied, Array.from({ length: 50 }, (_, i) => i + 1), 'onDurable runs in append order');
  t.ok(log.syncs < 50, `${log.syncs} fsyncs for 50 concurrent appends`);
  log.rotate();
  await log.append({ seq: 51, at: 2, ops: [{ op: 'upsert', doc: doc('https://w.test/x', 'x') }] }, () => undefined);
  t.equal(log.fileNames().length, 2, 'rotation starts a new file');
  t.equal(log.deleteCovered(50), 1, 'the file holding seqs 1..50 is covered by committedSeq 50');
  t.equal(log.fileNames().length, 1);
  await log.close();
  const reopened = WriteLog.open(dir);
  t.same(reopened.ops.map((o) => o.seq), [51]);
  await reopened.log.append({ seq: 52, at: 3, ops: [{ op: 'delete', url: 'https://w.test/x' }] }, () => undefined);
  t.equal(reopened.log.fileNames().length, 2, 'never appends to a file from before the restart');
  await reopened.log.close();
});

t.test('decode: torn tail, zero padding and checksum mismatches are skipped', async (t) => {
  const a = encodeBatch({ seq: 1, at: 1, ops: [{ op: 'delete', url: 'a' }] });
  const b = encodeBatch({ seq: 2, at: 1, ops: [{ op: 'delete', url: 'b' }] });
  const bad = Buffer.from(b);
  bad[12] = bad[12]! ^ 4;
  const decoded = decodeLogFile(Buffer.concat([a, bad, Buffer.alloc(10), Buffer.from('\n'), b, a.subarray(0, 5)]));
  t.same(decoded.batches.map((x) => x.seq), [1, 2]);
  t.equal(decoded.skipped, 3);
});

t.test('a batch is one line: a torn multi-op batch is dropped whole', async (t) => {
  const dir = path.join(tempDir(t), 'wal');
  fs.mkdirSync(dir);
  const batch = encodeBatch({ seq: 1, at: 1, ops: [{ op: 'delete', url: 'a' }, { op: 'delete', url: 'b' }, { op: 'delete', url: 'c' }] });
  fs.writeFileSync(path.join(dir, '1.log'), batch.subarray(0, batch.length - 2));
  const { ops, skipped } = WriteLog.open(dir);
  t.same(ops, []);
  t.equal(skipped, 1);
});

t.test('readLogLines streams complete lines across chunk boundaries and drops a torn tail', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'x.log');
  const lines = [1, 2, 3].map((i) => encodeBatch({ seq: i, at: 1, ops: [{ op: 'upsert', doc: doc(`https://r.test/${i}`, 'word '.repeat(40 * i)) }] }));
  fs.writeFileSync(file, Buffer.concat([...lines, lines[0]!.subarray(0, 20)]));
  // A yielded line is a view valid until the next one is requested: decode as it comes.
  const seqs = (chunk?: number) => {
    const out: Array<number | undefined> = [];
    for (const l of readLogLines(file, chunk)) out.push(decodeLine(l)?.seq);
    return out;
  };
  // Chunks much smaller than a line: every line spans several reads (the buffer grows).
  t.same(seqs(7), [1, 2, 3], 'three whole lines; the torn fourth is not yielded');
  t.same(seqs(), [1, 2, 3], 'same with the default chunk size');
  // A chunk that holds a line and a half: the tail moves to the front of the same buffer.
  t.same(seqs(Math.ceil(lines[0]!.length * 1.5)), [1, 2, 3], 'same when tails carry over');
  t.equal(peekLineSeq(lines[2]!.subarray(0, lines[2]!.length - 1)), 3, 'the first seq is read from the prefix');
  t.equal(peekLineSeq(Buffer.from('garbage')), null);
  const corrupt = Buffer.from(lines[1]!.subarray(0, lines[1]!.length - 1));
  corrupt[20] = corrupt[20]! ^ 1;
  t.equal(decodeLine(corrupt), null, 'a checksum mismatch decodes to null');
  t.throws(() => readLogLines(path.join(dir, 'missing.log')), { code: 'ENOENT' }, 'a missing file throws when opened');
});

t.test('encodeBatch writes JSON.stringify(batch) framed by its CRC, op by op', async (t) => {
  const { crc32 } = await import('node:zlib');
  const big = doc('https://e.test/big', `long ${'wörd 𝒳 "quoted"\\ '.repeat(20_000)}`);
  const batches = [
    { seq: 7, at: 1_700_000_000_123, ops: [] },
    { seq: 1, at: 2, ops: [{ op: 'delete' as const, url: 'https://e.test/a?x="1"' }] },
    { seq: 99, at: 3, ops: [{ op: 'upsert' as const, doc: doc('https://e.test/ü', 'café\n\u2028 text') }, { op: 'upsert' as const, doc: big }, { op: 'delete' as const, url: 'https://e.test/b' }] },
  ];
  for (const b of batches) {
    const json = JSON.stringify(b);
    const line = encodeBatch(b);
    t.equal(line.toString('utf8'), `${crc32(Buffer.from(json)).toString(16).padStart(8, '0')}\t${json}\n`, `seq ${b.seq}: same bytes as the whole-batch encoding`);
    t.same(decodeLine(line.subarray(0, line.length - 1)), b, 'decodes back');
    t.equal(peekLineSeq(line), b.seq);
  }
});
