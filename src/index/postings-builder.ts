/**
 * Counting a segment build's postings (build stage, pool worker thread): {@link PostingsBuilder}
 * counts each searchable document's words per field and appends one encoded entry (postings.ts)
 * per term and document to that term's list in a {@link PostingsPool}, and one entry of the
 * term's word positions in that document to its positions list in a second pool.
 *
 * Invariants: documents are counted in id order, one at a time ({@link PostingsBuilder.begin} …
 * {@link PostingsBuilder.end}), so each list is in id order and its deltas are positive;
 * within a document, positions are given in ascending order;
 * {@link PostingsBuilder.addText} splits text exactly like `words()`.
 */
import { words, alnumParts } from '../text/index.js';
import { encodePosting, encodePositions, withCapacity, MAX_POSTING_BYTES } from './postings.js';
import { MAX_VARINT_BYTES } from './varint.js';
import { NFIELDS, hashWord } from './segment-format.js';

/** ASCII code → lower-cased code for letters and digits, 0 for separators. */
const LOWER = new Uint8Array(128);
for (let c = 48; c <= 57; c++) LOWER[c] = c;
for (let c = 97; c <= 122; c++) LOWER[c] = c;
for (let c = 65; c <= 90; c++) LOWER[c] = c + 32;
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
/** Per BMP code unit outside the surrogates, met so far: 0 not yet classified, 1 not a word character, 2 a word character. */
const wordCharClass = new Uint8Array(0x10000);

/** Whether the (non-ASCII) character at `i` is part of a word (letter, digit or mark): the regex once per code point and thread, then a table. */
function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdfff) return WORD_CHAR.test(c <= 0xdbff ? text.slice(i, i + 2) : text[i]!);
  let k = wordCharClass[c]!;
  if (k === 0) wordCharClass[c] = k = WORD_CHAR.test(text[i]!) ? 2 : 1;
  return k === 2;
}

const HAS_WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const MARK = /^\p{M}/u;
/** Per BMP code unit outside the surrogates, met so far: 0 not yet classified, 1 inert, 2 not (see {@link inertSeparator}). */
const separatorClass = new Uint8Array(0x10000);

/**
 * Whether the (non-ASCII) separator at `i` (not a word character) keeps no word character
 * under NFKC, so that `words()` of a text holding it cuts there as addText does: NFKC makes `™`
 * `TM` and `¨` a space and a combining mark, which `words()` of a folded text reads as words.
 */
function inertSeparator(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdfff) {
    const d = text.charCodeAt(i + 1);
    return c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff && !HAS_WORD_CHAR.test(text.slice(i, i + 2).normalize('NFKC'));
  }
  let k = separatorClass[c]!;
  if (k === 0) separatorClass[c] = k = HAS_WORD_CHAR.test(text[i]!.normalize('NFKC')) ? 2 : 1;
  return k === 1;
}

/**
 * Whether `words()` of a text holding the non-plain run text[start, end) gives the run's own
 * words there: not when the run starts with a combining mark (which `words()` of the whole
 * text may compose with the character before it) nor when it holds a capital sigma (lower-cased
 * by its context beyond the run: `σ` or final `ς`).
 */
function selfContainedRun(text: string, start: number, end: number): boolean {
  if (text.charCodeAt(start) >= 128 && MARK.test(text.slice(start, start + 2))) return false;
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === 0x3a3) return false;
  return true;
}

/**
 * Words of short non-ASCII runs, per thread: a language's words with accents, or a CJK phrase,
 * repeat across pages. Each word of a cached run also gets a per-thread id (`ids`), so that a
 * build finds the word's term from the id ({@link PostingsBuilder}'s `termOfWord`) instead of
 * hashing it and probing the vocabulary once per occurrence.
 */
interface CachedRun {
  readonly words: readonly string[];
  readonly ids: Int32Array;
}
const RUN_CACHE_SIZE = 50_000;
const RUN_CACHE_MAX_CHARS = 48;
/**
 * The run cache: open addressing over the runs' characters, so that a run is looked up straight
 * from the text being counted (no string made for it, nor hashed by a Map). Per slot, two Int32s:
 * the run's hash and its index in {@link runEntries} + 1 (0: empty). 2^17 slots for at most
 * {@link RUN_CACHE_SIZE} runs.
 */
