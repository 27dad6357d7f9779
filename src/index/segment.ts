/**
 * Segment file format. A segment is an immutable SQLite file written once by
 * {@link writeSegment} (in a pool worker) and read by {@link SegmentReader} on the main thread.
 *
 * Tables (format 1):
 * - `meta(key, value)`: `format`, counts, seq range, `created`.
 * - `docs(id, url, seq, at, first_at, status, lengths, boost, grp, doc_type, language, filters,
 *   data_points, body)`: one row per URL, dense ids 0..n-1; `body` is the stored PageDoc JSON;
 *   `lengths` the token count of each FIELDS entry.
 * - `deletes(url, seq, at)`: delete markers.
 * - `terms(term, stem, df, postings)`: our inverted index, one row per folded (unstemmed) word.
 *   `stem` is the English stem when the word occurs in an English document, else the word.
 *   `postings` = for each doc in id order: varint(id delta), field mask byte, varint tf for
 *   each field in the mask. Scoring statistics come from here, summed over live rows of every
 *   segment, so ranking does not depend on how the index is split.
 * - `fts` (FTS5, contentless, detail=full): the folded word streams per field, used for
 *   phrase and proximity queries (`"a b"`, NEAR).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import type { PageDoc, FilterValue, DataPoint } from '../types.js';
import { words, urlWords, stemEn, compounds, urlCompounds } from '../search/analyze.js';

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
  return [
    words(doc.title),
    words(doc.keywords.join(' \u2029 ')),
    words(doc.headings.join(' \u2029 ')),
    urlWords(doc.url),
    words(doc.description ? doc.description + ' \u2029 ' + doc.content : doc.content),
  ];
}

/** Compound words of each field (see `compounds`): counted in postings, not in lengths or FTS. */
export function fieldCompounds(doc: PageDoc): string[][] {
  return [
    compounds(doc.title),
    compounds(doc.keywords.join(' \u2029 ')),
    compounds(doc.headings.join(' \u2029 ')),
    urlCompounds(doc.url),
    compounds(doc.content),
  ];
}

/**
 * Markers around each title, keyword and heading in the FTS5 streams, so that a phrase query
 * `"xqzbeg a b xqzend"` means "a heading that is exactly `a b`" and phrases never run from one
 * heading into the next. They are not in `terms`, so they never affect scoring statistics.
 */
export const FTS_BEGIN = 'xqzbeg';
export const FTS_END = 'xqzend';

function bounded(parts: string[]): string {
  return parts.map((p) => `${FTS_BEGIN} ${words(p).join(' ')} ${FTS_END}`).join(' ');
}

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
  data_points TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL, image TEXT, description TEXT,
  body TEXT NOT NULL);
