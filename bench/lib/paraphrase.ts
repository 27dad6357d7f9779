/**
 * The paraphrase query set of the PostgreSQL manual (bench/data/pg-paraphrase.jsonl): questions
 * in a visitor's words, each with the one page that answers it and that page's title. The
 * overlap rule keeps the set honest: a question shares no content word (English stem, stop
 * words and numbers left out) with its page's title, so a title match cannot answer it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isEnglishStopWord, stemEn, words } from '../../src/text/index.js';

/** One question: `q` as a visitor types it, `url` relative to the manual's root, `title` of that page. */
export interface ParaphraseQuery {
  q: string;
  url: string;
  title: string;
}

export const PARAPHRASE_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'data', 'pg-paraphrase.jsonl');

/** The question set, in file order. */
export function loadParaphrases(file = PARAPHRASE_FILE): ParaphraseQuery[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as ParaphraseQuery);
}

/** Content-word stems of a text: folded words, stop words and pure numbers dropped, stemmed. */
export function contentStems(text: string): Set<string> {
  return new Set(words(text).filter((w) => !isEnglishStopWord(w) && !/^\d+$/.test(w)).map((w) => stemEn(w)));
}

/**
 * The content-word stems a question shares with its page's title (empty when it keeps the rule).
 *
 * @example
 * sharedWithTitle({ q: 'make my queries faster', url: 'performance-tips.html', title: 'Chapter 14. Performance Tips' }); // []
 */
export function sharedWithTitle(p: ParaphraseQuery): string[] {
  const t = contentStems(p.title);
  return [...contentStems(p.q)].filter((s) => t.has(s));
}
