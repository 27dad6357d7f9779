/**
 * The merge stage of a segment (pool worker thread, `workers/merge-segments.ts`): copies the
 * rows that were live when the merge started out of several sealed segments, plus the delete
 * markers still needed, into one new segment file (format: segment-format.ts).
 *
 * Invariants: sources are only read; rows keep their seq, at and firstAt, so the liveness rule
 * (contract.ts) decides between a merged copy and any newer write without coordination; the
 * result holds the same postings, positions and packed stored bytes a fresh build of the same
 * rows would. A source of an older format is converted: its stored text is packed as it is
 * copied (formats 1–5), and when its terms predate {@link TERMS_FORMAT} (formats 1–4) the merge
 * analyses the stored text of the rows again, as a build would.
 */
import type Database from 'better-sqlite3';
import type { PageDoc } from '../core/index.js';
import { ByteWriter, keepPositions, remapPostings } from './postings.js';
import { SegmentIndexer } from './segment-write.js';
import { packBytes, storedText } from './stored-codec.js';
import {
  DOC_COLUMNS,
  PACKED_COLUMNS,
  PACKED_FORMAT,
  TERMS_FORMAT,
  SCAN_CACHE_KB,
  SeqRange,
  createFile,
  insertDeletes,
  openForScan,
  sealFile,
  type SegmentDelete,
  type SegmentInfo,
  FTS_BEGIN,
  FTS_END,
  vectorInserter,
} from './segment-format.js';
import type { EmbeddableDoc } from '../text/index.js';

/**
 * The vectors a merge writes: rows of a source embedded with `fp` keep their vectors (copied
 * as bytes); other rows take a vector from `given` (computed beforehand, the HTTP embedder) or
 * from `embed` (the built-in embedder, in this thread). The merged file is marked embedded with
 * `fp` only when every source was covered one of these ways.
 */
export interface MergeVectors {
  fp: string;
  embed: ((doc: EmbeddableDoc) => Float32Array | null) | null;
  /** Per source (merge order): old row id → vector; null where nothing was computed. */
  given?: Array<Map<number, Float32Array> | null>;
}

const MARKERS_RE = new RegExp(`\\b(?:${FTS_BEGIN}|${FTS_END})\\b`, 'g');

/** A stored row's embeddable fields (headings come back from their markers). */
export function storedEmbeddable(r: { title: string; headings: string; content: string; description: string | null }): EmbeddableDoc {
  return { title: r.title, headings: [r.headings.replace(MARKERS_RE, ' ')], content: r.content, description: r.description };
}

/** One source of a merge: a sealed segment and the row ids to keep (ascending). */
export interface MergeSource {
  path: string;
  liveIds: number[];
}

/**
 * Merges the live rows of `sources` into a new segment at `path`, without re-analysing any
 * text: stored rows are copied by SQL (packed columns as their bytes), postings and positions
 * are filtered and renumbered term by term (a k-way merge over the sources' sorted term tables,
 * so memory stays flat; entries are copied as bytes, see remapPostings and keepPositions). Rows
 * keep their seq/at/firstAt. The stored text of a source older than {@link PACKED_FORMAT} is
 * packed on the way. When a source is older than {@link TERMS_FORMAT}, the postings, positions
 * and stems of the result are instead built from the copied rows' stored text, like a build
 * (rows whose language is null count as `defaultLanguage`), and each row's stored token counts
 * follow the new postings. Synchronous; runs in a pool worker.
 *
 * @example
 * mergeSegments(`${dir}/m1.seg.tmp`, [{ path: a, liveIds: [0, 2] }, { path: b, liveIds: [1] }], []);
 */
