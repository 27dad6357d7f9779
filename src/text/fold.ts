/**
 * Unicode folding: the form every word takes before it is indexed or looked up (NFKC, lower
 * case, diacritics removed). Pure functions; safe to call from any thread.
 */

// Letters that NFD does not decompose into base + mark.
const SPECIAL_FOLDS: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't',
};
const SPECIAL_RE = /[ßæœøłđðþıħŧ]/g;
const MARKS_RE = /\p{M}+/gu;

/**
 * NFKC + lower case + diacritics removed. Keeps non-word characters (callers split).
 *
 * @example fold('Ärger Straße') // 'arger strasse'
 */
export function fold(text: string): string {
  // Plain ASCII only needs lower-casing.
  if (isPlain(text)) return text.toLowerCase();
  let s = text.normalize('NFKC').toLowerCase();
  s = s.normalize('NFD').replace(MARKS_RE, '').replace(SPECIAL_RE, (c) => SPECIAL_FOLDS[c] ?? c);
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
