/**
 * Text analysis shared by segment builds (pool workers) and query parsing (main thread):
 * Unicode NFKC, case and diacritics folding, word splitting, English stemming (wink-nlp) and
 * stop words. Pure functions plus per-thread caches; safe to call from any thread.
 */
// wink-nlp's Porter2 stemmer, the function behind `its.stem` (its English model's `addons.stem`),
// imported on its own: loading the whole model for it costs ~56 MB of RSS in every thread that
// analyses text (main, pool and search threads). The stop-word list beside it is wink-nlp's,
// extracted once; test/search/analyze.test.ts checks both against wink-nlp itself.
import modelStem from 'wink-eng-lite-web-model/dist/porter-stemmer.js';
import { ENGLISH_STOP_WORDS } from './stop-words-en.js';

// Letters that NFD does not decompose into base + mark.
const SPECIAL_FOLDS: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't',
};
const SPECIAL_RE = /[ßæœøłđðþıħŧ]/g;
const MARKS_RE = /\p{M}+/gu;
const WORD_RE = /[\p{L}\p{N}]+/gu;

/** NFKC + lower case + diacritics removed. Keeps non-word characters (callers split). */
export function fold(text: string): string {
  // Fast path: plain ASCII only needs lower-casing.
  if (isPlain(text)) return text.toLowerCase();
  let s = text.normalize('NFKC').toLowerCase();
  s = s.normalize('NFD').replace(MARKS_RE, '').replace(SPECIAL_RE, (c) => SPECIAL_FOLDS[c] ?? c);
  return s.normalize('NFC');
}

/** Folded words of `text`, in order. A word is a maximal run of letters and digits. */
export function words(text: string): string[] {
  if (isPlain(text)) return text.toLowerCase().match(ASCII_WORD_RE) ?? [];
  return fold(text).match(WORD_RE) ?? [];
}

/** Whether `text` has no letter, digit or mark outside ASCII (so lower-casing is its folding). */
function isPlain(text: string): boolean {
  // Visit only the non-ASCII characters (usually a few dashes and quotes, if any).
  ANY_NON_ASCII_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ANY_NON_ASCII_RE.exec(text)) !== null) if (WORD_CHAR_RE.test(m[0])) return false;
  return true;
}

const ANY_NON_ASCII_RE = /[^\x00-\x7f]/g;
const WORD_CHAR_RE = /[\p{L}\p{M}\p{N}]/u;

/**
 * Words and compounds of `text` in one pass (segment builds: the hot loop of indexing).
 * Same results as {@link words} and {@link compounds}.
 */
export function analyzeText(text: string): { words: string[]; compounds: string[] } {
  if (!isPlain(text)) {
    const ws = words(text);
    return { words: ws, compounds: compounds(text).concat(ws.flatMap(alnumParts)) };
  }
  const w: string[] = [];
  const c: string[] = [];
  const lower = text.toLowerCase();
  for (const m of lower.match(ASCII_COMPOUND_RE) ?? []) c.push(m.replace(JOINERS_RE, ''));
  const ws = lower.match(ASCII_WORD_RE) ?? w;
  for (const x of ws) if (MIXED_RE.test(x)) c.push(...alnumParts(x));
  return { words: ws, compounds: c };
}

// A letter, digit or mark outside ASCII. Text without one (only ASCII words, perhaps with
// typographic punctuation like — or “) is tokenized on the fast ASCII path. Built from a
// string: the `v` flag's set subtraction is newer than the TypeScript target.
const NON_ASCII_RE = new RegExp('[[\\p{L}\\p{M}\\p{N}]--[a-zA-Z0-9]]', 'v');
const ASCII_WORD_RE = /[a-z0-9]+/g;
const MIXED_RE = /[a-z][0-9]|[0-9][a-z]/;
const ALNUM_PART_RE = /[a-z]+|[0-9]+/g;

/**
 * The letter and digit runs of a word that mixes both (`elma04` → `elma`, `04`; `utf8` →
 * `utf`, `8`), indexed besides the word itself so that either part finds it. [] otherwise.
 */
