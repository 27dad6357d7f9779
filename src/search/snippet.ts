/**
 * Snippets and highlighting (pure). All text leaving here is HTML-escaped when highlighting is
 * on; matched words are wrapped in `<mark>`.
 */
import { wordSpans, type WordSpan } from './analyze.js';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c]!);
}

/** `text` with every word in `matched` wrapped in `<mark>` and everything else escaped. */
export function highlight(text: string, matched: Set<string>, spans: WordSpan[] = wordSpans(text)): string {
  let out = '';
  let pos = 0;
  let lastEnd = -1;
  for (const s of spans) {
    if (!matched.has(s.word) || s.start < lastEnd) continue;
    out += escapeHtml(text.slice(pos, s.start)) + '<mark>' + escapeHtml(text.slice(s.start, s.end)) + '</mark>';
    pos = lastEnd = s.end;
  }
  return out + escapeHtml(text.slice(pos));
}

/**
 * The best passage of `text` of about `size` characters (200–300): the window holding the most
 * distinct matched words (then the most matches), cut on word boundaries with `…` where text
 * was cut. The start of the text when nothing matched.
 */
export function snippet(text: string, matched: Set<string>, opts: { size?: number; highlight: boolean }): string {
  const size = opts.size ?? 240;
  const spans = wordSpans(text);
  const hits = spans.map((s, i) => ({ s, i })).filter((x) => matched.has(x.s.word));
  let startIdx = 0;
  if (hits.length > 0) {
    let best = -1;
    let bestDistinct = -1;
    let bestCount = -1;
    let j = 0;
    for (let i = 0; i < hits.length; i++) {
      while (j < hits.length && hits[j]!.s.end - hits[i]!.s.start <= size) j++;
      const window = hits.slice(i, j);
      const distinct = new Set(window.map((h) => h.s.word)).size;
      if (distinct > bestDistinct || (distinct === bestDistinct && window.length > bestCount)) {
        bestDistinct = distinct;
        bestCount = window.length;
        best = i;
      }
    }
    // Give the first match some leading context (about a fifth of the window).
    const first = hits[best]!.s;
    const lastInWindow = hits.filter((h) => h.s.start >= first.start && h.s.end - first.start <= size).pop()!.s;
    const slack = Math.max(0, size - (lastInWindow.end - first.start));
    const lead = Math.min(Math.floor(size / 5), slack);
    const target = Math.max(0, first.start - lead);
    startIdx = spans.findIndex((s) => s.end > target);
    if (startIdx < 0) startIdx = 0;
  }
  const from = startIdx === 0 ? 0 : spans[startIdx]!.start;
  let endIdx = startIdx;
  while (endIdx < spans.length && spans[endIdx]!.end - from <= size) endIdx++;
  const to = endIdx >= spans.length ? text.length : spans[endIdx - 1] ? spans[endIdx - 1]!.end : Math.min(text.length, from + size);
  let piece = text.slice(from, to);
  const cutEnd = to < text.length;
  const cutStart = from > 0;
  // Keep trailing punctuation of the last word when the text ends there.
  if (!cutEnd) piece = text.slice(from);
  const inner = opts.highlight
    ? highlight(piece, matched, spans.slice(startIdx, endIdx).map((s) => ({ ...s, start: s.start - from, end: s.end - from })))
    : piece;
  return (cutStart ? '…' : '') + inner.trim() + (cutEnd ? '…' : '');
}