export function mergeSegments(path: string, sources: MergeSource[], deletes: SegmentDelete[], vectors?: MergeVectors, defaultLanguage = 'en'): SegmentInfo {
  const formats = sources.map((s) => scanFormat(s.path));
  const reanalyse = formats.some((f) => f < TERMS_FORMAT);
  const db = createFile(path);
  // Older sources' TEXT is packed from its bytes as SQL copies it (deterministic: a fresh build
  // of the same rows stores the same bytes).
  db.function('pack_bytes', { deterministic: true }, (v: unknown) => packBytes(v as Buffer));
  const copied = (packed: boolean): string =>
    DOC_COLUMNS.split(',')
      .slice(1)
      .map((c) => (packed || !PACKED_COLUMNS.includes(c) ? 'd.' + c : `pack_bytes(CAST(d.${c} AS BLOB))`))
      .join(',');
  let next = 0;
  let embedded = vectors !== undefined;
  let searchable = 0;
  const seqs = new SeqRange();
  // old id → new id per source (-1 when dropped).
  const maps: Int32Array[] = [];
  const languages = new Set<string>();
  try {
    db.exec('CREATE TEMP TABLE idmap(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)');
    for (const [si, src] of sources.entries()) {
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
          db.exec(`INSERT INTO main.docs(${DOC_COLUMNS}) SELECT m.new, ${copied(formats[si]! >= PACKED_FORMAT)}
                   FROM src.docs d JOIN temp.idmap m ON d.id = m.old ORDER BY m.new`);
          if (vectors) embedded = mergeVectors(db, vectors, maps.length, map) && embedded;
        })();
        const st = db.prepare('SELECT min(d.seq) AS lo, max(d.seq) AS hi, sum(d.status = 200) AS ok FROM src.docs d JOIN temp.idmap m ON d.id = m.old').get() as { lo: number | null; hi: number | null; ok: number | null };
        if (st.lo !== null) seqs.add(st.lo);
        if (st.hi !== null) seqs.add(st.hi);
        searchable += st.ok ?? 0;
        maps.push(map);
        const langs = db.prepare("SELECT value FROM src.meta WHERE key = 'languages'").pluck().get() as string | undefined;
        // Format 1 files record no languages: their stems are English.
        if (!reanalyse) for (const l of (langs ?? 'en').split(',')) if (l) languages.add(l);
      } finally {
        db.exec('DETACH DATABASE src');
      }
    }
    if (reanalyse) {
      const ix = reindexRows(db, defaultLanguage);
      db.transaction(() => {
        insertDeletes(db, deletes, seqs);
        ix.writeTerms(db);
      })();
      for (const l of ix.languages) languages.add(l);
    } else {
      db.transaction(() => insertDeletes(db, deletes, seqs))();
      mergeTerms(db, sources, maps);
    }
    // Stem rows of the terms that survived (format 1 sources have none; a conversion wrote its own).
    if (!reanalyse) for (const src of sources) {
      db.prepare('ATTACH DATABASE ? AS src').run(src.path);
      try {
        const has = db.prepare("SELECT 1 FROM src.sqlite_master WHERE name = 'stems'").get();
        if (has) db.exec('INSERT OR IGNORE INTO main.stems(stem,term) SELECT s.stem, s.term FROM src.stems s WHERE EXISTS (SELECT 1 FROM main.terms t WHERE t.term = s.term) ORDER BY s.stem, s.term');
      } finally {
        db.exec('DETACH DATABASE src');
      }
    }
  } catch (e) {
    db.close();
    throw e;
  }
  return sealFile(db, path, { docCount: next, searchableCount: searchable, deleteCount: deletes.length }, seqs, languages, embedded && vectors ? { embedder: vectors.fp } : {});
}

/** The format of the sealed segment at `path`. */
function scanFormat(path: string): number {
  const db = openForScan(path);
  try {
    return Number(db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get());
  } finally {
    db.close();
  }
}

/**
 * The k-way merge of the sources' `terms` and `positions` tables into the merged file (ids
 * renumbered by `maps`, one transaction).
 */
