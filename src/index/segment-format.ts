/**
 * The segment file format: its tables, the types of what goes in and out, and the two steps
 * every segment file goes through whoever writes it ({@link createFile} before the rows,
 * {@link sealFile} after). A segment is an immutable SQLite file, written once in a pool worker
 * by the build stage (segment-write.ts) or the merge stage (segment-merge.ts) and read by
 * {@link SegmentReader} (segment-reader.ts) on the main thread and the search threads.
 *
 * Tables (format 6; older files are still read: format 1 lacks `stems` and `meta.languages`,
 * format 2 lacks `vecs`, formats 1–3 have an FTS5 table `fts` instead of `positions`, format 4
 * leads each positions entry with its count instead of its byte length, formats 1–5 hold
 * `headings`, `content` and `body` as plain TEXT):
 * - `meta(key, value)`: `format`, counts, seq range, `created`, `languages` (the languages of
 *   the searchable rows, each a row's `language` or the project default, comma-separated).
 * - `docs(id, url, seq, at, first_at, status, lengths, boost, grp, doc_type, language, filters,
 *   data_points, title, headings, content, image, description, hkeys, body)`: one row per URL,
 *   dense ids 0..n-1. `lengths` = token count of each FIELDS entry; `headings` = the headings
 *   wrapped in boundary markers ({@link FTS_BEGIN}); `hkeys` = {@link hashWord} of each heading's folded
 *   words; `body` = the rest of the PageDoc as JSON (title and content live in their columns for
 *   searchable rows). `headings`, `content` and `body` are BLOBs packed by stored-codec.ts (each
 *   value compressed on its own; {@link PACKED_COLUMNS}); read them through `storedText`, which
 *   also takes the TEXT of older formats.
 * - `deletes(url, seq, at)`: delete markers.
 * - `terms(term, stem, df, postings, pos)`: our inverted index, one row per folded (unstemmed) word
 *   or compound. `stem` is the English stem when the word occurs in an English document, else
 *   the word. `postings`: see postings.ts. Scoring statistics come from here, summed over live
 *   rows of every segment, so ranking does not depend on how the index is split. `pos`
 *   (format 4 and later): the id of the term's `positions` row, null when it has none.
 * - `stems(stem, term)`: for languages with a Snowball stemmer other than English, one row per
 *   term and language it occurs in, `stem` = `<language>:<stem>` (`de:paket` → `pakete`), so a
 *   query word finds a page's stemmed forms in that page's language.
 * - `positions(id, data)` (format 4 and later): the word positions of a term in each document of its
 *   postings, entry for entry (postings.ts); a row only for terms that have a position (not
 *   for compounds and letter/digit parts), ids ascending in term order. Phrase queries and
 *   excluded phrases match on them. A rowid table rather than keyed by term: its B-tree keeps
 *   blobs of up to a page inline, where a WITHOUT ROWID table sends every blob over about 2 KB
 *   to overflow pages, each chain's last page half empty on average.
 * - `fts` (formats 1–3 only; FTS5, external content over `docs`: title, headings, content;
 *   detail=full): answered phrase queries; still used for the phrases of such a file until a
 *   merge rewrites it in the current format.
 *
 * - `vecs(id, v)` (format 3): one embedding per searchable row that has one, `v` a float32
 *   little-endian blob (sqlite-vec's vector format), unit length. `meta.embedder` names the
 *   vector space (an embedder fingerprint) and is present only when every searchable row was
 *   embedded; a file without it (format 1, or an embedder that was down) is searched lexically.
 *
 * Invariants: a sealed file is complete and fsync'd and never changes again; a file whose
 * `meta.format` is not one of {@link READABLE_FORMATS} is refused by {@link infoFrom}.
 *
 * Any thread; synchronous file I/O.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import type { PageDoc } from '../core/index.js';
import { fsyncPath } from './files.js';

/** Searchable fields, in the order used by every per-field array. */
export const FIELDS = ['title', 'keywords', 'headings', 'url', 'content'] as const;
export const NFIELDS = FIELDS.length;
export const SEGMENT_FORMAT = 6;
/** Formats {@link infoFrom} accepts: the current one and the older ones still readable. */
export const READABLE_FORMATS: readonly number[] = [1, 2, 3, 4, 5, 6];
/**
 * The oldest format whose `terms`, `positions` and `stems` the current format keeps as they
 * are: a merge copies those of such a source, and analyses the stored text of an older one again.
 */
