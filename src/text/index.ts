/**
 * Text analysis, the ground floor: what turns text into the words an index holds and a query
 * looks up. Folding (NFKC, case, diacritics), tokenising (words, compounds, URL words),
 * stemming, stop words, typo matching over a vocabulary, binary search in sorted word lists,
 * and the ISO 639-1 language table; and the linear-time RE2 URL patterns of project settings
 * and API parameters (patterns.ts), which settings validation (src/projects), the crawler, result
 * groups (src/search) and removal by pattern (src/ingest) all run, so one compiler serves them.
 * Segment builds (src/index) and query handling (src/search) both import it, so a page and a
 * query are analysed by the same code. Imports no other src folder.
 *
 * @example
 * import { words, stem } from '../text/index.js';
 * words('Créate TABLE').map((w) => stem(w, 'en')); // ['creat', 'tabl']
 */
export { fold } from './fold.js';
export { words, analyzeText, alnumParts, compounds, urlCompounds, urlWords } from './tokenize.js';
export { stem, stemEn, stemSnowball, hasStemmer, STEMMED_LANGUAGES } from './stem.js';
export { ENGLISH_STOP_WORDS, isEnglishStopWord, stopWordsOf } from './stop-words.js';
export { isSegmentedScript, segmentWord, segmentedRuns, wordSpans, wordStartIn, wordEndIn } from './segment.js';
export { Vocabulary, fuzzyOrder, typoBudget, trieNodeBound, inCodeUnitOrder, sortedWithPrefix, type FuzzyMatch } from './typo.js';
export { ISO_639_1 } from './languages.js';
export { lowerBound, indexOfSorted } from './sorted.js';
export { compileOwned, compilePattern, firstMatch, matchesPattern, patternError, type CompiledPattern } from './patterns.js';
export { embedParts, embedWords, SIF_RANK, type WeightedText, type WeightedWords } from './embed.js';
export { loadWordVectors, decodeWordVectors, encodeWordVectors, sharedWordVectors, adoptWordVectors, wordVectorsBytes, type WordVectors, type SharedWordVectors } from './word-vectors.js';
export { embedHttp, EmbedderError, HTTP_EMBED_MAX_CHARS, type HttpEmbedderDeps } from './http-embedder.js';
export { docParts, docWordParts, docText, embedderFingerprint, BUILTIN_THRESHOLD, HTTP_THRESHOLD, BUILTIN_CONTENT_WORDS, type DocWords, type EmbeddableDoc } from './embedders.js';
