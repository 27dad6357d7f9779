/**
 * Snippets and highlighting (pure, main thread, on the hot path of every search with
 * `includeContent`). All text leaving here is HTML-escaped when highlighting is on; matched
 * words are wrapped in `<mark>`.
 */
import { fold, indexOfSorted, isSegmentedScript, wordEndIn, wordSpans, wordStartIn, words as analyse } from '../text/index.js';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const NEEDS_ESCAPE = /[&<>"']/;

/**
 * `s` with `& < > " '` as HTML entities.
 *
 * @example escapeHtml('a < b') // 'a &lt; b'
 */
export function escapeHtml(s: string): string {
  // Most stretches between marks hold nothing to escape: no replace call, no new string.
  return NEEDS_ESCAPE.test(s) ? s.replace(/[&<>"']/g, (c) => ESC[c]!) : s;
}

const UNESC: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * The inverse of {@link escapeHtml}: its five entities back to characters (no other entity is
 * decoded). Reads back a name a client took from an HTML-escaped answer.
 *
 * @example unescapeHtml('a &amp;lt; b') // 'a &lt; b'
 */
export function unescapeHtml(s: string): string {
  return s.includes('&') ? s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => UNESC[e]!) : s;
}

/** Longest prefix of a page scanned for the best passage (keeps huge pages cheap). */
const SCAN_LIMIT = 12_000;

/**
 * The ASCII words of a matched set, keyed by a hash of their characters, with a 2,048-bit
 * filter of those hashes in front: a scan looks at a word's string only when its hash is known.
 */
interface AsciiWords {
  /** The words of each hash. */
  hashes: Map<number, string[]>;
  /** The same hashes, as a list. */
  list: number[];
  filter: Uint32Array;
  maxLen: number;
}
const asciiCache = new WeakMap<Set<string>, AsciiWords | null>();

function asciiWords(matched: Set<string>): AsciiWords | null {
  let a = asciiCache.get(matched);
  if (a === undefined) {
    const hashes = new Map<number, string[]>();
    const filter = new Uint32Array(64);
    let maxLen = 0;
    for (const w of matched) {
      if (!/^[a-z0-9]+$/.test(w)) continue;
      let h = 0;
      for (let i = 0; i < w.length; i++) h = (Math.imul(h, 31) + w.charCodeAt(i)) | 0;
      const same = hashes.get(h);
      if (same) same.push(w);
      else hashes.set(h, [w]);
      filter[(h >>> 5) & 63]! |= 1 << (h & 31);
      if (w.length > maxLen) maxLen = w.length;
    }
    a = hashes.size ? { hashes, list: [...hashes.keys()], filter, maxLen } : null;
    asciiCache.set(matched, a);
  }
  return a;
}
// A letter, mark or digit outside ASCII (punctuation such as — or nbsp is skipped by the regex).
const NON_ASCII_CHAR = /[^\x00-\x7f]/g;
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
const FOLDED_WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * Matched words of a text in text order, as parallel arrays: span i is `text[start[i], end[i])`
 * and spells `words[word[i]]` (word ids are per call: one per distinct matched word found).
 */
interface Spans {
  start: number[];
  end: number[];
  word: number[];
  words: string[];
}

/** Id of `w` in `words`, appended if new (a text holds few distinct matched words). */
function wordId(words: string[], w: string): number {
  const i = words.indexOf(w);
  if (i >= 0) return i;
  words.push(w);
  return words.length - 1;
}

/**
 * The words of `text[0, to)` a search may highlight, found once per text (a query-independent
 * pass; texts of result cards recur across queries, so they are kept in a small LRU):
 * - every maximal run of plain ASCII letters and digits bounded by other ASCII characters (a
 *   run touching a non-ASCII code unit is part of a longer word and never matches as ASCII),
 *   with a hash of its lower-cased characters;
 * - every maximal run of letters, digits and marks holding a non-ASCII letter or digit, with
 *   its folded words (the first of them in the matched set marks the run).
 */
interface WordRuns {
  start: Int32Array;
  end: Int32Array;
  hash: Int32Array;
  count: number;
  /** Runs holding non-ASCII letters, with their folded words. */
  other: OtherRuns;
  /** Any non-ASCII code unit in the text (the other runs are looked at only then). */
  nonAscii: boolean;
  /** The text and the end of its scanned prefix. */
  text: string;
  to: number;
  /** Runs grouped by hash (built for texts kept with a memo, on their second use). */
  byHash?: HashIndex;
  /** Searches that looked at these runs (kept texts). */
  uses: number;
  /** Word index of the other runs (built like byHash). */
  otherIndex?: OtherIndex;
}

/**
 * The runs of a text holding non-ASCII letters (or, in scripts without spaces, its dictionary
 * words), in text order: run k is `text[start[k], end[k])` and folds to the words
 * `words[off[k], off[k + 1])`. Flat lists rather than an object per run: a CJK card holds
 * thousands of runs, and kept cards keep them; runs spelling the same text share their words.
 */
interface OtherRuns {
  count: number;
  start: Int32Array;
  end: Int32Array;
  off: Int32Array;
  words: string[];
}

/**
 * The other runs of a kept text by folded word: their offsets, and per distinct word (ascending
 * by id, see {@link wordIds}) the pairs (run index, position of the word's first occurrence in
 * the run's words), runs ascending: word i's pairs are `[offs[i], offs[i + 1])` of `pairRun`
 * and `pairPos` (one flat list: a query reads the lists of its words in each result).
 */
interface OtherIndex {
  start: Int32Array;
  end: Int32Array;
  words: string[];
  ids: Int32Array;
  offs: Int32Array;
  pairRun: Int32Array;
  pairPos: Int32Array;
  /** The id generation of `ids` (and so of the order of words). */
  generation: number;
}

/** Other runs beyond which a kept text looks matched words up by word instead of scanning every run. */
const OTHER_INDEX_MIN = 8;

/**
 * Ids of the words of kept texts' word indexes, per thread: a query's matched words meet each
 * result's words as two ascending lists of numbers, each matched word looked up once per query
 * rather than once per result. When a text's words would take the table past its limit, it
 * starts again under a new generation, and lists of an older generation are remade when next
 * used. Matched words are only looked up (a query adds nothing to the table).
 */
const wordIds = new Map<string, number>();
let wordIdGeneration = 0;
let wordIdLimit = 1 << 18;

/**
 * Sets the number of words past which the snippets' word id table of this thread starts again
 * (default 2^18); lists made before are remade when next used, so answers do not change. For
 * memory-tight threads and for tests of the restart.
 *
 * @example setSnippetWordIdLimit(1 << 16)
 */
export function setSnippetWordIdLimit(words: number): void {
  wordIdLimit = Math.max(1, words);
}

/**
 * A word index's lists (words and their pairs, in any order) ordered by the words' ids in the
 * current generation, which starts again first when the words might not fit in the table.
 */
function byWordId(ix: Pick<OtherIndex, 'words' | 'offs' | 'pairRun' | 'pairPos'>): Omit<OtherIndex, 'start' | 'end'> {
  const n = ix.words.length;
  if (wordIds.size + n > wordIdLimit) {
    wordIds.clear();
    wordIdGeneration++;
  }
  const idOf = new Int32Array(n);
  for (let e = 0; e < n; e++) {
    const w = ix.words[e]!;
    let id = wordIds.get(w);
    if (id === undefined) wordIds.set(w, (id = wordIds.size));
    idOf[e] = id;
  }
  // Words by id: id × PACK + word sorted as numbers (exact in a double: ids < 2^31).
  const order = n < PACK ? Array.from(Float64Array.from(idOf, (id, e) => id * PACK + e).sort(), (x) => x % PACK) : Array.from(idOf.keys()).sort((x, y) => idOf[x]! - idOf[y]!);
  const words = new Array<string>(n);
  const ids = new Int32Array(n);
  const offs = new Int32Array(n + 1);
  const pairRun = new Int32Array(ix.pairRun.length);
  const pairPos = new Int32Array(ix.pairPos.length);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const e = order[i]!;
    words[i] = ix.words[e]!;
    ids[i] = idOf[e]!;
    offs[i] = at;
    const from = ix.offs[e]!;
    const to = ix.offs[e + 1]!;
    pairRun.set(ix.pairRun.subarray(from, to), at);
    pairPos.set(ix.pairPos.subarray(from, to), at);
    at += to - from;
  }
  offs[n] = at;
  return { words, ids, offs, pairRun, pairPos, generation: wordIdGeneration };
}

function otherIndex(other: OtherRuns): OtherIndex {
  const byWord = new Map<string, number[]>();
  let pairs = 0;
  for (let k = 0; k < other.count; k++) {
    for (let q = other.off[k]!, p = 0; q < other.off[k + 1]!; q++, p++) {
      const w = other.words[q]!;
      const list = byWord.get(w);
      if (!list) byWord.set(w, [k, p]);
      else if (list[list.length - 2] !== k) list.push(k, p);
      else continue;
      pairs++;
    }
  }
  const words: string[] = [];
  const offs = new Int32Array(byWord.size + 1);
  const pairRun = new Int32Array(pairs);
  const pairPos = new Int32Array(pairs);
  let at = 0;
  for (const [w, list] of byWord) {
    offs[words.length] = at;
    words.push(w);
    for (let i = 0; i < list.length; i += 2, at++) {
      pairRun[at] = list[i]!;
      pairPos[at] = list[i + 1]!;
    }
  }
  offs[words.length] = at;
  return { start: other.start, end: other.end, ...byWordId({ words, offs, pairRun, pairPos }) };
}

/**
 * The ids of a matched set's words known to the table, ascending; `missing` the others, looked
 * up again when the table has grown since (`size`: its size then), as a text indexed after
 * them may hold them.
 */
interface MatchedIds {
  ids: Int32Array;
  missing: string[];
  generation: number;
  size: number;
}
const matchedIdsCache = new WeakMap<Set<string>, MatchedIds>();

function matchedIds(matched: Set<string>): MatchedIds {
  const m = matchedIdsCache.get(matched);
  if (m && m.generation === wordIdGeneration) {
    if (m.size === wordIds.size) return m;
    const ids = Array.from(m.ids);
    const missing: string[] = [];
    for (const w of m.missing) {
      const id = wordIds.get(w);
      if (id === undefined) missing.push(w);
      else ids.push(id);
    }
    const again = { ids: ids.length === m.ids.length ? m.ids : Int32Array.from(ids).sort(), missing, generation: wordIdGeneration, size: wordIds.size };
    matchedIdsCache.set(matched, again);
    return again;
  }
  const ids: number[] = [];
  const missing: string[] = [];
  for (const w of matched) {
    const id = wordIds.get(w);
    if (id === undefined) missing.push(w);
    else ids.push(id);
  }
  const fresh = { ids: Int32Array.from(ids).sort(), missing, generation: wordIdGeneration, size: wordIds.size };
  matchedIdsCache.set(matched, fresh);
  return fresh;
}

/** Scratch arrays of otherSpansIndexed (grown as needed; one search runs at a time per thread). */
let scratchRun = new Int32Array(256);
let scratchPos = new Int32Array(256);
let scratchFrom = new Int32Array(256);
let scratchOrder = new Float64Array(256);

/**
 * Appends to `out` the spans of the other runs holding a word of `matched`, each with the
 * first such word of the run, in run order: what a scan of every run does, found through the
 * text's word index (CJK cards hold thousands of runs, a query a few dozen matched words, which
 * occur in a few dozen of them: the work follows the occurrences, not the runs). False (and
 * nothing appended) when the index cannot say (a text of millions of words).
 */
function otherSpansIndexed(runs: WordRuns, matched: Set<string>, out: Spans): boolean {
  let ix = (runs.otherIndex ??= otherIndex(runs.other));
  // Made under an older generation of ids: reordered under the current one.
  if (ix.generation !== wordIdGeneration) Object.assign(ix, byWordId(ix));
  const m = matchedIds(matched);
  // The matched words in the text (their indexes in ix.words): the intersection of two
  // ascending id lists, by binary search from the shorter one when it is much shorter.
  const found: number[] = [];
  const a = m.ids;
  const b = ix.ids;
  if (a.length * 8 < b.length) {
    let lo = 0;
    for (let i = 0; i < a.length && lo < b.length; i++) {
      const x = a[i]!;
      let hi = b.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (b[mid]! < x) lo = mid + 1;
        else hi = mid;
      }
      if (lo < b.length && b[lo] === x) found.push(lo++);
    }
  } else {
    for (let i = 0, j = 0; i < a.length && j < b.length; ) {
      const x = a[i]!;
      const y = b[j]!;
      if (x < y) i++;
      else if (x > y) j++;
      else {
        found.push(j);
        i++;
        j++;
      }
    }
  }
  let pairs = 0;
  for (const f of found) pairs += ix.offs[f + 1]! - ix.offs[f]!;
  if (pairs === 0) return true;
  // Beyond PACK pairs the caller scans every run instead.
  if (pairs >= PACK) return false;
  if (scratchOrder.length < pairs) {
    const n = Math.max(pairs, 2 * scratchOrder.length);
    scratchRun = new Int32Array(n);
    scratchPos = new Int32Array(n);
    scratchFrom = new Int32Array(n);
    scratchOrder = new Float64Array(n);
  }
  const run = scratchRun;
  const pos = scratchPos;
  const from = scratchFrom;
  const { offs, pairRun, pairPos } = ix;
  // Each pair as run × PACK + pair number (exact in a double: runs and pairs < PACK), sorted:
  // the runs in text order, each run's pairs together.
  const order = scratchOrder.subarray(0, pairs);
  let e = 0;
  for (let f = 0; f < found.length; f++) {
    for (let q = offs[found[f]!]!, to = offs[found[f]! + 1]!; q < to; q++, e++) {
      run[e] = pairRun[q]!;
      pos[e] = pairPos[q]!;
      from[e] = f;
      order[e] = pairRun[q]! * PACK + e;
    }
  }
  if (found.length > 1) order.sort();
  // Word ids as wordId assigns them (in order of first use), per found word.
  const ids = new Int32Array(found.length).fill(-1);
  for (let i = 0; i < pairs; ) {
    const first = order[i]! % PACK;
    const k = run[first]!;
    // The run's first matched word: the least position among its pairs (one per word).
    let best = first;
    for (i++; i < pairs; i++) {
      const x = order[i]! % PACK;
      if (run[x] !== k) break;
      if (pos[x]! < pos[best]!) best = x;
    }
    const f = from[best]!;
    let id = ids[f]!;
    if (id < 0) ids[f] = id = wordId(out.words, ix.words[found[f]!]!);
    out.start.push(ix.start[k]!);
    out.end.push(ix.end[k]!);
    out.word.push(id);
  }
  return true;
}

