/**
 * The build stage of a segment (pool worker thread, `workers/build-segment.ts`): analyses the
 * documents of a flush and writes them, their delete markers and their postings into a new
 * segment file (format: segment-format.ts).
 *
 * Invariants: at most one entry per URL; docIds follow the order of the entries; only status-200
 * rows are analysed and counted (other rows keep their text in `body` only); the file is sealed
 * (fsync'd) before {@link writeSegment} returns and is never written again.
 */
import type { PageDoc } from '../core/index.js';
import { words, urlWords, stemEn, stemSnowball, hasStemmer, urlCompounds, analyzeText } from '../text/index.js';
import { PostingsBuilder } from './postings-builder.js';
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
   * for a page with no known word. With `embedder`, the fingerprint recorded in `meta`.
   */
  embed?: (doc: PageDoc) => Float32Array | null;
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

/** Hashes of each heading's folded words (for exact-heading matching in memory). */
function headingKeysBlob(headings: string[]): Buffer {
  const keys = new Int32Array(headings.length);
  headings.forEach((h, i) => (keys[i] = hashWord(words(h).join(' '))));
  return Buffer.from(keys.buffer);
}

/** The headings as the FTS5 `headings` column holds them: each between {@link FTS_BEGIN} and {@link FTS_END}. */
function markedHeadings(headings: string[]): string {
  return headings.map((h) => `${FTS_BEGIN} ${h} ${FTS_END}`).join(' ');
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
  const pb = new PostingsBuilder();
  let docCount = 0;
  let searchable = 0;
  const seqs = new SeqRange();
  // Languages of the searchable rows; the first 31 Snowball languages get a bit for stems.
  const languages = new Set<string>();
  const stemmed: string[] = [];
  const bitOf = (lang: string): number => {
    if (lang === 'en') return 1;
    if (!hasStemmer(lang)) return 0;
    let k = stemmed.indexOf(lang);
    if (k < 0 && stemmed.length < 30) k = stemmed.push(lang) - 1;
    return k < 0 ? 0 : 1 << (k + 1);
  };
  try {
    const insVec = opts.embed ? vectorInserter(db) : null;
    const insDoc = db.prepare(`INSERT INTO docs(${DOC_COLUMNS}) VALUES (${DOC_COLUMNS.split(',').map(() => '?').join(',')})`);
    db.transaction(() => {
      // One entry at a time: a streamed source (the write log) is never held whole.
      for (const e of entries) {
        const id = docCount++;
        const d = e.doc;
        seqs.add(e.seq);
        const lang = d.language ?? opts.defaultLanguage;
        let lengths = [0, 0, 0, 0, 0];
        const ok = d.status === 200;
        if (ok) {
          searchable++;
          const { words: fw, compounds: fc } = analyzeShortFields(d);
          pb.begin(id);
          lengths = [...fw.map((w) => w.length), 0];
          for (let f = 0; f < NFIELDS - 1; f++) {
            for (const w of fw[f]!) pb.add(f, w);
            for (const w of fc[f]!) pb.add(f, w);
          }
          // Content, the bulk of the text, is counted straight from the string.
          const content = d.description ? d.description + ' \u2029 ' + d.content : d.content;
          lengths[NFIELDS - 1] = pb.addText(NFIELDS - 1, content);
          languages.add(lang);
          pb.end(bitOf(lang));
        }
        insDoc.run(
          id, d.url, e.seq, e.at, e.firstAt, d.status, JSON.stringify(lengths), d.boost,
          d.contentGroup, d.documentType, d.language, JSON.stringify(d.filters), JSON.stringify(d.dataPoints),
          ok ? d.title : '', ok ? markedHeadings(d.headings) : '', ok ? d.content : '', d.imageUrl, d.description ?? null,
          ok && d.headings.length ? headingKeysBlob(d.headings) : null,
          JSON.stringify({ ...d, content: ok ? undefined : d.content, title: ok ? undefined : d.title }),
        );
        if (ok && insVec) {
          const v = opts.embed!(d);
          if (v) insVec(id, v);
        }
      }
      insertDeletes(db, deletes, seqs);
      const insTerm = db.prepare('INSERT INTO terms(term,stem,df,postings) VALUES (?,?,?,?)');
      const insStem = db.prepare('INSERT INTO stems(stem,term) VALUES (?,?)');
      const order = pb.terms.map((_, i) => i).sort((x, y) => (pb.terms[x]! < pb.terms[y]! ? -1 : 1));
      for (const i of order) {
        const term = pb.terms[i]!;
        const [blob, df] = pb.postings(i);
        const bits = pb.languageBits(i);
        insTerm.run(term, bits & 1 ? stemEn(term) : term, df, blob);
        for (let k = 0; k < stemmed.length; k++) if (bits & (1 << (k + 1))) insStem.run(`${stemmed[k]}:${stemSnowball(term, stemmed[k]!)}`, term);
      }
    })();
  } catch (e) {
    db.close();
    throw e;
  }
  const meta: Record<string, string> = opts.embed && opts.embedder ? { embedder: opts.embedder } : {};
  return sealFile(db, path, { docCount, searchableCount: searchable, deleteCount: deletes.length }, seqs, languages, meta);
}
