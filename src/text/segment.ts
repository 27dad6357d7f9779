/**
 * Word segmentation for scripts written without spaces (Han, Hiragana, Katakana, Hangul, Thai,
 * Lao, Khmer, Myanmar) with `Intl.Segmenter` (ICU's dictionary break iterator, built into Node),
 * whatever language a page or query declares. Pure functions with a per-thread cache; safe in any
 * thread.
 *
 * A run of such text is first cut where the script changes (Han | Hiragana | Katakana | Hangul |
 * Thai …), and each piece is segmented on its own and cached: ICU's iterator costs tens of µs to
 * create and slows down on long strings, while short pieces repeat across pages (particles,
 * katakana loanwords, kanji compounds), so most pieces are a cache hit. Cutting at script changes
 * also keeps a page and a query that stops inside a word segmented alike.
 *
 * A katakana piece stays one word: katakana runs are loanwords and compounds of loanwords, which
 * ICU's dictionary cuts by what it happens to know (`データー` → `デー|ター`, `ビルドツール` →
 * `ビル|ド|ツール`), differently on a page and in a query that holds only part of the run. Whole,
 * a part of the run finds it through prefix and substring matching (src/search/expand.ts), and
 * a query run of several loanwords that no page holds whole is cut where its halves match.
 */

/** Characters of the scripts segmented by dictionary (folded text: NFKC has made katakana full width). */
export const SEGMENTED_CHAR_RE = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\u30fc\u3005]/u;
/** Pieces: one script class per run; anything else (Latin, digits) is a piece of its own. */
const PIECE_RE = /[\p{sc=Han}\u3005]+|[\p{sc=Hiragana}]+|[\p{sc=Katakana}\u30fc]+|[\p{sc=Hangul}]+|[\p{sc=Thai}]+|[\p{sc=Lao}]+|[\p{sc=Khmer}]+|[\p{sc=Myanmar}]+|[^\p{sc=Han}\u3005\p{sc=Hiragana}\p{sc=Katakana}\u30fc\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]+/gu;

let segmenter: Intl.Segmenter | null = null;
const cache = new Map<string, readonly string[]>();
const CACHE_SIZE = 100_000;

/** Whether `word` holds a character of a script segmented by dictionary (CJK, Thai …). */
export function isSegmentedScript(word: string): boolean {
  return SEGMENTED_CHAR_RE.test(word);
}

/** The ICU words of one single-script piece (cached); a katakana piece is one word. */
function segmentPiece(piece: string): readonly string[] {
  // One BMP character is its own word whatever ICU says (a word, or nothing word-like: the
  // piece itself, as below); particles are such pieces, and a table lookup costs more than this.
  if (piece.length === 1) return [piece];
  let r = cache.get(piece);
  if (r === undefined) {
    if (pieceClass(piece.codePointAt(0)!) === KATAKANA) {
      r = [piece];
      if (cache.size >= CACHE_SIZE) cache.clear();
      cache.set(piece, r);
      return r;
    }
    segmenter ??= new Intl.Segmenter('ja', { granularity: 'word' });
    // Consecutive one-character words are joined: ICU cuts a sequence its dictionary does not
    // know (a loanword, a word cut short by a query typed as you go) into single characters.
    const out: string[] = [];
    let single = false;
    for (const s of segmenter.segment(piece)) {
      if (!s.isWordLike) {
        single = false;
        continue;
      }
      const one = [...s.segment].length === 1;
      if (one && single) out[out.length - 1] += s.segment;
      else out.push(s.segment);
      single = one;
    }
    r = out.length ? out : [piece];
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(piece, r);
  }
  return r;
}

/** The piece class of katakana (and the prolonged sound mark) in {@link CLASS_RES}' numbering. */
const KATAKANA = 3;
/** The piece classes of PIECE_RE, in its order (0: anything else). */
const CLASS_RES = [/[\p{sc=Han}\u3005]/u, /\p{sc=Hiragana}/u, /[\p{sc=Katakana}\u30fc]/u, /\p{sc=Hangul}/u, /\p{sc=Thai}/u, /\p{sc=Lao}/u, /\p{sc=Khmer}/u, /\p{sc=Myanmar}/u];
/** Piece class + 1 of each BMP code point met so far (0: not yet classified), per thread. */
const bmpClasses = new Uint8Array(0x10000);

/** The piece class of a code point: the regexes once per BMP code point, then a table; the regexes beyond. */
function pieceClass(cp: number): number {
  if (cp < 0x80) return 0;
  if (cp < 0x10000) {
    const k = bmpClasses[cp]!;
    if (k !== 0) return k - 1;
    const cls = classOf(String.fromCharCode(cp));
    bmpClasses[cp] = cls + 1;
    return cls;
  }
  return classOf(String.fromCodePoint(cp));
}

function classOf(ch: string): number {
  if (!SEGMENTED_CHAR_RE.test(ch)) return 0;
  for (let k = 0; k < CLASS_RES.length; k++) if (CLASS_RES[k]!.test(ch)) return k + 1;
  return 0;
}

