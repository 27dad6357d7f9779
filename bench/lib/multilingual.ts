/**
 * The multilingual part of `make relevance`: known-item sets in German, French and Japanese
 * (`../shared/corpus/ml/{de,fr,ja}`: docs.jsonl.gz and queries.jsonl; the folder name is the
 * `language` sent with every document) scored on sitesift and, in the same run, on
 * language-aware peers over the same documents and queries:
 *
 * - Lucene 8 (Debian liblucene8-java, `bench/peers/LucenePeer.java` compiled with javac into a
 *   temp dir at bench time): GermanAnalyzer, FrenchAnalyzer, JapaneseAnalyzer (kuromoji) and
 *   CJKAnalyzer (bigrams) for Japanese; title/headings/content boosted 4/2/1, OR.
 * - SQLite FTS5 with the `unicode61` tokenizer (remove_diacritics 2) and with `trigram`; every
 *   query word quoted, AND first, then OR when AND finds nothing.
 * - MiniSearch 7 with an `Intl.Segmenter` word tokenizer, the options (boost 4/2/1,
 *   fuzzy 0.2, prefix).
 *
 * Kinds: title, typo, prefix, heading, content; Japanese has substring instead of typo.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import MiniSearch from 'minisearch';
import { knownItemScores, SHARED, type CorpusDoc, type KnownItem } from './corpus.js';
import type { PeerDoc } from './peers.js';
import { ROOT } from './server.js';

/** The sets scored (RELEVANCE_LANGS=ja,de picks some). */
export const ML_LANGUAGES: readonly string[] = (process.env.RELEVANCE_LANGS ?? 'de,fr,ja').split(',').filter(Boolean);
export const ML_BASE = 'https://ml.test/';

export interface MlSet {
  language: string;
  docs: CorpusDoc[];
  queries: KnownItem[];
}

export function loadMlSet(language: string): MlSet {
  const dir = path.join(SHARED, 'corpus/ml', language);
  const docs = zlib.gunzipSync(fs.readFileSync(path.join(dir, 'docs.jsonl.gz'))).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as CorpusDoc);
  const queries = fs.readFileSync(path.join(dir, 'queries.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as KnownItem);
  return { language, docs, queries };
}

export interface Agg {
  n: number;
  rr: number;
  s1: number;
  s10: number;
  zero: number;
}

/** Per kind (and 'all') sums of the known-item scores; `ranked[i]` answers `queries[i]` (full URLs). */
export function scoreKnownItems(queries: KnownItem[], ranked: string[][], base = ML_BASE): Map<string, Agg> {
  const by = new Map<string, Agg>();
  queries.forEach((q, i) => {
    const s = knownItemScores(ranked[i]!, base + q.url);
    for (const k of [q.kind, 'all']) {
      const a = by.get(k) ?? { n: 0, rr: 0, s1: 0, s10: 0, zero: 0 };
      a.n++;
      a.rr += s.rr;
      a.s1 += s.s1;
      a.s10 += s.s10;
      a.zero += s.zero;
      by.set(k, a);
    }
  });
  return by;
}

const flat = (s: string) => s.replace(/[\t\r\n]+/g, ' ');

/** Lucene 8 over `docs` with `analyzer` (german, french, japanese, cjk; english otherwise): ranked URLs per query. */
export function lucenePeer(docs: PeerDoc[], queries: string[], analyzer: string): string[][] {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lucene-peer-'));
  try {
    const jars = ['core', 'analyzers-common', 'analyzers-kuromoji', 'queryparser'].map((j) => `/usr/share/java/lucene-${j}-8.7.0.jar`);
    const cp = jars.join(':');
    execFileSync('javac', ['-d', tmp, '-cp', cp, path.join(ROOT, 'bench/peers/LucenePeer.java')]);
    fs.writeFileSync(path.join(tmp, 'docs.tsv'), docs.map((d) => [d.url, d.title, d.headings, d.content].map(flat).join('\t')).join('\n') + '\n');
    fs.writeFileSync(path.join(tmp, 'queries.txt'), queries.map(flat).join('\n') + '\n');
    const out = execFileSync('java', ['-cp', `${tmp}:${cp}`, 'LucenePeer', analyzer, path.join(tmp, 'docs.tsv'), path.join(tmp, 'queries.txt')], { maxBuffer: 64 << 20 }).toString('utf8');
    const lines = out.split('\n');
    return queries.map((_, i) => (lines[i] ? lines[i]!.split('\t') : []));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** SQLite FTS5 with `tokenizer` (unicode61 or trigram): ranked URLs per query. */
export function fts5Peer(docs: PeerDoc[], queries: string[], tokenizer: 'unicode61' | 'trigram'): string[][] {
  const db = new Database(':memory:');
  try {
    const tok = tokenizer === 'unicode61' ? 'unicode61 remove_diacritics 2' : 'trigram';
    db.exec(`CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, title, headings, content, tokenize = '${tok}')`);
    const ins = db.prepare('INSERT INTO docs (url, title, headings, content) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (const d of docs) ins.run(d.url, d.title, d.headings, d.content);
    })();
    const stmt = db.prepare('SELECT url FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10').pluck();
    return queries.map((q) => {
      // Trigram matches substrings of at least 3 characters: shorter words would match nothing.
      const terms = q
        .split(/\s+/)
        .filter((w) => /[\p{L}\p{N}]/u.test(w) && (tokenizer === 'unicode61' || [...w].length >= 3))
        .map((w) => `"${w.replace(/"/g, '""')}"`);
      if (!terms.length) return [];
      try {
        const and = stmt.all(terms.join(' AND ')) as string[];
        if (and.length || terms.length === 1) return and;
        return stmt.all(terms.join(' OR ')) as string[];
      } catch {
        return [];
      }
    });
  } finally {
    db.close();
  }
}

/** MiniSearch 7 with an Intl.Segmenter word tokenizer (the options). */
export function miniSearchSegmenterPeer(docs: PeerDoc[], queries: string[], language: string): string[][] {
  const seg = new Intl.Segmenter(language, { granularity: 'word' });
  const tokenize = (text: string) => {
    const out: string[] = [];
    // Per line of text: the segmenter slows down on very long strings.
    for (const part of text.split(/[\n。.!?！？]/)) for (const s of seg.segment(part)) if (s.isWordLike) out.push(s.segment);
    return out;
  };
  const ms = new MiniSearch<PeerDoc & { id: number }>({
    fields: ['title', 'headings', 'content'],
    storeFields: [],
    tokenize,
    processTerm: (t) => t.toLowerCase(),
    searchOptions: { boost: { title: 4, headings: 2, content: 1 }, fuzzy: 0.2, prefix: true, tokenize },
  });
  docs.forEach((d, id) => ms.add({ ...d, id }));
  return queries.map((q) => ms.search(q).slice(0, 10).map((r) => docs[r.id as number]!.url));
}
