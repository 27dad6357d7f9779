/**
 * The built-in embedder: a text's vector is the weighted average of its words' vectors
 * (word-vectors.ts), with smooth inverse frequency weights (a word of frequency rank r weighs
 * r / (r + {@link SIF_RANK})) and the table's common direction removed, then scaled to unit
 * length. Document and query go through the same function, so cosine similarity is a dot
 * product. Depends only on the text and the table (never on other documents), so a vector
 * computed at build time stays valid whatever segment the page later lands in.
 */
import { isEnglishStopWord } from './stop-words.js';
import { firstWords, words } from './tokenize.js';
import type { WordVectors } from './word-vectors.js';

/** Rank at which a word's weight is one half: the most frequent words count for little. */
export const SIF_RANK = 100;

/** One part of a text with its weight and the number of its words read (0: all). */
export interface WeightedText {
  text: string;
  weight: number;
  maxWords?: number;
}

/** One part of a text already split into its words ({@link words}), with its weight. */
export interface WeightedWords {
  words: readonly string[];
  weight: number;
}

/**
 * The unit vector of `parts` (each part's words weighted by the part's weight), or null when
 * no word is in the table.
 *
 * @example
 * embedParts(wv, [{ text: 'Performance Tips', weight: 3 }, { text: content, weight: 1, maxWords: 400 }]);
 */
export function embedParts(wv: WordVectors, parts: readonly WeightedText[]): Float32Array | null {
  const split: WeightedWords[] = [];
  for (const p of parts) {
    if (!p.text || p.weight <= 0) continue;
    split.push({ words: p.maxWords ? firstWords(p.text, p.maxWords) : words(p.text), weight: p.weight });
  }
  return embedWords(wv, split);
}

/**
 * {@link embedParts} of texts already split into words: the same vector, bit for bit, when
 * each part holds the words embedParts would read (a segment build hands over the words it
 * has just indexed instead of analysing the page a second time).
 *
 * @example embedWords(wv, [{ words: ['performance', 'tips'], weight: 1 }]);
 */
export function embedWords(wv: WordVectors, parts: readonly WeightedWords[]): Float32Array | null {
  const dims = wv.dims;
  const acc = new Float64Array(dims);
  let any = false;
  for (const p of parts) {
    if (p.weight <= 0) continue;
    for (const w of p.words) {
      if (isEnglishStopWord(w)) continue;
      const r = wv.index.get(w);
      if (r === undefined) continue;
      const wt = (p.weight * r) / (r + SIF_RANK);
      const base = r * dims;
      for (let i = 0; i < dims; i++) acc[i]! += wt * wv.rows[base + i]!;
      any = true;
    }
  }
  if (!any) return null;
  let d = 0;
  for (let i = 0; i < dims; i++) d += acc[i]! * wv.common[i]!;
  let n = 0;
  for (let i = 0; i < dims; i++) {
    acc[i]! -= d * wv.common[i]!;
    n += acc[i]! * acc[i]!;
  }
  n = Math.sqrt(n);
  if (!(n > 0)) return null;
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = acc[i]! / n;
  return out;
}