export const TERMS_FORMAT = 5;
/** The first format whose {@link PACKED_COLUMNS} are packed (stored-codec.ts). */
export const PACKED_FORMAT = 6;
/** The `docs` columns stored packed from {@link PACKED_FORMAT} on; TEXT before. */
export const PACKED_COLUMNS: readonly string[] = ['headings', 'content', 'body'];

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
/** The sizes of a sealed segment, as its meta table and the manifest record them. */
export interface SegmentCounts {
  /** Rows in `docs` (any status); docIds are 0..docCount-1. */
  docCount: number;
  /** Rows with status 200. */
  searchableCount: number;
  deleteCount: number;
  minSeq: number;
  maxSeq: number;
  /** File size. */
  bytes: number;
}
/** What a build or merge returns: the sealed file's format and sizes. */
export interface SegmentInfo extends SegmentCounts {
  format: number;
  /** Fingerprint of the embedder whose vectors the file holds for every searchable row, or null. */
  embedder?: string | null;
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

/**
 * Markers around each heading in the stored `headings` column (and, in formats 1–3, in the
 * FTS5 stream, where they kept phrases from running from one heading into the next). They are
 * not in `terms`, so they never affect scoring statistics.
 */
export const FTS_BEGIN = 'xqzbeg';
export const FTS_END = 'xqzend';

const SCHEMA = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(
  id INTEGER PRIMARY KEY, url TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
  first_at INTEGER NOT NULL, status INTEGER NOT NULL, lengths TEXT NOT NULL, boost REAL NOT NULL,
  grp TEXT NOT NULL, doc_type TEXT NOT NULL, language TEXT, filters TEXT NOT NULL,
  data_points TEXT NOT NULL, title TEXT NOT NULL, headings BLOB NOT NULL, content BLOB NOT NULL,
  image TEXT, description TEXT, hkeys BLOB, body BLOB NOT NULL);
CREATE TABLE deletes(url TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, stem TEXT NOT NULL, df INTEGER NOT NULL, postings BLOB NOT NULL, pos INTEGER) WITHOUT ROWID;
CREATE TABLE stems(stem TEXT NOT NULL, term TEXT NOT NULL, PRIMARY KEY(stem, term)) WITHOUT ROWID;
CREATE TABLE vecs(id INTEGER PRIMARY KEY, v BLOB NOT NULL);
CREATE TABLE positions(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
`;
// Built after the bulk inserts: cheaper than maintaining them row by row. `docs_url` also
// carries every per-row value the doc values and the liveness columns read, so loading them
// (SegmentReader.docValues, readRowColumns: at project open, at a search thread's first search
// of a segment, after every merge) scans this index (about 120 bytes per row) instead of the
// docs table, whose leaf pages hold the rows' stored text (at ~100k pages: 12 MB instead of
// 318 MB read, 0.3 s of CPU instead of 0.5-0.8 s per scan).
const POST_SCHEMA = `
CREATE INDEX docs_url ON docs(url, seq, at, first_at, status, lengths, boost, grp, doc_type, language, filters, data_points);
CREATE INDEX terms_stem ON terms(stem);
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

/** Every column of `docs`, in table order (inserts and merge copies name them all). */
export const DOC_COLUMNS = 'id,url,seq,at,first_at,status,lengths,boost,grp,doc_type,language,filters,data_points,title,headings,content,image,description,hkeys,body';

/**
 * Creates a new, empty segment file at `path` (which must not exist) with the tables of the
 * format, ready for bulk inserts by one thread.
 */
export function createFile(path: string): Database.Database {
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
  // One transaction: each CREATE on its own commits and rewrites the schema page (a third of a
  // small build's fixed cost).
  db.exec(`BEGIN; ${SCHEMA} COMMIT;`);
  return db;
}

/** The lowest and highest seq a segment being written holds (both 0 while it holds none). */
export class SeqRange {
  private lo = Number.MAX_SAFE_INTEGER;
  private hi = 0;
  add(seq: number): void {
    if (seq < this.lo) this.lo = seq;
    if (seq > this.hi) this.hi = seq;
  }
  get min(): number {
    return this.lo === Number.MAX_SAFE_INTEGER ? 0 : this.lo;
  }
  get max(): number {
    return this.hi;
  }
}

/** Inserts the delete markers of a segment being written (inside the caller's transaction). */
export function insertDeletes(db: Database.Database, deletes: readonly SegmentDelete[], seqs: SeqRange): void {
  const ins = db.prepare('INSERT INTO deletes(url,seq,at) VALUES (?,?,?)');
  for (const del of deletes) {
    seqs.add(del.seq);
    ins.run(del.url, del.seq, del.at);
  }
}

/**
 * Finishes a segment: indexes and meta (one transaction), then close and fsync the file;
 * returns its info as {@link infoFrom} reads it. The caller renames it into place and fsyncs
 * the directory.
 */
export function sealFile(
  db: Database.Database,
  path: string,
  counts: { docCount: number; searchableCount: number; deleteCount: number },
  seqs: SeqRange,
  languages: Iterable<string> = [],
  extraMeta: Record<string, string> = {},
): SegmentInfo {
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...counts, minSeq: seqs.min, maxSeq: seqs.max, ...extraMeta })) meta[k] = String(v);
  try {
    const ins = db.prepare('INSERT INTO meta(key,value) VALUES (?,?)');
    db.transaction(() => {
      db.exec(POST_SCHEMA);
      for (const [k, v] of Object.entries(meta)) ins.run(k, v);
      ins.run('format', String(SEGMENT_FORMAT));
      ins.run('created', new Date().toISOString());
      ins.run('languages', [...new Set(languages)].sort().join(','));
    })();
  } finally {
    db.close();
  }
  fsyncPath(path);
  // What infoFrom would read back from the meta just written, without opening the file again.
  return {
    format: SEGMENT_FORMAT,
    docCount: Number(meta.docCount),
    searchableCount: Number(meta.searchableCount),
    deleteCount: Number(meta.deleteCount),
    minSeq: Number(meta.minSeq),
    maxSeq: Number(meta.maxSeq),
    bytes: fs.statSync(path).size,
    embedder: meta.embedder ?? null,
  };
}

