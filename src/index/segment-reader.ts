/**
 * The read side of a sealed segment (format: segment-format.ts). {@link SegmentReader} opens
 * one read-only, on the main thread (liveness bookkeeping, reports) and on each search thread
 * (queries), and keeps decoded postings in a byte-bounded CLOCK cache shared by every reader of
 * the thread; {@link readRowColumns} loads the per-row columns the store's liveness bookkeeping
 * keeps in memory.
 *
 * Invariants: a segment file never changes once sealed, so everything read from it may be
 * cached for the reader's lifetime; whole-table scans go through short-lived connections
 * ({@link scanWith}), never through the reader's own, whose page cache stays small.
 */
import Database from 'better-sqlite3';
import type { PageDoc, FilterValue, DataPoint } from '../core/index.js';
import { words } from '../text/index.js';
import { engineCacheBudget, engineCacheUsed, evictByClock, postingsPool, readerPageCaches, type ClockEntry } from './budgets.js';
import { consecutive, decodePostings, decodePostingsInto, PositionsCursor, type Postings } from './postings.js';
import { allocRowVectors, type RowVectorBlock } from './vector-memory.js';
import { NFIELDS, PACKED_FORMAT, SCAN_CACHE_KB, hasPositionsTable, infoFrom, scanWith, type SegmentDelete, type SegmentEntry, type SegmentInfo, type SegmentRow } from './segment-format.js';
import { storedText, unpackPrefix } from './stored-codec.js';

/** Per-document values kept in memory for filtering, facets, sorting and scoring. */
export interface DocValues {
  urls: string[];
  status: Int32Array;
  boost: Float64Array;
  /** lengths[id * NFIELDS + f] */
  lengths: Uint32Array;
  group: string[];
  docType: string[];
  /** The row's own language (ISO 639-1), null for the project default. */
  language: Array<string | null>;
  filters: Array<FilterValue[] | null>;
  dataPoints: Array<DataPoint[] | null>;
}

/**
 * A segment's row vectors in memory (search threads): row `id` at `data[id * dims]`, when
 * `has[id]`; `memory`/`scratch`: where `data` lives (vector-memory.ts).
 */
export interface SegmentVectors extends RowVectorBlock {
  fp: string;
  dims: number;
  has: Uint8Array;
}

/** What a reader decoded from its file and keeps until evicted (postings lists). */
interface DecodedEntry extends ClockEntry {
  /** Forgets the entry in its reader (the CLOCK has already removed it). */
  drop(): void;
}

/** One cached postings list ({@link Postings}), or one positions blob as stored (Uint8Array). */
class PostingsEntry<T = Postings> implements DecodedEntry {
  used = false;
  /**
   * The list's BM25F values under the scoring setups the engine asked for (src/search/score.ts),
   * newest last: at most {@link MAX_SETUPS}, so setups of past generations (whose averages
   * differed) age out as new ones come. Postings lists only.
   */
  values: Array<{ setup: string; v: Float64Array; pooled: boolean }> | null = null;
  /**
   * Set when the list or its values were handed out outside a search scope (budgets.ts,
   * BufferPool): the holder may keep them, so the buffers are never recycled.
   */
  escaped = false;
  constructor(
    readonly p: T | null,
    public bytes: number,
    private readonly owner: Map<string, PostingsEntry<T>>,
    private readonly term: string,
    /** The pooled buffers of the list (ids, tfs), recycled when the entry is evicted. */
    readonly bufs: ArrayBuffer[] | null = null,
  ) {}
  /** Evicted: forgotten by its reader, its pooled buffers (list and values) back to the pool. */
  drop(): void {
    this.owner.delete(this.term);
    if (this.escaped) return;
    if (this.bufs) for (const b of this.bufs) postingsPool.give(b);
    if (this.values) for (const x of this.values) if (x.pooled) postingsPool.give(x.v.buffer as ArrayBuffer);
  }
}

/** Open readers of this thread: when the last one closes, the pool's free buffers go too. */
let openReaders = 0;

