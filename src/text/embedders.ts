/**
 * What every embedder shares: which text of a page is embedded, the fingerprint that names a
 * vector space, and the built-in embedder's measured similarity threshold.
 */
import type { HttpEmbedderSettings } from '../core/index.js';
import type { WeightedText, WeightedWords } from './embed.js';

/**
 * Least cosine similarity of a built-in vector neighbour (`search.semantic.threshold: null`).
 * Measured on the PostgreSQL manual (bench/relevance.ts): the answering page of a paraphrase
 * question typically scores 0.55–0.75, a question about another subject ("chocolate cake
 * recipe") reaches at most about 0.5 with any page.
 */
export const BUILTIN_THRESHOLD = 0.55;

/** Least cosine similarity of an HTTP neighbour when the project sets none. */
export const HTTP_THRESHOLD = 0.5;

/** Version of the built-in document and query vectors (bump when embed.ts or the parts change). */
const BUILTIN_VERSION = 1;

/** The fields of a page an embedder reads. */
export interface EmbeddableDoc {
  title: string;
  headings: readonly string[];
  content: string;
  description?: string | null;
}

/** Words of the content read by the built-in embedder (the opening of a page says what it is about). */
export const BUILTIN_CONTENT_WORDS = 300;

/**
 * The weighted parts of a page for the built-in embedder: title, headings at half weight, the
 * description and the first {@link BUILTIN_CONTENT_WORDS} words of the content.
 */
export function docParts(doc: EmbeddableDoc): WeightedText[] {
  const content = doc.description ? `${doc.description} ${doc.content}` : doc.content;
  return [
    { text: doc.title, weight: 1 },
    { text: doc.headings.join(' \u2029 '), weight: 0.5 },
    { text: content, weight: 1, maxWords: BUILTIN_CONTENT_WORDS },
  ];
}

/**
 * The words of a page's embedded parts, as a segment build has them from its own analysis:
 * `words()` of the title and of the headings joined as {@link docParts} joins them, and the
 * first {@link BUILTIN_CONTENT_WORDS} words of the description and content.
 */
export interface DocWords {
  title: readonly string[];
  headings: readonly string[];
  content: readonly string[];
}

/**
 * {@link docParts} as word lists: with {@link embedWords} the same vector as `embedParts` of
 * docParts, without analysing the page again.
 *
 * @example embedWords(wv, docWordParts({ title: ['apt'], headings: [], content: words(content).slice(0, BUILTIN_CONTENT_WORDS) }))
 */
export function docWordParts(w: DocWords): WeightedWords[] {
  return [
    { words: w.title, weight: 1 },
    { words: w.headings, weight: 0.5 },
    { words: w.content, weight: 1 },
  ];
}

/** The text of a page sent to an HTTP embedder: title, headings and the opening of the content. */
export function docText(doc: EmbeddableDoc): string {
  const content = doc.description ? `${doc.description}\n${doc.content}` : doc.content;
  return `${doc.title}\n${doc.headings.join('\n')}\n${content}`;
}

/**
 * The name of a vector space: vectors with the same fingerprint are comparable. Changing the
 * HTTP URL, model or dimensions changes it, and with it every segment is re-embedded.
 *
 * @example embedderFingerprint('builtin') // 'builtin:sg100:1'
 */
export function embedderFingerprint(kind: 'builtin' | 'http', http?: HttpEmbedderSettings): string {
  if (kind === 'builtin') return `builtin:sg100:${BUILTIN_VERSION}`;
  return `http:${http!.url}|${http!.model}|${http!.dimensions}`;
}
