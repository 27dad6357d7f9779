/**
 * The semantic side of a search request on the main thread: which embedder a project uses,
 * the query's vector (cached), the ratio and the threshold, resolved into the
 * {@link SemanticQuery} the engine runs with. The built-in embedder's word vectors are loaded
 * once in this thread; the HTTP embedder is called here, so a search thread never waits on the
 * network.
 */
import type { EmbedderSpec, SemanticSettings } from '../core/index.js';
import { BUILTIN_THRESHOLD, embedHttp, embedParts, HTTP_THRESHOLD, isEnglishStopWord, loadWordVectors, words, type HttpEmbedderDeps, type WordVectors } from '../text/index.js';
import type { SemanticQuery } from './hybrid.js';

/** Query vectors kept (per process, all projects; least recently used evicted). */
export const QUERY_VECTOR_CACHE = 2000;

/** What a search answer tells about its semantic side (the response's `semantic` field). */
export interface SemanticMeta {
  ratio: number;
  /** The embedder fingerprint (vector space) the query was embedded in. */
  embedder: string;
  /** Live pages searched lexically only (in segments not embedded in that space yet). */
  lexicalOnlyDocuments: number;
  /** Why the query ran lexically only, when it did: no known word, or the embedder's error. */
  error?: string;
}

/** A resolved semantic query part: null when lexical only; `error` when the embedder failed. */
export interface Resolved {
  q: SemanticQuery | null;
  error?: string;
}

/**
 * Resolves the semantic part of queries. One per server (main thread).
 *
 * @example
 * const sem = await embedder.resolve(spec, settings.search.semantic, 'make my queries faster', undefined);
 */
export class QueryEmbedder {
  private readonly cache = new Map<string, Embedded>();

  constructor(private readonly deps: HttpEmbedderDeps = {}) {}

  /**
   * The semantic query for `query` (null when the project's embedder is off or unavailable, or
   * the ratio is 0), and the message of an embedder failure (the query then runs lexically).
   */
  resolve(spec: EmbedderSpec | null, settings: SemanticSettings | undefined, query: string, ratio: number | undefined): Resolved | Promise<Resolved> {
    if (!spec || !settings) return { q: null };
    const r = ratio ?? settings.semanticRatio;
    if (r <= 0) return { q: null };
    const threshold = settings.threshold ?? (spec.kind === 'builtin' ? BUILTIN_THRESHOLD : HTTP_THRESHOLD);
    const text = queryText(query);
    const key = `${spec.fp}\u0000${text}`;
    const cached = this.cache.get(key);
    const answer = (e: Embedded): Resolved => ({ q: { ratio: r, fp: spec.fp, threshold, vector: e.vector, ...(e.coverage < 1 ? { coverage: e.coverage } : {}) } });
    if (cached !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return answer(cached);
    }
    const done = (vector: Float32Array | null, coverage = 1): Resolved => {
      const e = { vector, coverage };
      this.cache.set(key, e);
      if (this.cache.size > QUERY_VECTOR_CACHE) this.cache.delete(this.cache.keys().next().value!);
      return answer(e);
    };
    const failed = (err: unknown): Resolved => ({ q: { ratio: r, fp: spec.fp, threshold, vector: null }, error: (err as Error).message });
    // The built-in embedder answers synchronously, so the caller pins in the same turn.
    if (spec.kind === 'builtin') {
      try {
        const wv = loadWordVectors(spec.table);
        return done(embedParts(wv, [{ text, weight: 1 }]), wordCoverage(wv, text));
      } catch (err) {
        return failed(err);
      }
    }
    if (!text) return done(null);
    return embedHttp(spec, [text], this.deps).then((v) => done(v[0]!), failed);
  }
}

/** A cached query embedding: the vector and the share of the query's words it represents. */
interface Embedded {
  vector: Float32Array | null;
  coverage: number;
}

/**
 * The share of the significant words of `text` that the word-vector table knows (1 when there
 * are none): the built-in embedder's confidence that the query vector says what the query says
 * (src/search/hybrid.ts, effectiveRatio). Stop words are skipped as the embedder skips them, and
 * so are one-character tokens (the `s` of a possessive, an initial) and numbers, which carry no
 * topic for a word-vector model.
 *
 * @example wordCoverage(wv, 'Message Data Typse') // 2/3: "typse" is not in the table
 */
export function wordCoverage(wv: WordVectors, text: string): number {
  let counted = 0;
  let known = 0;
  for (const w of words(text)) {
    if (w.length < 2 || /^[0-9]+$/.test(w) || isEnglishStopWord(w)) continue;
    counted++;
    if (wv.index.get(w) !== undefined) known++;
  }
  return counted ? known / counted : 1;
}

/**
 * The words of a query that say what it is about: excluded words (`-word`, `-"a b"`) removed,
 * quotes dropped.
 *
 * @example queryText('"undo changes" -savepoint') // 'undo changes'
 */
export function queryText(query: string): string {
  return query
    .replace(/(^|\s)-"[^"]*"?/g, ' ')
    .replace(/(^|\s)-\S+/g, ' ')
    .replace(/["*]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