CREATE INDEX docs_url ON docs(url);
CREATE TABLE deletes(url TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, stem TEXT NOT NULL, df INTEGER NOT NULL, postings BLOB NOT NULL) WITHOUT ROWID;
CREATE INDEX terms_stem ON terms(stem);
CREATE VIRTUAL TABLE fts USING fts5(title, keywords, headings, url, content, content='', columnsize=0, detail=full,
  tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
`;

/**
 * Writes a new segment file at `path` (must not exist) holding `entries` and `deletes`
 * (the caller has already de-duplicated: at most one entry per URL). Synchronous; runs in a
 * pool worker. Uses `journal_mode=DELETE` and `synchronous=FULL`, so the file is complete and
 * fsync'd when this returns; the caller still fsyncs the directory after renaming it.
 */
export function writeSegment(path: string, entries: SegmentEntry[], deletes: SegmentDelete[], opts: WriteOptions): SegmentInfo {
  if (fs.existsSync(path)) throw new Error(`segment file already exists: ${path}`);
  const db = new Database(path);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = FULL');
    db.pragma('page_size = 8192');
    db.exec(SCHEMA);
    // term → [docId, mask, tf..., docId, mask, tf..., ...]
    const postings = new Map<string, number[]>();
    const english = new Set<string>();
    const insDoc = db.prepare(
      'INSERT INTO docs(id,url,seq,at,first_at,status,lengths,boost,grp,doc_type,language,filters,data_points,title,content,image,description,body) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
    );
    const insFts = db.prepare('INSERT INTO fts(rowid,title,keywords,headings,url,content) VALUES (?,?,?,?,?,?)');
    const insDel = db.prepare('INSERT INTO deletes(url,seq,at) VALUES (?,?,?)');
    let searchable = 0;
    let minSeq = Number.MAX_SAFE_INTEGER;
    let maxSeq = 0;
    const tx = db.transaction(() => {
      entries.forEach((e, id) => {
        const d = e.doc;
        minSeq = Math.min(minSeq, e.seq);
        maxSeq = Math.max(maxSeq, e.seq);
        const lang = d.language ?? opts.defaultLanguage;
        let lengths = [0, 0, 0, 0, 0];
        if (d.status === 200) {
          searchable++;
          const fw = fieldWords(d);
          lengths = fw.map((w) => w.length);
          const tfs = new Map<string, number[]>();
          const fc = fieldCompounds(d);
          for (let f = 0; f < NFIELDS; f++) {
            for (const w of fw[f]!.concat(fc[f]!)) {
              let t = tfs.get(w);
              if (!t) tfs.set(w, (t = [0, 0, 0, 0, 0]));
              t[f]!++;
            }
          }
          for (const [w, t] of tfs) {
            let p = postings.get(w);
            if (!p) postings.set(w, (p = []));
            let mask = 0;
            for (let f = 0; f < NFIELDS; f++) if (t[f]! > 0) mask |= 1 << f;
            p.push(id, mask);
            for (let f = 0; f < NFIELDS; f++) if (t[f]! > 0) p.push(t[f]!);
            if (lang === 'en') english.add(w);
          }
          insFts.run(id, bounded([titleWithoutNumbering(d.title)]), bounded(d.keywords), bounded(d.headings), fw[3]!.join(' '), fw[4]!.join(' '));
        }
        insDoc.run(
          id, d.url, e.seq, e.at, e.firstAt, d.status, JSON.stringify(lengths), d.boost,
          d.contentGroup, d.documentType, d.language, JSON.stringify(d.filters),
          JSON.stringify(d.dataPoints), d.title, d.content, d.imageUrl, d.description ?? null, JSON.stringify({ ...d, content: undefined }),
        );
      });
      for (const del of deletes) {
        minSeq = Math.min(minSeq, del.seq);
        maxSeq = Math.max(maxSeq, del.seq);
        insDel.run(del.url, del.seq, del.at);
      }
      const insTerm = db.prepare('INSERT INTO terms(term,stem,df,postings) VALUES (?,?,?,?)');
      const sorted = [...postings.keys()].sort();
      for (const term of sorted) {
        const p = postings.get(term)!;
        const w = new ByteWriter();
        let prev = 0;
        let df = 0;
        for (let i = 0; i < p.length; ) {
          const id = p[i++]!;
          const mask = p[i++]!;
          w.varint(id - prev);
          prev = id;
          w.byte(mask);
          for (let f = 0; f < NFIELDS; f++) if (mask & (1 << f)) w.varint(p[i++]!);
          df++;
        }
        insTerm.run(term, english.has(term) ? stemEn(term) : term, df, w.bytes());
      }
      if (minSeq === Number.MAX_SAFE_INTEGER) minSeq = 0;
      const meta = db.prepare('INSERT INTO meta(key,value) VALUES (?,?)');
      meta.run('format', String(SEGMENT_FORMAT));
      meta.run('docCount', String(entries.length));
      meta.run('searchableCount', String(searchable));
      meta.run('deleteCount', String(deletes.length));
      meta.run('minSeq', String(minSeq));
      meta.run('maxSeq', String(maxSeq));
      meta.run('created', new Date().toISOString());
    });
    tx();
    db.exec("INSERT INTO fts(fts) VALUES('optimize')");
  } finally {
    db.close();
  }
  const info = readInfo(path);
  return info;
}

function readInfo(path: string): SegmentInfo {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return infoFrom(db, path);
  } finally {
    db.close();
  }
}

function infoFrom(db: Database.Database, path: string): SegmentInfo {
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

/** Per-document values kept in memory for filtering, facets, sorting and scoring. */
export interface DocValues {
  urls: string[];
  status: Int32Array;
  boost: Float64Array;
  /** lengths[id * NFIELDS + f] */
  lengths: Uint32Array;
  group: string[];
  docType: string[];
  filters: Array<FilterValue[] | null>;
  dataPoints: Array<DataPoint[] | null>;
  /** Folded words of the title without section numbering, joined by one space. */
  titleKey: string[];
}

/** Longest content prefix read for a result (the snippet scans at most this much). */
export const CARD_CONTENT_LIMIT = 30_000;

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

/** Decoded postings of one term in one segment (all rows, dead ones included). */
export interface Postings {
  ids: Int32Array;
  /** tfs[i * NFIELDS + f] */
  tfs: Uint16Array;
}

/** Read-only view of one segment file. Open once per published segment; close when unreferenced. */
export class SegmentReader {
  readonly path: string;
  readonly info: SegmentInfo;
  private readonly db: Database.Database;
  private values: DocValues | null = null;
  private vocab: string[] | null = null;
  private readonly stmtTerm: Database.Statement;
  private readonly stmtStem: Database.Statement;
  private readonly stmtPrefix: Database.Statement;
  private readonly stmtBody: Database.Statement;
  private readonly stmtCard: Database.Statement;
  private readonly stmtCardNoContent: Database.Statement;
  private readonly stmtPhrase: Database.Statement;
  private readonly stmtUrl: Database.Statement;
  private readonly postingsCache = new Map<string, Postings | null>();

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.db = db;
    this.info = infoFrom(db, path);
    this.stmtTerm = db.prepare('SELECT postings FROM terms WHERE term = ?').pluck();
    this.stmtStem = db.prepare('SELECT term FROM terms WHERE stem = ?').pluck();
    this.stmtPrefix = db.prepare('SELECT term FROM terms WHERE term >= ? AND term < ? LIMIT ?').pluck();
    this.stmtBody = db.prepare('SELECT body, content, first_at AS firstAt, seq, at FROM docs WHERE id = ?');
    this.stmtCard = db.prepare(
      `SELECT url, title, substr(content, 1, ${CARD_CONTENT_LIMIT}) AS content, doc_type AS documentType, data_points AS dataPoints, image, description FROM docs WHERE id = ?`,
    );
    this.stmtCardNoContent = db.prepare(
      "SELECT url, title, '' AS content, doc_type AS documentType, data_points AS dataPoints, image, description FROM docs WHERE id = ?",
    );
    this.stmtPhrase = db.prepare('SELECT rowid FROM fts WHERE fts MATCH ?').pluck();
    this.stmtUrl = db.prepare('SELECT id FROM docs WHERE url = ?').pluck();
  }

  /** Opens a sealed segment read-only. Throws when the file is missing or of another format. */
  static open(path: string): SegmentReader {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return new SegmentReader(path, db);
    } catch (e) {
      db.close();
      throw e;
    }
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
    const r = this.stmtBody.get(id) as { body: string; content: string; firstAt: number; seq: number; at: number } | undefined;
    if (!r) throw new Error(`no doc ${id} in ${this.path}`);
    const doc = JSON.parse(r.body) as PageDoc;
    doc.content = r.content;
    return { seq: r.seq, at: r.at, firstAt: r.firstAt, doc };
  }

  /**
   * What a search result shows of one row. Cheaper than {@link entry}: the page content is
   * read only when `withContent` (snippets) and the stored JSON only for the small fields.
   */
  card(id: number, withContent: boolean): ResultCard {
    const r = (withContent ? this.stmtCard : this.stmtCardNoContent).get(id) as
      | { url: string; title: string; content: string; documentType: string; dataPoints: string; image: string | null; description: string | null }
      | undefined;
    if (!r) throw new Error(`no doc ${id} in ${this.path}`);
    return {
      url: r.url,
      title: r.title,
      content: r.content,
      documentType: r.documentType,
      dataPoints: r.dataPoints === '[]' ? [] : (JSON.parse(r.dataPoints) as DataPoint[]),
      imageUrl: r.image || null,
      description: r.description ?? '',
    };
  }

  /** In-memory per-document values, loaded on first use. */
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
      filters: new Array<FilterValue[] | null>(n).fill(null),
      dataPoints: new Array<DataPoint[] | null>(n).fill(null),
      titleKey: new Array<string>(n).fill(''),
    };
    const it = this.db
      .prepare('SELECT id, url, status, lengths, boost, grp, doc_type AS docType, filters, data_points AS dataPoints, title FROM docs')
      .iterate() as IterableIterator<{
      id: number; url: string; status: number; lengths: string; boost: number; grp: string; docType: string; filters: string; dataPoints: string; title: string;
    }>;
    for (const r of it) {
      v.urls[r.id] = r.url;
      v.status[r.id] = r.status;
      v.boost[r.id] = r.boost;
      const l = JSON.parse(r.lengths) as number[];
      for (let f = 0; f < NFIELDS; f++) v.lengths[r.id * NFIELDS + f] = l[f] ?? 0;
      v.group[r.id] = r.grp;
      v.docType[r.id] = r.docType;
      if (r.filters !== '[]') v.filters[r.id] = JSON.parse(r.filters) as FilterValue[];
      if (r.dataPoints !== '[]') v.dataPoints[r.id] = JSON.parse(r.dataPoints) as DataPoint[];
      if (r.status === 200) v.titleKey[r.id] = words(titleWithoutNumbering(r.title)).join(' ');
    }
    this.values = v;
    return v;
  }

  /** Sorted vocabulary of this segment (loaded on first use; for typo matching). */
  terms(): string[] {
    if (!this.vocab) this.vocab = this.db.prepare('SELECT term FROM terms ORDER BY term').pluck().all() as string[];
    return this.vocab;
  }

  /** Whether `term` is in this segment's vocabulary. */
  hasTerm(term: string): boolean {
    return this.postings(term) !== null;
  }

  /** Words of this segment sharing `stem` (words from English documents only). */
  termsWithStem(stem: string): string[] {
    return this.stmtStem.all(stem) as string[];
  }

  /** Words starting with `prefix`, at most `limit`, in order. */
  termsWithPrefix(prefix: string, limit: number): string[] {
    return this.stmtPrefix.all(prefix, prefix + '\uffff', limit) as string[];
  }

  /** Decoded postings of `term`, or null when absent. Cached: segments are immutable. */
  postings(term: string): Postings | null {
    const cached = this.postingsCache.get(term);
    if (cached !== undefined) return cached;
    const blob = this.stmtTerm.get(term) as Buffer | undefined;
    const p = blob ? decodePostings(blob) : null;
    if (this.postingsCache.size > 50_000) this.postingsCache.clear();
    this.postingsCache.set(term, p);
    return p;
  }

  /** The row id of `url` in this segment, or null. */
  idOf(url: string): number | null {
    const v = this.stmtUrl.get(url) as number | undefined;
    return v === undefined ? null : v;
  }

  /** Row ids matching an FTS5 query (phrases: `"a b"`; callers quote every word). */
  ftsMatch(query: string): Set<number> {
    return new Set(this.stmtPhrase.all(query) as number[]);
  }

  /** The subset of `ids` matching an FTS5 query. */
  ftsMatchAmong(query: string, ids: Set<number>): Set<number> {
    const out = new Set<number>();
    if (ids.size === 0) return out;
    // FTS5 plans `rowid IN (...)` as a scan; evaluating the phrase alone and intersecting here
    // is much faster for the short phrase queries used by re-ranking.
    for (const id of this.stmtPhrase.iterate(query) as IterableIterator<number>) if (ids.has(id)) out.add(id);
    return out;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
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
