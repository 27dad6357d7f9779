/**
 * Segment file format. A segment is an immutable SQLite file written once by
 * {@link writeSegment} or {@link mergeSegments} (in a pool worker) and read by
 * SegmentReader (src/index/segment-reader.ts) on the main thread and the search threads.
 *
 * Tables (format 1):
 * - `meta(key, value)`: `format`, counts, seq range, `created`.
 * - `docs(id, url, seq, at, first_at, status, lengths, boost, grp, doc_type, language, filters,
 *   data_points, title, headings, content, image, description, hkeys, body)`: one row per URL,
 *   dense ids 0..n-1. `lengths` = token count of each FIELDS entry; `headings` = the headings
 *   wrapped in boundary markers (for FTS5); `hkeys` = hashes of each heading's folded words;
 *   `body` = the rest of the PageDoc as JSON (title and content live in their columns for
 *   searchable rows).
 * - `deletes(url, seq, at)`: delete markers.
 * - `terms(term, stem, df, postings)`: our inverted index, one row per folded (unstemmed) word
 *   or compound. `stem` is the English stem when the word occurs in an English document, else
 *   the word. `postings` = for each doc in id order: varint(id delta), field mask byte, varint
 *   tf for each field in the mask. Scoring statistics come from here, summed over live rows of
 *   every segment, so ranking does not depend on how the index is split.
 * - `fts` (FTS5, external content over `docs`: title, headings, content; detail=full): built in
 *   C by `rebuild` after the rows are in; answers phrase queries (`"a b"`) and exclusions.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import type { PageDoc, FilterValue, DataPoint } from '../types.js';
import { words, urlWords, stemEn, urlCompounds, analyzeText, alnumParts } from '../text/index.js';

/** Searchable fields, in the order used by every per-field array. */
export const FIELDS = ['title', 'keywords', 'headings', 'url', 'content'] as const;
export const NFIELDS = FIELDS.length;
export const SEGMENT_FORMAT = 1;

/** An upsert as it goes into a segment. `firstAt` = when the URL was first indexed (ms). */
export interface SegmentEntry {
  seq: number;
  at: number;
  firstAt: number;
  doc: PageDoc;
}
/** A delete marker: shadows every row of `url` with a lower seq in any segment. */
export interface SegmentDelete {
  seq: number;
  at: number;
  url: string;
}
export interface SegmentInfo {
  format: number;
  /** Rows in `docs` (any status); docIds are 0..docCount-1. */
  docCount: number;
  /** Rows with status 200. */
  searchableCount: number;
  deleteCount: number;
  minSeq: number;
  maxSeq: number;
  bytes: number;
}
/** What liveness bookkeeping needs of each row. */
export interface SegmentRow {
  id: number;
  url: string;
  seq: number;
  at: number;
  firstAt: number;
  status: number;
  /** Token length of each FIELDS entry (all zero for non-200 rows). */
  lengths: number[];
}

export interface WriteOptions {
  /** Project default language (ISO 639-1) for docs with `language: null`. */
  defaultLanguage: string;
}

/** The per-field word lists of a searchable document, in FIELDS order. */
export function fieldWords(doc: PageDoc): string[][] {
  return analyzeDoc(doc).words;
}

/** Compound words of each field (see `compounds`): counted in postings, not in lengths or FTS. */
export function fieldCompounds(doc: PageDoc): string[][] {
  return analyzeDoc(doc).compounds;
}

/** Words and compounds of each field, in FIELDS order, in one pass per field. */
export function analyzeDoc(doc: PageDoc, withContent = true): { words: string[][]; compounds: string[][] } {
  const texts = [
    doc.title,
    doc.keywords.join(' \u2029 '),
    doc.headings.join(' \u2029 '),
    null,
    withContent ? (doc.description ? doc.description + ' \u2029 ' + doc.content : doc.content) : '',
  ];
  const w: string[][] = [];
  const c: string[][] = [];
  for (const t of texts) {
    if (t === null) {
      w.push(urlWords(doc.url));
      c.push(urlCompounds(doc.url));
      continue;
    }
    if (w.length === NFIELDS - 1) {
      // Content: words only. Compounds matter for identifiers in titles, headings and URLs,
      // and finding them in long text costs a second pass.
      w.push(words(t));
      c.push([]);
      continue;
    }
    const r = analyzeText(t);
    w.push(r.words);
    c.push(r.compounds);
  }
  return { words: w, compounds: c };
}

/**
 * Markers around each title, keyword and heading in the FTS5 streams, so that a phrase query
 * `"xqzbeg a b xqzend"` means "a heading that is exactly `a b`" and phrases never run from one
 * heading into the next. They are not in `terms`, so they never affect scoring statistics.
 */
export const FTS_BEGIN = 'xqzbeg';
export const FTS_END = 'xqzend';

// Section numbering in front of documentation titles ("Chapter 5.", "E.3.", "F.1.", "IV.").
const NUMBERING_RE = /^\s*(?:(?:appendix|chapter|part|section)\s+)?(?:[a-z]|[ivxlc]+|\d+)(?:\.\d+)*\.(?=\s)\s*/i;

