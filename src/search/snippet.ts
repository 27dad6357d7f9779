/**
 * Snippets and highlighting (pure, main thread, on the hot path of every search with
 * `includeContent`). All text leaving here is HTML-escaped when highlighting is on; matched
 * words are wrapped in `<mark>`.
 */
import { fold } from './analyze.js';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c]!);
}

/** Longest prefix of a page scanned for the best passage (keeps huge pages cheap). */
const SCAN_LIMIT = 12_000;
const matcherCache = new WeakMap<Set<string>, RegExp | null>();

/** A case-insensitive regex matching exactly the ASCII words of `matched` as whole words. */
function asciiMatcher(matched: Set<string>): RegExp | null {
  let re = matcherCache.get(matched);
  if (re === undefined) {
    const words = [...matched].filter((w) => /^[a-z0-9]+$/.test(w)).sort((a, b) => b.length - a.length);
    // Any non-ASCII character counts as a word character here (no 'u' flag: much faster).
    re = words.length ? new RegExp(`(?<![A-Za-z0-9\\u0080-\\uffff])(?:${words.join('|')})(?![A-Za-z0-9\\u0080-\\uffff])`, 'gi') : null;
    matcherCache.set(matched, re);
  }
  return re;
}
// A letter, mark or digit outside ASCII (punctuation such as — or nbsp is skipped by the regex).
const NON_ASCII_CHAR = /[^\x00-\x7f]/g;
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
const NON_ASCII = /[^\x00-\x7f]/;
const FOLDED_WORD = /[\p{L}\p{N}]+/gu;

interface Span {
  word: string;
  start: number;
  end: number;
}

/**
 * Spans of the words of `text` (from `from` to `to`) whose folded form is in `matched`.
 * ASCII text takes a fast path (lower-casing is its whole folding).
 */
function matchedSpans(text: string, matched: Set<string>, from = 0, to = text.length): Span[] {
  const out: Span[] = [];
  const slice = from === 0 && to === text.length ? text : text.slice(from, to);
  // Plain words: one regex of the matched words finds them without visiting every word.
  const re = asciiMatcher(matched);
  if (re) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(slice)) !== null) {
      out.push({ word: m[0].toLowerCase(), start: from + m.index, end: from + m.index + m[0].length });
    }
  }
  if (!NON_ASCII.test(slice)) return out;
  // Words holding other characters (rare): fold each and look it up.
  NON_ASCII_CHAR.lastIndex = 0;
  let m: RegExpExecArray | null;
  let added = false;
  while ((m = NON_ASCII_CHAR.exec(slice)) !== null) {
    if (!WORD_CHAR.test(m[0])) continue;
    let a = m.index;
    let b = m.index + m[0].length;
    while (a > 0 && WORD_CHAR.test(slice[a - 1]!)) a--;
    while (b < slice.length && WORD_CHAR.test(slice[b]!)) b++;
    NON_ASCII_CHAR.lastIndex = b;
    for (const w of fold(slice.slice(a, b)).match(FOLDED_WORD) ?? []) {
      if (matched.has(w)) {
        out.push({ word: w, start: from + a, end: from + b });
        added = true;
        break;
      }
    }
  }
  if (added) out.sort((x, y) => x.start - y.start);
  return out;
}

/** `text` with every word in `matched` wrapped in `<mark>` and everything else escaped. */
export function highlight(text: string, matched: Set<string>): string {
  return markSpans(text, matchedSpans(text, matched), 0, text.length);
}

function markSpans(text: string, spans: Span[], from: number, to: number): string {
  let out = '';
  let pos = from;
  for (const s of spans) {
    if (s.start < pos || s.end > to) continue;
    out += escapeHtml(text.slice(pos, s.start)) + '<mark>' + escapeHtml(text.slice(s.start, s.end)) + '</mark>';
    pos = s.end;
  }
  return out + escapeHtml(text.slice(pos, to));
}

const SPACE = /\s/;

/** Moves `i` forward to the start of the next word (or leaves it when already at one). */
function wordStartAtOrAfter(text: string, i: number): number {
  if (i <= 0) return 0;
  if (SPACE.test(text[i - 1]!)) return i;
  const j = text.slice(i, i + 60).search(/\s/);
  return j < 0 ? i : i + j + 1;
}

/** Moves `i` back to the end of the previous word. */
function wordEndAtOrBefore(text: string, i: number): number {
  if (i >= text.length) return text.length;
  if (SPACE.test(text[i]!)) return i;
  const back = text.slice(Math.max(0, i - 60), i);
  const k = back.search(/\s\S*$/);
  return k < 0 ? i : Math.max(0, i - 60) + k;
}

/**
 * The best passage of `text` of about `size` characters (default 240, within 200–300): the
 * window holding the most distinct matched words (then the most matches), cut on word
 * boundaries with `…` where text was cut. The start of the text when nothing matched.
 */
export function snippet(text: string, matched: Set<string>, opts: { size?: number; highlight: boolean }): string {
  const size = opts.size ?? 240;
  const scanTo = Math.min(text.length, SCAN_LIMIT);
  const spans = matched.size ? matchedSpans(text, matched, 0, scanTo) : [];
  let from = 0;
  if (spans.length > 0) {
    // Two pointers over the matches: the window [i, j) spans at most `size` characters.
    const counts = new Map<string, number>();
    let bestI = 0;
    let bestDistinct = -1;
    let bestCount = -1;
    let j = 0;
    for (let i = 0; i < spans.length; i++) {
      while (j < spans.length && spans[j]!.end - spans[i]!.start <= size) {
        counts.set(spans[j]!.word, (counts.get(spans[j]!.word) ?? 0) + 1);
        j++;
      }
      const distinct = counts.size;
      const count = j - i;
      if (distinct > bestDistinct || (distinct === bestDistinct && count > bestCount)) {
        bestDistinct = distinct;
        bestCount = count;
        bestI = i;
      }
      const w = spans[i]!.word;
      const c = counts.get(w)! - 1;
      if (c === 0) counts.delete(w);
      else counts.set(w, c);
    }
    const first = spans[bestI]!;
    let lastEnd = first.end;
    for (let k = bestI; k < spans.length && spans[k]!.end - first.start <= size; k++) lastEnd = spans[k]!.end;
    // Lead-in context of up to a fifth of the window, from the slack the matches leave.
    const lead = Math.min(Math.floor(size / 5), Math.max(0, size - (lastEnd - first.start)));
    from = first.start - lead <= 0 ? 0 : wordStartAtOrAfter(text, first.start - lead);
  }
  let to = Math.min(text.length, from + size);
  if (to < text.length) to = Math.max(from + 1, wordEndAtOrBefore(text, to));
  // Trim whitespace at both ends without losing track of what was cut.
  while (from < to && SPACE.test(text[from]!)) from++;
  while (to > from && SPACE.test(text[to - 1]!)) to--;
  const inner = opts.highlight ? markSpans(text, spans.filter((s) => s.start >= from && s.end <= to), from, to) : text.slice(from, to);
  return (from > 0 ? '…' : '') + inner + (to < text.length && text.slice(to).trim() !== '' ? '…' : '');
}
