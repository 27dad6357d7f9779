/**
 * The postings blob of a segment's `terms` row: for each document holding the term, in id
 * order, varint(id − previous id) (the first: the id itself), one field-mask byte (bit f: the
 * term occurs in FIELDS[f]), then varint(tf) for each field in the mask. The four short fields'
 * tfs are capped at 127 and content's at 65535. Entries take at least three bytes.
 *
 * Written by the build stage ({@link encodePosting}), renumbered by the merge stage
 * ({@link remapPostings}) and read by the search side ({@link decodePostings}); the varints go
 * through varint.ts. Any thread; no I/O.
 */
import { NFIELDS } from './segment-format.js';
import { MAX_VARINT_BYTES, VarintReader, putVarint } from './varint.js';

/** Most bytes one encoded entry takes (id delta, mask, a tf per field of at most 65535). */
export const MAX_POSTING_BYTES = MAX_VARINT_BYTES + 1 + NFIELDS * 3;

/** Highest tf stored for a short field (title, keywords, headings, url): one varint byte. */
const SHORT_FIELD_TF_CAP = 127;
const CONTENT = NFIELDS - 1;

/**
 * Encodes one entry at `out[0]`: the id `delta` and the per-field counts `tfs[at, at + NFIELDS)`
 * (zero: the term is not in that field). Returns the entry's length; `out` must hold
 * {@link MAX_POSTING_BYTES}.
 *
 * @example
 * const n = encodePosting(scratch, docId - lastDocId, counts, t * NFIELDS);
 * pool.append(term, scratch, n);
 */
export function encodePosting(out: Uint8Array, delta: number, tfs: Uint16Array, at: number): number {
  let n = putVarint(out, 0, delta);
  const maskAt = n++;
  let mask = 0;
  for (let f = 0; f < NFIELDS; f++) {
    const tf = f === CONTENT ? tfs[at + f]! : Math.min(tfs[at + f]!, SHORT_FIELD_TF_CAP);
    if (tf === 0) continue;
    mask |= 1 << f;
    n = putVarint(out, n, tf);
  }
  out[maskAt] = mask;
  return n;
}

/** Decoded postings of one term in one segment (all rows, dead ones included). */
export interface Postings {
  ids: Int32Array;
  /** tfs[i * NFIELDS + f] */
  tfs: Uint16Array;
}

/** Decodes one postings blob. Throws a RangeError when the blob is truncated. */
export function decodePostings(buf: Uint8Array): Postings {
  const cap = Math.ceil(buf.length / 3);
  const ids = new Int32Array(cap);
  const tfs = new Uint16Array(cap * NFIELDS);
  const r = new VarintReader(buf);
  let n = 0;
  let prev = 0;
  while (!r.done) {
    prev += r.varint();
    ids[n] = prev;
    const mask = r.byte();
    for (let f = 0; f < NFIELDS; f++) if (mask & (1 << f)) tfs[n * NFIELDS + f] = Math.min(r.varint(), 65535);
    n++;
  }
  return { ids: ids.subarray(0, n), tfs: tfs.subarray(0, n * NFIELDS) };
}

/**
 * `a` itself when it holds `need` elements, else a copy of its first `used` elements in an array
 * of the same type at least twice as long: the growth step of every typed buffer of a build.
 *
 * @example
 * this.chars = withCapacity(this.chars, this.charsUsed, this.charsUsed + word.length);
 */
export function withCapacity<T extends Uint8Array | Uint16Array | Int32Array>(a: T, used: number, need: number): T {
  if (need <= a.length) return a;
  let cap = Math.max(a.length * 2, 1);
  while (cap < need) cap *= 2;
  const next = new (a.constructor as new (length: number) => T)(cap);
  next.set(a.subarray(0, used));
  return next;
}

/** A growable byte buffer for postings being written; one serves a whole merge. */
export class ByteWriter {
  buf = new Uint8Array(64);
  len = 0;
  private ensure(n: number): void {
    this.buf = withCapacity(this.buf, this.len, this.len + n);
  }
  varint(v: number): void {
    this.ensure(MAX_VARINT_BYTES);
    this.len = putVarint(this.buf, this.len, v);
  }
  /** Appends src[start, end) unchanged. */
  copy(src: Uint8Array, start: number, end: number): void {
    this.ensure(end - start);
    this.buf.set(src.subarray(start, end), this.len);
    this.len += end - start;
  }
  /** Empties the writer, keeping its buffer. */
  reset(): void {
    this.len = 0;
  }
  /** The bytes written, as a view (valid until the next write or reset). */
  bytes(): Buffer {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset, this.len);
  }
}

/**
 * Appends the entries of one source's postings blob whose row survives the merge (`map[oldId]`
 * ≥ 0) to `w`, renumbered, and returns the new last id and how many entries it kept. Nothing is
 * decoded into arrays and re-encoded: mask and tf varints do not change with the id, and an id
 * delta that the renumbering leaves equal (consecutive kept rows of a source) is kept too, so
 * runs of entries are copied as bytes and only the delta at the start of a run is rewritten
 * (for a source without dead rows: its first entry). The output is the same bytes a decode and
 * re-encode would give. `prev` = the last id already in `w`.
 */
export function remapPostings(buf: Uint8Array, map: Int32Array, w: ByteWriter, prev: number): { prev: number; df: number } {
  const r = new VarintReader(buf);
  let old = 0;
  let df = 0;
  // Start of the bytes not yet copied that belong to kept entries (-1: none pending).
  let run = -1;
  while (!r.done) {
    const entry = r.pos;
    const delta = r.varint();
    old += delta;
    const afterDelta = r.pos;
    const mask = r.byte();
    for (let f = 0; f < NFIELDS; f++) if (mask & (1 << f)) r.skipVarint();
    const id = map[old]!;
    if (id < 0) {
      if (run >= 0) w.copy(buf, run, entry);
      run = -1;
      continue;
    }
    if (run < 0 || id - prev !== delta) {
      if (run >= 0) w.copy(buf, run, entry);
      w.varint(id - prev);
      run = afterDelta;
    }
    prev = id;
    df++;
  }
  if (run >= 0) w.copy(buf, run, r.pos);
  return { prev, df };
}