/**
 * Sorted distinct run hashes; the runs of keys[i] are runs[offs[i]..offs[i+1]), in text order.
 * `filter`: a 2,048-bit filter of the keys, so a matched word absent from the text is mostly
 * settled without the binary search. `oneWord[i]`: 1 when every run of keys[i] spells the same
 * lower-cased word (no hash collision inside the text), so checking its first run settles all.
 */
interface HashIndex {
  keys: Int32Array;
  offs: Int32Array;
  runs: Int32Array;
  filter: Uint32Array;
  oneWord: Uint8Array;
}

/** Whether the ASCII runs `text[a, a + len)` and `text[b, b + len)` are equal ignoring case. */
function sameRun(text: string, a: number, b: number, len: number): boolean {
  for (let i = 0; i < len; i++) {
    let x = text.charCodeAt(a + i);
    let y = text.charCodeAt(b + i);
    if (x >= 65 && x <= 90) x += 32;
    if (y >= 65 && y <= 90) y += 32;
    if (x !== y) return false;
  }
  return true;
}

/** Packing factor for sorting (hash or run number, index) pairs as doubles: runs per text < PACK. */
const PACK = 2 ** 21;

function hashIndex(r: WordRuns): HashIndex {
  // By hash, then by position (each hash's runs stay in text order): one numeric sort of
  // hash × PACK + run, exact in a double (|hash| < 2^31, run < PACK = 2^21).
  const order = new Float64Array(r.count);
  for (let k = 0; k < r.count; k++) order[k] = r.hash[k]! * PACK + k;
  order.sort();
  const runs = new Int32Array(r.count);
  const keys: number[] = [];
  const offs: number[] = [];
  const filter = new Uint32Array(64);
  for (let i = 0; i < r.count; i++) {
    const k = (runs[i] = order[i]! - Math.floor(order[i]! / PACK) * PACK);
    const h = r.hash[k]!;
    if (i === 0 || h !== keys[keys.length - 1]) {
      keys.push(h);
      offs.push(i);
      filter[(h >>> 5) & 63]! |= 1 << (h & 31);
    }
  }
  offs.push(r.count);
  const oneWord = new Uint8Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const first = runs[offs[i]!]!;
    const s0 = r.start[first]!;
    const len = r.end[first]! - s0;
    let same = 1;
    for (let j = offs[i]! + 1; j < offs[i + 1]! && same; j++) {
      const k = runs[j]!;
      if (r.end[k]! - r.start[k]! !== len || !sameRun(r.text, s0, r.start[k]!, len)) same = 0;
    }
    oneWord[i] = same;
  }
  return { keys: Int32Array.from(keys), offs: Int32Array.from(offs), runs, filter, oneWord };
}

