/**
 * Stemming: English Porter2 (wink-nlp's stemmer, as it always was) and Snowball stemmers
 * (the `snowball-stemmers` package) for the other languages Snowball covers; identity for
 * languages without one. Stems are taken of folded words (folding comes first on both the
 * page and the query side, so both agree). A per-thread cache of stems; safe in any thread.
 */
// wink-nlp's Porter2 stemmer, the function behind `its.stem` (its English model's `addons.stem`),
// imported on its own: loading the whole model for it costs ~56 MB of RSS in every thread that
// analyses text (main, pool and search threads). test/text/stem.test.ts checks it against
// wink-nlp itself.
import modelStem from 'wink-eng-lite-web-model/dist/porter-stemmer.js';
import { createRequire } from 'node:module';
import { SEGMENTED_CHAR_RE } from './segment.js';

const stemCache = new Map<string, string>();
const STEM_CACHE_SIZE = 200_000;

/** ISO 639-1 code → Snowball algorithm (English is wink-nlp's Porter2, not listed here). */
const SNOWBALL: Readonly<Record<string, string>> = {
  ar: 'arabic', hy: 'armenian', eu: 'basque', ca: 'catalan', cs: 'czech', da: 'danish', nl: 'dutch',
  fi: 'finnish', fr: 'french', de: 'german', hu: 'hungarian', it: 'italian', ga: 'irish',
  no: 'norwegian', nb: 'norwegian', nn: 'norwegian', pt: 'portuguese', ro: 'romanian', ru: 'russian',
  es: 'spanish', sl: 'slovene', sv: 'swedish', ta: 'tamil', tr: 'turkish',
};
const stemmers = new Map<string, { stem(word: string): string }>();
// A CommonJS package: required (an ESM default import of it differs between tsx and node).
let snowball: { newStemmer(algorithm: string): { stem(word: string): string } } | null = null;
const snowballCaches = new Map<string, Map<string, string>>();

/** Languages (ISO 639-1) with a stemmer: English and every Snowball language. */
export const STEMMED_LANGUAGES: readonly string[] = ['en', ...Object.keys(SNOWBALL)];

/** Whether `language` (ISO 639-1) has a stemmer. */
export function hasStemmer(language: string): boolean {
  return language === 'en' || language in SNOWBALL;
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

/**
 * Snowball stem of a folded word in `language` (cached per language). Words under 3 characters,
 * words with digits and words in dictionary-segmented scripts stay as they are.
 *
 * @example stemSnowball('pakete', 'de') // 'paket'
 */
export function stemSnowball(word: string, language: string): string {
  const algo = SNOWBALL[language];
  if (!algo) return word;
  let cache = snowballCaches.get(algo);
  if (!cache) snowballCaches.set(algo, (cache = new Map()));
  // The cache first: it never holds a word the rules below leave as it is, and a segment build
  // stems every term of its vocabulary.
  let s = cache.get(word);
  if (s === undefined) {
    if (word.length < 3 || /\d/.test(word) || SEGMENTED_CHAR_RE.test(word)) return word;
    let st = stemmers.get(algo);
    snowball ??= createRequire(import.meta.url)('snowball-stemmers') as typeof snowball;
    if (!st) stemmers.set(algo, (st = snowball!.newStemmer(algo)));
    s = st.stem(word) || word;
    if (cache.size > STEM_CACHE_SIZE) cache.clear();
    cache.set(word, s);
  }
  return s;
}

/**
 * Stem of a folded word for `language`: the word itself where no stemmer exists.
 *
 * @example stem('häuser', 'de') // 'haus' (folded first: 'hauser')
 */
export function stem(word: string, language: string): string {
  if (language === 'en') return stemEn(word);
  return stemSnowball(word, language);
}
