/**
 * Stemming: English Porter2 (wink-nlp's stemmer), identity for languages without a stemmer.
 * A per-thread cache of stems; safe to call from any thread.
 */
// wink-nlp's Porter2 stemmer, the function behind `its.stem` (its English model's `addons.stem`),
// imported on its own: loading the whole model for it costs ~56 MB of RSS in every thread that
// analyses text (main, pool and search threads). test/text/stem.test.ts checks it against
// wink-nlp itself.
import modelStem from 'wink-eng-lite-web-model/dist/porter-stemmer.js';

const stemCache = new Map<string, string>();
const STEM_CACHE_SIZE = 200_000;

/** Whether `language` (ISO 639-1) has a stemmer. */
export function hasStemmer(language: string): boolean {
  return language === 'en';
}

/**
 * English Porter2 stem of a folded word (cached). Numbers and very short words stay as they are.
 *
 * @example stemEn('tables') // 'tabl'
 */
export function stemEn(word: string): string {
  if (word.length < 3 || /\d/.test(word)) return word;
  let s = stemCache.get(word);
  if (s === undefined) {
    // The stemmer alone, not a wink document per word (which costs ~40 µs; this well under one).
    const out = modelStem(word);
    s = out ? out : word;
    if (stemCache.size > STEM_CACHE_SIZE) stemCache.clear();
    stemCache.set(word, s);
  }
  return s;
}

/** Stem of a folded word for `language`: the word itself where no stemmer exists. */
export function stem(word: string, language: string): string {
  return hasStemmer(language) ? stemEn(word) : word;
}
