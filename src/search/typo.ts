/**
 * Typo matching over a segment vocabulary: a trie walked with a Damerau–Levenshtein
 * (optimal string alignment) row per node, so only branches within the edit budget are visited.
 * Built lazily per segment (segments are immutable) and cached by the caller.
 */

/** A fuzzy match: `term` within `distance` edits (of the word, or of a prefix of it). */
export interface FuzzyMatch {
  term: string;
  distance: number;
}

/**
 * A trie over a sorted vocabulary in flat typed arrays (first child / next sibling), about
 * 14 bytes a node instead of a Map per node: segments of 100k pages keep their tries small.
 */
export class Vocabulary {
  private firstChild: Int32Array;
  private nextSibling: Int32Array;
  private char: Uint32Array;
  /** Index into `terms` of the word ending at a node, or -1. */
  private wordAt: Int32Array;
  private size = 1;
  /** The caller's array, kept (not copied): it must not change afterwards. */
  private readonly terms: readonly string[];

  constructor(terms: readonly string[]) {
    this.terms = terms;
    // Sized to the node count up front (exact for a vocabulary in code-point order, as segments
    // hand it over): no over-sized arrays to fill and then copy, per segment and search thread.
    const cap = trieNodeBound(terms);
    this.firstChild = new Int32Array(cap).fill(-1);
    this.nextSibling = new Int32Array(cap).fill(-1);
    this.char = new Uint32Array(cap);
    this.wordAt = new Int32Array(cap).fill(-1);
    terms.forEach((t, i) => this.add(t, i));
    if (this.size < cap) {
      // An unsorted list: trim to the nodes used.
      this.firstChild = this.firstChild.slice(0, this.size);
      this.nextSibling = this.nextSibling.slice(0, this.size);
      this.char = this.char.slice(0, this.size);
      this.wordAt = this.wordAt.slice(0, this.size);
    }
  }

  /** Nodes of the trie, the root included. */
  get nodeCount(): number {
    return this.size;
  }

  /** Length of the trie's arrays (equal to {@link nodeCount} once built). */
  get capacity(): number {
    return this.firstChild.length;
  }

  private child(node: number, c: number): number {
    for (let k = this.firstChild[node]!; k !== -1; k = this.nextSibling[k]!) if (this.char[k] === c) return k;
    return -1;
  }

  private add(term: string, index: number): void {
    let n = 0;
    for (const ch of term) {
      const c = ch.codePointAt(0)!;
      let k = this.child(n, c);
      if (k === -1) {
        k = this.size++;
        this.char[k] = c;
        this.nextSibling[k] = this.firstChild[n]!;
        this.firstChild[n] = k;
      }
      n = k;
    }
    this.wordAt[n] = index;
  }

  /**
   * Words within `maxDist` edits of `word` (adjacent transpositions count as one edit).
   * With `prefix`, also words that START with something within `maxDist` of `word`
   * (search as you type with a typo); their distance is that of the best prefix.
   * The first character must match (or be the transposed second one): typos in the first
   * letter are rare and allowing them floods results.
   */
  fuzzy(word: string, maxDist: number, prefix = false, limit = 200): FuzzyMatch[] {
    const w = [...word].map((ch) => ch.codePointAt(0)!);
    const out = new Map<number, number>();
    const firstRow = Array.from({ length: w.length + 1 }, (_, i) => i);
    const first = this.child(0, w[0]!);
    if (first !== -1) this.walk(first, -1, firstRow, null, w, maxDist, prefix, out, limit);
    // A transposition of the first two letters ("teh" for "the").
    if (w.length > 1 && w[1] !== w[0]) {
      const alt = this.child(0, w[1]!);
      if (alt !== -1) this.walk(alt, -1, firstRow, null, w, maxDist, prefix, out, limit);
    }
    return [...out].map(([i, distance]) => ({ term: this.terms[i]!, distance }));
  }

  private walk(
    node: number, prevCh: number, prevRow: number[], prevPrevRow: number[] | null,
    w: number[], maxDist: number, prefix: boolean, out: Map<number, number>, limit: number,
  ): void {
    if (out.size >= limit) return;
    const ch = this.char[node]!;
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
    const wi = this.wordAt[node]!;
    if (wi !== -1 && d <= maxDist) {
      const old = out.get(wi);
      if (old === undefined || d < old) out.set(wi, d);
    }
    if (best > maxDist) return;
    for (let k = this.firstChild[node]!; k !== -1; k = this.nextSibling[k]!) this.walk(k, ch, row, prevRow, w, maxDist, prefix, out, limit);
  }

  private collect(node: number, d: number, out: Map<number, number>, limit: number): void {
    if (out.size >= limit) return;
    const wi = this.wordAt[node]!;
    if (wi !== -1) {
      const old = out.get(wi);
      if (old === undefined || d < old) out.set(wi, d);
    }
    for (let k = this.firstChild[node]!; k !== -1; k = this.nextSibling[k]!) this.collect(k, d, out, limit);
  }
}

/**
 * Trie nodes (root included) that {@link Vocabulary} needs for `terms`: each word adds the code
 * points after its longest common prefix with the word before it. Exact when `terms` is in
 * code-point order (then that prefix is the longest shared with any earlier word); an upper
 * bound for any other order.
 */
export function trieNodeBound(terms: readonly string[]): number {
  let nodes = 1;
  let prev = '';
  for (const t of terms) {
    const m = Math.min(t.length, prev.length);
    let i = 0;
    while (i < m && t.charCodeAt(i) === prev.charCodeAt(i)) i++;
    // A shared high surrogate whose low halves differ is not a shared code point.
    if (i > 0 && i < t.length && isHighSurrogate(t.charCodeAt(i - 1))) i--;
    for (; i < t.length; i++) {
      nodes++;
      if (isHighSurrogate(t.charCodeAt(i)) && i + 1 < t.length && isLowSurrogate(t.charCodeAt(i + 1))) i++;
    }
    prev = t;
  }
  return nodes;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Edit budget for a word of `len` characters under a tolerance setting. */
export function typoBudget(len: number, tolerance: 'default' | 'strict' | 'off'): number {
  if (tolerance === 'off') return 0;
  if (tolerance === 'strict') return len >= 6 ? 1 : 0;
  if (len >= 8) return 2;
  if (len >= 4) return 1;
  return 0;
}