/**
 * Scoring setups whose values one list keeps: the short-query and the long-query setup of the
 * current generation (src/search/score.ts, scoringFor).
 */
const MAX_SETUPS = 2;

/**
 * Eviction order of what every reader of this thread decoded (postings lists and row vectors
 * of all segments of all projects together), charged to the `postings` engine budget
 * (insertion order, CLOCK: see evictByClock).
 */
const decodedClock = new Set<DecodedEntry>();

/**
 * Bytes the entries of this thread's postings cache count (lists, their values, positions
 * blobs): with the pool's free buffers, what `engineCacheUsed.postings` holds (tests).
 */
export function cachedPostingsBytes(): number {
  let n = 0;
  for (const e of decodedClock) n += e.bytes;
  return n;
}

/** Adds a decoded entry to this thread's budget, evicting others (or it) when over. */
function chargeDecoded(e: DecodedEntry): void {
  decodedClock.add(e);
  engineCacheUsed.postings += e.bytes;
  if (engineCacheUsed.postings > engineCacheBudget.postings) evictByClock('postings', decodedClock, (x) => x.drop());
}

/** SQLite page cache (KiB) of each segment reader connection. */
export const READER_CACHE_KB = 2048;

/** Longest content prefix read for a result (the snippet scans at most this much). */
export const CARD_CONTENT_LIMIT = 12_000;

/** The fields a search result shows. */
export interface ResultCard {
  url: string;
  title: string;
  content: string;
  documentType: string;
  dataPoints: DataPoint[];
  imageUrl: string | null;
  description: string;
}