const RUN_SLOT_BITS = 17;
const runSlots = new Int32Array(2 << RUN_SLOT_BITS);
const runEntries: CachedRun[] = [];
/** Per entry, the offset and length of its characters in {@link runChars}. */
const runOff = new Int32Array(RUN_CACHE_SIZE);
const runLen = new Int32Array(RUN_CACHE_SIZE);
let runChars = new Uint16Array(1 << 16);
let runCharsUsed = 0;
/** The id of each word of the cached runs. Cleared with the run cache, which bumps {@link runEpoch}. */
const wordIds = new Map<string, number>();
/** Incremented each time the run cache is cleared: word ids of an older epoch mean nothing. */
let runEpoch = 0;

/**
 * The cached words of the run `text[start, end)` (word characters) and their ids, `words()` of
 * it counted once per thread; null when the run is too long to cache.
 */
function cachedRun(text: string, start: number, end: number): CachedRun | null {
  const len = end - start;
  if (len > RUN_CACHE_MAX_CHARS) return null;
  let h = 0;
  for (let j = start; j < end; j++) h = (Math.imul(h, 31) + text.charCodeAt(j)) | 0;
  const mask = (1 << RUN_SLOT_BITS) - 1;
  let k = Math.imul(h, 0x9e3779b1) >>> (32 - RUN_SLOT_BITS);
  for (; ; k = (k + 1) & mask) {
    const v = runSlots[2 * k + 1]!;
    if (v === 0) break;
    if (runSlots[2 * k] !== h || runLen[v - 1] !== len) continue;
    const off = runOff[v - 1]!;
    let j = 0;
    while (j < len && runChars[off + j] === text.charCodeAt(start + j)) j++;
    if (j === len) return runEntries[v - 1]!;
  }
  if (runEntries.length >= RUN_CACHE_SIZE) {
    runSlots.fill(0);
    runEntries.length = 0;
    runCharsUsed = 0;
    wordIds.clear();
    runEpoch++;
    k = Math.imul(h, 0x9e3779b1) >>> (32 - RUN_SLOT_BITS);
  }
  const ws = words(text.slice(start, end));
  const ids = new Int32Array(ws.length);
  for (let w = 0; w < ws.length; w++) {
    let id = wordIds.get(ws[w]!);
    if (id === undefined) wordIds.set(ws[w]!, (id = wordIds.size));
    ids[w] = id;
  }
  const r: CachedRun = { words: ws, ids };
  const e = runEntries.push(r) - 1;
  runChars = withCapacity(runChars, runCharsUsed, runCharsUsed + len);
  for (let j = 0; j < len; j++) runChars[runCharsUsed + j] = text.charCodeAt(start + j);
  runOff[e] = runCharsUsed;
  runLen[e] = len;
  runCharsUsed += len;
  runSlots[2 * k] = h;
  runSlots[2 * k + 1] = e + 1;
  return r;
}

/**
 * Accumulates postings for one segment build (pool thread). Terms get dense indexes; a
 * document's term frequencies are counted in a typed scratch array and, once per document,
 * appended to each of its terms' postings already encoded in the segment format (docs arrive
 * in id order, so the id deltas are known then). The bytes live in a {@link PostingsPool}: a
 * build's postings are its biggest structure, and encoded (about 4 bytes per posting) and off
 * the V8 heap they take a fraction of what a JS array per term would.
 *
 * Laid out for the cache: the build does one lookup per word of text (about 1,000 per page) in a
 * vocabulary of tens of thousands of terms, so everything a lookup and a count touch for one
 * term sits in one 32-byte record ({@link REC}), the hash table's slots carry the hash beside the
 * term index, the terms' characters are compared in one contiguous arena rather than through
 * each term's string object, and the counts of the current document live in a small dense
 * scratch indexed by the term's position in that document: the loop's cost is cache misses,
 * not instructions.
 */
