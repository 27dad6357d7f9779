/**
 * Typo matching over a segment vocabulary: a trie walked with a Damerau–Levenshtein
 * (optimal string alignment) row per node, so only branches within the edit budget are visited.
 * Built lazily per segment (segments are immutable) and cached by the caller.
 */
import { lowerBound } from './sorted.js';

/** A fuzzy match: `term` within `distance` edits (of the word, or of a prefix of it). */
export interface FuzzyMatch {
  term: string;
  distance: number;
}

/**
 * A trie over a vocabulary in flat typed arrays (first child / next sibling), 13 bytes a node
 * instead of a Map per node. It keeps no word strings: a match's word is spelled from the path
 * walked to its node, and {@link withPrefix} lists words from the trie, so a segment's vocabulary
 * costs each search thread its trie alone (not the trie plus one JS string per word, about as
 * much again). Built per segment and search thread; immutable once built.
 */
export class Vocabulary {
  private firstChild: Int32Array;
  private nextSibling: Int32Array;
  private char: Uint32Array;
  /** 1 where a word ends at the node. */
  private isWord: Uint8Array;
  private size = 1;
  /** Some word holds a lone surrogate: code-unit order is then not a walk in child order. */
  private loneSurrogate = false;

  /** `terms` is read once here and not kept. */
  constructor(terms: readonly string[]) {
    // Sized to the node count up front (exact for a vocabulary in code-point order, as segments
    // hand it over): no over-sized arrays to fill and then copy, per segment and search thread.
    const cap = trieNodeBound(terms);
    this.firstChild = new Int32Array(cap).fill(-1);
    this.nextSibling = new Int32Array(cap).fill(-1);
    this.char = new Uint32Array(cap);
    this.isWord = new Uint8Array(cap);
    for (const t of terms) this.add(t);
    if (this.size < cap) {
      // An unsorted list: trim to the nodes used.
      this.firstChild = this.firstChild.slice(0, this.size);
      this.nextSibling = this.nextSibling.slice(0, this.size);
      this.char = this.char.slice(0, this.size);
      this.isWord = this.isWord.slice(0, this.size);
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

  private add(term: string): void {
    let n = 0;
    for (const ch of term) {
      const c = ch.codePointAt(0)!;
      if (c >= 0xd800 && c <= 0xdfff) this.loneSurrogate = true;
      let k = this.child(n, c);
      if (k === -1) {
        k = this.size++;
        this.char[k] = c;
        // Siblings in descending code-point order whatever the order of `terms` (the order of
        // fuzzy's walk, see fuzzyOrder): at the head for a vocabulary in code-point order.
        let before = -1;
        let at = this.firstChild[n]!;
        while (at !== -1 && this.char[at]! > c) {
          before = at;
          at = this.nextSibling[at]!;
        }
        this.nextSibling[k] = at;
        if (before === -1) this.firstChild[n] = k;
        else this.nextSibling[before] = k;
      }
      n = k;
    }
    this.isWord[n] = 1;
  }

  /**
   * Words within `maxDist` edits of `word` (adjacent transpositions count as one edit).
   * With `prefix`, also words that START with something within `maxDist` of `word`
   * (search as you type with a typo); their distance is that of the best prefix.
   * The first character must match (or be the transposed second one): typos in the first
   * letter are rare and allowing them floods results.
   *
   * Matches come in the order of {@link fuzzyOrder} (words starting with the word's first
   * character, then those starting with its second; within each, depth first with larger code
   * points first, a word before the longer words it starts), and `limit` keeps the first
   * `limit` of them: a function of the word and the set of vocabulary words alone, so the first
   * `limit` of several vocabularies merged are the first `limit` of their per-vocabulary lists
   * merged in that order.
   */
  fuzzy(word: string, maxDist: number, prefix = false, limit = 200): FuzzyMatch[] {
    const w = [...word].map((ch) => ch.codePointAt(0)!);
    // Keyed by the node a word ends at (one node per word), in the order the walk finds them.
    const out = new Map<number, FuzzyMatch>();
    const path: number[] = [];
    const firstRow = Array.from({ length: w.length + 1 }, (_, i) => i);
    const first = this.child(0, w[0]!);
    if (first !== -1) this.walk(first, -1, firstRow, null, w, maxDist, prefix, out, limit, path);
    // A transposition of the first two letters ("teh" for "the").
    if (w.length > 1 && w[1] !== w[0]) {
      const alt = this.child(0, w[1]!);
      if (alt !== -1) this.walk(alt, -1, firstRow, null, w, maxDist, prefix, out, limit, path);
    }
    return [...out.values()];
  }

  /**
   * The first `limit` words starting with `prefix`, in UTF-16 code-unit order (the order of
   * `<` on strings), or null when the trie cannot answer in that order: a `prefix` holding a
   * surrogate code unit, or a vocabulary with a lone surrogate (the caller sorts the word list).
   */
  withPrefix(prefix: string, limit: number): string[] | null {
    if (this.loneSurrogate || /[\ud800-\udfff]/.test(prefix)) return null;
    let n = 0;
    for (const ch of prefix) {
      n = this.child(n, ch.codePointAt(0)!);
      if (n === -1) return [];
    }
    const out: string[] = [];
    if (limit > 0) this.list(n, prefix, limit, out);
    return out;
  }

  /** Depth-first in code-unit order: a word before the longer words it starts. */
  private list(node: number, spelled: string, limit: number, out: string[]): void {
    if (this.isWord[node] === 1) out.push(spelled);
    const kids: number[] = [];
    for (let k = this.firstChild[node]!; k !== -1; k = this.nextSibling[k]!) kids.push(k);
    kids.sort((a, b) => codeUnitKey(this.char[a]!) - codeUnitKey(this.char[b]!));
    for (const k of kids) {
      if (out.length >= limit) return;
      this.list(k, spelled + String.fromCodePoint(this.char[k]!), limit, out);
    }
  }

  private walk(
    node: number, prevCh: number, prevRow: number[], prevPrevRow: number[] | null,
    w: number[], maxDist: number, prefix: boolean, out: Map<number, FuzzyMatch>, limit: number, path: number[],
  ): void {
    if (out.size >= limit) return;
    const ch = this.char[node]!;
    path.push(ch);
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
      this.collect(node, d, out, limit, path);
    } else {
      if (this.isWord[node] === 1 && d <= maxDist) found(out, node, d, path);
      if (best <= maxDist) {
        for (let k = this.firstChild[node]!; k !== -1; k = this.nextSibling[k]!) this.walk(k, ch, row, prevRow, w, maxDist, prefix, out, limit, path);
      }
    }
    path.pop();
  }

  /** `path` ends with `node`'s character. */
  private collect(node: number, d: number, out: Map<number, FuzzyMatch>, limit: number, path: number[]): void {
    if (out.size >= limit) return;
    if (this.isWord[node] === 1) found(out, node, d, path);
    for (let k = this.firstChild[node]!; k !== -1; k = this.nextSibling[k]!) {
      path.push(this.char[k]!);
      this.collect(k, d, out, limit, path);
      path.pop();
    }
  }
}

/**
 * The order in which {@link Vocabulary.fuzzy} lists the matches of `word` (a total order on
 * words): words starting with `word`'s first character before the others (the transposed
 * second character); then depth first through the trie with larger code points first, a word
 * before the longer words it starts. Sorting the union of several vocabularies' matches with it
 * and keeping the first `limit` gives what one vocabulary holding all their words would.
 *
 * @example ['tablx', 'tabla', 'tabl'].sort(fuzzyOrder('tabel')) // ['tabl', 'tablx', 'tabla']
 */
export function fuzzyOrder(word: string): (a: string, b: string) => number {
  const first = word.codePointAt(0);
  return (a, b) => {
    const ga = a.codePointAt(0) === first ? 0 : 1;
    const gb = b.codePointAt(0) === first ? 0 : 1;
    if (ga !== gb) return ga - gb;
    let i = 0;
    while (i < a.length && i < b.length) {
      const ca = a.codePointAt(i)!;
      const cb = b.codePointAt(i)!;
      if (ca !== cb) return cb - ca;
      i += ca > 0xffff ? 2 : 1;
    }
    return a.length - b.length;
  };
}

/** Records the word ending at `node` (spelled by `path`) at distance `d`, keeping its first place and best distance. */
function found(out: Map<number, FuzzyMatch>, node: number, d: number, path: number[]): void {
  const old = out.get(node);
  if (old === undefined) out.set(node, { term: String.fromCodePoint(...path), distance: d });
  else if (d < old.distance) old.distance = d;
}

/** Sort key of one code point in UTF-16 code-unit order (an astral one by its surrogate pair). */
function codeUnitKey(cp: number): number {
  if (cp < 0x10000) return cp * 0x10000;
  const v = cp - 0x10000;
  return (0xd800 + (v >> 10)) * 0x10000 + 0xdc00 + (v & 0x3ff);
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

/**
 * Edit budget for a word of `len` characters under a tolerance setting.
 *
 * @example typoBudget(8, 'default') // 2
 */
export function typoBudget(len: number, tolerance: 'default' | 'strict' | 'off'): number {
  if (tolerance === 'off') return 0;
  if (tolerance === 'strict') return len >= 6 ? 1 : 0;
  if (len >= 8) return 2;
  if (len >= 4) return 1;
  return 0;
}

/**
 * `terms` itself when it is already in UTF-16 code-unit order (a segment's vocabulary comes in
 * code-point order, which differs only where astral characters meet U+E000–U+FFFF), else a
 * sorted copy: no second array per segment and search thread in the usual case.
 */
export function inCodeUnitOrder(terms: readonly string[]): readonly string[] {
  for (let i = 1; i < terms.length; i++) if (terms[i - 1]! > terms[i]!) return [...terms].sort();
  return terms;
}

/**
 * The first `limit` words of `sorted` (in code-unit order, see {@link inCodeUnitOrder}) that
 * start with `prefix`, by binary search: the answer of {@link Vocabulary.withPrefix} where the
 * trie cannot give one.
 */
export function sortedWithPrefix(sorted: readonly string[], prefix: string, limit: number): string[] {
  const out: string[] = [];
  for (let i = lowerBound(sorted, prefix); i < sorted.length && out.length < limit && sorted[i]!.startsWith(prefix); i++) out.push(sorted[i]!);
  return out;
}