/** Read-only view of one segment file. Open once per published segment; close when unreferenced. */
export class SegmentReader {
  readonly path: string;
  readonly info: SegmentInfo;
  private readonly db: Database.Database;
  private values: DocValues | null = null;
  private readonly stmtTerm: Database.Statement;
  private readonly stmtHas: Database.Statement;
  private readonly stmtStem: Database.Statement;
  private readonly stmtLangStem: Database.Statement | null;
  /** Languages of the searchable rows (meta `languages`; format 1 files: English). */
  readonly languages: readonly string[];
  private readonly stmtPrefix: Database.Statement;
  private readonly stmtBody: Database.Statement;
  private readonly stmtMeta: Database.Statement;
  private readonly stmtCard: Database.Statement;
  private readonly stmtCardNoContent: Database.Statement;
  /** Word positions of a term (format 4 and later), or, in older files, an FTS5 phrase query. */
  private readonly stmtPositions: Database.Statement | null;
  private readonly stmtPhrase: Database.Statement | null;
  private readonly stmtUrl: Database.Statement;
  private readonly stmtHkeys: Database.Statement;
  private readonly stmtTitle: Database.Statement;
  /** Title and heading keys by row id, derived on first use (bounded by the row count). */
  private titleKeys: Array<string | undefined> | null = null;
  private headingKeyCache: Array<Int32Array | null | undefined> | null = null;
  /** This reader's cached postings (entries also sit in the shared eviction order). */
  private readonly postingsMap = new Map<string, PostingsEntry>();
  /** This reader's cached positions blobs (phrases), in the same eviction order. */
  private readonly positionsMap = new Map<string, PostingsEntry<Uint8Array>>();
  /** Row vectors, read on first use and kept until close (undefined: not read yet). */
  private vecs: { v: SegmentVectors | null } | undefined;
  /** Run once at close (engine caches kept outside the reader drop its entries then). */
  private readonly closeHooks: Array<() => void> = [];

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.db = db;
    this.info = infoFrom(db, path);
    this.stmtTerm = db.prepare('SELECT postings FROM terms WHERE term = ?').pluck();
    this.stmtHas = db.prepare('SELECT 1 FROM terms WHERE term = ?').pluck();
    this.stmtStem = db.prepare('SELECT term FROM terms WHERE stem = ?').pluck();
    const hasStems = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'stems'").get() !== undefined;
    this.stmtLangStem = hasStems ? db.prepare('SELECT term FROM stems WHERE stem = ?').pluck() : null;
    const langs = db.prepare("SELECT value FROM meta WHERE key = 'languages'").pluck().get() as string | undefined;
    this.languages = (langs ?? 'en').split(',').filter((l) => l !== '');
    this.stmtPrefix = db.prepare('SELECT term FROM terms WHERE term >= ? AND term < ? LIMIT ?').pluck();
    this.stmtBody = db.prepare('SELECT body, title, content, first_at AS firstAt, seq, at FROM docs WHERE id = ?');
    this.stmtMeta = db.prepare('SELECT body, title FROM docs WHERE id = ?');
    // Packed content is cut to the card's limit after unpacking (unpackPrefix): the same code
    // points SQLite's substr gives of the TEXT of older formats.
    const packed = this.info.format >= PACKED_FORMAT;
    this.stmtCard = db.prepare(
      `SELECT url, title, ${packed ? 'content' : `substr(content, 1, ${CARD_CONTENT_LIMIT}) AS content`}, doc_type AS documentType, data_points AS dataPoints, image, description FROM docs WHERE id = ?`,
    );
    this.stmtCardNoContent = db.prepare(
      "SELECT url, title, '' AS content, doc_type AS documentType, data_points AS dataPoints, image, description FROM docs WHERE id = ?",
    );
    const positions = hasPositionsTable(db);
    this.stmtPositions = positions ? db.prepare('SELECT p.data FROM terms t JOIN positions p ON p.id = t.pos WHERE t.term = ?').pluck() : null;
    this.stmtPhrase = positions ? null : db.prepare('SELECT rowid FROM fts WHERE fts MATCH ?').pluck();
    this.stmtUrl = db.prepare('SELECT id FROM docs WHERE url = ?').pluck();
    this.stmtHkeys = db.prepare('SELECT hkeys FROM docs WHERE id = ?').pluck();
    this.stmtTitle = db.prepare('SELECT title FROM docs WHERE id = ?').pluck();
  }

  /** Opens a sealed segment read-only. Throws when the file is missing or of another format. */
  static open(path: string): SegmentReader {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      // Decoded postings, doc values, cards and BM25F values are cached in JS already, and the
      // OS caches the file: the readers of a thread share one page cache budget (at most
      // READER_CACHE_KB each), so memory stays flat as segments and search threads multiply
      // (better-sqlite3's default is 16 MB per connection).
      readerPageCaches.add(db);
      const r = new SegmentReader(path, db);
      openReaders++;
      return r;
    } catch (e) {
      readerPageCaches.delete(db);
      db.close();
      throw e;
    }
  }

  /** This reader's SQLite page cache in KiB (tests, status). */
  pageCacheKb(): number {
    const v = this.db.pragma('cache_size', { simple: true }) as number;
    return v < 0 ? -v : (v * (this.db.pragma('page_size', { simple: true }) as number)) / 1024;
  }

  /** Every row, in docId order. */
  rows(): SegmentRow[] {
    return (
      this.db.prepare('SELECT id, url, seq, at, first_at AS firstAt, status, lengths FROM docs ORDER BY id').all() as Array<
        Omit<SegmentRow, 'lengths'> & { lengths: string }
      >
    ).map((r) => ({ ...r, lengths: JSON.parse(r.lengths) as number[] }));
  }

  deletes(): SegmentDelete[] {
    return this.db.prepare('SELECT url, seq, at FROM deletes').all() as SegmentDelete[];
  }

  /** The stored entry of one row. */
  entry(id: number): SegmentEntry {
    const r = this.stmtBody.get(id) as { body: string | Buffer; title: string; content: string | Buffer; firstAt: number; seq: number; at: number } | undefined;
    if (!r) throw new Error(`no doc ${id} in ${this.path}`);
    const doc = JSON.parse(storedText(r.body)) as PageDoc;
    // Non-searchable rows keep their title and content only in the JSON (they may be absent there).
    if (doc.status === 200) {
      doc.title = r.title;
      doc.content = storedText(r.content);
    } else {
      doc.title ??= '';
      doc.content ??= '';
    }
    return { seq: r.seq, at: r.at, firstAt: r.firstAt, doc };
  }

  /**
   * The report fields of one row (title, type, group, source, message: the values {@link entry}
   * gives) without its content, which a stored entry would unpack in full.
   */
  meta(id: number): Pick<PageDoc, 'title' | 'documentType' | 'contentGroup' | 'source' | 'message'> {
    const r = this.stmtMeta.get(id) as { body: string | Buffer; title: string } | undefined;
    if (!r) throw new Error(`no doc ${id} in ${this.path}`);
    const doc = JSON.parse(storedText(r.body)) as PageDoc;
    return { title: doc.status === 200 ? r.title : (doc.title ?? ''), documentType: doc.documentType, contentGroup: doc.contentGroup, source: doc.source, message: doc.message };
  }

  /**
   * What a search result shows of one row. Cheaper than {@link entry}: the page content is
   * read only when `withContent` (snippets) and the stored JSON only for the small fields.
   */
  card(id: number, withContent: boolean): ResultCard {
    const r = (withContent ? this.stmtCard : this.stmtCardNoContent).get(id) as
      | { url: string; title: string; content: string | Buffer; documentType: string; dataPoints: string; image: string | null; description: string | null }
      | undefined;
    if (!r) throw new Error(`no doc ${id} in ${this.path}`);
    return {
      url: r.url,
      title: r.title,
      content: typeof r.content === 'string' ? r.content : unpackPrefix(r.content, CARD_CONTENT_LIMIT),
      documentType: r.documentType,
      dataPoints: r.dataPoints === '[]' ? [] : (JSON.parse(r.dataPoints) as DataPoint[]),
      imageUrl: r.image || null,
      description: r.description ?? '',
    };
  }

  /**
   * In-memory per-document values, loaded on first use (search threads: at the first search
   * of a generation listing this segment; main thread: reports).
   *
   * Memory: every search thread holds these for every open segment, so they hold no per-row
   * strings beyond the URL — group and document type values are interned (a few distinct
   * values), titles are read per row on demand ({@link titleKey}) — and the rows are scanned
   * through a short-lived connection with a small page cache ({@link SCAN_CACHE_KB}): the scan
   * touches every docs leaf page, and through this reader's own connection it would fill that
   * connection's cache ({@link READER_CACHE_KB}) for good, per segment and per search thread.
   */
  docValues(): DocValues {
    if (this.values) return this.values;
    const n = this.info.docCount;
    const v: DocValues = {
      urls: new Array<string>(n),
      status: new Int32Array(n),
      boost: new Float64Array(n),
      lengths: new Uint32Array(n * NFIELDS),
      group: new Array<string>(n),
      docType: new Array<string>(n),
      language: new Array<string | null>(n).fill(null),
      filters: new Array<FilterValue[] | null>(n).fill(null),
      dataPoints: new Array<DataPoint[] | null>(n).fill(null),
    };
    // One copy of each distinct group / document type (SQLite gives a new string per row).
    const interned = new Map<string, string>();
    const intern = (x: string): string => {
      const y = interned.get(x);
      if (y !== undefined) return y;
      interned.set(x, x);
      return x;
    };
    scanWith(this.path, (db) => {
      // Only columns the covering index docs_url holds (segment-format.ts): SQLite scans that
      // index, never the docs table's pages of stored text. Files written before the index
      // covered them are scanned by table, reading only columns stored before the text.
      const it = db
        .prepare('SELECT id, url, status, lengths, boost, grp, doc_type AS docType, language, filters, data_points AS dataPoints FROM docs')
        .raw()
        .iterate() as IterableIterator<[number, string, number, string, number, string, string, string | null, string, string]>;
      for (const [id, url, status, lengths, boost, grp, docType, language, filters, dataPoints] of it) {
        v.urls[id] = url;
        v.status[id] = status;
        v.boost[id] = boost;
        parseLengths(lengths, v.lengths, id * NFIELDS);
        v.group[id] = intern(grp);
        v.docType[id] = intern(docType);
        if (language !== null) v.language[id] = intern(language);
        if (filters !== '[]') v.filters[id] = JSON.parse(filters) as FilterValue[];
        if (dataPoints !== '[]') v.dataPoints[id] = JSON.parse(dataPoints) as DataPoint[];
      }
    });
    this.values = v;
    return v;
  }

  /**
   * The rows' vectors when this segment was embedded with the embedder named `fp`, else null
   * (searched lexically). Read once through a short-lived connection and kept for the reader's
   * lifetime: dims × 4 bytes per row in each search thread (4 MB per 10,000 pages with the
   * built-in embedder), shown in `GET /admin/memory` as the thread's external memory. They are
   * not evicted under postings pressure: every hybrid search reads all of them, so a thread
   * whose budget is smaller than a large segment's vectors would read them from the file again
   * on every search (seconds at 100,000 pages) instead of holding them.
   */
  vectors(fp: string): SegmentVectors | null {
    if (this.info.embedder !== fp) return null;
    if (this.vecs) return this.vecs.v;
    const v = scanWith(this.path, (db) => {
      const n = this.info.docCount;
      let out: SegmentVectors | null = null;
      // The rows' bytes copied straight into place (a row's blob need not be 4-byte aligned):
      // one copy per row instead of a sliced buffer and a typed array per row.
      let bytes: Uint8Array | null = null;
      for (const [id, blob] of db.prepare('SELECT id, v FROM vecs ORDER BY id').raw().iterate() as IterableIterator<[number, Buffer]>) {
        if (!out) {
          const dims = blob.length >> 2;
          out = { fp, dims, ...allocRowVectors(n, dims), has: new Uint8Array(n) };
          bytes = new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength);
        }
        if (blob.length !== out.dims * 4 || id < 0 || id >= n) continue;
        bytes!.set(blob, id * out.dims * 4);
        out.has[id] = 1;
      }
      return out ?? { fp, dims: 0, data: new Float32Array(0), memory: null, scratch: 0, has: new Uint8Array(n) };
    });
    this.vecs = { v };
    return v;
  }

  /** The stored vector of row `id` when embedded with `fp` (the similar-pages route), else null. */
  vectorOf(id: number, fp: string): Float32Array | null {
    const v = this.vectors(fp);
    if (!v || !v.has[id]) return null;
    return v.data.slice(id * v.dims, (id + 1) * v.dims);
  }

  /** Folded words of a row's title without section numbering, joined by one space (cached). */
  titleKey(id: number): string {
    const keys = (this.titleKeys ??= new Array<string | undefined>(this.info.docCount));
    let k = keys[id];
    if (k === undefined) {
      // Non-searchable rows store '' (writeSegment), as the doc values' titles were.
      const title = (this.stmtTitle.get(id) as string | undefined) ?? '';
      keys[id] = k = words(titleWithoutNumbering(title)).join(' ');
    }
    return k;
  }

  /** The hashWord() of each heading's folded words of a row (null: none; cached). */
  headingKeys(id: number): Int32Array | null {
    const keys = (this.headingKeyCache ??= new Array<Int32Array | null | undefined>(this.info.docCount));
    let k = keys[id];
    if (k === undefined) {
      const b = this.stmtHkeys.get(id) as Buffer | null | undefined;
      keys[id] = k = b ? new Int32Array(new Uint8Array(b).buffer) : null;
    }
    return k;
  }

  /**
   * Sorted vocabulary of this segment, read anew on every call and not kept: the search engine
   * builds its typo trie from it once per segment and thread, and the trie spells words itself
   * (holding the list as well would cost each search thread one JS string per word and
   * segment). Read through a short-lived connection with a small page cache
   * ({@link SCAN_CACHE_KB}), like {@link docValues}: the scan walks the whole terms table
   * (postings are stored inline, about 5 MB for 5,000 pages), and through this reader's own
   * connection it would leave that connection's cache ({@link READER_CACHE_KB}) full for good,
   * per segment and per search thread, since a query with an unknown word or a prefix loads
   * every segment's vocabulary.
   */
  terms(): string[] {
    return scanWith(this.path, (db) => db.prepare('SELECT term FROM terms ORDER BY term').pluck().all() as string[]);
  }

  /**
   * Whether `term` is in this segment's vocabulary. A term not cached is looked up without
   * reading its postings (the key only, never the blob's overflow pages): expansion asks this of
   * every candidate form, and reading and decoding a list it may not use costs more than the
   * lookup the later {@link postings} call repeats.
   */
  hasTerm(term: string): boolean {
    const cached = this.postingsMap.get(term);
    if (cached !== undefined) return cached.p !== null;
    return this.stmtHas.get(term) !== undefined;
  }

  /** Words of this segment sharing `stem` (words from English documents only). */
  termsWithStem(stem: string): string[] {
    return this.stmtStem.all(stem) as string[];
  }

  /**
   * Words of this segment whose Snowball stem in `language` is `stem`, from documents in that
   * language (English stems: {@link termsWithStem}).
   */
  termsWithLanguageStem(language: string, stem: string): string[] {
    return this.stmtLangStem ? (this.stmtLangStem.all(`${language}:${stem}`) as string[]) : [];
  }

  /** Words starting with `prefix`, at most `limit`, in order. */
  termsWithPrefix(prefix: string, limit: number): string[] {
    return this.stmtPrefix.all(prefix, prefix + '\uffff', limit) as string[];
  }

  /**
   * Decoded postings of `term`, or null when absent. Cached per thread (segments are
   * immutable) in pooled buffers (budgets.ts, BufferPool). Inside a search scope the list is
   * valid until the search ends; a list larger than a quarter of the postings budget is not
   * cached, only lent to the search (outside a scope: decoded into fresh arrays, not cached).
   */
  postings(term: string): Postings | null {
    const cached = this.postingsMap.get(term);
    if (cached !== undefined) {
      cached.used = true;
      if (!postingsPool.inScope) cached.escaped = true;
      return cached.p;
    }
    const blob = this.stmtTerm.get(term) as Buffer | undefined;
    const overhead = 96 + term.length * 2;
    if (!blob) {
      const e = new PostingsEntry<Postings>(null, overhead, this.postingsMap, term);
      this.postingsMap.set(term, e);
      chargeDecoded(e);
      return null;
    }
    // At most 4 + 2 × NFIELDS bytes per posting, a posting at least 3 bytes of the blob.
    if (Math.ceil(blob.length / 3) * (4 + 2 * NFIELDS) > engineCacheBudget.postings / 4) {
      return postingsPool.inScope ? decodePostingsInto(blob, (n) => postingsPool.take(n)).p : decodePostings(blob);
    }
    const { p, bufs } = decodePostingsInto(blob, (n) => postingsPool.take(n));
    for (const b of bufs) postingsPool.adopt(b);
    const e = new PostingsEntry(p, bufs[0].byteLength + bufs[1].byteLength + overhead, this.postingsMap, term, bufs);
    if (!postingsPool.inScope) e.escaped = true;
    this.postingsMap.set(term, e);
    chargeDecoded(e);
    return p;
  }

  /**
   * The BM25F values of `term`'s list `p` under the scoring setup `setup` (one per posting,
   * computed by the engine and kept with the list, under the same budget), or undefined when
   * not kept. `p` must be the list {@link postings} returned: values of a list decoded again
   * after an eviction are computed again.
   */
  postingValues(term: string, p: Postings, setup: string): Float64Array | undefined {
    const e = this.postingsMap.get(term);
    if (!e || e.p !== p || !e.values) return undefined;
    for (const x of e.values) {
      if (x.setup !== setup) continue;
      if (!postingsPool.inScope) e.escaped = true;
      return x.v;
    }
    return undefined;
  }

  /**
   * Keeps `values` (one per posting of `term`'s list `p`, under scoring setup `setup`) with the
   * cached list, charged to the same budget; does nothing when the list is no longer cached
   * (values from the pool, budgets.ts scratchFloat64, then go back to it when the search ends).
   */
  keepPostingValues(term: string, p: Postings, setup: string, values: Float64Array): void {
    const e = this.postingsMap.get(term);
    if (!e || e.p !== p || !decodedClock.has(e)) return;
    const list = (e.values ??= []);
    const at = list.findIndex((x) => x.setup === setup);
    if (at >= 0) this.dropValues(e, list.splice(at, 1)[0]!);
    if (list.length >= MAX_SETUPS) this.dropValues(e, list.shift()!);
    const buf = values.buffer as ArrayBuffer;
    const pooled = postingsPool.isLent(buf);
    // A pooled buffer counts whole (its size class), like the list's own.
    const bytes = pooled ? buf.byteLength : values.byteLength;
    if (pooled) postingsPool.adopt(buf);
    list.push({ setup, v: values, pooled });
    e.bytes += bytes;
    engineCacheUsed.postings += bytes;
    if (engineCacheUsed.postings > engineCacheBudget.postings) evictByClock('postings', decodedClock, (x) => x.drop());
  }

  /** Takes replaced values `x` off entry `e` (their pooled buffer back to the pool). */
  private dropValues(e: PostingsEntry, x: { v: Float64Array; pooled: boolean }): void {
    const bytes = x.pooled ? x.v.buffer.byteLength : x.v.byteLength;
    e.bytes -= bytes;
    engineCacheUsed.postings -= bytes;
    if (x.pooled && !e.escaped) postingsPool.give(x.v.buffer as ArrayBuffer);
  }

  /**
   * The positions blob of `term` as stored (postings.ts), or null when it has none; cached like
   * postings (the blob, not decoded: phrase matching reads it forward once per query).
   */
  private positions(term: string): Uint8Array | null {
    const cached = this.positionsMap.get(term);
    if (cached !== undefined) {
      cached.used = true;
      return cached.p;
    }
    const blob = this.stmtPositions!.get(term) as Buffer | undefined;
    const p = blob ? new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength) : null;
    const e = new PostingsEntry<Uint8Array>(p, (p ? p.byteLength : 0) + 96 + term.length * 2, this.positionsMap, term);
    this.positionsMap.set(term, e);
    chargeDecoded(e);
    return p;
  }

  /** The row id of `url` in this segment, or null. */
  idOf(url: string): number | null {
    const v = this.stmtUrl.get(url) as number | undefined;
    return v === undefined ? null : v;
  }

  /**
   * Row ids (any status, dead ones included) holding the folded words `phrase` at consecutive
   * positions within the title, within one heading or within the content. Formats 4 and later match on
   * the segment's positions; older files ask their FTS5 table.
   *
   * @example
   * reader.phraseRows(['create', 'table']) // Set { 3, 17 }
   */
  phraseRows(phrase: readonly string[]): Set<number> {
    const out = new Set<number>();
    if (phrase.length === 0) return out;
    if (this.stmtPhrase) {
      for (const id of this.stmtPhrase.iterate('"' + phrase.join(' ') + '"') as IterableIterator<number>) out.add(id);
      return out;
    }
    const lists: Postings[] = [];
    const cursors: PositionsCursor[] = [];
    for (const w of phrase) {
      const p = this.postings(w);
      const blob = p ? this.positions(w) : null;
      if (!p || !blob) return out;
      lists.push(p);
      cursors.push(new PositionsCursor(blob, this.info.format === 4));
    }
    // Leapfrog over the id lists; the positions of the rows holding every word are compared.
    const at = new Int32Array(lists.length);
    const ps: Int32Array[] = new Array<Int32Array>(lists.length);
    for (;;) {
      let target = -1;
      for (let i = 0; i < lists.length; i++) {
        if (at[i]! >= lists[i]!.ids.length) return out;
        target = Math.max(target, lists[i]!.ids[at[i]!]!);
      }
      let all = true;
      for (let i = 0; i < lists.length; i++) {
        const ids = lists[i]!.ids;
        let k = at[i]!;
        while (k < ids.length && ids[k]! < target) k++;
        at[i] = k;
        if (k === ids.length) return out;
        if (ids[k] !== target) all = false;
      }
      if (!all) continue;
      // One cursor per phrase word: each view stays valid until that cursor's next read.
      for (let i = 0; i < lists.length; i++) ps[i] = cursors[i]!.at(at[i]!);
      if (consecutive(ps)) out.add(target);
      for (let i = 0; i < lists.length; i++) at[i]!++;
    }
  }

  /**
   * Runs `hook` when this reader closes (same thread): the engine's BM25F values and result
   * cards of a retired segment then leave their caches at once instead of ageing out.
   */
  onClose(hook: () => void): void {
    this.closeHooks.push(hook);
  }

  close(): void {
    for (const hook of this.closeHooks.splice(0)) hook();
    // The entries' buffers are not recycled: a closing reader's memory goes back to the system.
    for (const m of [this.postingsMap, this.positionsMap] as Array<Map<string, DecodedEntry & { bytes: number }>>) {
      for (const e of m.values()) {
        decodedClock.delete(e);
        engineCacheUsed.postings -= e.bytes;
      }
      m.clear();
    }
    if (this.db.open && --openReaders === 0) postingsPool.clear();
    this.vecs = undefined;
    readerPageCaches.delete(this.db);
    if (this.db.open) this.db.close();
  }
}