export class PostingsBuilder {
  readonly terms: string[] = [];
  private readonly pool = new PostingsPool();
  /** Per term, its positions entries (postings.ts), parallel to its postings entries. */
  private readonly posPool = new PostingsPool();
  /** Per term, 1 once some document gave it a position (terms without any get no positions row). */
  private hasPos = new Uint8Array(1024);
  /** Positions of the current document, in the order given: the touched index of the word and its position. */
  private posT = new Int32Array(4096);
  private posV = new Int32Array(4096);
  private nPos = 0;
  /** Per touched term, the start of its positions in {@link posSorted} (end() groups them by term). */
  private posStart = new Int32Array(1024);
  private posSorted = new Int32Array(4096);
  private posBytes = new Uint8Array(256);
  /** Per term, REC Int32s: see the R_* offsets. */
  private rec = new Int32Array(1024 * REC);
  /** The characters of every term (UTF-16 code units), each term at its R_OFF, R_LEN. */
  private chars = new Uint16Array(1 << 16);
  private charsUsed = 0;
  /** One posting being encoded. */
  private readonly entry = new Uint8Array(MAX_POSTING_BYTES);
  /** Per term of the current document, in first-seen order: its term index ... */
  private touched = new Int32Array(1024);
  private nTouched = 0;
  /** ... and its frequency in each field (NFIELDS per touched term; saturates at 65535). */
  private counts = new Uint16Array(1024 * NFIELDS);
  private doc = -1;
  /** Words {@link addText} still collects (see {@link collectWords}); 0: not collecting. */
  private collectLeft = 0;
  /** Term indexes of the words collected, in text order. */
  private readonly collected: number[] = [];
  /** False once a collected text held a character after which its words might not be `words()`'s. */
  private collectedExact = true;