/** The hash addText computes for a plain lower-case word; also the heading-key hash. */
export function hashWord(w: string): number {
  let h = 0;
  for (let j = 0; j < w.length; j++) h = (Math.imul(h, 31) + w.charCodeAt(j)) | 0;
  return h;
}

/**
 * Runs `read` on a short-lived read-only connection to `path` with a small page cache
 * ({@link SCAN_CACHE_KB}), closed afterwards: for whole-table scans done once per file, which
 * through a long-lived connection would leave its cache full for good.
 */
export function scanWith<T>(path: string, read: (db: Database.Database) => T): T {
  const db = openForScan(path);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** A read-only connection to a sealed segment with the small scan page cache; the caller closes it. */
export function openForScan(path: string): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma(`cache_size = -${SCAN_CACHE_KB}`);
  return db;
}

/** The meta table of an open segment (checks the format version). */
export function infoFrom(db: Database.Database, path: string): SegmentInfo {
  const m = new Map<string, string>();
  for (const r of db.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>) m.set(r.key, r.value);
  const format = Number(m.get('format'));
  if (!READABLE_FORMATS.includes(format)) throw new Error(`segment ${path} has format ${format}, expected one of ${READABLE_FORMATS.join(', ')}`);
  return {
    format,
    docCount: Number(m.get('docCount')),
    searchableCount: Number(m.get('searchableCount')),
    deleteCount: Number(m.get('deleteCount')),
    minSeq: Number(m.get('minSeq')),
    maxSeq: Number(m.get('maxSeq')),
    bytes: fs.statSync(path).size,
    embedder: m.get('embedder') ?? null,
  };
}

/** A vector as a `vecs.v` blob (float32 little endian, sqlite-vec's format). */
export function vectorBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** Inserts row vectors into a segment being written (inside the caller's transaction). */
export function vectorInserter(db: Database.Database): (id: number, v: Float32Array) => void {
  const ins = db.prepare('INSERT INTO vecs(id, v) VALUES (?, ?)');
  return (id, v) => void ins.run(id, vectorBlob(v));
}

/** Whether an open segment has the `positions` table (format 4 and later; older files answer phrases from FTS5). */
export function hasPositionsTable(db: Database.Database, schema = 'main'): boolean {
  return db.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE type = 'table' AND name = 'positions'`).get() !== undefined;
}

/** Whether an open segment has the `vecs` table (format 3 and later). */
export function hasVectorTable(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vecs'").get() !== undefined;
}
