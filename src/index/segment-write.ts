/**
 * The build stage of a segment (pool worker thread, `workers/build-segment.ts`): analyses the
 * documents of a flush and writes them, their delete markers and their postings into a new
 * segment file (format: segment-format.ts).
 *
 * Invariants: at most one entry per URL; docIds follow the order of the entries; only status-200
 * rows are analysed and counted (other rows keep their text in `body` only); the file is sealed
 * (fsync'd) before {@link writeSegment} returns and is never written again.
 */
import type Database from 'better-sqlite3';
import type { PageDoc } from '../core/index.js';
import { words, urlWords, stemEn, stemSnowball, hasStemmer, urlCompounds, analyzeText, BUILTIN_CONTENT_WORDS, type DocWords } from '../text/index.js';
import { PostingsBuilder } from './postings-builder.js';
import { packText } from './stored-codec.js';
import {
  DOC_COLUMNS,
  FTS_BEGIN,
  FTS_END,
  NFIELDS,
  createFile,
  hashWord,
  insertDeletes,
  sealFile,
  SeqRange,
  type SegmentDelete,
  type SegmentEntry,
  type SegmentInfo,
  vectorInserter,
} from './segment-format.js';

export interface WriteOptions {
  /** Project default language (ISO 639-1) for docs with `language: null`. */
  defaultLanguage: string;
  /**
   * Embeds each searchable row while it is written (the built-in embedder): its vector, or null
   * for a page with no known word. With `embedder`, the fingerprint recorded in `meta`. `words`,
   * when given, are the page's words as the build has just analysed them (title, headings, the
   * first {@link BUILTIN_CONTENT_WORDS} of description and content: see {@link DocWords}).
   */
  embed?: (doc: PageDoc, words?: DocWords | null) => Float32Array | null;
  embedder?: string;
}

/**
 * Words and compounds of the four short fields (title, keywords, headings, url), in FIELDS
 * order. Content is counted straight from its string ({@link PostingsBuilder.addText}) and has no
 * compounds: they matter for identifiers in titles, headings and URLs, and finding them in long
 * text costs a second pass.
 */
function analyzeShortFields(doc: PageDoc): { words: string[][]; compounds: string[][] } {
  const w: string[][] = [];
  const c: string[][] = [];
  for (const t of [doc.title, doc.keywords.join(' \u2029 '), doc.headings.join(' \u2029 ')]) {
    const r = analyzeText(t);
    w.push(r.words);
    c.push(r.compounds);
  }
  w.push(urlWords(doc.url));
  c.push(urlCompounds(doc.url));
  return { words: w, compounds: c };
}

/** Hashes of each heading's folded words (for exact-heading matching in memory), given `words()` of each heading. */
function headingKeysBlob(perHeading: readonly string[][]): Buffer {
  const keys = new Int32Array(perHeading.length);
  perHeading.forEach((ws, i) => (keys[i] = hashWord(ws.join(' '))));
  return Buffer.from(keys.buffer);
}

/** The headings as the `headings` column holds them: each between {@link FTS_BEGIN} and {@link FTS_END}. */
function markedHeadings(headings: string[]): string {
  return headings.map((h) => `${FTS_BEGIN} ${h} ${FTS_END}`).join(' ');
}

/**
 * The word position of each heading word (in the order of `analyzeText(headings joined)`):
 * the headings follow each other from `base` on, one unused position between two, so that a
 * phrase never runs from one heading into the next. `count` is the number of heading words.
 * Returns the first position after the headings.
 */
function headingPositions(perHeading: readonly string[][], count: number, base: number, out: number[]): number {
  out.length = 0;
  if (perHeading.length > 1) {
    const per = perHeading.map((ws) => ws.length);
    if (per.reduce((a, b) => a + b, 0) === count) {
      for (const n of per) {
        for (let k = 0; k < n; k++) out.push(base + k);
        base += n + 1;
      }
      return base;
    }
  }
  // One heading (or a split that does not add up): consecutive positions.
  for (let k = 0; k < count; k++) out.push(base + k);
  return base + count + 1;
}

/**
 * Analyses the searchable documents of one segment into its postings, word positions and stem
 * rows (the build, and a merge that converts a segment of an older format): the analysis of
 * {@link writeSegment}, documents given in id order.
 */
export class SegmentIndexer {
  readonly pb = new PostingsBuilder();
  /** Languages of the searchable rows. */
  readonly languages = new Set<string>();
  /** The Snowball languages (not English) that got a language bit, bit k + 1 for stemmed[k]. */
  private readonly stemmed: string[] = [];
  private readonly headingPos: number[] = [];
  /** `words()` of each heading of the last added row. */
  private headingWords: string[][] = [];
  /** The last added row's words for the embedder (with `collect`), or null. */
  private docWords: DocWords | null = null;