  /** Per word id of the run cache (cachedRun), its term index + 1 in this build (0: not looked up yet), valid in {@link wordEpoch}. */
  private termOfWord = new Int32Array(1024);
  private wordEpoch = runEpoch;

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
    // Capacity checks before the calls: withCapacity takes three array types, and a call per
    // term (or per term and document, in end) that V8 does not inline costs more than the check.
    if ((i + 1) * REC > this.rec.length) this.rec = withCapacity(this.rec, i * REC, (i + 1) * REC);
    const r = i * REC;
    this.rec[r + R_SEEN] = -1;
    this.rec[r + R_HASH] = h;
    this.rec[r + R_OFF] = this.charsUsed;
    this.rec[r + R_LEN] = term.length;
    this.charsUsed += term.length;
    this.pool.addList();
    this.posPool.addList();
    if (i + 1 > this.hasPos.length) this.hasPos = withCapacity(this.hasPos, i, i + 1);
    if (this.terms.length * 2 > 1 << this.slotBits) this.rehash();
    else this.place(i, h);
    return i;
  }

  /** Makes room for `n` more characters in the arena. */
  private reserveChars(n: number): void {
    if (this.charsUsed + n > this.chars.length) this.chars = withCapacity(this.chars, this.charsUsed, this.charsUsed + n);
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

  /** Counts `term` (folded already) in `field`, at word position `pos` of the document (-1: none); returns its term index. */
  add(field: number, term: string, pos = -1): number {
    const i = this.termIndex(term, 0, term.length, hashWord(term), false);
    const t = this.count(field, i);
    if (pos >= 0) this.position(t, pos);
    return i;
  }

  /**
   * Starts collecting the first `n` words that the following {@link addText} calls count (their
   * words in order, as `words()` gives them; not the letter/digit parts), for the built-in
   * embedder, which reads the same words of a page's opening: read here, the page is analysed
   * once. {@link collectedWords} ends the collection.
   */
  collectWords(n: number): void {
    this.collectLeft = n;
    this.collected.length = 0;
    this.collectedExact = true;
  }

  /**
   * The words collected since {@link collectWords}: the first n of `words()` of the texts given
   * to addText, joined by spaces. Null when a character of them could make those differ from
   * addText's (a separator that folds to letters, a run that starts with a combining mark or
   * holds a capital sigma, see selfContainedRun): the caller then analyses the text itself.
   */
  collectedWords(): string[] | null {
    this.collectLeft = 0;
    if (!this.collectedExact) return null;
    return this.collected.map((i) => this.terms[i]!);
  }

  /** Records position `pos` of the current document's touched term `t`. */
  private position(t: number, pos: number): void {
    const n = this.nPos++;
    if (n === this.posT.length) {
      this.posT = withCapacity(this.posT, n, n + 1);
      this.posV = withCapacity(this.posV, n, n + 1);
    }
    this.posT[n] = t;
    this.posV[n] = pos;
  }

  /**
   * Tokenizes `text` exactly like `words()` and counts every word in `field`; returns the
   * number of words. With `posBase` ≥ 0 the k-th word gets position `posBase + k` (the
   * letter/digit parts of mixed words get none). Plain ASCII words (nearly all of them) are
   * hashed from the text and looked up without allocating; runs holding other letters take the
   * `words()` path.
   */
  addText(field: number, text: string, posBase = -1): number {
    let n = 0;
    const len = text.length;
    let i = 0;
    while (i < len) {
      let c = text.charCodeAt(i);
      if (c < 128 ? LOWER[c] === 0 : !isWordChar(text, i)) {
        if (c >= 128 && this.collectLeft > 0 && !inertSeparator(text, i)) this.collectedExact = false;
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
        if (this.collectLeft > 0 && !selfContainedRun(text, start, i)) this.collectedExact = false;
        const cached = cachedRun(text, start, i);
        if (cached === null) {
          for (const w of words(text.slice(start, i))) {
            const ti = this.add(field, w, posBase >= 0 ? posBase + n : -1);
            if (this.collectLeft > 0) {
              this.collected.push(ti);
              this.collectLeft--;
            }
            n++;
          }
          continue;
        }
        if (this.wordEpoch !== runEpoch) {
          this.termOfWord.fill(0);
          this.wordEpoch = runEpoch;
        }
        if (this.termOfWord.length < wordIds.size) this.termOfWord = withCapacity(this.termOfWord, this.termOfWord.length, wordIds.size);
        const ids = cached.ids;
        for (let k = 0; k < ids.length; k++) {
          const id = ids[k]!;
          let ti = this.termOfWord[id]! - 1;
          if (ti < 0) {
            const w = cached.words[k]!;
            ti = this.termIndex(w, 0, w.length, hashWord(w), false);
            this.termOfWord[id] = ti + 1;
          }
          const t = this.count(field, ti);
          if (posBase >= 0) this.position(t, posBase + n);
          if (this.collectLeft > 0) {
            this.collected.push(ti);
            this.collectLeft--;
          }
          n++;
        }
        continue;
      }
      const ti = this.termIndex(text, start, i, h, true);
      const t = this.count(field, ti);
      if (posBase >= 0) this.position(t, posBase + n);
      if (this.collectLeft > 0) {
        this.collected.push(ti);
        this.collectLeft--;
      }
      n++;
      // Letters and digits mixed (utf8, elma04): their runs are terms too (not counted in length).
      if (kinds === 3) for (const part of alnumParts(text.slice(start, i).toLowerCase())) this.add(field, part);
    }
    return n;
  }

  /**
   * Term index of text[start, end), created when new; `h` is its {@link hashWord}. With `fold`
   * the characters are plain ASCII letters and digits, lower-cased through {@link LOWER} on the
   * fly (words straight from the text); without, the term is taken as it is.
   */
  private termIndex(text: string, start: number, end: number, h: number, fold: boolean): number {
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
      while (j < len && this.chars[off + j] === (fold ? LOWER[text.charCodeAt(start + j)] : text.charCodeAt(start + j))) j++;
      if (j === len) return v - 1;
    }
    this.reserveChars(len);
    for (let j = 0; j < len; j++) this.chars[this.charsUsed + j] = fold ? LOWER[text.charCodeAt(start + j)]! : text.charCodeAt(start + j);
    const term = text.slice(start, end);
    return this.create(fold ? term.toLowerCase() : term, h);
  }

  /** Counts term `i` in `field` of the current document; returns its touched index. */
  private count(field: number, i: number): number {
    const r = i * REC;
    let t: number;
    if (this.rec[r + R_SEEN] !== this.doc) {
      this.rec[r + R_SEEN] = this.doc;
      t = this.nTouched++;
      this.rec[r + R_LOCAL] = t;
      if (t === this.touched.length) {
        this.touched = withCapacity(this.touched, t, t + 1);
        this.counts = withCapacity(this.counts, t * NFIELDS, (t + 1) * NFIELDS);
      }
      this.touched[t] = i;
      this.counts.fill(0, t * NFIELDS, t * NFIELDS + NFIELDS);
    } else t = this.rec[r + R_LOCAL]!;
    const k = t * NFIELDS + field;
    if (this.counts[k]! < 65535) this.counts[k]!++;
    return t;
  }

  /**
   * Ends the current document; `languageBits` (one bit per language of the build, 0 for none)
   * is or-ed into each of its terms, so each term is stemmed in the languages it occurs in.
   */
  end(languageBits: number): void {
    const sc = this.counts;
    const e = this.entry;
    const rec = this.rec;
    this.groupPositions();
    const start = this.posStart;
    for (let t = 0; t < this.nTouched; t++) {
      const i = this.touched[t]!;
      const r = i * REC;
      const n = encodePosting(e, rec[r + R_DF] === 0 ? this.doc : this.doc - rec[r + R_LAST]!, sc, t * NFIELDS);
      this.pool.append(i, e, n);
      const from = start[t]!;
      const to = start[t + 1]!;
      if ((to - from + 1) * MAX_VARINT_BYTES > this.posBytes.length) this.posBytes = withCapacity(this.posBytes, 0, (to - from + 1) * MAX_VARINT_BYTES);
      this.posPool.append(i, this.posBytes, encodePositions(this.posBytes, 0, this.posSorted, from, to));
      if (to > from) this.hasPos[i] = 1;
      rec[r + R_DF]!++;
      rec[r + R_LAST] = this.doc;
      rec[r + R_LANGS]! |= languageBits;
    }
    this.nTouched = 0;
    this.nPos = 0;
  }

  /**
   * Groups the current document's positions by touched term (a counting sort, stable: each
   * term's positions stay ascending): term t's are posSorted[posStart[t], posStart[t + 1]).
   */
  private groupPositions(): void {
    const nt = this.nTouched;
    this.posStart = withCapacity(this.posStart, 0, nt + 1);
    const start = this.posStart;
    start.fill(0, 0, nt + 1);
    for (let k = 0; k < this.nPos; k++) start[this.posT[k]! + 1]!++;
    for (let t = 0; t < nt; t++) start[t + 1]! += start[t]!;
    this.posSorted = withCapacity(this.posSorted, 0, this.nPos);
    // Fill from the back with each term's end as cursor, then the starts are restored.
    for (let k = this.nPos - 1; k >= 0; k--) {
      const t = this.posT[k]!;
      this.posSorted[--start[t + 1]!] = this.posV[k]!;
    }
    // start[t + 1] now holds term t's start; shift back to starts and ends.
    for (let t = 0; t < nt; t++) start[t] = start[t + 1]!;
    start[nt] = this.nPos;
  }

  /**
   * The encoded postings of term `i` (a view valid until the next call) and its document
   * frequency (after the last {@link end}).
   */
  postings(i: number): [Buffer, number] {
    return [this.pool.bytes(i), this.rec[i * REC + R_DF]!];
  }

  /** The document frequency of term `i` (after the last {@link end}). */
  df(i: number): number {
    return this.rec[i * REC + R_DF]!;
  }

  /** The byte length of term `i`'s encoded postings. */
  postingsLength(i: number): number {
    return this.pool.length(i);
  }

  /** Copies term `i`'s encoded postings into `dest` at `at` ({@link postingsLength} bytes). */
  copyPostings(i: number, dest: Uint8Array, at: number): void {
    this.pool.copyTo(i, dest, at);
  }

  /** The byte length of term `i`'s positions blob, -1 when it has none (see {@link positions}). */
  positionsLength(i: number): number {
    return this.hasPos[i] ? this.posPool.length(i) : -1;
  }

  /** Copies term `i`'s positions blob into `dest` at `at` ({@link positionsLength} bytes). */
  copyPositions(i: number, dest: Uint8Array, at: number): void {
    this.posPool.copyTo(i, dest, at);
  }

  /**
   * The positions blob of term `i` (postings.ts; a view valid until the next call), or null
   * when no document gave the term a position (compounds and letter/digit parts only).
   */
  positions(i: number): Buffer | null {
    return this.hasPos[i] ? this.posPool.bytes(i) : null;
  }

  /** The language bits of the documents term `i` occurred in (see {@link end}). */
  languageBits(i: number): number {
    return this.rec[i * REC + R_LANGS]!;
  }
}

