/**
 * Word vectors of the built-in embedder: the compact file written once by
 * word-vectors-build.ts, read by any thread (pool workers at segment build, search threads and
 * the main thread for queries). One file read, no JSON: the int8 rows stay in the file's buffer
 * and only the vocabulary becomes a Map.
 *
 * File layout (little endian): `SSWV` magic, u32 version (1), u32 dims, u32 count, u32 vocabulary
 * bytes; the vocabulary (UTF-8, words joined by "\n", by decreasing frequency); zero padding
 * to 4 bytes; dims float32 of the common direction; count × dims int8 (unit vector × 127).
 */
import fs from 'node:fs';

const MAGIC = 0x56575353; // 'SSWV'

/** A loaded word-vector table. Rows are int8; `rank` is the word's frequency rank (0 = most frequent). */
export interface WordVectors {
  dims: number;
  count: number;
  /** word → row (= frequency rank). */
  index: Map<string, number>;
  /** count × dims int8 (unit vectors scaled by 127). */
  rows: Int8Array;
  /** The common direction removed from every text vector (unit length). */
  common: Float32Array;
}

/** Serialises a table (see the file layout above). `rows` are unit vectors, in frequency order. */
export function encodeWordVectors(words: string[], rows: Float32Array[], common: Float32Array): Buffer {
  const dims = common.length;
  const vocab = Buffer.from(words.join('\n'), 'utf8');
  const head = 20;
  const pad = (4 - ((head + vocab.length) % 4)) % 4;
  const buf = Buffer.alloc(head + vocab.length + pad + dims * 4 + words.length * dims);
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(1, 4);
  buf.writeUInt32LE(dims, 8);
  buf.writeUInt32LE(words.length, 12);
  buf.writeUInt32LE(vocab.length, 16);
  vocab.copy(buf, head);
  let off = head + vocab.length + pad;
  for (let i = 0; i < dims; i++, off += 4) buf.writeFloatLE(common[i]!, off);
  for (const r of rows) for (let i = 0; i < dims; i++) buf.writeInt8(Math.max(-127, Math.min(127, Math.round(r[i]! * 127))), off++);
  return buf;
}

/** Parses a table from the bytes of its file (shares the buffer's memory for the rows). */
export function decodeWordVectors(buf: Buffer): WordVectors {
  if (buf.length < 20 || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== 1) throw new Error('not a word-vector file (SSWV v1)');
  const dims = buf.readUInt32LE(8);
  const count = buf.readUInt32LE(12);
  const vlen = buf.readUInt32LE(16);
  const words = buf.toString('utf8', 20, 20 + vlen).split('\n');
  if (words.length !== count) throw new Error('word-vector file: vocabulary size does not match');
  const index = new Map<string, number>();
  words.forEach((w, i) => index.set(w, i));
  let off = 20 + vlen;
  off += (4 - (off % 4)) % 4;
  const common = new Float32Array(dims);
  for (let i = 0; i < dims; i++, off += 4) common[i] = buf.readFloatLE(off);
  const rows = new Int8Array(buf.buffer, buf.byteOffset + off, count * dims);
  return { dims, count, index, rows, common };
}

const loaded = new Map<string, WordVectors>();

/**
 * The table in `file`, read once per thread and kept (every thread that embeds loads it the
 * first time it needs it: about 22 MB for the default 200,000 words).
 *
 * @example
 * const wv = loadWordVectors('dist/embeddings/sg100.wv'); wv.index.get('table'); // a row number
 */
export function loadWordVectors(file: string): WordVectors {
  let wv = loaded.get(file);
  if (!wv) {
    wv = decodeWordVectors(fs.readFileSync(file));
    loaded.set(file, wv);
  }
  return wv;
}