/** The title without leading section numbering, for exact-title matching. */
export function titleWithoutNumbering(title: string): string {
  const t = title.replace(NUMBERING_RE, '');
  return t.trim() === '' ? title : t;
}

class ByteWriter {
  buf = new Uint8Array(64);
  len = 0;
  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  varint(v: number): void {
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.len++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.len++] = v;
  }
  byte(v: number): void {
    this.ensure(1);
    this.buf[this.len++] = v;
  }
  /** Appends src[start, end) unchanged. */
  copy(src: Uint8Array, start: number, end: number): void {
    this.ensure(end - start);
    this.buf.set(src.subarray(start, end), this.len);
    this.len += end - start;
  }
  /** Empties the writer, keeping its buffer (one writer serves a whole merge). */
  reset(): void {
    this.len = 0;
  }
  /** The bytes written, as a view (valid until the next write or reset). */
  bytes(): Buffer {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset, this.len);
  }
}

const SCHEMA = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(
  id INTEGER PRIMARY KEY, url TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
  first_at INTEGER NOT NULL, status INTEGER NOT NULL, lengths TEXT NOT NULL, boost REAL NOT NULL,
  grp TEXT NOT NULL, doc_type TEXT NOT NULL, language TEXT, filters TEXT NOT NULL,
  data_points TEXT NOT NULL, title TEXT NOT NULL, headings TEXT NOT NULL, content TEXT NOT NULL,
  image TEXT, description TEXT, hkeys BLOB, body TEXT NOT NULL);
CREATE TABLE deletes(url TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, stem TEXT NOT NULL, df INTEGER NOT NULL, postings BLOB NOT NULL) WITHOUT ROWID;
`;
// Built after the bulk inserts: cheaper than maintaining them row by row.
const POST_SCHEMA = `
CREATE INDEX docs_url ON docs(url);
CREATE INDEX terms_stem ON terms(stem);
CREATE VIRTUAL TABLE fts USING fts5(title, headings, content, content='docs', content_rowid='id', columnsize=0, detail=full,
  tokenize="unicode61 remove_diacritics 2");