/**
 * Splits one folded word (a run of letters, digits and marks) into the words of its
 * dictionary-segmented scripts; other parts of it (Latin, digits) stay whole. Pieces are cut
 * as PIECE_RE cuts them, by a scan over a class table (the hot path of indexing CJK text).
 *
 * @example segmentWord('debianのパッケージ管理') // ['debian', 'の', 'パッケージ', '管理']
 */
export function segmentWord(word: string): string[] {
  const out: string[] = [];
  forEachPiece(word, (i, j, segmented) => {
    const p = word.slice(i, j);
    if (!segmented) out.push(p);
    else for (const w of segmentPiece(p)) out.push(w);
  });
  return out;
}

/**
 * Calls `piece(start, end, segmented)` for each maximal run of `word` whose characters share a
 * piece class (pieceClass), in order: `segmented` for runs of dictionary-segmented scripts.
 */
function forEachPiece(word: string, piece: (start: number, end: number, segmented: boolean) => void): void {
  const n = word.length;
  let i = 0;
  while (i < n) {
    const cp = word.codePointAt(i)!;
    const cls = pieceClass(cp);
    let j = i + (cp > 0xffff ? 2 : 1);
    while (j < n) {
      const c = word.codePointAt(j)!;
      if (pieceClass(c) !== cls) break;
      j += c > 0xffff ? 2 : 1;
    }
    piece(i, j, cls !== 0);
    i = j;
  }
}

/** segmentWord as PIECE_RE defines it (kept for the tests, which check the scan against it). */
export function segmentWordByRegex(word: string): string[] {
  const out: string[] = [];
  for (const m of word.matchAll(PIECE_RE)) {
    const p = m[0];
    if (SEGMENTED_CHAR_RE.test(p)) for (const w of segmentPiece(p)) out.push(w);
    else out.push(p);
  }
  return out;
}

const WORD_CHAR_RE = /^[\p{L}\p{N}\p{M}]$/u;
/** Per BMP code point met so far: 0 not yet classified, 1 not a word character, 2 a letter, digit or mark. */
const wordChars = new Uint8Array(0x10000);
for (let c = 0; c < 0x80; c++) wordChars[c] = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ? 2 : 1;

/** Whether code point `cp` is a letter, digit or mark: the regex once per BMP code point and thread, then a table. */
function isWordCodePoint(cp: number): boolean {
  if (cp < 0x10000) {
    let k = wordChars[cp]!;
    if (k === 0) wordChars[cp] = k = WORD_CHAR_RE.test(String.fromCharCode(cp)) ? 2 : 1;
    return k === 2;
  }
  return WORD_CHAR_RE.test(String.fromCodePoint(cp));
}

/**
 * Word boundaries of `text` for snippets and highlighting: the [start, end) offsets of each
 * word, with dictionary-segmented scripts cut like {@link segmentWord} cuts them. One scan over
 * the text with the word-character and piece-class tables (snippets call it for each window of
 * CJK text they cut, per result): a run of letters, digits and marks is one word, or, where it
 * holds dictionary-segmented scripts, its pieces (one per script class) are, each segmented
 * piece cut into its dictionary words.
 *
 * @example wordSpans('管理ツール') // [[0, 2], [2, 5]]
 */
export function wordSpans(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const cp = text.codePointAt(i)!;
    const w = cp > 0xffff ? 2 : 1;
    if (!isWordCodePoint(cp)) {
      i += w;
      continue;
    }
    // A word run from i: its end, and whether it holds a segmented piece.
    let end = i + w;
    let segmented = pieceClass(cp) !== 0;
    while (end < n) {
      const c = text.codePointAt(end)!;
      if (!isWordCodePoint(c)) break;
      if (!segmented && pieceClass(c) !== 0) segmented = true;
      end += c > 0xffff ? 2 : 1;
    }
    if (!segmented) {
      out.push([i, end]);
      i = end;
      continue;
    }
    // Pieces of the run, as forEachPiece cuts a word.
    while (i < end) {
      const c0 = text.codePointAt(i)!;
      const cls = pieceClass(c0);
      let j = i + (c0 > 0xffff ? 2 : 1);
      while (j < end) {
        const c = text.codePointAt(j)!;
        if (pieceClass(c) !== cls) break;
        j += c > 0xffff ? 2 : 1;
      }
      if (cls === 0 || j - i === 1) out.push([i, j]);
      else {
        const p = text.slice(i, j);
        let at = 0;
        for (const s of segmentPiece(p)) {
          const k = p.indexOf(s, at);
          if (k < 0) break;
          out.push([i + k, i + k + s.length]);
          at = k + s.length;
        }
      }
      i = j;
    }
  }
  return out;
}

/** The code point at `i` as `text.slice(…, end)` reads it: a high surrogate whose pair `end` cuts off stands alone. */
function codePointBefore(text: string, i: number, end: number): number {
  const cp = text.codePointAt(i)!;
  return cp > 0xffff && i + 1 >= end ? text.charCodeAt(i) : cp;
}

/**
 * Calls `piece(start, end, segmented)` for each piece wordSpans(text.slice(from, to)) cuts, in
 * order, with offsets in `text` and without making the slice; stops when it returns true.
 * `segmented`: the piece is cut into dictionary words (else it is one span).
 */
