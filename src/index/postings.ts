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
  /**
   * tfs[i * NFIELDS + f]. One byte per count when every count of the list is below 256 (nearly
   * every list: titles, headings and most pages repeat a word far fewer times), else two.
   */
  tfs: Uint8Array | Uint16Array;
}

// Decode scratch, grown to the longest list decoded so far: the lists kept in caches are
// copies sized to the list (exact, or a pool's size class), not to a guess of its length.
let scratchIds = new Int32Array(1024);
let scratchTfs = new Uint16Array(1024 * NFIELDS);

/**
 * Decodes one postings blob into exact-size arrays. Throws a RangeError when the blob is
 * truncated.
 */
export function decodePostings(buf: Uint8Array): Postings {
  const { n, wide } = decodeToScratch(buf);
  const outTfs = wide ? new Uint16Array(n * NFIELDS) : new Uint8Array(n * NFIELDS);
  outTfs.set(scratchTfs.subarray(0, n * NFIELDS));
  return { ids: scratchIds.slice(0, n), tfs: outTfs };
}

/**
 * Decodes one postings blob into buffers from `take` (a pool: each at least the bytes asked
 * for), the arrays being views of their first bytes; returns the list and the two buffers
 * (ids, then tfs). Same values as {@link decodePostings}.
 *
 * @example
 * const { p, bufs } = decodePostingsInto(blob, (bytes) => postingsPool.take(bytes));
 */
export function decodePostingsInto(buf: Uint8Array, take: (bytes: number) => ArrayBuffer): { p: Postings; bufs: [ArrayBuffer, ArrayBuffer] } {
  const { n, wide } = decodeToScratch(buf);
  const idsBuf = take(n * 4);
  const ids = new Int32Array(idsBuf, 0, n);
  ids.set(scratchIds.subarray(0, n));
  const tfsBuf = take(n * NFIELDS * (wide ? 2 : 1));
  const tfs = wide ? new Uint16Array(tfsBuf, 0, n * NFIELDS) : new Uint8Array(tfsBuf, 0, n * NFIELDS);
  tfs.set(scratchTfs.subarray(0, n * NFIELDS));
  return { p: { ids, tfs }, bufs: [idsBuf, tfsBuf] };
}

/**
 * Decodes `buf` into the scratch arrays: their first `n` ids and n × NFIELDS tfs; `wide` when a
 * tf is 256 or more.
 *
 * The varints are read inline rather than through {@link VarintReader}: this loop runs once per
 * posting of every list a search decodes (tens of thousands per query on a 100k-page site).
 */
function decodeToScratch(buf: Uint8Array): { n: number; wide: boolean } {
  const len = buf.length;
  const cap = Math.ceil(len / 3);
  if (scratchIds.length < cap) {
    scratchIds = new Int32Array(cap);
    scratchTfs = new Uint16Array(cap * NFIELDS);
  }
  const ids = scratchIds;
  const tfs = scratchTfs;
  tfs.fill(0, 0, cap * NFIELDS);
  let pos = 0;
  let n = 0;
  let prev = 0;
  let max = 0;
  while (pos < len) {
    // The id delta.
    let b = buf[pos++]!;
    let v = b & 0x7f;
    for (let shift = 7; b & 0x80; shift += 7) {
      if (pos >= len) throw truncated(pos);
      b = buf[pos++]!;
      v += shift < 28 ? (b & 0x7f) << shift : (b & 0x7f) * 2 ** shift;
    }
    prev += v;
    ids[n] = prev;
    if (pos >= len) throw truncated(pos);
    const mask = buf[pos++]!;
    const at = n * NFIELDS;
    for (let f = 0; f < NFIELDS; f++) {
      if ((mask & (1 << f)) === 0) continue;
      if (pos >= len) throw truncated(pos);
      b = buf[pos++]!;
      let tf = b & 0x7f;
      for (let shift = 7; b & 0x80; shift += 7) {
        if (pos >= len) throw truncated(pos);
        b = buf[pos++]!;
        tf += shift < 28 ? (b & 0x7f) << shift : (b & 0x7f) * 2 ** shift;
      }
      if (tf > 65535) tf = 65535;
      if (tf > max) max = tf;
      tfs[at + f] = tf;
    }
    n++;
  }
  return { n, wide: max >= 256 };
}

