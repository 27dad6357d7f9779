/**
 * Tokenising: the folded words of a text, and the compounds indexed beside them (identifiers
 * and hyphenated words joined, letter and digit runs of mixed words, URL path segments). Shared
 * by segment builds (pool workers) and query parsing; pure functions, safe in any thread.
 */
import { fold, isPlain } from './fold.js';
import { SEGMENTED_CHAR_RE, segmentWord } from './segment.js';

// Marks belong to the word: Latin, Greek and Cyrillic ones are folded away, others are vowels.
const WORD_RE = /[\p{L}\p{N}\p{M}]+/gu;
const ASCII_WORD_RE = /[a-z0-9]+/g;
const MIXED_RE = /[a-z][0-9]|[0-9][a-z]/;
const ALNUM_PART_RE = /[a-z]+|[0-9]+/g;
const ASCII_COMPOUND_RE = /[a-z0-9]+(?:[_\-.'/:+][a-z0-9]+)+/g;
const JOINERS_RE = /[_\-.'/:+]/g;
// Starts only where a run of letters and digits starts: without the lookbehind, a run not
// followed by a joiner is retried from each of its characters (quadratic in long CJK runs);
// a match can only start at a run's start either way, so the matches are the same.
const COMPOUND_RE = /(?<![\p{L}\p{N}])[\p{L}\p{N}]+(?:[_\-.'’/:+][\p{L}\p{N}]+)+/gu;

/**
 * Folded words of `text`, in order. A word is a maximal run of letters, marks and digits; runs
 * in scripts written without spaces (CJK, Thai …) are cut into dictionary words (segment.ts).
 *
 * @example words('pg_dump 15.18') // ['pg', 'dump', '15', '18']
 * @example words('パッケージ管理') // ['パッケージ', '管理']
 */
export function words(text: string): string[] {
  if (isPlain(text)) return text.toLowerCase().match(ASCII_WORD_RE) ?? [];
  return foldedWords(fold(text));
}

/** {@link words} of a text already folded (not plain before folding). */
function foldedWords(f: string): string[] {
  // Folding often leaves no letter outside ASCII (German, French, Spanish …: ä → a, ß → ss):
  // its words are then the ASCII runs, found without the Unicode-class regex.
  if (isPlain(f)) return f.match(ASCII_WORD_RE) ?? [];
  const ws = f.match(WORD_RE) ?? [];
  if (!SEGMENTED_CHAR_RE.test(f)) return ws;
  const out: string[] = [];
  for (const w of ws) {
    if (SEGMENTED_CHAR_RE.test(w)) for (const x of segmentWord(w)) out.push(x);
    else out.push(w);
  }
  return out;
}

/** Where a text may be cut without changing the words before the cut (folding never joins across them). */
const CUT_RE = /[\s\u3001\u3002]/g;

/**
 * The first `n` words of `text`, as `words(text).slice(0, n)`, analysing only as much of the
 * text as they need: consecutive pieces cut at a space (or an ideographic comma or full stop),
 * each as long as the words still wanted need at the characters per word met so far (a first
 * piece of 2 characters per word wanted: CJK text holds about that, alphabetic text a third as
 * many words, then read on in a second piece). No word runs across such a cut, so the pieces'
 * words are the prefix's. The built-in embedder reads the opening of long pages this way.
 *
 * @example firstWords('one two three four', 2) // ['one', 'two']
 */
export function firstWords(text: string, n: number): string[] {
  const out: string[] = [];
  if (n <= 0) return out;
  let from = 0;
  let len = Math.max(64, n * 2);
  while (from < text.length) {
    CUT_RE.lastIndex = from + len;
    const m = from + len < text.length ? CUT_RE.exec(text) : null;
    const to = m ? m.index : text.length;
    for (const w of words(from === 0 && to === text.length ? text : text.slice(from, to))) {
      out.push(w);
      if (out.length === n) return out;
    }
    from = to;
    // The rest at the density so far, with a margin (and at least 64 characters).
    len = Math.max(64, Math.ceil(((n - out.length) * to * 1.25) / Math.max(1, out.length)));
  }
  return out;
}

/**
 * Words and compounds of `text` in one pass (segment builds: the hot loop of indexing).
 * Same results as {@link words}, and {@link compounds} plus {@link alnumParts} of each word.
 */
export function analyzeText(text: string): { words: string[]; compounds: string[] } {
  if (!isPlain(text)) {
    // Folded once for both.
    const f = fold(text);
    const ws = foldedWords(f);
    return { words: ws, compounds: foldedCompounds(f).concat(ws.flatMap(alnumParts)) };
  }
  const lower = text.toLowerCase();
  const c = asciiCompounds(lower, []);
  const ws = lower.match(ASCII_WORD_RE) ?? [];
  for (const x of ws) if (MIXED_RE.test(x)) c.push(...alnumParts(x));
  return { words: ws, compounds: c };
}

/**
 * The letter and digit runs of a word that mixes both (`elma04` → `elma`, `04`; `utf8` →
 * `utf`, `8`), indexed besides the word itself so that either part finds it. [] otherwise.
 */
export function alnumParts(word: string): string[] {
  return MIXED_RE.test(word) ? word.match(ALNUM_PART_RE) ?? [] : [];
}

/**
 * Joined words of identifiers and hyphenated words (`pg_proc` → `pgproc`, `e-mail` → `email`),
 * indexed in addition to their parts so that a query typed either way, or with a typo inside
 * a short part, still finds them.
 */
export function compounds(text: string): string[] {
  if (isPlain(text)) return asciiCompounds(text.toLowerCase(), []);
  return foldedCompounds(fold(text));
}

/** {@link compounds} of a text already folded (not plain before folding). */
function foldedCompounds(f: string): string[] {
  const out: string[] = [];
  for (const m of f.matchAll(COMPOUND_RE)) {
    const parts = m[0].match(WORD_RE);
    // Not for scripts segmented by dictionary: their words are already cut out of runs.
    if (parts && parts.length > 1 && !SEGMENTED_CHAR_RE.test(m[0])) out.push(parts.join(''));
  }
  return out;
}

/** Appends the compounds of lower-cased plain ASCII `lower` to `out` and returns `out`. */
function asciiCompounds(lower: string, out: string[]): string[] {
  for (const m of lower.match(ASCII_COMPOUND_RE) ?? []) out.push(m.replace(JOINERS_RE, ''));
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

/**
 * Searchable words of a URL: path and query words, without scheme, host and file extensions.
 *
 * @example urlWords('https://www.example.com/docs/sql-createtable.html') // ['docs', 'sql', 'createtable']
 */
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
