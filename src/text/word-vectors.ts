/**
 * Word vectors of the built-in embedder: the compact file written once by
 * word-vectors-build.ts, read by any thread (pool workers at segment build, search threads and
 * the main thread for queries). One file read, no JSON: the table lives in one SharedArrayBuffer
 * (rows, vocabulary, hash index) that the server's threads share ({@link sharedWordVectors},
 * {@link adoptWordVectors}), so it counts once in the memory budget (src/core/memory.ts).
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
  /** word → row (= frequency rank); a hash table over the shared vocabulary, no per-word JS string. */
  index: { get(word: string): number | undefined };
  /** count × dims int8 (unit vectors scaled by 127). */
  rows: Int8Array;
  /** The common direction removed from every text vector (unit length). */
  common: Float32Array;
  /** Bytes of the table (rows, vocabulary and its hash index), held once per process. */
  bytes: number;
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

/**
 * A table in one SharedArrayBuffer: rows, common direction, the vocabulary as UTF-16 code units
 * with their offsets, and an open-addressing hash index over it. Threads share the buffer
 * (worker data), so the process holds one copy (about 25 MB for the built-in table) whatever
 * the number of threads that embed; a per-thread `Map` of 200,000 words cost each thread 14 MB
 * of V8 heap plus its own 21 MB copy of the rows.
 */
export interface SharedWordVectors {
  dims: number;
  count: number;
  buffer: SharedArrayBuffer;
  /** Byte offsets of the parts in `buffer`. */
  at: { rows: number; common: number; offsets: number; slots: number; slotCount: number; chars: number; charCount: number };
}

/** FNV-1a over UTF-16 code units (the vocabulary index's hash). */
function hashWord(w: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Builds the shared table from a file's header fields, vocabulary and a reader of its trailing bytes. */
function buildShared(dims: number, count: number, words: string[], readTail: (into: Uint8Array, from: number) => void, tailOffset: number): SharedWordVectors {
  if (words.length !== count) throw new Error('word-vector file: vocabulary size does not match');
  let charCount = 0;
  for (const w of words) charCount += w.length;
  let slotCount = 1;
  while (slotCount < count * 2) slotCount <<= 1;
  const align4 = (x: number) => (x + 3) & ~3;
  const rowsAt = 0;
  const commonAt = align4(count * dims);
  const offsetsAt = commonAt + dims * 4;
  const slotsAt = offsetsAt + (count + 1) * 4;
  const charsAt = slotsAt + slotCount * 4;
  const buffer = new SharedArrayBuffer(align4(charsAt + charCount * 2));
  // The file holds the common direction (float32) then the rows: read both in place.
  const bytes = new Uint8Array(buffer);
  const common = new Uint8Array(dims * 4);
  readTail(common, tailOffset);
  bytes.set(common, commonAt);
  readTail(bytes.subarray(rowsAt, rowsAt + count * dims), tailOffset + dims * 4);
  const offsets = new Int32Array(buffer, offsetsAt, count + 1);
  const slots = new Int32Array(buffer, slotsAt, slotCount);
  const chars = new Uint16Array(buffer, charsAt, charCount);
  const mask = slotCount - 1;
  let c = 0;
  for (let r = 0; r < count; r++) {
    const w = words[r]!;
    for (let i = 0; i < w.length; i++) chars[c++] = w.charCodeAt(i);
    offsets[r + 1] = c;
    let h = hashWord(w) & mask;
    // A word listed twice keeps its first (most frequent) row.
    while (slots[h] !== 0 && !sameWord(chars, offsets, slots[h]! - 1, w)) h = (h + 1) & mask;
    if (slots[h] === 0) slots[h] = r + 1;
  }
  return { dims, count, buffer, at: { rows: rowsAt, common: commonAt, offsets: offsetsAt, slots: slotsAt, slotCount, chars: charsAt, charCount } };
}

/** Whether row `r` (whose end offset is set) of the vocabulary spells `w`. */
function sameWord(chars: Uint16Array, offsets: Int32Array, r: number, w: string): boolean {
  const from = offsets[r]!;
  if (offsets[r + 1]! - from !== w.length) return false;
  for (let i = 0; i < w.length; i++) if (chars[from + i] !== w.charCodeAt(i)) return false;
  return true;
}

/** The {@link WordVectors} view of a shared table (no copy). */
export function wordVectorsView(s: SharedWordVectors): WordVectors {
  const offsets = new Int32Array(s.buffer, s.at.offsets, s.count + 1);
  const slots = new Int32Array(s.buffer, s.at.slots, s.at.slotCount);
  const chars = new Uint16Array(s.buffer, s.at.chars, s.at.charCount);
  const mask = s.at.slotCount - 1;
  const index = {
    get(w: string): number | undefined {
      for (let h = hashWord(w) & mask; ; h = (h + 1) & mask) {
        const v = slots[h]!;
        if (v === 0) return undefined;
        const r = v - 1;
        const from = offsets[r]!;
        if (offsets[r + 1]! - from !== w.length) continue;
        let i = 0;
        while (i < w.length && chars[from + i] === w.charCodeAt(i)) i++;
        if (i === w.length) return r;
      }
    },
  };
  return { dims: s.dims, count: s.count, index, rows: new Int8Array(s.buffer, s.at.rows, s.count * s.dims), common: new Float32Array(s.buffer, s.at.common, s.dims), bytes: s.buffer.byteLength };
}

interface Header {
  dims: number;
  count: number;
  vlen: number;
  /** Where the common direction starts (after the vocabulary and its padding). */
  tail: number;
}

function header(head: Buffer): Header {
  if (head.length < 20 || head.readUInt32LE(0) !== MAGIC || head.readUInt32LE(4) !== 1) throw new Error('not a word-vector file (SSWV v1)');
  const vlen = head.readUInt32LE(16);
  const tail = 20 + vlen + ((4 - ((20 + vlen) % 4)) % 4);
  return { dims: head.readUInt32LE(8), count: head.readUInt32LE(12), vlen, tail };
}

/** Parses a table from the bytes of its file (into a new shared table). */
export function decodeWordVectors(buf: Buffer): WordVectors {
  return wordVectorsView(decodeShared(buf));
}

function decodeShared(buf: Buffer): SharedWordVectors {
  const h = header(buf);
  const need = h.tail + h.dims * 4 + h.count * h.dims;
  if (buf.length < need) throw new Error('word-vector file: truncated');
  const words = h.count === 0 ? [] : buf.toString('utf8', 20, 20 + h.vlen).split('\n');
  return buildShared(h.dims, h.count, words, (into, from) => into.set(buf.subarray(from, from + into.length)), h.tail);
}

/** Reads a table file straight into its shared buffer (the rows are never copied through a Buffer). */
function readShared(file: string): SharedWordVectors {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(20);
    fs.readSync(fd, head, 0, 20, 0);
    const h = header(head);
    const size = fs.fstatSync(fd).size;
    if (size < h.tail + h.dims * 4 + h.count * h.dims) throw new Error('word-vector file: truncated');
    const vocab = Buffer.alloc(h.vlen);
    fs.readSync(fd, vocab, 0, h.vlen, 20);
    const words = h.count === 0 ? [] : vocab.toString('utf8').split('\n');
    return buildShared(h.dims, h.count, words, (into, from) => {
      for (let done = 0; done < into.length; ) {
        const n = fs.readSync(fd, into, done, into.length - done, from + done);
        if (n <= 0) throw new Error('word-vector file: truncated');
        done += n;
      }
    }, h.tail);
  } finally {
    fs.closeSync(fd);
  }
}