/** Int32s per term record of {@link PostingsBuilder} (32 bytes: one cache line holds two). */
const REC = 8;
/** Record fields: last document that counted the term, its position in that document's touched list, df, last document id, the language bits of the documents it occurred in, hash, characters' offset and length in the arena. */
const R_SEEN = 0;
const R_LOCAL = 1;
const R_DF = 2;
const R_LAST = 3;
const R_LANGS = 4;
const R_HASH = 5;
const R_OFF = 6;
const R_LEN = 7;

/**
 * Bytes per pool chunk (blocks never span two chunks): 32 MiB, glibc's largest dynamic mmap
 * threshold, so every full chunk is its own mmap — lazily zero, resident only where written,
 * and given back to the OS when the build's pool is collected. Smaller chunks would raise
 * glibc's mmap threshold once the first is freed, and from then on come from the pool thread's
 * malloc arena, which glibc keeps: every build would grow the thread's resident memory.
 */
const POOL_CHUNK_BITS = 25;
/**
 * The first chunk starts at 64 KiB and doubles (copied) up to 4 MiB, then grows to the full
 * chunk size at once: most builds need far less than one chunk (a few MiB for a thousand
 * pages, tens of KiB for a push of a few pages), and a 32 MiB allocation per pool is a fixed
 * cost of every build — it is external memory to V8, whose pressure triggers a collection,
 * about 15 ms per pool and build whatever the build's size. The steps come from the malloc
 * arena once glibc has raised its mmap threshold past them, and stay resident there for the
 * next build to reuse: stopping at 4 MiB keeps that to a few MiB per pool whatever the
 * largest build.
 */
