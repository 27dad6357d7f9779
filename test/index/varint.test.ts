import t from 'tap';
import { MAX_VARINT_BYTES, VarintReader, putVarint } from '../../src/index/varint.js';
import { decodePostings, decodePostingsInto, encodePosting, remapPostings, ByteWriter, MAX_POSTING_BYTES } from '../../src/index/postings.js';
import { NFIELDS } from '../../src/index/segment-format.js';

/** Value → its bytes, low group first. */
const TABLE: Array<[number, number[]]> = [
  [0, [0x00]],
  [1, [0x01]],
  [127, [0x7f]],
  [128, [0x80, 0x01]],
  [300, [0xac, 0x02]],
  [2 ** 21 - 1, [0xff, 0xff, 0x7f]],
  [2 ** 28, [0x80, 0x80, 0x80, 0x80, 0x01]],
  [2 ** 32 - 1, [0xff, 0xff, 0xff, 0xff, 0x0f]],
  [2 ** 32 + 5, [0x85, 0x80, 0x80, 0x80, 0x10]],
  [Number.MAX_SAFE_INTEGER, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]],
];

t.test('varints: each edge value encodes to its bytes and decodes back', async (t) => {
  for (const [value, bytes] of TABLE) {
    const buf = new Uint8Array(MAX_VARINT_BYTES);
    const end = putVarint(buf, 0, value);
    t.same([...buf.subarray(0, end)], bytes, `${value} encodes`);
    const r = new VarintReader(Uint8Array.from(bytes));
    t.equal(r.varint(), value, `${value} decodes`);
    t.ok(r.done, `${value}: every byte read`);
  }
});

t.test('varints back to back, skipped or read, leave the reader at the same positions', async (t) => {
  const buf = new Uint8Array(TABLE.length * MAX_VARINT_BYTES);
  let end = 0;
  for (const [value] of TABLE) end = putVarint(buf, end, value);
  const read = new VarintReader(buf.subarray(0, end));
  const skip = new VarintReader(buf.subarray(0, end));
  for (const [value] of TABLE) {
    t.equal(read.varint(), value);
    skip.skipVarint();
    t.equal(skip.pos, read.pos);
  }
  t.ok(read.done);
});

t.test('a truncated buffer throws instead of decoding a wrong number', async (t) => {
  const two = Uint8Array.from([0x80, 0x01]);
  t.throws(() => new VarintReader(two.subarray(0, 1)).varint(), RangeError, 'continuation bit on the last byte');
  t.throws(() => new VarintReader(two.subarray(0, 1)).skipVarint(), RangeError, 'skipping it too');
  t.throws(() => new VarintReader(new Uint8Array(0)).varint(), RangeError, 'empty buffer');
  t.throws(() => new VarintReader(new Uint8Array(0)).byte(), RangeError, 'a plain byte past the end');
  // A postings entry cut after its id delta (the mask byte is missing).
  t.throws(() => decodePostings(Uint8Array.from([0x05])), RangeError);
});

t.test('postings entries: encode, decode and renumber', async (t) => {
  const tfs = new Uint16Array(3 * NFIELDS);
  tfs.set([2, 0, 0, 1, 0], 0); // doc 3: title 2, url 1
  tfs.set([0, 0, 0, 0, 900], NFIELDS); // doc 200: content 900
  tfs.set([500, 0, 0, 0, 1], 2 * NFIELDS); // doc 70000: title capped at 127
  const ids = [3, 200, 70_000];
  const out = new ByteWriter();
  const scratch = new Uint8Array(64);
  let prev = 0;
  ids.forEach((id, i) => {
    const n = encodePosting(scratch, id - prev, tfs, i * NFIELDS);
    out.copy(scratch, 0, n);
    prev = id;
  });
  const blob = Uint8Array.from(out.bytes());
  const p = decodePostings(blob);
  t.same([...p.ids], ids);
  t.same([...p.tfs], [2, 0, 0, 1, 0, 0, 0, 0, 0, 900, 127, 0, 0, 0, 1]);
  // Renumbered as a merge does: doc 200 dropped, 3 → 0 and 70000 → 1.
  const map = new Int32Array(70_001).fill(-1);
  map[3] = 0;
  map[70_000] = 1;
  const w = new ByteWriter();
  const r = remapPostings(blob, map, w, 0);
  t.same(r, { prev: 1, df: 2 });
  const q = decodePostings(Uint8Array.from(w.bytes()));
  t.same([...q.ids], [0, 1]);
  t.same([...q.tfs], [2, 0, 0, 1, 0, 127, 0, 0, 0, 1]);
});