/**
 * Writes the stored `lengths` column (a JSON array of NFIELDS non-negative integers, as
 * writeSegment stores it) into `out[at .. at + NFIELDS)` without allocating; missing entries are 0.
 */
export function parseLengths(json: string, out: Uint32Array, at: number): void {
  let f = 0;
  let x = 0;
  let digits = false;
  for (let i = 0; i < json.length && f < NFIELDS; i++) {
    const c = json.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      x = x * 10 + (c - 48);
      digits = true;
    } else if (digits) {
      out[at + f++] = x;
      x = 0;
      digits = false;
    }
  }
  for (; f < NFIELDS; f++) out[at + f] = 0;
}

// Section numbering in front of documentation titles ("Chapter 5.", "E.3.", "F.1.", "IV.").
const NUMBERING_RE = /^\s*(?:(?:appendix|chapter|part|section)\s+)?(?:[a-z]|[ivxlc]+|\d+)(?:\.\d+)*\.(?=\s)\s*/i;

/** The title without leading section numbering, for exact-title matching. */
function titleWithoutNumbering(title: string): string {
  const t = title.replace(NUMBERING_RE, '');
  return t.trim() === '' ? title : t;
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
 * Reads every row's liveness columns (by docId) and the delete markers of a sealed segment
 * straight into typed arrays, through a short-lived connection with a small page cache: the
 * scan touches every page of the covering index (every docs leaf page in files written before
 * it), and a long-lived connection would keep them cached (better-sqlite3's default cache is
 * 16 MB per connection). Main thread, at segment load.
 */
export function readRowColumns(path: string, docCount: number): RowColumns {
  return scanWith(path, (db) => {
    const c: RowColumns = {
      urls: new Array<string>(docCount),
      seqs: new Float64Array(docCount),
      ats: new Float64Array(docCount),
      firstAts: new Float64Array(docCount),
      statuses: new Uint16Array(docCount),
      lengths: new Uint32Array(docCount * NFIELDS),
      deletes: db.prepare('SELECT url, seq, at FROM deletes').all() as SegmentDelete[],
    };
    // No ORDER BY: rows are placed by id, and without it SQLite scans the covering index
    // (segment-format.ts, docs_url) rather than the docs table.
    const it = db.prepare('SELECT id, url, seq, at, first_at AS firstAt, status, lengths FROM docs').raw().iterate() as IterableIterator<
      [number, string, number, number, number, number, string]
    >;
    for (const [id, url, seq, at, firstAt, status, lengths] of it) {
      if (id < 0 || id >= docCount) throw new Error(`segment ${path}: row id ${id} outside 0..${docCount - 1}`);
      c.urls[id] = url;
      c.seqs[id] = seq;
      c.ats[id] = at;
      c.firstAts[id] = firstAt;
      c.statuses[id] = status;
      parseLengths(lengths, c.lengths, id * NFIELDS);
    }
    return c;
  });
}
