/**
 * Stop words: for English wink-nlp's English list (the lexemes of wink-eng-lite-web-model whose
 * `its.stopWordFlag` is true), as folded words. Kept here as data so that no thread has to load
 * the language model for them; test/text/stop-words.test.ts recomputes the list from wink-nlp
 * and compares. For every other language the `stopwords-iso` list, folded like indexed words.
 */
import { createRequire } from 'node:module';
import { words } from './tokenize.js';

/** wink-nlp's English stop words, folded. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'about', 'above', 'abt', 'across', 'after', 'afterwards', 'again', 'against', 'all', 'almost',
  'alone', 'along', 'already', 'also', 'although', 'always', 'am', 'among', 'amongst', 'amount',
  'an', 'and', 'another', 'any', 'anyhow', 'anyone', 'anything', 'anyway', 'anywhere', 'are',
  'around', 'as', 'at', 'b4', 'back', 'bcoz', 'be', 'became', 'because', 'become', 'becomes',
  'becoming', 'been', 'before', 'beforehand', 'behind', 'being', 'below', 'beside', 'besides',
  'between', 'beyond', 'both', 'bottom', 'but', 'by', 'call', 'can', 'cd', 'could', 'cuz', 'da',
  'did', 'dis', 'do', 'does', 'doin', 'doing', 'done', 'down', 'due', 'during', 'each', 'eight',
  'either', 'eleven', 'else', 'elsewhere', 'empty', 'enough', 'etc', 'even', 'ever', 'every',
  'everyone', 'everywhere', 'except', 'few', 'fifteen', 'fifty', 'first', 'five', 'for', 'former',
  'formerly', 'forty', 'four', 'from', 'front', 'full', 'further', 'get', 'give', 'go', 'had', 'has',
  'have', 'he', 'hence', 'her', 'here', 'hereafter', 'hereby', 'herein', 'hereupon', 'hers',
  'herself', 'him', 'himself', 'his', 'how', 'however', 'hundred', 'i', 'ie', 'if', 'in', 'inc',
  'indeed', 'into', 'is', 'it', 'its', 'itself', 'just', 'keep', 'last', 'latter', 'latterly',
  'least', 'less', 'made', 'make', 'many', 'may', 'me', 'meanwhile', 'might', 'mine', 'more',
  'moreover', 'most', 'mostly', 'move', 'much', 'must', 'my', 'myself', 'nah', 'name', 'namely',
  'neither', 'never', 'nevertheless', 'next', 'nine', 'no', 'nobody', 'none', 'nope', 'nor', 'not',
  'nothing', 'now', 'nowhere', 'of', 'off', 'often', 'on', 'once', 'one', 'only', 'onto', 'or',
  'other', 'otherwise', 'our', 'ours', 'ourselves', 'out', 'over', 'own', 'part', 'per', 'perhaps',
  'please', 'pls', 'plz', 'put', 'quite', 'rather', 're', 'really', 'regarding', 'same', 'say',
  'see', 'seem', 'seemed', 'seeming', 'seems', 'serious', 'seven', 'several', 'shd', 'she', 'should',
  'show', 'side', 'since', 'six', 'sixty', 'so', 'some', 'somehow', 'someone', 'something',
  'sometime', 'sometimes', 'somewhere', 'still', 'such', 'take', 'ten', 'than', 'that', 'the',
  'their', 'them', 'themselves', 'then', 'thence', 'there', 'thereafter', 'thereby', 'therefore',
  'therein', 'these', 'they', 'third', 'this', 'those', 'though', 'three', 'through', 'throughout',
  'thru', 'thus', 'to', 'together', 'too', 'top', 'toward', 'towards', 'twelve', 'twenty', 'two',
  'under', 'unless', 'until', 'up', 'upon', 'us', 'used', 'using', 'various', 'very', 'via', 'was',
  'we', 'well', 'were', 'what', 'whatever', 'when', 'whence', 'whenever', 'where', 'whereas',
  'whereby', 'wherein', 'wherever', 'whether', 'which', 'while', 'who', 'whoever', 'whole', 'whom',
  'whose', 'why', 'will', 'with', 'within', 'without', 'would', 'woz', 'wtv', 'yet', 'you', 'your',
  'yours', 'yourself', 'yourselves',
]);

/**
 * Whether `word` (folded) is an English stop word (wink-nlp's list).
 *
 * @example isEnglishStopWord('the') // true
 */
export function isEnglishStopWord(word: string): boolean {
  return ENGLISH_STOP_WORDS.has(word);
}

const isoLists = new Map<string, ReadonlySet<string>>();
let iso: Record<string, string[]> | null = null;

/**
 * The stop words of `language` (ISO 639-1), folded: wink-nlp's list for English, the
 * `stopwords-iso` list otherwise (empty when it has none). Multi-word entries are left out.
 *
 * @example stopWordsOf('de').has('und') // true
 */
export function stopWordsOf(language: string): ReadonlySet<string> {
  if (language === 'en') return ENGLISH_STOP_WORDS;
  let set = isoLists.get(language);
  if (!set) {
    // Loaded on first use only (a 200 KB JSON of 58 languages).
    iso ??= createRequire(import.meta.url)('stopwords-iso') as Record<string, string[]>;
    const out = new Set<string>();
    for (const w of iso[language] ?? []) {
      const ws = words(w);
      if (ws.length === 1) out.add(ws[0]!);
    }
    isoLists.set(language, (set = out));
  }
  return set;
}