INSERT INTO fts(fts) VALUES('rebuild');
`;

/**
 * Page cache (KiB) of connections that only scan a file once (merge sources, row loading):
 * a scan gains nothing from caching, and each connection would otherwise keep up to 16 MB.
 */
export const SCAN_CACHE_KB = 1024;

/**
 * Page cache (KiB) of a segment being written. Rows and terms are appended in key order, so
 * a large cache buys little; SQLite's memory is malloc'd per thread and glibc keeps what a
 * build freed in that thread's arena, so every MB here stays resident after the build.
 */
const BUILD_CACHE_KB = 4096;

const DOC_COLUMNS = 'id,url,seq,at,first_at,status,lengths,boost,grp,doc_type,language,filters,data_points,title,headings,content,image,description,hkeys,body';

function createFile(path: string): Database.Database {
  if (fs.existsSync(path)) throw new Error(`segment file already exists: ${path}`);
  const db = new Database(path);
  // A segment is written once by one thread; a crash mid-build leaves a file no manifest
  // lists, which start-up deletes. So no journal file, and one fsync at the end (sealFile).
  // MEMORY rather than OFF: better-sqlite3 runs in defensive mode, which silently ignores
  // journal_mode=OFF (the pragma answers 'delete'), and a `<file>-journal` next to an in-flight
  // build is a file the store's gc could delete under it (SQLITE_IOERR_DELETE_NOENT).
  db.pragma('journal_mode = MEMORY');
  db.pragma('synchronous = OFF');
  db.pragma('page_size = 8192');
  db.pragma(`cache_size = -${BUILD_CACHE_KB}`);
  db.exec(SCHEMA);
  return db;
}

/** Finishes a segment: indexes, FTS5 build, meta, then close and fsync the file. */
function sealFile(db: Database.Database, path: string, meta: Record<string, string | number>): SegmentInfo {
  try {
    db.exec(POST_SCHEMA);
    const ins = db.prepare('INSERT INTO meta(key,value) VALUES (?,?)');
    db.transaction(() => {
      for (const [k, v] of Object.entries(meta)) ins.run(k, String(v));
      ins.run('format', String(SEGMENT_FORMAT));
      ins.run('created', new Date().toISOString());
    })();
  } finally {
    db.close();
  }
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return readInfo(path);
}

/** ASCII code → lower-cased code for letters and digits, 0 for separators. */
const LOWER = new Uint8Array(128);
for (let c = 48; c <= 57; c++) LOWER[c] = c;
for (let c = 97; c <= 122; c++) LOWER[c] = c;
for (let c = 65; c <= 90; c++) LOWER[c] = c + 32;
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;

/** Whether the (non-ASCII) character at `i` is part of a word (letter, digit or mark). */
function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return WORD_CHAR.test(c >= 0xd800 && c <= 0xdbff ? text.slice(i, i + 2) : text[i]!);
}

/** Hashes of each heading's folded words (for exact-heading matching in memory). */
function headingKeysBlob(headings: string[]): Buffer {
  const keys = new Int32Array(headings.length);
  headings.forEach((h, i) => (keys[i] = hashWord(words(h).join(' '))));
  return Buffer.from(keys.buffer);
}

/** The hash addText computes for a plain lower-case word; also the heading-key hash. */
export function hashWord(w: string): number {
  let h = 0;
  for (let j = 0; j < w.length; j++) h = (Math.imul(h, 31) + w.charCodeAt(j)) | 0;
  return h;
}

/**
 * Accumulates postings for one segment build (pool thread). Terms get dense indexes; a
 * document's term frequencies are counted in a typed scratch array and, once per document,
 * appended to each of its terms' postings already encoded in the segment format (docs arrive
 * in id order, so the id deltas are known then). The bytes live in a {@link PostingsPool}: a
 * build's postings are its biggest structure, and a JS array per term (two numbers of 8 bytes
 * per posting plus growth slack, ≥ 150 bytes for a term seen once) took several times the
 * ≈ 4 bytes per posting of the encoded form, all of it on the V8 heap.
 *
 * Laid out for the cache: the build does one lookup per word of text (≈ 1,000 per page) in a
 * vocabulary of tens of thousands of terms, so everything a lookup and a count touch for one
 * term sits in one 32-byte record ({@link REC}), the hash table's slots carry the hash beside the
 * term index, the terms' characters are compared in one contiguous arena rather than through
 * each term's string object, and the counts of the current document live in a small dense
 * scratch indexed by the term's position in that document. (With a typed array per property
 * and a string comparison per lookup, the content loop cost ≈ 2.5× what it costs now, in
 * process over the PostgreSQL manual's pages: cache misses, not instructions.)
 */
class PostingsBuilder {
  readonly terms: string[] = [];
  private readonly pool = new PostingsPool();
  /** Per term, REC Int32s: see the R_* offsets. */
  private rec = new Int32Array(1024 * REC);
  /** The characters of every term (UTF-16 code units), each term at its R_OFF, R_LEN. */
  private chars = new Uint16Array(1 << 16);
  private charsUsed = 0;
  /** One posting being encoded (at most 5 + 1 + NFIELDS × 3 bytes). */
  private readonly entry = new Uint8Array(32);
  /** Per term of the current document, in first-seen order: its term index ... */
  private touched = new Int32Array(1024);
  private nTouched = 0;
  /** ... and its frequency in each field (NFIELDS per touched term; saturates at 65535). */
  private counts = new Uint16Array(1024 * NFIELDS);
  private doc = -1;

  // Open-addressing table, two Int32s per slot: a word's hash and its term index + 1 (0 = empty),
  // so that words of long text are counted without creating a string per occurrence (addText).
  private slots = new Int32Array(2 << 16);
  private slotBits = 16;

  begin(id: number): void {
    this.doc = id;
  }

  /** The slot where the search for hash `h` starts (Fibonacci hashing: words that differ only in their last letter land apart). */
  private home(h: number): number {
    return Math.imul(h, 0x9e3779b1) >>> (32 - this.slotBits);
  }

  /** Adds `term` (hash `h`, not yet present) and returns its index; its characters are already at `chars[charsUsed, + term.length)`. */
  private create(term: string, h: number): number {
    const i = this.terms.length;
    this.terms.push(term);
    if ((i + 1) * REC > this.rec.length) {
      const next = new Int32Array(this.rec.length * 2);
      next.set(this.rec);
      this.rec = next;
    }
    const r = i * REC;
    this.rec[r + R_SEEN] = -1;
    this.rec[r + R_HASH] = h;
    this.rec[r + R_OFF] = this.charsUsed;
    this.rec[r + R_LEN] = term.length;
    this.charsUsed += term.length;
    this.pool.addList();
    if (this.terms.length * 2 > 1 << this.slotBits) this.rehash();
    else this.place(i, h);
    return i;
  }

  /** Makes room for `n` more characters in the arena. */
  private reserveChars(n: number): void {
    if (this.charsUsed + n <= this.chars.length) return;
    let cap = this.chars.length * 2;
    while (cap < this.charsUsed + n) cap *= 2;
    const next = new Uint16Array(cap);
    next.set(this.chars.subarray(0, this.charsUsed));
    this.chars = next;
  }

  private place(i: number, h: number): void {
    const mask = (1 << this.slotBits) - 1;
    let k = this.home(h);
    while (this.slots[2 * k + 1] !== 0) k = (k + 1) & mask;
    this.slots[2 * k] = h;
    this.slots[2 * k + 1] = i + 1;
  }

  private rehash(): void {
    this.slotBits++;
    this.slots = new Int32Array(2 << this.slotBits);
    for (let i = 0; i < this.terms.length; i++) this.place(i, this.rec[i * REC + R_HASH]!);
  }

  add(field: number, term: string): void {
    const h = hashWord(term);
    const mask = (1 << this.slotBits) - 1;
    const len = term.length;
    for (let k = this.home(h); ; k = (k + 1) & mask) {
      const v = this.slots[2 * k + 1]!;
      if (v === 0) break;
      if (this.slots[2 * k] !== h) continue;
      const r = (v - 1) * REC;
      if (this.rec[r + R_LEN] !== len) continue;
      const off = this.rec[r + R_OFF]!;
      let j = 0;
      while (j < len && this.chars[off + j] === term.charCodeAt(j)) j++;
      if (j === len) return this.count(field, v - 1);
    }
    this.reserveChars(len);
    for (let j = 0; j < len; j++) this.chars[this.charsUsed + j] = term.charCodeAt(j);
    this.count(field, this.create(term, h));
  }

  /**
   * Tokenizes `text` exactly like `words()` and counts every word in `field`; returns the
   * number of words. Plain ASCII words (nearly all of them) are hashed from the text and
   * looked up without allocating; runs holding other letters take the `words()` path.
   */
  addText(field: number, text: string): number {
    let n = 0;
    const len = text.length;
    let i = 0;
    while (i < len) {
      let c = text.charCodeAt(i);
      if (c < 128 ? LOWER[c] === 0 : !isWordChar(text, i)) {
        i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
        continue;
      }
      const start = i;
      let h = 0;
      let plain = true;
      let kinds = 0; // 1: letters seen, 2: digits seen
      while (i < len) {
        c = text.charCodeAt(i);
        if (c < 128) {
          const l = LOWER[c]!;
          if (l === 0) break;
          h = (Math.imul(h, 31) + l) | 0;
          kinds |= l >= 97 ? 1 : 2;
          i++;
        } else if (isWordChar(text, i)) {
          plain = false;
          i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
        } else break;
      }
      if (!plain) {
        for (const w of words(text.slice(start, i))) {
          this.add(field, w);
          n++;
        }
        continue;
      }
      this.count(field, this.lookup(text, start, i, h));
      n++;
      // Letters and digits mixed (utf8, elma04): their runs are terms too (not counted in length).
      if (kinds === 3) for (const part of alnumParts(text.slice(start, i).toLowerCase())) this.add(field, part);
    }
    return n;
  }

  /** Term index of the plain word text[start, end) (lower-cased), created when new. */
  private lookup(text: string, start: number, end: number, h: number): number {
    const mask = (1 << this.slotBits) - 1;
    const len = end - start;
    for (let k = this.home(h); ; k = (k + 1) & mask) {
      const v = this.slots[2 * k + 1]!;
      if (v === 0) break;
      if (this.slots[2 * k] !== h) continue;
      const r = (v - 1) * REC;
      if (this.rec[r + R_LEN] !== len) continue;
      const off = this.rec[r + R_OFF]!;
      let j = 0;
      while (j < len && this.chars[off + j] === LOWER[text.charCodeAt(start + j)]) j++;
      if (j === len) return v - 1;
    }
    this.reserveChars(len);
    for (let j = 0; j < len; j++) this.chars[this.charsUsed + j] = LOWER[text.charCodeAt(start + j)]!;
    return this.create(text.slice(start, end).toLowerCase(), h);
  }

  private count(field: number, i: number): void {
    const r = i * REC;
    let t: number;
    if (this.rec[r + R_SEEN] !== this.doc) {
      this.rec[r + R_SEEN] = this.doc;
      t = this.nTouched++;
      this.rec[r + R_LOCAL] = t;
      if (t === this.touched.length) this.growTouched();
      this.touched[t] = i;
      this.counts.fill(0, t * NFIELDS, t * NFIELDS + NFIELDS);
    } else t = this.rec[r + R_LOCAL]!;
    const k = t * NFIELDS + field;
    if (this.counts[k]! < 65535) this.counts[k]!++;
  }

  private growTouched(): void {
    const touched = new Int32Array(this.touched.length * 2);
    touched.set(this.touched);
    this.touched = touched;
    const counts = new Uint16Array(this.counts.length * 2);
    counts.set(this.counts);
    this.counts = counts;
  }

  /** Ends the current document; `english` marks its words for stemming. */
  end(english: boolean): void {
    const sc = this.counts;
    const e = this.entry;
    const rec = this.rec;
    for (let t = 0; t < this.nTouched; t++) {
      const i = this.touched[t]!;
      const r = i * REC;
      const k = t * NFIELDS;
      // varint(id delta), field mask, varint tf of each field in the mask; the four short
      // fields' tfs are capped at 127, content at 65535 (the scratch saturates there).
      let n = putVarint(e, 0, rec[r + R_DF] === 0 ? this.doc : this.doc - rec[r + R_LAST]!);
      const maskAt = n++;
      let mask = 0;
      for (let f = 0; f < NFIELDS; f++) {
        const tf = f === NFIELDS - 1 ? sc[k + f]! : Math.min(sc[k + f]!, 127);
        if (tf === 0) continue;
        mask |= 1 << f;
        n = putVarint(e, n, tf);
      }
      e[maskAt] = mask;
      this.pool.append(i, e, n);
      rec[r + R_DF]!++;
      rec[r + R_LAST] = this.doc;
      if (english) rec[r + R_ENGLISH] = 1;
    }
    this.nTouched = 0;
  }

  /**
   * The encoded postings of term `i` (a view valid until the next call) and its document
   * frequency (after the last {@link end}).
   */
  postings(i: number): [Buffer, number] {
    return [this.pool.bytes(i), this.rec[i * REC + R_DF]!];
  }

  /** Whether term `i` occurred in an English document (so it gets an English stem). */
  isEnglish(i: number): boolean {
    return this.rec[i * REC + R_ENGLISH] === 1;
  }
}

/** Int32s per term record of {@link PostingsBuilder} (32 bytes: one cache line holds two). */
const REC = 8;
/** Record fields: last document that counted the term, its position in that document's touched list, df, last document id, 1 when seen in an English document, hash, characters' offset and length in the arena. */
const R_SEEN = 0;
const R_LOCAL = 1;
const R_DF = 2;
const R_LAST = 3;
const R_ENGLISH = 4;
const R_HASH = 5;
const R_OFF = 6;
const R_LEN = 7;

/** Writes `v` as a varint at `buf[at]`; returns the position after it. */
function putVarint(buf: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    buf[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[at++] = v;
  return at;
}

/**
 * Bytes per pool chunk (blocks never span two chunks): 32 MiB, glibc's largest dynamic mmap
 * threshold, so every chunk is its own mmap — lazily zero, resident only where written, and
 * given back to the OS when the build's pool is collected. With 1 MiB chunks, freeing the first
 * mmap'd chunk raised glibc's threshold above 1 MiB, and from then on chunks (and other buffers
 * of that size) came from the pool thread's malloc arena, which glibc keeps: in process each
 * further 3,000-page build grew the thread's arena by ≈7 MB; with 32 MiB chunks by ≈1 MB.
 */
const POOL_CHUNK_BITS = 25;
/** Block sizes of a list: the first is small (most terms occur in few documents), then doubling. */
const FIRST_BLOCK = 16;
const MAX_BLOCK = 4096;
/** Int32s per list in {@link PostingsPool}'s state (five used; eight keep a list inside one cache line). */
const LIST = 8;
const L_HEAD = 0;
const L_POS = 1;
const L_END = 2;
const L_SIZE = 3;
const L_LENGTH = 4;

/**
 * Growable byte lists, many of them, in shared 32 MiB chunks (one segment build's postings, pool
 * thread; exported for tests):
 * each list is a chain of blocks of doubling size (16 bytes up to 4 KiB), each block ending in
 * the 4-byte address of the next one. Nothing per list lives on the JS heap but a few typed
 * array slots, and no block is ever copied while the build runs.
 */
export class PostingsPool {
  private readonly chunks: Uint8Array[] = [];
  private scratch = Buffer.allocUnsafe(4096);
  private readonly bits: number;
  private readonly chunk: number;
  /** Bytes taken in the last chunk. */
  private used = 0;
  private lists = 0;
  /**
   * Per list, {@link LIST} Int32s side by side (an append touches all of them, and a build
   * appends to a few hundred random lists per document, so one cache line per list): first
   * block, write position, end of the current block's payload, its size, bytes written.
   */
  private st = new Int32Array(1024 * LIST);

  /** `chunkBits`: log2 of the chunk size (tests use small chunks to cross chunk boundaries). */
  constructor(chunkBits = POOL_CHUNK_BITS) {
    this.bits = chunkBits;
    this.chunk = 1 << chunkBits;
  }

  /** Adds an empty list (index = the number of lists before). */
  addList(): void {
    const i = this.lists++;
    if ((i + 1) * LIST > this.st.length) {
      const next = new Int32Array(this.st.length * 2);
      next.set(this.st);
      this.st = next;
    }
    this.st[i * LIST + L_HEAD] = -1;
  }

  /** Appends `src[0, n)` to list `i`. */
  append(i: number, src: Uint8Array, n: number): void {
    const st = this.st;
    const l = i * LIST;
    if (st[l + L_HEAD] === -1) {
      const b = this.block(FIRST_BLOCK);
      st[l + L_HEAD] = st[l + L_POS] = b;
      st[l + L_END] = b + FIRST_BLOCK - 4;
      st[l + L_SIZE] = FIRST_BLOCK;
    }
    st[l + L_LENGTH]! += n;
    let p = st[l + L_POS]!;
    if (p + n <= st[l + L_END]!) {
      // A byte loop: entries are a few bytes, and a subarray view per entry was garbage.
      const c = this.chunks[p >>> this.bits]!;
      const o = p & (this.chunk - 1);
      for (let j = 0; j < n; j++) c[o + j] = src[j]!;
      st[l + L_POS] = p + n;
      return;
    }
    for (let j = 0; j < n; j++) {
      if (p === st[l + L_END]) {
        // Link a new block: its address goes into the last 4 bytes of the full one.
        const size = Math.min(st[l + L_SIZE]! * 2, MAX_BLOCK);
        const b = this.block(size);
        const c = this.chunks[p >>> this.bits]!;
        const o = p & (this.chunk - 1);
        c[o] = b & 0xff;
        c[o + 1] = (b >>> 8) & 0xff;
        c[o + 2] = (b >>> 16) & 0xff;
        c[o + 3] = (b >>> 24) & 0xff;
        p = b;
        st[l + L_END] = b + size - 4;
        st[l + L_SIZE] = size;
      }
      this.chunks[p >>> this.bits]![p & (this.chunk - 1)] = src[j]!;
      p++;
    }
    st[l + L_POS] = p;
  }

  /**
   * The bytes of list `i`, in one buffer: a view of a scratch buffer this pool reuses, valid
   * until the next call (callers bind it to an insert, which copies it), so reading thousands
   * of lists allocates no buffer per list.
   */
  bytes(i: number): Buffer {
    const len = this.st[i * LIST + L_LENGTH]!;
    if (this.scratch.length < len) this.scratch = Buffer.allocUnsafe(Math.max(len, this.scratch.length * 2));
    const out = this.scratch.subarray(0, len);
    let left = out.length;
    let b = this.st[i * LIST + L_HEAD]!;
    let size = FIRST_BLOCK;
    while (left > 0) {
      const c = this.chunks[b >>> this.bits]!;
      const o = b & (this.chunk - 1);
      const n = Math.min(left, size - 4);
      out.set(c.subarray(o, o + n), out.length - left);
      left -= n;
      if (left === 0) break;
      b = c[o + size - 4]! | (c[o + size - 3]! << 8) | (c[o + size - 2]! << 16) | (c[o + size - 1]! << 24);
      size = Math.min(size * 2, MAX_BLOCK);
    }
    return out;
  }

  /** Address of a fresh block of `size` bytes (a new chunk when the current one lacks room). */
  private block(size: number): number {
    if (this.chunks.length === 0 || this.used + size > this.chunk) {
      this.chunks.push(new Uint8Array(this.chunk));
      this.used = 0;
    }
    const b = (this.chunks.length - 1) * this.chunk + this.used;
    this.used += size;
    return b;
  }
}

function markedHeadings(headings: string[]): string {
  return headings.map((h) => `${FTS_BEGIN} ${h} ${FTS_END}`).join(' ');
}

/**
 * Writes a new segment file at `path` (must not exist) holding `entries` and `deletes`
 * (the caller has already de-duplicated: at most one entry per URL). `entries` is consumed
 * once, in order (docIds follow it), and may be a generator that streams them. Synchronous; runs in a
 * pool worker. The file is complete and fsync'd when this returns; the caller renames it into
 * place and fsyncs the directory.
 */
export function writeSegment(path: string, entries: Iterable<SegmentEntry>, deletes: SegmentDelete[], opts: WriteOptions): SegmentInfo {
  const db = createFile(path);
  const pb = new PostingsBuilder();
  let docCount = 0;
  let searchable = 0;
  let minSeq = Number.MAX_SAFE_INTEGER;
  let maxSeq = 0;
  try {
    const insDoc = db.prepare(`INSERT INTO docs(${DOC_COLUMNS}) VALUES (${DOC_COLUMNS.split(',').map(() => '?').join(',')})`);
    const insDel = db.prepare('INSERT INTO deletes(url,seq,at) VALUES (?,?,?)');
    db.transaction(() => {
      // One entry at a time: a streamed source (the write log) is never held whole.
      for (const e of entries) {
        const id = docCount++;
        const d = e.doc;
        minSeq = Math.min(minSeq, e.seq);
        maxSeq = Math.max(maxSeq, e.seq);
        const lang = d.language ?? opts.defaultLanguage;
        let lengths = [0, 0, 0, 0, 0];
        const ok = d.status === 200;
        if (ok) {
          searchable++;
          const { words: fw, compounds: fc } = analyzeDoc(d, false);
          pb.begin(id);
          lengths = fw.map((w) => w.length);
          for (let f = 0; f < NFIELDS - 1; f++) {
            for (const w of fw[f]!) pb.add(f, w);
            for (const w of fc[f]!) pb.add(f, w);
          }
          // Content, the bulk of the text, is counted straight from the string.
          const content = d.description ? d.description + ' \u2029 ' + d.content : d.content;
          lengths[NFIELDS - 1] = pb.addText(NFIELDS - 1, content);
          pb.end(lang === 'en');
        }
        insDoc.run(
          id, d.url, e.seq, e.at, e.firstAt, d.status, JSON.stringify(lengths), d.boost,
          d.contentGroup, d.documentType, d.language, JSON.stringify(d.filters), JSON.stringify(d.dataPoints),
          ok ? d.title : '', ok ? markedHeadings(d.headings) : '', ok ? d.content : '', d.imageUrl, d.description ?? null,
          ok && d.headings.length ? headingKeysBlob(d.headings) : null,
          JSON.stringify({ ...d, content: ok ? undefined : d.content, title: ok ? undefined : d.title }),
        );
      }
      for (const del of deletes) {
        minSeq = Math.min(minSeq, del.seq);
        maxSeq = Math.max(maxSeq, del.seq);
        insDel.run(del.url, del.seq, del.at);
      }
      const insTerm = db.prepare('INSERT INTO terms(term,stem,df,postings) VALUES (?,?,?,?)');
      const order = pb.terms.map((_, i) => i).sort((x, y) => (pb.terms[x]! < pb.terms[y]! ? -1 : 1));
      for (const i of order) {
        const term = pb.terms[i]!;
        const [blob, df] = pb.postings(i);
        insTerm.run(term, pb.isEnglish(i) ? stemEn(term) : term, df, blob);
      }
    })();
  } catch (e) {
    db.close();
    throw e;
  }
  if (minSeq === Number.MAX_SAFE_INTEGER) minSeq = 0;
  return sealFile(db, path, {
    docCount, searchableCount: searchable, deleteCount: deletes.length, minSeq, maxSeq,
  });
}

/** One source of a merge: a sealed segment and the row ids to keep (ascending). */
export interface MergeSource {
  path: string;
  liveIds: number[];
}

/**
 * Merges the live rows of `sources` into a new segment at `path`, without re-analysing any
 * text: stored rows are copied by SQL, postings are filtered and renumbered term by term (a
 * k-way merge over the sources' sorted term tables, so memory stays flat; entries are copied as
 * bytes, see remapPostings), and FTS5 is rebuilt from the copied rows. Rows keep their seq/at/firstAt. Runs in a
 * pool worker.
 */
export function mergeSegments(path: string, sources: MergeSource[], deletes: SegmentDelete[]): SegmentInfo {
  const db = createFile(path);
  let next = 0;
  let searchable = 0;
  let minSeq = Number.MAX_SAFE_INTEGER;
  let maxSeq = 0;
  // old id → new id per source (-1 when dropped).
  const maps: Int32Array[] = [];
  try {
    db.exec('CREATE TEMP TABLE idmap(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)');
    for (const src of sources) {
      db.prepare('ATTACH DATABASE ? AS src').run(src.path);
      try {
        db.pragma(`src.cache_size = -${SCAN_CACHE_KB}`);
        const n = db.prepare('SELECT count(*) FROM src.docs').pluck().get() as number;
        const map = new Int32Array(n).fill(-1);
        db.transaction(() => {
          db.exec('DELETE FROM temp.idmap');
          const insMap = db.prepare('INSERT INTO temp.idmap(old,new) VALUES (?,?)');
          for (const old of src.liveIds) {
            map[old] = next;
            insMap.run(old, next++);
          }
          db.exec(`INSERT INTO main.docs(${DOC_COLUMNS}) SELECT m.new, ${DOC_COLUMNS.split(',').slice(1).map((c) => 'd.' + c).join(',')}
                   FROM src.docs d JOIN temp.idmap m ON d.id = m.old ORDER BY m.new`);
        })();
        const st = db.prepare('SELECT min(d.seq) AS lo, max(d.seq) AS hi, sum(d.status = 200) AS ok FROM src.docs d JOIN temp.idmap m ON d.id = m.old').get() as { lo: number | null; hi: number | null; ok: number | null };
        if (st.lo !== null) minSeq = Math.min(minSeq, st.lo);
        if (st.hi !== null) maxSeq = Math.max(maxSeq, st.hi);
        searchable += st.ok ?? 0;
        maps.push(map);
      } finally {
        db.exec('DETACH DATABASE src');
      }
    }
    const insDel = db.prepare('INSERT INTO deletes(url,seq,at) VALUES (?,?,?)');
    const insTerm = db.prepare('INSERT INTO terms(term,stem,df,postings) VALUES (?,?,?,?)');
    const readers = sources.map((s) => {
      const r = new Database(s.path, { readonly: true, fileMustExist: true });
      r.pragma(`cache_size = -${SCAN_CACHE_KB}`);
      return r;
    });
    try {
      const its = readers.map((r) => (r.prepare('SELECT term, stem, postings FROM terms ORDER BY term').iterate() as IterableIterator<{ term: string; stem: string; postings: Buffer }>));
      const heads = its.map((it) => it.next());
      db.transaction(() => {
        for (const del of deletes) {
          minSeq = Math.min(minSeq, del.seq);
          maxSeq = Math.max(maxSeq, del.seq);
          insDel.run(del.url, del.seq, del.at);
        }
        // One writer for every term: SQLite copies a bound blob, and a fresh writer per term
        // grew a new buffer by doubling for each long list — malloc'd and freed sizes of up to
        // a few MB, which glibc then keeps in the pool thread's arena.
        const w = new ByteWriter();
        for (;;) {
          let term: string | null = null;
          for (const h of heads) if (!h.done && (term === null || h.value.term < term)) term = h.value.term;
          if (term === null) break;
          w.reset();
          let prev = 0;
          let df = 0;
          let stem = term;
          heads.forEach((h, si) => {
            if (h.done || h.value.term !== term) return;
            if (h.value.stem !== term) stem = h.value.stem;
            const r = remapPostings(h.value.postings, maps[si]!, w, prev);
            prev = r.prev;
            df += r.df;
            heads[si] = its[si]!.next();
          });
          if (df > 0) insTerm.run(term, stem, df, w.bytes());
        }
      })();
    } finally {
      for (const r of readers) r.close();
    }
  } catch (e) {
    db.close();
    throw e;
  }
  if (minSeq === Number.MAX_SAFE_INTEGER) minSeq = 0;
  return sealFile(db, path, { docCount: next, searchableCount: searchable, deleteCount: deletes.length, minSeq, maxSeq });
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
function remapPostings(buf: Uint8Array, map: Int32Array, w: ByteWriter, prev: number): { prev: number; df: number } {
  let pos = 0;
  let old = 0;
  let df = 0;
  // Start of the bytes not yet copied that belong to kept entries (-1: none pending).
  let run = -1;
  while (pos < buf.length) {
    const entry = pos;
    let v = 0;
    let shift = 0;
    let b: number;
    do {
      b = buf[pos++]!;
      v |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    old += v;
    const afterDelta = pos;
    const mask = buf[pos++]!;
    for (let f = 0; f < NFIELDS; f++) if (mask & (1 << f)) while (buf[pos++]! & 0x80);
    const id = map[old]!;
    if (id < 0) {
      if (run >= 0) w.copy(buf, run, entry);
      run = -1;
      continue;
    }
    if (run < 0 || id - prev !== v) {
      if (run >= 0) w.copy(buf, run, entry);
      w.varint(id - prev);
      run = afterDelta;
    }
    prev = id;
    df++;
  }
  if (run >= 0) w.copy(buf, run, pos);
  return { prev, df };
}

/** The per-row columns liveness bookkeeping keeps in memory (see {@link readRowColumns}). */
export interface RowColumns {
  urls: string[];
  seqs: Float64Array;
  ats: Float64Array;
  firstAts: Float64Array;
  statuses: Uint16Array;
  /** lengths[docId * NFIELDS + f] */
  lengths: Uint32Array;
  deletes: SegmentDelete[];
}

/**
 * Reads every row's liveness columns (docId order) and the delete markers of a sealed segment
 * straight into typed arrays, through a short-lived connection with a small page cache: the
 * scan touches every docs leaf page, and a long-lived connection would keep them cached
 * (better-sqlite3's default cache is 16 MB per connection). Main thread, at segment load.
 */
export function readRowColumns(path: string, docCount: number): RowColumns {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`cache_size = -${SCAN_CACHE_KB}`);
    const c: RowColumns = {
      urls: new Array<string>(docCount),
      seqs: new Float64Array(docCount),
      ats: new Float64Array(docCount),
      firstAts: new Float64Array(docCount),
      statuses: new Uint16Array(docCount),
      lengths: new Uint32Array(docCount * NFIELDS),
      deletes: db.prepare('SELECT url, seq, at FROM deletes').all() as SegmentDelete[],
    };
    const it = db.prepare('SELECT id, url, seq, at, first_at AS firstAt, status, lengths FROM docs ORDER BY id').raw().iterate() as IterableIterator<
      [number, string, number, number, number, number, string]
    >;
    for (const [id, url, seq, at, firstAt, status, lengths] of it) {
      if (id < 0 || id >= docCount) throw new Error(`segment ${path}: row id ${id} outside 0..${docCount - 1}`);
      c.urls[id] = url;
      c.seqs[id] = seq;
      c.ats[id] = at;
      c.firstAts[id] = firstAt;
      c.statuses[id] = status;
      const l = JSON.parse(lengths) as number[];
      for (let f = 0; f < NFIELDS; f++) c.lengths[id * NFIELDS + f] = l[f] ?? 0;
    }
    return c;
  } finally {
    db.close();
  }
}

function readInfo(path: string): SegmentInfo {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return infoFrom(db, path);
  } finally {
    db.close();
  }
}

/** The meta table of an open segment (checks the format version). */
export function infoFrom(db: Database.Database, path: string): SegmentInfo {
  const m = new Map<string, string>();
  for (const r of db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>) m.set(r.key, r.value);
  const format = Number(m.get('format'));
  if (format !== SEGMENT_FORMAT) throw new Error(`segment ${path} has format ${format}, expected ${SEGMENT_FORMAT}`);
  return {
    format,
    docCount: Number(m.get('docCount')),
    searchableCount: Number(m.get('searchableCount')),
    deleteCount: Number(m.get('deleteCount')),
    minSeq: Number(m.get('minSeq')),
    maxSeq: Number(m.get('maxSeq')),
    bytes: fs.statSync(path).size,
  };
}

/** Decoded postings of one term in one segment (all rows, dead ones included). */
export interface Postings {
  ids: Int32Array;
  /** tfs[i * NFIELDS + f] */
  tfs: Uint16Array;
}

/** Decodes one postings blob. */
export function decodePostings(buf: Uint8Array): Postings {
  // Upper bound on entries: each takes at least 3 bytes (id, mask, one tf).
  const cap = Math.ceil(buf.length / 3);
  const ids = new Int32Array(cap);
  const tfs = new Uint16Array(cap * NFIELDS);
  let n = 0;
  let pos = 0;
  let prev = 0;
  while (pos < buf.length) {
    let v = 0;
    let shift = 0;
    let b: number;
    do {
      b = buf[pos++]!;
      v |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    prev += v;
    ids[n] = prev;
    const mask = buf[pos++]!;
    for (let f = 0; f < NFIELDS; f++) {
      if (mask & (1 << f)) {
        let t = 0;
        let s = 0;
        do {
          b = buf[pos++]!;
          t |= (b & 0x7f) << s;
          s += 7;
        } while (b & 0x80);
        tfs[n * NFIELDS + f] = Math.min(t, 65535);
      }
    }
    n++;
  }
  return { ids: ids.subarray(0, n), tfs: tfs.subarray(0, n * NFIELDS) };
}