export function alnumParts(word: string): string[] {
  return MIXED_RE.test(word) ? word.match(ALNUM_PART_RE) ?? [] : [];
}
const ASCII_COMPOUND_RE = /[a-z0-9]+(?:[_\-.'/:+][a-z0-9]+)+/g;
const JOINERS_RE = /[_\-.'/:+]/g;

/** One word with its character span in the ORIGINAL text (for highlighting). */
export interface WordSpan {
  word: string;
  start: number;
  end: number;
}

/**
 * Words of `text` with their spans in `text` itself. Folding can change lengths (ß → ss), so
 * spans are found on the original string and each word folded separately.
 */
export function wordSpans(text: string): WordSpan[] {
  const out: WordSpan[] = [];
  const re = /[\p{L}\p{N}\p{M}]+/gu;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const folded = fold(m[0]).match(WORD_RE);
    if (!folded) continue;
    // A run like "x\u0301y" folds to one word; a run that folds to several keeps the span whole.
    for (const w of folded) out.push({ word: w, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

const stemCache = new Map<string, string>();

/** Languages with a stemmer. */
export function hasStemmer(language: string): boolean {
  return language === 'en';
}

/** English Porter2 stem of a folded word (cached). Numbers and very short words stay as they are. */
export function stemEn(word: string): string {
  if (word.length < 3 || /\d/.test(word)) return word;
  let s = stemCache.get(word);
  if (s === undefined) {
    // wink-nlp's own Porter2 stemmer (the one behind `its.stem`), called directly: building a
    // document per word costs ~40 µs, the stemmer alone well under one.
    const out = modelStem(word);
    s = out ? out : word;
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(word, s);
  }
  return s;
}

/** Stem for `language`, identity where no stemmer exists. */
export function stem(word: string, language: string): string {
  return hasStemmer(language) ? stemEn(word) : word;
}

/** Whether `word` (folded) is an English stop word (wink-nlp's list). */
export function isEnglishStopWord(word: string): boolean {
  return ENGLISH_STOP_WORDS.has(word);
}

const COMPOUND_RE = /[\p{L}\p{N}]+(?:[_\-.'’/:+][\p{L}\p{N}]+)+/gu;

/**
 * Joined words of identifiers and hyphenated words (`pg_proc` → `pgproc`, `e-mail` → `email`),
 * indexed in addition to their parts so that a query typed either way, or with a typo inside
 * a short part, still finds them.
 */
export function compounds(text: string): string[] {
  const out: string[] = [];
  if (isPlain(text)) {
    for (const m of text.toLowerCase().match(ASCII_COMPOUND_RE) ?? []) out.push(m.replace(JOINERS_RE, ''));
    return out;
  }
  for (const m of fold(text).matchAll(COMPOUND_RE)) {
    const parts = m[0].match(WORD_RE);
    if (parts && parts.length > 1) out.push(parts.join(''));
  }
  return out;
}

/** Compounds of a URL's path segments, file extensions dropped (`sql-createview.html` → `sqlcreateview`). */
export function urlCompounds(url: string): string[] {
  let path = url;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    // Not a URL: use as is.
  }
  return compounds(path.split('/').map((seg) => seg.replace(/\.[a-z0-9]{1,5}$/i, '')).join(' '));
}

const URL_NOISE = new Set(['http', 'https', 'www', 'html', 'htm', 'php', 'aspx', 'asp', 'jsp', 'index']);

/** Searchable words of a URL: path and query words, without scheme, host and file extensions. */
export function urlWords(url: string): string[] {
  let path = url;
  try {
    const u = new URL(url);
    path = decodeURIComponent(u.pathname + ' ' + u.search);
  } catch {
    // Not a URL (tests, relative paths): index the string as it is.
  }
  return words(path).filter((w) => !URL_NOISE.has(w));
}

/** Maps a language name or code to ISO 639-1 where we know it; null when unknown. */
export function normaliseLanguage(value: string): string | null {
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2}$/.test(v)) return v;
  const m = /^([a-z]{2})[-_][a-z]{2,4}$/.exec(v);
  if (m) return m[1]!;
  return LANGUAGE_NAMES[v] ?? null;
}

const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en', german: 'de', french: 'fr', spanish: 'es', italian: 'it', portuguese: 'pt',
  dutch: 'nl', swedish: 'sv', danish: 'da', norwegian: 'no', finnish: 'fi', polish: 'pl',
  czech: 'cs', slovak: 'sk', hungarian: 'hu', romanian: 'ro', russian: 'ru', ukrainian: 'uk',
  greek: 'el', turkish: 'tr', arabic: 'ar', hebrew: 'he', chinese: 'zh', japanese: 'ja',
  korean: 'ko', hindi: 'hi', thai: 'th', vietnamese: 'vi', indonesian: 'id', malay: 'ms',
  bulgarian: 'bg', croatian: 'hr', serbian: 'sr', slovenian: 'sl', estonian: 'et',
  latvian: 'lv', lithuanian: 'lt', catalan: 'ca', irish: 'ga', icelandic: 'is', persian: 'fa',
};