const loaded = new Map<string, { shared: SharedWordVectors; view: WordVectors }>();

/**
 * The table in `file`, read once per process and kept: the first thread that needs it reads
 * it (about 25 MB for the default 200,000 words), and threads started with
 * {@link adoptWordVectors} share that copy. A thread that loads a table nobody shared with it
 * reads its own copy.
 *
 * @example
 * const wv = loadWordVectors('dist/embeddings/sg100.wv'); wv.index.get('table'); // a row number
 */
export function loadWordVectors(file: string): WordVectors {
  let t = loaded.get(file);
  if (!t) {
    const shared = readShared(file);
    t = { shared, view: wordVectorsView(shared) };
    loaded.set(file, t);
  }
  return t.view;
}

/**
 * The tables this thread has loaded, to hand to threads it starts (worker data): they
 * {@link adoptWordVectors} them and share the memory instead of reading the file again.
 *
 * @example createPool({ workers: 2, workerData: { wordVectors: sharedWordVectors() } })
 */
export function sharedWordVectors(): Record<string, SharedWordVectors> {
  return Object.fromEntries([...loaded].map(([file, t]) => [file, t.shared]));
}

/** Registers tables another thread loaded ({@link sharedWordVectors}); later loads of those files use them. */
export function adoptWordVectors(tables: Record<string, SharedWordVectors> | undefined | null): void {
  for (const [file, shared] of Object.entries(tables ?? {})) {
    if (!loaded.has(file) && shared?.buffer instanceof SharedArrayBuffer) loaded.set(file, { shared, view: wordVectorsView(shared) });
  }
}

/** Bytes of the word-vector tables loaded in this process (each counted once; `GET /admin/memory`). */
export function wordVectorsBytes(): number {
  let n = 0;
  for (const t of loaded.values()) n += t.shared.buffer.byteLength;
  return n;
}