/**
 * The word of `words` that the ASCII run `text[start, end)` spells when lower-cased, if any:
 * `text.slice(start, end).toLowerCase()` looked up in the matched set, without making either
 * string (runs hold only ASCII letters and digits; matched ASCII words only a–z and 0–9).
 */
function runWord(text: string, start: number, end: number, words: string[] | undefined): string | undefined {
  if (!words) return undefined;
  const len = end - start;
  for (const w of words) {
    if (w.length !== len) continue;
    let i = 0;
    for (; i < len; i++) {
      const c = text.charCodeAt(start + i);
      if ((c >= 65 && c <= 90 ? c + 32 : c) !== w.charCodeAt(i)) break;
    }
    if (i === len) return w;
  }
  return undefined;
}

function wordRuns(text: string, to: number): WordRuns {
  // English text averages a word per six characters: sized so that growing is rare.
  const guess = Math.max(64, (to / 5) | 0);
  let start = new Int32Array(guess);
  let end = new Int32Array(guess);
  let hash = new Int32Array(guess);
  let count = 0;
  let nonAscii = false;
  let i = 0;
  while (i < to) {
    let c = text.charCodeAt(i);
    // Skip separators (ASCII characters other than letters and digits).
    if (c < 128 && !((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57))) {
      i++;
      continue;
    }
    const s = i;
    let h = 0;
    let ascii = true;
    for (; i < to; i++) {
      c = text.charCodeAt(i);
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) h = (Math.imul(h, 31) + c) | 0;
      else if (c >= 65 && c <= 90) h = (Math.imul(h, 31) + c + 32) | 0;
      else if (c >= 128) ascii = false;
      else break;
    }
    if (!ascii) {
      nonAscii = true;
      continue;
    }
    if (count === start.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      start = grow(start);
      end = grow(end);
      hash = grow(hash);
    }
    start[count] = s;
    end[count] = i;
    hash[count] = h;
    count++;
  }
  const oStart: number[] = [];
  const oEnd: number[] = [];
  const oOff: number[] = [0];
  const oWords: string[] = [];
  if (nonAscii) {
    // The words of each distinct run text, analysed once per text (particles and common words
    // recur); dictionary words and whole runs apart, as they are analysed apart.
    const ofWord = new Map<string, string[]>();
    const ofRun = new Map<string, string[]>();
    const add = (s: number, e: number, key: string, seen: Map<string, string[]>, analysis: (k: string) => string[]) => {
      let ws = seen.get(key);
      if (!ws) seen.set(key, (ws = analysis(key)));
      oStart.push(s);
      oEnd.push(e);
      for (const w of ws) oWords.push(w);
      oOff.push(oWords.length);
    };
    const slice = to === text.length ? text : text.slice(0, to);
    NON_ASCII_CHAR.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = NON_ASCII_CHAR.exec(slice)) !== null) {
      if (!WORD_CHAR.test(m[0])) continue;
      let a = m.index;
      let b = m.index + m[0].length;
      while (a > 0 && WORD_CHAR.test(slice[a - 1]!)) a--;
      while (b < slice.length && WORD_CHAR.test(slice[b]!)) b++;
      NON_ASCII_CHAR.lastIndex = b;
      const run = slice.slice(a, b);
      if (isSegmentedScript(run)) {
        // Scripts without spaces: one span per dictionary word, so <mark> wraps words, not sentences.
        for (const [x, y] of wordSpans(run)) add(a + x, a + y, run.slice(x, y), ofWord, analyse);
      } else add(a, b, run, ofRun, (k) => fold(k).match(FOLDED_WORD) ?? []);
    }
  }
  const other: OtherRuns = { count: oStart.length, start: Int32Array.from(oStart), end: Int32Array.from(oEnd), off: Int32Array.from(oOff), words: oWords };
  // Trimmed to size: runs of cached cards stay in memory as long as the card.
  // Every property present from the start (byHash and otherIndex come later): one hidden class
  // for all runs, so code optimised for them is not thrown away when a kept text gains its index.
  return { start: start.slice(0, count), end: end.slice(0, count), hash: hash.slice(0, count), count, other, nonAscii, text, to, byHash: undefined, uses: 0, otherIndex: undefined };
}