function forEachWindowPiece(text: string, from: number, to: number, piece: (start: number, end: number, segmented: boolean) => boolean): void {
  let i = from;
  while (i < to) {
    const cp = codePointBefore(text, i, to);
    if (!isWordCodePoint(cp)) {
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    // The word run from i; a run without segmented characters is one piece of class 0, as
    // wordSpans makes it one span.
    let end = i + (cp > 0xffff ? 2 : 1);
    while (end < to) {
      const c = codePointBefore(text, end, to);
      if (!isWordCodePoint(c)) break;
      end += c > 0xffff ? 2 : 1;
    }
    while (i < end) {
      const c0 = codePointBefore(text, i, to);
      const cls = pieceClass(c0);
      let j = i + (c0 > 0xffff ? 2 : 1);
      while (j < end) {
        const c = codePointBefore(text, j, to);
        if (pieceClass(c) !== cls) break;
        j += c > 0xffff ? 2 : 1;
      }
      if (piece(i, j, cls !== 0 && j - i !== 1)) return;
      i = j;
    }
  }
}

/** Calls `span(start, end)` for each dictionary word of the piece `text[start, end)` as wordSpans cuts it; stops when it returns true. */
function forEachPieceWord(text: string, start: number, end: number, span: (start: number, end: number) => boolean): boolean {
  const p = text.slice(start, end);
  let at = 0;
  for (const s of segmentPiece(p)) {
    const k = p.indexOf(s, at);
    if (k < 0) break;
    if (span(start + k, start + k + s.length)) return true;
    at = k + s.length;
  }
  return false;
}

/**
 * The first word start at or after `at` among the spans of `wordSpans(text.slice(from, to))`
 * (as an offset in `text`), or -1 when none: what a snippet cut in CJK text needs, found by
 * segmenting only the piece around `at` instead of every piece of the window.
 *
 * @example wordStartIn('管理ツールの説明', 0, 8, 1) // 2
 */
export function wordStartIn(text: string, from: number, to: number, at: number): number {
  let found = -1;
  forEachWindowPiece(text, from, Math.min(to, text.length), (s, e, segmented) => {
    if (e <= at) return false;
    if (!segmented) {
      if (s < at) return false;
      found = s;
      return true;
    }
    return forEachPieceWord(text, s, e, (a) => {
      if (a < at) return false;
      found = a;
      return true;
    });
  });
  return found;
}

/**
 * The last word end at or before `at` among the spans of `wordSpans(text.slice(from, to))` (as
 * an offset in `text`), or -1 when none; see {@link wordStartIn}.
 *
 * @example wordEndIn('管理ツールの説明', 0, 8, 3) // 2
 */
export function wordEndIn(text: string, from: number, to: number, at: number): number {
  to = Math.min(to, text.length);
  // The last piece ending at or before `at` (its last word ends the answer unless the piece
  // holding `at` has a word ending before it).
  let lastStart = -1;
  let lastEnd = -1;
  let lastSegmented = false;
  let found = -1;
  forEachWindowPiece(text, from, to, (s, e, segmented) => {
    if (s >= at) return true;
    if (e <= at) {
      lastStart = s;
      lastEnd = e;
      lastSegmented = segmented;
      return false;
    }
    if (segmented) {
      forEachPieceWord(text, s, e, (_, b) => {
        if (b > at) return true;
        found = b;
        return false;
      });
    }
    return true;
  });
  if (found >= 0 || lastStart < 0) return found;
  if (!lastSegmented) return lastEnd;
  forEachPieceWord(text, lastStart, lastEnd, (_, b) => {
    found = b;
    return false;
  });
  if (found >= 0) return found;
  // A piece without words (never seen from segmentPiece): the spans of the whole window.
  for (const [, b] of wordSpans(text.slice(from, to))) if (from + b <= at) found = from + b;
  return found;
}

/** wordSpans with pieces cut by PIECE_RE (kept for the tests, which check the scan against it). */
export function wordSpansByRegex(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const w = m[0];
    if (!SEGMENTED_CHAR_RE.test(w)) {
      out.push([m.index!, m.index! + w.length]);
      continue;
    }
    for (const p of w.matchAll(PIECE_RE)) {
      const base = m.index! + p.index!;
      if (!SEGMENTED_CHAR_RE.test(p[0])) {
        out.push([base, base + p[0].length]);
        continue;
      }
      let at = 0;
      for (const s of segmentPiece(p[0])) {
        const k = p[0].indexOf(s, at);
        if (k < 0) break;
        out.push([base + k, base + k + s.length]);
        at = k + s.length;
      }
    }
  }
  return out;
}

const RUN_RE = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\u30fc\u3005]+/gu;

/**
 * The maximal runs of dictionary-segmented scripts in `text` (unfolded: fold first when
 * comparing with folded text).
 *
 * @example segmentedRuns('l10n に関する') // ['に関する']
 */
export function segmentedRuns(text: string): string[] {
  return text.match(RUN_RE) ?? [];
}
