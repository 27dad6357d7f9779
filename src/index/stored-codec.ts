/**
 * The codec of a segment's large stored text columns (format 6 and later: `docs.headings`,
 * `docs.content`, `docs.body`; segment-format.ts): each value is one self-contained BLOB, so a
 * reader decodes only the rows and columns it reads, and a merge copies the bytes as they are.
 *
 * A packed value is empty for the empty string; otherwise its first byte says how the rest is
 * stored: {@link RAW} (UTF-8, for values deflate does not shrink) or {@link DEFLATE} (raw
 * deflate, level {@link LEVEL}, over the preset dictionary {@link DICTIONARY}). The choice of
 * deflate over brotli and of the level is measured in docs/STORAGE.md. The dictionary and the
 * tags are part of the file format: changing them needs a new segment format.
 *
 * Strings are stored as the UTF-8 bytes better-sqlite3 binds for a TEXT column of the older
 * formats (a lone surrogate as its own three bytes, which read back as three U+FFFD), and a
 * card's prefix is cut where SQLite's `substr` cuts TEXT, so every format reads the same.
 *
 * Any thread; synchronous.
 */
import zlib from 'node:zlib';

/** Tag: UTF-8 bytes follow. */
const RAW = 0;
/** Tag: a raw deflate stream over {@link DICTIONARY} follows. */
const DEFLATE = 1;
/** Deflate level of {@link packText} (docs/STORAGE.md: ratio against build time). */
const LEVEL = 4;

/**
 * Preset dictionary: what short values share (the keys and usual values of a stored page's
 * JSON, the heading markers), so that a short row compresses from its first byte. Deflate
 * matches best at the dictionary's end, so the most common strings come last.
 */
const DICTIONARY = Buffer.from(
  'xqzend xqzbeg  xqzend "description":"","message":"","source":"crawler","source":"api",' +
    '"documentType":"PDF","documentType":"HTML","contentGroup":"","imageUrl":null,"dataPoints":[],"filters":[],' +
    '"boost":1,"keywords":[],"language":null,"headings":[],"source":"api","status":200}{"url":"https://www.',
  'utf8',
);

const INFLATE_OPTS: zlib.ZlibOptions = { dictionary: DICTIONARY };
const DEFLATE_OPTS: zlib.ZlibOptions = { level: LEVEL, dictionary: DICTIONARY };
/** Partial inflation of a prefix of the stream: whatever its bytes decode to, no error at their end. */
const PARTIAL_OPTS: zlib.ZlibOptions = { dictionary: DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH };

const EMPTY = Buffer.alloc(0);

/** One or more UTF-16 surrogates (paired or not). */
const SURROGATE = /[\ud800-\udfff]/;

/**
 * The UTF-8 bytes of `s` as better-sqlite3 binds a string to a TEXT column: a surrogate pair as
 * its code point, a lone surrogate as the three-byte form of its code unit (Buffer.from would
 * write U+FFFD instead).
 */
function textBytes(s: string): Buffer {
  if (!SURROGATE.test(s)) return Buffer.from(s, 'utf8');
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      i++;
      continue;
    }
    parts.push(Buffer.from(s.slice(start, i), 'utf8'), Buffer.from([0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]));
    start = i + 1;
  }
  parts.push(Buffer.from(s.slice(start), 'utf8'));
  return Buffer.concat(parts);
}

/**
 * A stored text value as the packed BLOB of format 6.
 *
 * @example
 * unpackText(packText('Vacuum reclaims storage')) === 'Vacuum reclaims storage'
 */
export function packText(s: string): Buffer {
  return packBytes(textBytes(s));
}

/**
 * UTF-8 bytes as a packed value: a merge packs the TEXT of an older format's row from its bytes
 * (`CAST(col AS BLOB)`), so that bytes no string could carry (a lone surrogate's) stay as they were.
 */
export function packBytes(utf8: Uint8Array): Buffer {
  if (utf8.length === 0) return EMPTY;
  const z = utf8.length > 8 ? zlib.deflateRawSync(utf8, DEFLATE_OPTS) : null;
  if (z && z.length < utf8.length) {
    const out = Buffer.allocUnsafe(z.length + 1);
    out[0] = DEFLATE;
    z.copy(out, 1);
    return out;
  }
  const out = Buffer.allocUnsafe(utf8.length + 1);
  out[0] = RAW;
  out.set(utf8, 1);
  return out;
}

/** The UTF-8 bytes of a packed value (a view of `b` when stored raw). */
export function unpackBytes(b: Uint8Array): Buffer {
  if (b.length === 0) return EMPTY;
  const body = Buffer.from(b.buffer, b.byteOffset + 1, b.byteLength - 1);
  if (b[0] === RAW) return body;
  if (b[0] === DEFLATE) return zlib.inflateRawSync(body, INFLATE_OPTS);
  throw new Error(`stored text: unknown tag ${b[0]}`);
}

/** The text of a value {@link packText} packed. Throws on a tag it does not know. */
export function unpackText(b: Uint8Array): string {
  return unpackBytes(b).toString('utf8');
}

/**
 * A stored text column's value as text, whatever the file's format: a BLOB is a packed value
 * (format 6 and later), a string a TEXT column of an older format, null stays ''.
 */
export function storedText(v: string | Uint8Array | null | undefined): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : unpackText(v);
}

/**
 * The byte length of the first `n` characters of UTF-8 `b` as SQLite's `substr` counts them (a
 * lead byte and the continuation bytes after it; any other byte alone; a NUL byte ends the
 * text), or -1 when `b` is not `whole` and ends before that is certain.
 */
function prefixEnd(b: Uint8Array, n: number, whole: boolean): number {
  let i = 0;
  for (let k = 0; k < n; k++) {
    if (i >= b.length) return whole ? i : -1;
    if (b[i] === 0) return i;
    if (b[i++]! >= 0xc0) while (i < b.length && (b[i]! & 0xc0) === 0x80) i++;
  }
  return whole || i < b.length ? i : -1;
}

/**
 * `substr(text, 1, n)` of a packed value, as SQLite gives it of the TEXT of older formats,
 * without inflating more of a long value than the prefix needs: a result card shows the first
 * few thousand characters of pages that may hold hundreds of thousands. Inflates growing
 * prefixes of the stream (half a byte per character wanted at first: text compresses about
 * threefold) until one holds `n` whole characters.
 *
 * @example
 * unpackPrefix(packText('Vacuum reclaims storage'), 6) === 'Vacuum'
 */
export function unpackPrefix(b: Uint8Array, n: number): string {
  if (b.length > 0 && b[0] === DEFLATE) {
    for (let want = (n >> 1) + 64; want < b.length - 1; want *= 4) {
      const part = zlib.inflateRawSync(Buffer.from(b.buffer, b.byteOffset + 1, want), PARTIAL_OPTS);
      const end = prefixEnd(part, n, false);
      if (end >= 0) return part.toString('utf8', 0, end);
    }
  }
  const all = unpackBytes(b);
  return all.toString('utf8', 0, prefixEnd(all, n, true));
}