/**
 * Word runs of texts handed over with a memo object (a cached result card): kept as long as it,
 * one list per text of the card (its title and its content).
 */
const runsMemo = new WeakMap<object, WordRuns[]>();

function runsOf(text: string, to: number, memo?: object): WordRuns {
  if (!memo) return wordRuns(text, to);
  let list = runsMemo.get(memo);
  if (!list) runsMemo.set(memo, (list = []));
  for (const r of list) if (r.to === to && r.text === text) return r;
  const r = wordRuns(text, to);
  // A card has two texts; a third (never seen) replaces the older entries.
  if (list.length >= 2) list.length = 0;
  list.push(r);
  return r;
}

/** Lists of runs per matched hash merged by a linear pick up to this many lists; beyond, one sort. */
const MERGE_LISTS = 8;

/**
 * Spans of the words of `text[0, to)` whose folded form is in `matched`, in text order. ASCII
 * words are matched by the hash of their lower-cased characters (lower-casing is their whole
 * folding), other words by their folded forms.
 */
function matchedSpans(text: string, matched: Set<string>, to = text.length, memo?: object): Spans {
  const out: Spans = { start: [], end: [], word: [], words: [] };
  const runs = runsOf(text, to, memo);
  const aw = asciiWords(matched);
  runs.uses++;
  // The index by hash costs a sort of the text's runs: worth it for a kept text searched again,
  // not for one seen once (most cards of a large site, whose card cache holds a small part of it).
  if (aw && memo && runs.count > 64 && runs.count < PACK && (runs.byHash || runs.uses >= 2)) {
    // A kept text: look each matched word up in the text's runs grouped by hash. Each hash's
    // runs are in text order (run numbers ascend with position), so the spans are a merge of
    // those lists. A list whose runs all spell one word is settled by its first run; another
    // (a hash collision inside the text) is checked run by run.
    const ix = (runs.byHash ??= hashIndex(runs));
    const listFrom: number[] = [];
    const listTo: number[] = [];
    /** Word id of a one-word list; -1: check each run (`listWords` holds the hash's words). */
    const listWord: number[] = [];
    const listWords: Array<string[] | undefined> = [];
    for (const h of aw.list) {
      if ((ix.filter[(h >>> 5) & 63]! & (1 << (h & 31))) === 0) continue;
      const i = indexOfSorted(ix.keys, h);
      if (i < 0) continue;
      const words = aw.hashes.get(h);
      let id = -1;
      if (ix.oneWord[i] === 1) {
        const k0 = ix.runs[ix.offs[i]!]!;
        const w = runWord(text, runs.start[k0]!, runs.end[k0]!, words);
        if (w === undefined) continue;
        id = wordId(out.words, w);
      }
      listFrom.push(ix.offs[i]!);
      listTo.push(ix.offs[i + 1]!);
      listWord.push(id);
      listWords.push(words);
    }
    const add = (l: number, k: number) => {
      const s0 = runs.start[k]!;
      const e0 = runs.end[k]!;
      let id = listWord[l]!;
      if (id < 0) {
        const w = runWord(text, s0, e0, listWords[l]);
        if (w === undefined) return;
        id = wordId(out.words, w);
      }
      out.start.push(s0);
      out.end.push(e0);
      out.word.push(id);
    };
    const lists = listFrom.length;
    if (lists <= MERGE_LISTS) {
      const head = listFrom;
      for (;;) {
        let best = -1;
        let bestK = PACK;
        for (let l = 0; l < lists; l++) {
          if (head[l]! < listTo[l]!) {
            const k = ix.runs[head[l]!]!;
            if (k < bestK) {
              bestK = k;
              best = l;
            }
          }
        }
        if (best < 0) break;
        head[best]!++;
        add(best, bestK);
      }
    } else {
      // Many lists: one numeric sort of run × PACK + list (exact in a double).
      let n = 0;
      for (let l = 0; l < lists; l++) n += listTo[l]! - listFrom[l]!;
      const order = new Float64Array(n);
      n = 0;
      for (let l = 0; l < lists; l++) for (let j = listFrom[l]!; j < listTo[l]!; j++) order[n++] = ix.runs[j]! * PACK + l;
      order.sort();
      for (let j = 0; j < n; j++) {
        const l = order[j]! % PACK;
        add(l, (order[j]! - l) / PACK);
      }
    }
  } else if (aw) {
    const { hashes, filter, maxLen } = aw;
    const { start, end, hash, count } = runs;
    for (let k = 0; k < count; k++) {
      const h = hash[k]!;
      if ((filter[(h >>> 5) & 63]! & (1 << (h & 31))) === 0 || end[k]! - start[k]! > maxLen) continue;
      const word = runWord(text, start[k]!, end[k]!, hashes.get(h));
      if (word !== undefined) {
        out.start.push(start[k]!);
        out.end.push(end[k]!);
        out.word.push(wordId(out.words, word));
      }
    }
  }
  if (!runs.nonAscii) return out;
  const ascii = out.start.length;
  const other = runs.other;
  if (!(memo && other.count > OTHER_INDEX_MIN && otherSpansIndexed(runs, matched, out))) {
    for (let k = 0; k < other.count; k++) {
      for (let q = other.off[k]!; q < other.off[k + 1]!; q++) {
        const w = other.words[q]!;
        if (matched.has(w)) {
          out.start.push(other.start[k]!);
          out.end.push(other.end[k]!);
          out.word.push(wordId(out.words, w));
          break;
        }
      }
    }
  }
  if (ascii > 0 && out.start.length > ascii) {
    // Both lists are in text order and spans never overlap (an ASCII run touching a non-ASCII
    // code unit is not one): one merge by start.
    const n = out.start.length;
    const start: number[] = [];
    const end: number[] = [];
    const word: number[] = [];
    let i = 0;
    let j = ascii;
    while (i < ascii || j < n) {
      const k = j >= n || (i < ascii && out.start[i]! < out.start[j]!) ? i++ : j++;
      start.push(out.start[k]!);
      end.push(out.end[k]!);
      word.push(out.word[k]!);
    }
    out.start = start;
    out.end = end;
    out.word = word;
  }
  return out;
}