const FIRST_CHUNK_BITS = 16;
const GROW_BITS = 22;
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
  /** Starting size of the first chunk. */
  private readonly firstSize: number;
  /** The first chunk doubles up to this size, then grows to the chunk size. */
  private readonly growMax: number;
  /** Bytes taken in the last chunk. */
  private used = 0;
  private lists = 0;
  /**
   * Per list, {@link LIST} Int32s side by side (an append touches all of them, and a build
   * appends to a few hundred random lists per document, so one cache line per list): first
   * block, write position, end of the current block's payload, its size, bytes written.
   */
  private st = new Int32Array(1024 * LIST);

  /**
   * `chunkBits`: log2 of the chunk size; `firstBits`: log2 of the first chunk's starting size
   * (at least {@link MAX_BLOCK}); `growBits`: log2 of the size up to which it doubles before it
   * grows to the chunk size. Tests use small chunks to cross chunk boundaries.
   */
  constructor(chunkBits = POOL_CHUNK_BITS, firstBits = FIRST_CHUNK_BITS, growBits = GROW_BITS) {
    this.bits = chunkBits;
    this.chunk = 1 << chunkBits;
    this.firstSize = Math.min(this.chunk, Math.max(MAX_BLOCK, 1 << firstBits));
    this.growMax = 1 << growBits;
  }

  /** Adds an empty list (index = the number of lists before). */
  addList(): void {
    const i = this.lists++;
    if ((i + 1) * LIST > this.st.length) this.st = withCapacity(this.st, i * LIST, (i + 1) * LIST);
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
      // A byte loop: entries are a few bytes, and a subarray view per entry would be garbage.
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
    const len = this.length(i);
    if (this.scratch.length < len) this.scratch = Buffer.allocUnsafe(Math.max(len, this.scratch.length * 2));
    this.copyTo(i, this.scratch, 0);
    return this.scratch.subarray(0, len);
  }

  /** The byte length of list `i`. */
  length(i: number): number {
    return this.st[i * LIST + L_LENGTH]!;
  }

  /** Copies the bytes of list `i` into `dest` from `at` on ({@link length} bytes; `dest` must hold them). */
  copyTo(i: number, dest: Uint8Array, at: number): void {
    let left = this.st[i * LIST + L_LENGTH]!;
    let b = this.st[i * LIST + L_HEAD]!;
    let size = FIRST_BLOCK;
    while (left > 0) {
      const c = this.chunks[b >>> this.bits]!;
      const o = b & (this.chunk - 1);
      const n = Math.min(left, size - 4);
      // A byte loop for the short lists most terms have; a view and a native copy beyond.
      if (n <= 32) for (let k = 0; k < n; k++) dest[at + k] = c[o + k]!;
      else dest.set(c.subarray(o, o + n), at);
      at += n;
      left -= n;
      if (left === 0) break;
      b = c[o + size - 4]! | (c[o + size - 3]! << 8) | (c[o + size - 2]! << 16) | (c[o + size - 1]! << 24);
      size = Math.min(size * 2, MAX_BLOCK);
    }
  }

  /**
   * Address of a fresh block of `size` bytes: in the last chunk, the first chunk grown
   * (its bytes copied: addresses stay valid) while it is smaller than a full chunk, or a new
   * full chunk.
   */
  private block(size: number): number {
    if (this.chunks.length === 0) this.chunks.push(new Uint8Array(this.firstSize));
    let last = this.chunks[this.chunks.length - 1]!;
    if (this.used + size > last.length) {
      if (last.length < this.chunk) {
        let cap = last.length * 2;
        while (cap < this.used + size) cap *= 2;
        const grown = new Uint8Array(cap > this.growMax ? this.chunk : Math.min(cap, this.chunk));
        grown.set(last.subarray(0, this.used));
        this.chunks[this.chunks.length - 1] = last = grown;
      }
      if (this.used + size > last.length) {
        this.chunks.push(new Uint8Array(this.chunk));
        this.used = 0;
      }
    }
    const b = (this.chunks.length - 1) * this.chunk + this.used;
    this.used += size;
    return b;
  }
}