  /** `collect`: keep each row's words for the built-in embedder ({@link lastDocWords}). */
  constructor(private readonly collect = false) {}

  /** The first 31 Snowball languages get a bit for stems; English is bit 0. */
  private bitOf(lang: string): number {
    if (lang === 'en') return 1;
    if (!hasStemmer(lang)) return 0;
    let k = this.stemmed.indexOf(lang);
    if (k < 0 && this.stemmed.length < 30) k = this.stemmed.push(lang) - 1;
    return k < 0 ? 0 : 1 << (k + 1);
  }

  /**
   * Counts the words of searchable row `id` (language `lang`: its own or the project default)
   * and returns its token count per field.
   */
  add(id: number, d: PageDoc, lang: string): number[] {
    const pb = this.pb;
    const { words: fw, compounds: fc } = analyzeShortFields(d);
    pb.begin(id);
    const lengths = [...fw.map((w) => w.length), 0];
    // Word positions for phrases: title, headings, content (the columns FTS5 indexed in formats 1–3).
    const title = fw[0]!;
    for (let k = 0; k < title.length; k++) pb.add(0, title[k]!, k);
    for (const w of fc[0]!) pb.add(0, w);
    for (const w of fw[1]!) pb.add(1, w);
    for (const w of fc[1]!) pb.add(1, w);
    const hp = this.headingPos;
    // Each heading's words, for its positions here and its key in the docs row (writeSegment).
    const perHeading = d.headings.map((h) => words(h));
    this.headingWords = perHeading;
    const contentBase = headingPositions(perHeading, fw[2]!.length, title.length + 1, hp);
    fw[2]!.forEach((w, k) => pb.add(2, w, hp[k]!));
    for (const w of fc[2]!) pb.add(2, w);
    for (const w of fw[3]!) pb.add(3, w);
    for (const w of fc[3]!) pb.add(3, w);
    // Content, the bulk of the text, is counted straight from the string; the description
    // counts as content but has no positions (phrases match title, headings and content).
    if (this.collect) pb.collectWords(BUILTIN_CONTENT_WORDS);
    let n = d.description ? pb.addText(NFIELDS - 1, d.description) : 0;
    n += pb.addText(NFIELDS - 1, d.content, contentBase);
    lengths[NFIELDS - 1] = n;
    if (this.collect) {
      const content = pb.collectedWords();
      this.docWords = content ? { title, headings: fw[2]!, content } : null;
    }
    this.languages.add(lang);
    pb.end(this.bitOf(lang));
    return lengths;
  }

  /**
   * The words of the row {@link add} counted last, for the built-in embedder (the indexer made
   * with `collect`): title, headings and the opening of the content, as `embedParts` would read
   * them. Null when not collecting, or when the content holds a character after which
   * its words are better read again (PostingsBuilder.collectedWords).
   */
  lastDocWords(): DocWords | null {
    return this.docWords;
  }

  /** `words()` of each heading of the row {@link add} counted last. */
  lastHeadingWords(): readonly string[][] {
    return this.headingWords;
  }

  /**
   * Inserts the `terms`, `positions` and `stems` rows (inside the caller's transaction), terms
   * in order, each table's rows in the order one INSERT per row would add them but
   * {@link INSERT_BATCH} rows per statement: a small site's vocabulary is tens of terms per page
   * (several times that of a large one, and twice the rows with a Snowball language's stems),
   * and a statement run per row cost more than the rows themselves.
   */
  writeTerms(db: Database.Database): void {
    const pb = this.pb;
    const insTerm = new BatchInserter(db, 'terms', ['term', 'stem', 'df', 'postings', 'pos']);
    const insPos = new BatchInserter(db, 'positions', ['id', 'data']);
    let posId = 0;
    const insStem = new BatchInserter(db, 'stems', ['stem', 'term']);
    const stemmed = this.stemmed;
    for (const i of sortedOrder(pb.terms)) {
      const term = pb.terms[i]!;
      const bits = pb.languageBits(i);
      const stem = bits & 1 ? stemEn(term) : term;
      const plen = pb.positionsLength(i);
      const pos = plen >= 0 ? ++posId : null;
      if (plen > BIG_BLOB) insPos.runAlone([posId, pb.positions(i)]);
      else if (plen >= 0) {
        insPos.push(posId);
        pb.copyPositions(i, insPos.pushBlob(plen), 0);
        insPos.endRow();
      }
      if (pb.postingsLength(i) > BIG_BLOB) insTerm.runAlone([term, stem, pb.df(i), pb.postings(i)[0], pos]);
      else {
        insTerm.push(term);
        insTerm.push(stem);
        insTerm.push(pb.df(i));
        pb.copyPostings(i, insTerm.pushBlob(pb.postingsLength(i)), 0);
        insTerm.push(pos);
        insTerm.endRow();
      }
      for (let k = 0; k < stemmed.length; k++) {
        if (!(bits & (1 << (k + 1)))) continue;
        insStem.push(`${stemmed[k]}:${stemSnowball(term, stemmed[k]!)}`);
        insStem.push(term);
        insStem.endRow();
      }
    }
    insPos.flush();
    insTerm.flush();
    insStem.flush();
  }
}