/**
 * `text` with every word in `matched` wrapped in `<mark>` and everything else escaped. `memo`:
 * an object that lives as long as `text` does (a cached result card), as for {@link snippet}.
 */
export function highlight(text: string, matched: Set<string>, memo?: object): string {
  return markSpans(text, matchedSpans(text, matched, text.length, memo), 0, text.length);
}

/** `text[from, to)` escaped, with the spans inside it (and not before an earlier one's end) marked. */
function markSpans(text: string, spans: Spans, from: number, to: number): string {
  let out = '';
  let pos = from;
  const { start, end } = spans;
  for (let i = 0; i < start.length; i++) {
    const s = start[i]!;
    const e = end[i]!;
    if (s < pos || e > to) continue;
    out += escapeHtml(text.slice(pos, s)) + '<mark>' + escapeHtml(text.slice(s, e)) + '</mark>';
    pos = e;
  }
  return out + escapeHtml(text.slice(pos, to));
}

const SPACE = /\s/;

/** Moves `i` forward to the start of the next word (or leaves it when already at one). */
function wordStartAtOrAfter(text: string, i: number): number {
  if (i <= 0) return 0;
  if (SPACE.test(text[i - 1]!)) return i;
  if (isSegmentedScript(text.slice(i - 1, i + 1))) {
    // Scripts without spaces: the next dictionary-word boundary (segment.ts), not the next space.
    // The words of the window text[i - BOUNDARY_WINDOW, i + BOUNDARY_WINDOW), segmented as that
    // slice would be (pieces cut at its ends), looked at only around i.
    const a = wordStartIn(text, Math.max(0, i - BOUNDARY_WINDOW), i + BOUNDARY_WINDOW, i);
    return a < 0 ? i : a;
  }
  const j = text.slice(i, i + 60).search(/\s/);
  return j < 0 ? i : i + j + 1;
}

