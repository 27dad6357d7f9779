/**
 * Typo matching over a segment vocabulary: a trie walked with a Damerau–Levenshtein
 * (optimal string alignment) row per node, so only branches within the edit budget are visited.
 * Built lazily per segment (segments are immutable) and cached by the caller.
 */

interface Node {
  children: Map<string, Node>;
  /** The complete word ending here, if any. */
  word: string | null;
}

/** A fuzzy match: `distance` edits; `prefix` when only a prefix of `term` was matched. */
export interface FuzzyMatch {
  term: string;
  distance: number;
}

export class Vocabulary {
  private readonly root: Node = { children: new Map(), word: null };

  constructor(terms: Iterable<string>) {
    for (const t of terms) this.add(t);
  }

  private add(term: string): void {
    let n = this.root;
    for (const ch of term) {
      let c = n.children.get(ch);
      if (!c) n.children.set(ch, (c = { children: new Map(), word: null }));
      n = c;
    }
    n.word = term;
  }

  /**
   * Words within `maxDist` edits of `word` (adjacent transpositions count as one edit).
   * With `prefix`, also words that START with something within `maxDist` of `word`
   * (search as you type with a typo); their distance is that of the best prefix.
   * The first character must match (or be the transposed second one): typos in the first
   * letter are rare and allowing them floods results.
   */
  fuzzy(word: string, maxDist: number, prefix = false, limit = 200): FuzzyMatch[] {
    const w = [...word];
    const out = new Map<string, number>();
    const first = this.root.children.get(w[0]!);
    const firstRow = Array.from({ length: w.length + 1 }, (_, i) => i);
    if (first) this.walk(first, w[0]!, '', firstRow, null, w, maxDist, prefix, out, limit);
    // A transposition of the first two letters ("teh" for "the").
    if (w.length > 1 && w[1] !== w[0]) {
      const alt = this.root.children.get(w[1]!);
      if (alt) this.walk(alt, w[1]!, '', firstRow, null, w, maxDist, prefix, out, limit);
    }
    return [...out].map(([term, distance]) => ({ term, distance }));
  }

  private walk(
    node: Node, ch: string, prevCh: string, prevRow: number[], prevPrevRow: number[] | null,
    w: string[], maxDist: number, prefix: boolean, out: Map<string, number>, limit: number,
  ): void {
    if (out.size >= limit) return;
    const cols = w.length + 1;
    const row = new Array<number>(cols);
    row[0] = prevRow[0]! + 1;
    let best = row[0]!;
    for (let i = 1; i < cols; i++) {
      const cost = w[i - 1] === ch ? 0 : 1;
      let v = Math.min(row[i - 1]! + 1, prevRow[i]! + 1, prevRow[i - 1]! + cost);
      if (prevPrevRow && i > 1 && w[i - 1] === prevCh && w[i - 2] === ch) v = Math.min(v, prevPrevRow[i - 2]! + 1);
      row[i] = v;
      if (v < best) best = v;
    }
    const d = row[cols - 1]!;
    if (prefix && d <= maxDist) {
      // Every word below this node starts with a prefix within budget.
      this.collect(node, d, out, limit);
      return;
    }
    if (node.word !== null && d <= maxDist) {
      const old = out.get(node.word);
      if (old === undefined || d < old) out.set(node.word, d);
    }
    if (best > maxDist) return;
    for (const [c, child] of node.children) this.walk(child, c, ch, row, prevRow, w, maxDist, prefix, out, limit);
  }

  private collect(node: Node, d: number, out: Map<string, number>, limit: number): void {
    if (out.size >= limit) return;
    if (node.word !== null) {
      const old = out.get(node.word);
      if (old === undefined || d < old) out.set(node.word, d);
    }
    for (const child of node.children.values()) this.collect(child, d, out, limit);
  }
}

/** Edit budget for a word of `len` characters under a tolerance setting. */
export function typoBudget(len: number, tolerance: 'default' | 'strict' | 'off'): number {
  if (tolerance === 'off') return 0;
  if (tolerance === 'strict') return len >= 6 ? 1 : 0;
  if (len >= 8) return 2;
  if (len >= 4) return 1;
  return 0;
}
