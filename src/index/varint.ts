/**
 * Unsigned LEB128 varints, the integer encoding of segment postings: seven bits per byte, low
 * group first, the high bit set on every byte but the last. Every varint of the segment format
 * is written by {@link putVarint} and read by {@link VarintReader}; nothing else encodes or
 * decodes them.
 *
 * Any thread; no I/O. Values are non-negative integers up to `Number.MAX_SAFE_INTEGER`; below
 * 2^32 the bit operations stay in 32-bit integers (the common case: ids, deltas and term
 * frequencies), above it the arithmetic goes through doubles.
 */

/** Most bytes one varint takes (2^53 − 1 needs eight groups of seven bits). */
export const MAX_VARINT_BYTES = 8;

/**
 * Writes `v` as a varint at `buf[at]` and returns the position after it. The caller makes sure
 * {@link MAX_VARINT_BYTES} bytes fit (five for values below 2^32).
 *
 * @example
 * const buf = new Uint8Array(MAX_VARINT_BYTES);
 * const end = putVarint(buf, 0, 300); // buf[0..end) = [0xac, 0x02], end = 2
 */
export function putVarint(buf: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    // `& 0x7f` keeps the low seven bits of any safe integer (ToInt32 is modulo 2^32).
    buf[at++] = (v & 0x7f) | 0x80;
    v = v < 0x100000000 ? v >>> 7 : Math.floor(v / 0x80);
  }
  buf[at++] = v;
  return at;
}

/**
 * A read position in a byte buffer holding varints and single bytes (a postings blob). Reads
 * past the end throw a RangeError, so a truncated or corrupt buffer never decodes silently into
 * wrong numbers.
 *
 * @example
 * const r = new VarintReader(blob);
 * while (!r.done) { const delta = r.varint(); const mask = r.byte(); … }
 */
export class VarintReader {
  readonly buf: Uint8Array;
  /** Position of the next unread byte. */
  pos: number;

  constructor(buf: Uint8Array, pos = 0) {
    this.buf = buf;
    this.pos = pos;
  }

  /** Whether every byte has been read. */
  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  /** Reads one varint. */
  varint(): number {
    let b = this.byte();
    if (b < 0x80) return b;
    let v = b & 0x7f;
    let shift = 7;
    do {
      b = this.byte();
      // Up to four groups (28 bits) fit a 32-bit shift; beyond, multiply in doubles.
      v += shift < 28 ? (b & 0x7f) << shift : (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return v;
  }

  /** Steps over one varint without computing its value. */
  skipVarint(): void {
    while (this.byte() & 0x80);
  }

  /** Reads one plain byte. */
  byte(): number {
    if (this.pos >= this.buf.length) throw new RangeError(`varint buffer truncated at byte ${this.pos}`);
    return this.buf[this.pos++]!;
  }
}