function truncated(pos: number): RangeError {
  return new RangeError(`varint buffer truncated at byte ${pos}`);
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

/**
 * The positions blob of a term (`positions` table, format 5 and later): one entry per entry of the term's
 * postings blob, in the same order (so it carries no ids): varint(n), then n bytes of varints,
 * the first position and then the gap to each next one. The byte length (not the count) leads
 * the entry so that phrase matching steps over the entries of pages it does not look at without
 * reading them (a common word's entries hold most of its bytes). Format 4 led each entry with
 * the count instead ({@link PositionsCursor} still reads it). Positions number the words of a page
 * in one sequence — the title's, then each heading's, then the content's (the description has
 * none) — with one unused position between two of these parts, so that a phrase never runs
 * from the title into a heading, from one heading into the next, or into the content. Compound
 * words and the letter/digit parts of mixed words have no position (count 0).
 *
 * Written by the build stage ({@link encodePositions}), filtered by the merge stage
 * ({@link keepPositions}) and read by phrase matching ({@link PositionsCursor}).
 */

/** Bytes {@link putVarint} takes for `v`. */
function varintBytes(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

/**
 * Encodes one entry of a positions blob at `out[at]`: the ascending positions `pos[from, to)`.
 * Returns the position after it; `out` must hold (to − from + 1) × {@link MAX_VARINT_BYTES}
 * bytes from `at`.
 *
 * @example
 * const end = encodePositions(scratch, 0, positions, 0, n);
 */
export function encodePositions(out: Uint8Array, at: number, pos: Int32Array, from: number, to: number): number {
  let len = 0;
  let prev = 0;
  for (let k = from; k < to; k++) {
    len += varintBytes(pos[k]! - prev);
    prev = pos[k]!;
  }
  at = putVarint(out, at, len);
  prev = 0;
  for (let k = from; k < to; k++) {
    at = putVarint(out, at, pos[k]! - prev);
    prev = pos[k]!;
  }
  return at;
}

/**
 * Appends to `w` the entries of a source's positions blob `pos` whose row survives the merge,
 * walking the source's postings blob `post` alongside it for the rows' ids (`map[oldId]` ≥ 0:
 * kept). Entries carry no ids, so kept runs are copied as bytes. Returns how many entries were
 * kept and whether one of them holds a position. `pos` null: the source has no positions for
 * this term, and each kept entry is written as count 0.
 */
export function keepPositions(pos: Uint8Array | null, post: Uint8Array, map: Int32Array, w: ByteWriter): { kept: number; any: boolean } {
  const pr = new VarintReader(post);
  const r = pos ? new VarintReader(pos) : null;
  let old = 0;
  let kept = 0;
  let any = false;
  let run = -1;
  while (!pr.done) {
    old += pr.varint();
    const mask = pr.byte();
    for (let f = 0; f < NFIELDS; f++) if (mask & (1 << f)) pr.skipVarint();
    const keep = map[old]! >= 0;
    if (!r) {
      if (keep) {
        w.varint(0);
        kept++;
      }
      continue;
    }
    const entry = r.pos;
    const len = r.varint();
    r.pos += len;
    if (keep) {
      if (run < 0) run = entry;
      kept++;
      if (len > 0) any = true;
    } else if (run >= 0) {
      w.copy(pos!, run, entry);
      run = -1;
    }
  }
  if (r && run >= 0) w.copy(pos!, run, r.pos);
  if (r && r.pos !== pos!.length) throw new RangeError('positions blob does not match its postings');
  return { kept, any };
}

/**
 * Reads the entries of one positions blob forward, by the index of their postings entry
 * (phrase matching visits a term's documents in id order, so each blob is read once).
 * `countLed`: the blob is format 4's (entries led by their count, not their byte length).
 *
 * @example
 * const c = new PositionsCursor(blob);
 * const ps = c.at(3); // positions in the document of postings entry 3 (a view valid until the next call)
 */
export class PositionsCursor {
  private readonly r: VarintReader;
  /** Index of the entry `r` stands at. */
  private next = 0;
  private out = new Int32Array(16);

  constructor(
    blob: Uint8Array,
    private readonly countLed = false,
  ) {
    this.r = new VarintReader(blob);
  }

  /** The positions of entry `k`, ascending; `k` never goes back between calls. */
  at(k: number): Int32Array {
    const r = this.r;
    if (k < this.next) throw new RangeError(`positions entry ${k} read after entry ${this.next - 1}`);
    for (; this.next < k; this.next++) {
      const n = r.varint();
      if (!this.countLed) r.pos += n;
      else for (let j = 0; j < n; j++) r.skipVarint();
    }
    this.next++;
    let n = 0;
    let p = 0;
    if (this.countLed) {
      const count = r.varint();
      this.out = withCapacity(this.out, 0, count);
      for (; n < count; n++) this.out[n] = p += r.varint();
    } else {
      const end = r.varint() + r.pos;
      const buf = r.buf;
      if (end > buf.length) throw new RangeError(`positions entry ends at byte ${end}, past the blob's ${buf.length}`);
      // The hot loop of phrase matching: varints read straight from the bytes (positions stay
      // far below 2^28, four groups of seven bits), the bounds checked once for the entry.
      let i = r.pos;
      let out = this.out;
      while (i < end) {
        let b = buf[i++]!;
        let v = b & 0x7f;
        for (let shift = 7; b & 0x80; shift += 7) {
          b = buf[i++]!;
          v |= (b & 0x7f) << shift;
        }
        if (n === out.length) out = this.out = withCapacity(out, n, n + 1);
        out[n++] = p += v;
      }
      if (i !== end) throw new RangeError('positions entry overruns its length');
      r.pos = i;
    }
    return this.out.subarray(0, n);
  }
}

/**
 * Whether the word lists `lists[0..n)` (each ascending) hold a run p, p+1, …, p+n−1 with p in
 * `lists[0]` and p+i in `lists[i]`: a phrase of n words at consecutive positions.
 */
export function consecutive(lists: Int32Array[]): boolean {
  const first = lists[0]!;
  const ptr = new Int32Array(lists.length);
  outer: for (let a = 0; a < first.length; a++) {
    const p = first[a]!;
    for (let i = 1; i < lists.length; i++) {
      const l = lists[i]!;
      let j = ptr[i]!;
      while (j < l.length && l[j]! < p + i) j++;
      ptr[i] = j;
      if (j === l.length) return false;
      if (l[j] !== p + i) continue outer;
    }
    return true;
  }
  return false;
}
