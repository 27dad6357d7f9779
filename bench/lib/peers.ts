/**
 * The engines people would pick instead of sitesift, set up the way the issue describes, for
 * the relevance and speed benchmarks (bench process only; in memory, nothing on disk).
 *
 * - {@link MiniSearchPeer}: MiniSearch 7, fields title/headings/content boosted 4/2/1,
 *   `fuzzy: 0.2`, `prefix: true`, default `combineWith: 'OR'`.
 * - {@link Fts5Peer}: raw SQLite FTS5 through better-sqlite3, porter tokenizer (over unicode61),
 *   columns title/headings/content; every query word quoted; AND first, then OR when AND finds
 *   nothing; ranked by `bm25()` with default column weights.
 *
 * - {@link LunrPeer}: Lunr 2.3.9 with its default pipeline (stop words, Porter stemmer, BM25
 *   k1 1.2 b 0.75), fields title/headings/content unboosted; the query's Lunr syntax characters
 *   (`: ^ ~ + - *`) become spaces, so the text is searched as plain words (OR). Used for
 *   Cranfield, where issue 3 quotes Lunr (0.403) — it checks the nDCG convention in every run.
 *
 * All take documents as {@link PeerDoc} (headings as one string) and answer ranked URLs.
 */
import Database from 'better-sqlite3';
import lunr from 'lunr';
import MiniSearch from 'minisearch';

export interface PeerDoc {
  url: string;
  title: string;
  /** All headings in one string (the corpus's " | "-joined form is fine). */
  headings: string;
  content: string;
}

export interface PeerHit {
  url: string;
  score: number;
}

/** MiniSearch options from the issue; `id` is the document's position. */
export const MINISEARCH_OPTIONS = {
  fields: ['title', 'headings', 'content'],
  storeFields: [] as string[],
  searchOptions: { boost: { title: 4, headings: 2, content: 1 }, fuzzy: 0.2, prefix: true },
};

export class MiniSearchPeer {
  readonly name = 'MiniSearch 7';
  private readonly ms = new MiniSearch<PeerDoc & { id: number }>(MINISEARCH_OPTIONS);
  private readonly docs: PeerDoc[] = [];

  /** Adds documents (may be called repeatedly, e.g. while generating a large set). */
  add(docs: Iterable<PeerDoc>): void {
    for (const d of docs) {
      const id = this.docs.length;
      this.docs.push(d);
      this.ms.add({ ...d, id });
    }
  }

  get size(): number {
    return this.docs.length;
  }

  doc(i: number): PeerDoc {
    return this.docs[i]!;
  }

  /** All matches, best first (MiniSearch ranks everything it matched). */
  searchIds(query: string): Array<{ id: number; score: number }> {
    return this.ms.search(query).map((r) => ({ id: r.id as number, score: r.score }));
  }

  search(query: string, limit = 10): PeerHit[] {
    return this.searchIds(query)
      .slice(0, limit)
      .map((r) => ({ url: this.docs[r.id]!.url, score: r.score }));
  }
}

export class Fts5Peer {
  readonly name = 'SQLite FTS5';
  private readonly db = new Database(':memory:');
  private readonly stmt: Database.Statement<[string, number], { url: string; score: number }>;

  constructor() {
    this.db.exec(`CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, title, headings, content, tokenize = 'porter')`);
    this.stmt = this.db.prepare(`SELECT url, bm25(docs) AS score FROM docs WHERE docs MATCH ? ORDER BY score LIMIT ?`);
  }

  add(docs: Iterable<PeerDoc>): void {
    const ins = this.db.prepare(`INSERT INTO docs (url, title, headings, content) VALUES (?, ?, ?, ?)`);
    this.db.transaction(() => {
      for (const d of docs) ins.run(d.url, d.title, d.headings, d.content);
    })();
  }

  /**
   * Query words (whitespace-separated) each become a quoted FTS5 string, so punctuation inside
   * a word makes a phrase of its tokens rather than a syntax error; words without any letter or
   * digit are dropped (a quoted "." would be an empty phrase).
   */
  static terms(query: string): string[] {
    return query
      .split(/\s+/)
      .filter((w) => /[\p{L}\p{N}]/u.test(w))
      .map((w) => `"${w.replace(/"/g, '""')}"`);
  }

  search(query: string, limit = 10): PeerHit[] {
    const terms = Fts5Peer.terms(query);
    if (!terms.length) return [];
    const and = this.stmt.all(terms.join(' AND '), limit);
    if (and.length || terms.length === 1) return and;
    return this.stmt.all(terms.join(' OR '), limit);
  }

  close(): void {
    this.db.close();
  }
}

export class LunrPeer {
  readonly name = 'Lunr 2';
  private index: lunr.Index | null = null;
  private readonly docs: PeerDoc[] = [];

  /** Adds documents; Lunr indexes are immutable, so the index is built on the first search. */
  add(docs: Iterable<PeerDoc>): void {
    for (const d of docs) this.docs.push(d);
    this.index = null;
  }

  search(query: string, limit = 10): PeerHit[] {
    if (!this.index) {
      const docs = this.docs;
      this.index = lunr(function () {
        this.ref('url');
        this.field('title');
        this.field('headings');
        this.field('content');
        for (const d of docs) this.add(d);
      });
    }
    const text = query.replace(/[:^~+\-*]/g, ' ').trim();
    if (!text) return [];
    return this.index
      .search(text)
      .slice(0, limit)
      .map((r) => ({ url: r.ref, score: r.score }));
  }
}
