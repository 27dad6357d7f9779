/**
 * Unicode folding: the form every word takes before it is indexed or looked up (NFKC, lower
 * case, diacritics removed from Latin, Greek and Cyrillic letters). Pure functions; safe to call
 * from any thread.
 *
 * Choices, by script (the same for every language, because a query's language is not known
 * when it is folded and both sides must fold alike):
 * - Latin: diacritics removed (`é→e`, German `ä→a`, Scandinavian `å→a`, `ö→o`); letters NFD does
 *   not decompose folded by table (`ß→ss æ→ae œ→oe ø→o ł→l đ/ð→d þ→th ħ→h ŧ→t`); Turkish dotless
 *   `ı` and dotted `İ` both fold to `i`, so `I`, `ı`, `i` and `İ` all match one another.
 * - Greek: accents and diaeresis removed (`ά→α`).
 * - Cyrillic: `ё→е`, but the breve stays (`й` is its own letter in Russian, and Snowball's
 *   Russian endings such as `-ый` need it).
 * - Every other script keeps its combining marks: they are vowels and voicing, not accents
 *   (Japanese `ガ` is not `カ`, Thai and Devanagari vowel signs are marks).
 */

// Letters that NFD does not decompose into base + mark.
const SPECIAL_FOLDS: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't',
};
const SPECIAL_RE = /[ßæœøłđðþıħŧ]/g;
/** Marks after a Latin, Greek or Cyrillic letter (or after marks already attached to one). */
const MARKS_RE = /([\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}])(\p{M}+)/gu;
const ANY_MARK_RE = /\p{M}/u;
const BREVE = '\u0306';
/** Per BMP code point, met so far: 0 not yet classified, 1 other, 2 Latin/Greek/Cyrillic letter, 3 mark. */
const diacriticClass = new Uint8Array(0x10000);
const LGC_RE = /[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}]/u;
const MARK_RE = /\p{M}/u;

function classify(ch: string): number {
  return LGC_RE.test(ch) ? 2 : MARK_RE.test(ch) ? 3 : 1;
}

/**
 * Whether NFKC'd, lower-cased `s` holds a Latin, Greek or Cyrillic letter outside ASCII, or a
 * mark on an ASCII letter or digit: only then can folding remove a diacritic. A scan over a
 * per-code-point table (each code point classified by regex once per thread): a regex with
 * these classes costs several times more on the long CJK texts that snippets and the
 * contiguity check fold.
 */
function hasDiacriticScripts(s: string): boolean {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    let k: number;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      k = classify(String.fromCodePoint(s.codePointAt(i)!));
    } else {
      k = diacriticClass[c]!;
      if (k === 0) diacriticClass[c] = k = classify(String.fromCharCode(c));
    }
    if (k === 2) return true;
    if (k === 3 && i > 0) {
      const p = s.charCodeAt(i - 1);
      if ((p >= 0x61 && p <= 0x7a) || (p >= 0x30 && p <= 0x39)) return true;
    }
    if (c >= 0xd800 && c <= 0xdbff) i++;
  }
  return false;
}

function dropMarks(_: string, base: string, marks: string): string {
  // Cyrillic й/ў keep their breve; everything else of Latin, Greek, Cyrillic loses its marks.
  if (marks.includes(BREVE) && /\p{sc=Cyrillic}/u.test(base)) return base + BREVE;
  return base;
}

/**
 * NFKC + lower case + diacritics removed (Latin, Greek, Cyrillic). Keeps non-word characters
 * (callers split).
 *
 * @example fold('Ärger Straße') // 'arger strasse'
 */
export function fold(text: string): string {
  // Plain ASCII only needs lower-casing.
  if (isPlain(text)) return text.toLowerCase();
  const lower = text.normalize('NFKC').toLowerCase();
  // Without Latin, Greek or Cyrillic letters beyond ASCII (and marks on ASCII letters) there is
  // no diacritic to remove: CJK, Thai or Arabic text is folded by NFKC and lower case alone,
  // which spares it two more normalisations.
  if (!hasDiacriticScripts(lower)) return lower;
  let s = lower.normalize('NFD');
  if (ANY_MARK_RE.test(s)) s = s.replace(MARKS_RE, dropMarks);
  s = s.replace(SPECIAL_RE, (c) => SPECIAL_FOLDS[c] ?? c);
  return s.normalize('NFC');
}

const ANY_NON_ASCII_RE = /[^\x00-\x7f]/g;
const WORD_CHAR_RE = /[\p{L}\p{M}\p{N}]/u;

/**
 * Whether `text` has no letter, digit or mark outside ASCII, so that lower-casing is its whole
 * folding (typographic punctuation such as — or “ does not count).
 */
export function isPlain(text: string): boolean {
  // Visit only the non-ASCII characters (usually a few dashes and quotes, if any).
  ANY_NON_ASCII_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ANY_NON_ASCII_RE.exec(text)) !== null) if (WORD_CHAR_RE.test(m[0])) return false;
  return true;
}