/** Index bits below a term's two-unit key in {@link sortedOrder} (up to 2^21 terms). */
const ORDER_BITS = 2 ** 21;
/** Groups of at most this many terms sharing a prefix are ordered by comparing strings. */
const ORDER_SMALL = 12;

/**
 * The indexes of `terms` (distinct) in the order of their strings (UTF-16 code units, as `<`
 * compares them). Two code units of each term at a time, with its index below them, are sorted
 * as numbers in one native sort, first the first two units of every term, then within each
 * group that shares them the next two, and so on; only small groups are compared as strings. A
 * comparison sort of all of them costs several times more (tens of thousands of terms per
 * segment, and German compounds share long prefixes: `konfigurations…`).
 */
export function sortedOrder(terms: readonly string[]): number[] {
  const n = terms.length;
  if (n >= ORDER_BITS) return terms.map((_, i) => i).sort((x, y) => (terms[x]! < terms[y]! ? -1 : 1));
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  orderRange(terms, order, 0, n, 0);
  return order;
}

/** Orders `order[start, end)`, terms sharing their first `depth` code units (see {@link sortedOrder}). */
function orderRange(terms: readonly string[], order: number[], start: number, end: number, depth: number): void {
  const m = end - start;
  if (m <= ORDER_SMALL) {
    // Insertion sort in place: most groups hold two or three terms.
    for (let k = start + 1; k < end; k++) {
      const x = order[k]!;
      const tx = terms[x]!;
      let j = k - 1;
      while (j >= start && terms[order[j]!]! > tx) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = x;
    }
    return;
  }
  // (u0 · 2^16 + u1) · 2^21 + k < 2^53: exact in a double (a missing unit counts as 0, before any other).
  const keys = new Float64Array(m);
  let longest = 0;
  for (let k = 0; k < m; k++) {
    const t = terms[order[start + k]!]!;
    if (t.length > longest) longest = t.length;
    keys[k] = ((t.length > depth ? t.charCodeAt(depth) : 0) * 65536 + (t.length > depth + 1 ? t.charCodeAt(depth + 1) : 0)) * ORDER_BITS + k;
  }
  if (longest <= depth) {
    // Only terms that differ in a NUL unit could get here: compare them as strings.
    const part = order.slice(start, end).sort((x, y) => (terms[x]! < terms[y]! ? -1 : 1));
    for (let k = 0; k < m; k++) order[start + k] = part[k]!;
    return;
  }
  keys.sort();
  const was = order.slice(start, end);
  for (let k = 0; k < m; k++) order[start + k] = was[keys[k]! % ORDER_BITS]!;
  // Groups sharing these two units as well: distinct terms, so each group of two or more holds
  // terms longer than depth + 2 units, ordered by their next units.
  let from = 0;
  for (let k = 1; k <= m; k++) {
    if (k < m && Math.floor(keys[k]! / ORDER_BITS) === Math.floor(keys[from]! / ORDER_BITS)) continue;
    if (k - from > 1) orderRange(terms, order, start + from, start + k, depth + 2);
    from = k;
  }
}

/** Rows per multi-row INSERT in {@link SegmentIndexer.writeTerms}. */
const INSERT_BATCH = 32;
/** Blobs longer than this are not copied into a batch (see BatchInserter). */
const BIG_BLOB = 16 * 1024;

type SqlValue = string | number | Buffer | Uint8Array | null;

/**
 * Appends rows to `table` {@link INSERT_BATCH} at a time (one multi-row INSERT statement), the
 * rest one by one at {@link flush}: the values of a row one by one ({@link push},
 * {@link pushBlob}), then {@link endRow}. Rows go in in the order they were ended; the caller
 * flushes before the transaction ends. Blobs are written by the caller straight into this
 * inserter's own arena, where they stay until their statement runs (SQLite then copies them in
 * turn), so a build's tens of thousands of short lists cost no buffer each; a row holding a
 * blob over {@link BIG_BLOB} bytes is inserted at once ({@link runAlone}), so the arena stays
 * under INSERT_BATCH × BIG_BLOB bytes.
 */
class BatchInserter {
  private readonly one: Database.Statement;
  private readonly many: Database.Statement;
  private readonly width: number;
  /** The values of the batch being filled: exactly INSERT_BATCH rows' worth when it runs. */
  private readonly buf: SqlValue[];
  private n = 0;
  private arena = Buffer.allocUnsafe(64 * 1024);
  private used = 0;