/** Characters either side of a cut looked at for dictionary-word boundaries. */
const BOUNDARY_WINDOW = 32;

/** Moves `i` back to the end of the previous word. */
function wordEndAtOrBefore(text: string, i: number): number {
  if (i >= text.length) return text.length;
  if (SPACE.test(text[i]!)) return i;
  if (isSegmentedScript(text.slice(i - 1, i + 1))) {
    const b = wordEndIn(text, Math.max(0, i - BOUNDARY_WINDOW), i + BOUNDARY_WINDOW, i);
    return b < 0 ? i : b;
  }
  const back = text.slice(Math.max(0, i - 60), i);
  const k = back.search(/\s\S*$/);
  return k < 0 ? i : Math.max(0, i - 60) + k;
}

/**
 * The best passage of `text` of about `size` characters (default 240, within 200–300): the
 * window holding the most distinct matched words (then the most matches), cut on word
 * boundaries with `…` where text was cut. The start of the text when nothing matched.
 * `memo`: an object that lives as long as `text` does (a cached result card); the text's word
 * runs are then found once and kept with it.
 */
export function snippet(text: string, matched: Set<string>, opts: { size?: number; highlight: boolean; memo?: object }): string {
  const size = opts.size ?? 240;
  const scanTo = Math.min(text.length, SCAN_LIMIT);
  const spans = matched.size ? matchedSpans(text, matched, scanTo, opts.memo) : null;
  let from = 0;
  const n = spans ? spans.start.length : 0;
  if (spans && n > 0) {
    // Two pointers over the matches: the window [i, j) spans at most `size` characters;
    // counts[id] is how often word id occurs in it, `distinct` how many ids have a non-zero
    // count. A span longer than `size` never enters a window; leaving one it never entered
    // marks its word NaN, counted as present from then on: a word longer than the window
    // still counts once it has been passed (snippets rely on this corner; changing it changes
    // which passage is picked).
    const { start, end, word } = spans;
    const counts = new Float64Array(spans.words.length);
    let distinct = 0;
    let bestI = 0;
    let bestDistinct = -1;
    let bestCount = -1;
    let j = 0;
    for (let i = 0; i < n; i++) {
      while (j < n && end[j]! - start[i]! <= size) {
        if (counts[word[j]!]!++ === 0) distinct++;
        j++;
      }
      const count = j - i;
      if (distinct > bestDistinct || (distinct === bestDistinct && count > bestCount)) {
        bestDistinct = distinct;
        bestCount = count;
        bestI = i;
      }
      const id = word[i]!;
      const v = counts[id]!;
      if (v === 0) {
        counts[id] = NaN;
        distinct++;
      } else if ((counts[id] = v - 1) === 0) distinct--;
    }
    const firstStart = start[bestI]!;
    let lastEnd = end[bestI]!;
    for (let k = bestI; k < n && end[k]! - firstStart <= size; k++) lastEnd = end[k]!;
    // Lead-in context of up to a fifth of the window, from the slack the matches leave.
    const lead = Math.min(Math.floor(size / 5), Math.max(0, size - (lastEnd - firstStart)));
    from = firstStart - lead <= 0 ? 0 : wordStartAtOrAfter(text, firstStart - lead);
  }
  let to = Math.min(text.length, from + size);
  if (to < text.length) to = Math.max(from + 1, wordEndAtOrBefore(text, to));
  // Trim whitespace at both ends without losing track of what was cut.
  while (from < to && SPACE.test(text[from]!)) from++;
  while (to > from && SPACE.test(text[to - 1]!)) to--;
  // markSpans skips spans outside [from, to) itself.
  const inner = opts.highlight ? (spans ? markSpans(text, spans, from, to) : escapeHtml(text.slice(from, to))) : text.slice(from, to);
  return (from > 0 ? '…' : '') + inner + (to < text.length && text.slice(to).trim() !== '' ? '…' : '');
}