t.test('decoded postings: exact-size arrays, one byte per count below 256, two otherwise', async (t) => {
  const encode = (rows: Array<[number, number[]]>) => {
    const out = new ByteWriter();
    const scratch = new Uint8Array(64);
    const tfs = new Uint16Array(NFIELDS);
    let prev = 0;
    for (const [id, counts] of rows) {
      tfs.set(counts);
      out.copy(scratch, 0, encodePosting(scratch, id - prev, tfs, 0));
      prev = id;
    }
    return Uint8Array.from(out.bytes());
  };
  const small = decodePostings(encode([[1, [1, 0, 0, 0, 3]], [9, [0, 0, 0, 0, 255]]]));
  t.ok(small.tfs instanceof Uint8Array, 'counts up to 255: bytes');
  t.equal(small.tfs.buffer.byteLength, 2 * NFIELDS, 'the counts hold only their own bytes');
  t.equal(small.ids.buffer.byteLength, 2 * 4, 'the ids hold only their own bytes');
  t.same([...small.tfs], [1, 0, 0, 0, 3, 0, 0, 0, 0, 255]);
  const big = decodePostings(encode([[4, [0, 0, 0, 0, 256]], [5, [2, 0, 0, 0, 0]]]));
  t.ok(big.tfs instanceof Uint16Array, 'a count of 256: two bytes each');
  t.same([...big.tfs], [0, 0, 0, 0, 256, 2, 0, 0, 0, 0]);
  // A shorter list decoded after a longer one: no counts of the earlier list leak into it.
  const again = decodePostings(encode([[7, [0, 1, 0, 0, 0]]]));
  t.same([...again.tfs], [0, 1, 0, 0, 0]);
});

t.test('decodePostingsInto: the same list in recycled buffers, whatever they held before', async (t) => {
  const out = new ByteWriter();
  const scratch = new Uint8Array(MAX_POSTING_BYTES);
  const tfs = new Uint16Array(NFIELDS);
  const rows: Array<[number, number[]]> = Array.from({ length: 300 }, (_, i) => [i * 3 + 1, [i % 2, 0, i % 5 === 0 ? 2 : 0, 0, 1 + (i % 7)]]);
  rows[100]![1][4] = 300;
  let prev = 0;
  for (const [id, counts] of rows) {
    tfs.set(counts);
    out.copy(scratch, 0, encodePosting(scratch, id - prev, tfs, 0));
    prev = id;
  }
  const blob = Uint8Array.from(out.bytes());
  // Dirty buffers, larger than asked for: every byte the views cover must be written.
  const taken: number[] = [];
  const dirty = (bytes: number) => {
    taken.push(bytes);
    return new Uint8Array(bytes + 64).fill(0xab).buffer;
  };
  const { p, bufs } = decodePostingsInto(blob, dirty);
  const fresh = decodePostings(blob);
  t.same([...p.ids], [...fresh.ids]);
  t.same([...p.tfs], [...fresh.tfs]);
  t.ok(p.tfs instanceof Uint16Array, 'a count over 255: two bytes each, as decodePostings');
  t.equal(p.ids.buffer, bufs[0]);
  t.equal(p.tfs.buffer, bufs[1]);
  t.same(taken, [300 * 4, 300 * NFIELDS * 2], 'asks for what the list needs');
});