  constructor(db: Database.Database, table: string, cols: readonly string[]) {
    const tuple = `(${cols.map(() => '?').join(',')})`;
    const head = `INSERT INTO ${table}(${cols.join(',')}) VALUES `;
    this.one = db.prepare(head + tuple);
    this.many = db.prepare(head + new Array<string>(INSERT_BATCH).fill(tuple).join(','));
    this.width = cols.length;
    this.buf = new Array<SqlValue>(INSERT_BATCH * cols.length).fill(null);
  }

  /** The next value of the current row. */
  push(v: SqlValue): void {
    this.buf[this.n++] = v;
  }

  /**
   * The next value of the current row: a blob of `len` (≤ BIG_BLOB) bytes in the arena,
   * returned for the caller to fill before the row ends.
   */
  pushBlob(len: number): Buffer {
    if (this.used + len > this.arena.length) {
      // Views already handed out keep the old arena alive until their statement runs.
      this.arena = Buffer.allocUnsafe(2 * this.arena.length);
      this.used = 0;
    }
    const v = this.arena.subarray(this.used, this.used + len);
    this.buf[this.n++] = v;
    this.used += len;
    return v;
  }

  /** Ends the current row; runs the batch once it holds INSERT_BATCH rows. */
  endRow(): void {
    if (this.n === this.buf.length) {
      this.many.run(this.buf);
      this.n = 0;
      this.used = 0;
    }
  }

  /** Inserts `row` at once, after the rows before it (a long list goes in alone, uncopied). */
  runAlone(row: SqlValue[]): void {
    this.flush();
    this.one.run(row);
  }

  /** Inserts the rows of a batch not yet full, one by one. */
  flush(): void {
    for (let i = 0; i < this.n; i += this.width) this.one.run(this.buf.slice(i, i + this.width));
    this.n = 0;
    this.used = 0;
  }
}

/**
 * Writes a new segment file at `path` (must not exist) holding `entries` and `deletes`
 * (the caller has already de-duplicated: at most one entry per URL). `entries` is consumed
 * once, in order (docIds follow it), and may be a generator that streams them. Synchronous;
 * runs in a pool worker. The file is complete and fsync'd when this returns; the caller renames
 * it into place and fsyncs the directory.
 *
 * @example
 * const info = writeSegment(`${dir}/s1.seg.tmp`, [{ seq: 1, at, firstAt: at, doc }], [], { defaultLanguage: 'en' });
 */
export function writeSegment(path: string, entries: Iterable<SegmentEntry>, deletes: SegmentDelete[], opts: WriteOptions): SegmentInfo {
  const db = createFile(path);
  const ix = new SegmentIndexer(opts.embed !== undefined);
  let docCount = 0;
  let searchable = 0;
  const seqs = new SeqRange();
  try {
    const insVec = opts.embed ? vectorInserter(db) : null;
    const insDoc = db.prepare(`INSERT INTO docs(${DOC_COLUMNS}) VALUES (${DOC_COLUMNS.split(',').map(() => '?').join(',')})`);
    db.transaction(() => {
      // One entry at a time: a streamed source (the write log) is never held whole.
      for (const e of entries) {
        const id = docCount++;
        const d = e.doc;
        seqs.add(e.seq);
        const ok = d.status === 200;
        let lengths = [0, 0, 0, 0, 0];
        if (ok) {
          searchable++;
          lengths = ix.add(id, d, d.language ?? opts.defaultLanguage);
        }
        insDoc.run(
          id, d.url, e.seq, e.at, e.firstAt, d.status, JSON.stringify(lengths), d.boost,
          d.contentGroup, d.documentType, d.language, JSON.stringify(d.filters), JSON.stringify(d.dataPoints),
          ok ? d.title : '', packText(ok ? markedHeadings(d.headings) : ''), packText(ok ? d.content : ''), d.imageUrl, d.description ?? null,
          ok && d.headings.length ? headingKeysBlob(ix.lastHeadingWords()) : null,
          packText(JSON.stringify({ ...d, content: ok ? undefined : d.content, title: ok ? undefined : d.title })),
        );
        if (ok && insVec) {
          const v = opts.embed!(d, ix.lastDocWords());
          if (v) insVec(id, v);
        }
      }
      insertDeletes(db, deletes, seqs);
      ix.writeTerms(db);
    })();
  } catch (e) {
    db.close();
    throw e;
  }
  const meta: Record<string, string> = opts.embed && opts.embedder ? { embedder: opts.embedder } : {};
  return sealFile(db, path, { docCount, searchableCount: searchable, deleteCount: deletes.length }, seqs, ix.languages, meta);
}