function mergeTerms(db: Database.Database, sources: MergeSource[], maps: Int32Array[]): void {
  const insTerm = db.prepare('INSERT INTO terms(term,stem,df,postings,pos) VALUES (?,?,?,?,?)');
  const insPos = db.prepare('INSERT INTO positions(id,data) VALUES (?,?)');
  let posId = 0;
  const readers = sources.map((s) => openForScan(s.path));
  try {
    const its = readers.map(
      (r) =>
        r.prepare('SELECT t.term, t.stem, t.postings, p.data FROM terms t LEFT JOIN positions p ON p.id = t.pos ORDER BY t.term').iterate() as IterableIterator<{
          term: string;
          stem: string;
          postings: Buffer;
          data: Buffer | null;
        }>,
    );
    const heads = its.map((it) => it.next());
    db.transaction(() => {
      // One writer each for every term (SQLite copies a bound blob): a fresh writer per term
      // would grow a new buffer by doubling for each long list, malloc'd and freed sizes of up
      // to a few MB that glibc then keeps in the pool thread's arena.
      const w = new ByteWriter();
      const pw = new ByteWriter();
      for (;;) {
        let term: string | null = null;
        for (const h of heads) if (!h.done && (term === null || h.value.term < term)) term = h.value.term;
        if (term === null) break;
        w.reset();
        pw.reset();
        let prev = 0;
        let df = 0;
        let anyPos = false;
        let stem = term;
        heads.forEach((h, si) => {
          if (h.done || h.value.term !== term) return;
          if (h.value.stem !== term) stem = h.value.stem;
          const r = remapPostings(h.value.postings, maps[si]!, w, prev);
          prev = r.prev;
          df += r.df;
          const k = keepPositions(h.value.data, h.value.postings, maps[si]!, pw);
          if (k.kept !== r.df) throw new Error(`merge: positions of "${term}" do not match its postings`);
          anyPos ||= k.any;
          heads[si] = its[si]!.next();
        });
        if (df === 0) continue;
        if (anyPos) insPos.run(++posId, pw.bytes());
        insTerm.run(term, stem, df, w.bytes(), anyPos ? posId : null);
      }
    })();
  } finally {
    for (const r of readers) r.close();
  }
}

/**
 * Analyses the searchable rows already copied into the merged file again, as a build would
 * (a source of an older format has no positions, or positions in format 4's layout, to copy), and brings each row's stored token
 * counts in line with the new postings. Returns the indexer holding the terms to write.
 */
function reindexRows(db: Database.Database, defaultLanguage: string): SegmentIndexer {
  const ix = new SegmentIndexer();
  const changed: Array<[string, number]> = [];
  const it = db.prepare('SELECT id, title, content, body, lengths FROM main.docs WHERE status = 200 ORDER BY id').raw().iterate() as IterableIterator<
    [number, string, Buffer, Buffer, string]
  >;
  for (const [id, title, content, body, lengths] of it) {
    const d = JSON.parse(storedText(body)) as PageDoc;
    d.title = title;
    d.content = storedText(content);
    const l = JSON.stringify(ix.add(id, d, d.language ?? defaultLanguage));
    if (l !== lengths) changed.push([l, id]);
  }
  if (changed.length > 0) {
    const upd = db.prepare('UPDATE main.docs SET lengths = ? WHERE id = ?');
    db.transaction(() => {
      for (const [l, id] of changed) upd.run(l, id);
    })();
  }
  return ix;
}

/** The vectors of the rows just copied from the attached source `si` (see {@link MergeVectors}); false when they could not all be had. */
function mergeVectors(db: Database.Database, vectors: MergeVectors, si: number, map: Int32Array): boolean {
  const srcHasVecs = db.prepare("SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND name = 'vecs'").get() !== undefined;
  const srcFp = srcHasVecs ? (db.prepare("SELECT value FROM src.meta WHERE key = 'embedder'").pluck().get() as string | undefined) : undefined;
  if (srcFp === vectors.fp) {
    db.exec('INSERT INTO main.vecs(id, v) SELECT m.new, s.v FROM src.vecs s JOIN temp.idmap m ON s.id = m.old ORDER BY m.new');
    return true;
  }
  const ins = vectorInserter(db);
  const given = vectors.given?.[si];
  if (given) {
    for (const [old, v] of given) if (map[old] !== undefined && map[old]! >= 0) ins(map[old]!, v);
    return true;
  }
  if (!vectors.embed) return false;
  // In pages of rows: the connection cannot insert while a statement of it is still iterating.
  const page = db.prepare(
    `SELECT d.id, d.title, d.headings, d.content, d.description FROM main.docs d JOIN temp.idmap m ON d.id = m.new
     WHERE d.status = 200 AND d.id > ? ORDER BY d.id LIMIT 256`,
  );
  for (let last = -1; ; ) {
    const rows = page.all(last) as Array<{ id: number; title: string; headings: Buffer; content: Buffer; description: string | null }>;
    if (rows.length === 0) break;
    for (const r of rows) {
      const v = vectors.embed(storedEmbeddable({ ...r, headings: storedText(r.headings), content: storedText(r.content) }));
      if (v) ins(r.id, v);
    }
    last = rows[rows.length - 1]!.id;
  }
  return true;
}
