/**
 * Expand, the first stage of the query path: each significant word of a parsed query becomes
 * its alternatives present in the pinned snapshot (exact, same stem, joined compound or joined
 * with the next word, synonym, prefix completion, typo), each with a kind, an edit distance
 * and a weight.
 *
 * Input: the parsed query, the snapshot's segment vocabularies, the project's search settings.
 * Output: per significant word (a "slot"), a read-only list of {@link Alternative}s.
 * Invariants: an alternative's term is indexed in at least one segment of the snapshot; a term
 * appears once per word, with the best weight it earned; the lists depend only on the
 * vocabularies (not on deletes), the settings and the word's own flags, so they are cached
 * per snapshot and settings object. The caps on prefix, substring and typo candidates are per
 * snapshot (the first N of the merged vocabulary in a fixed order) and lists are merged in one
 * order, so the alternatives do not depend on how the snapshot is split into segments.
 * Vocabulary tries, typo matches and stem lists are cached per segment reader (segments are
 * immutable).
 */
import type { IndexSnapshot, LiveSegment } from '../index/index.js';
import {
  fuzzyOrder, inCodeUnitOrder, isSegmentedScript, sortedWithPrefix, stemEn, stemSnowball, stopWordsOf, typoBudget, Vocabulary,
  words as analyse, type FuzzyMatch,
} from '../text/index.js';
import type { SearchSettings } from '../core/index.js';
import type { ParsedQuery, QueryWord } from './query.js';

/** How an alternative relates to the word typed. */
export type Kind = 'exact' | 'stem' | 'synonym' | 'prefix' | 'typo';

/** One indexed term a query word may match, with the weight a match through it earns. */
export interface Alternative {
  term: string;
  kind: Kind;
  distance: number;
  weight: number;
}

/** Typo tolerance of a request (the project's or suggest's own). */
export type Tolerance = 'default' | 'strict' | 'off';

const KIND_WEIGHT: Record<Kind, number> = { exact: 1, stem: 0.9, synonym: 0.9, prefix: 0.8, typo: 0.6 };
// The caps below are per snapshot: each is the first N of the snapshot's whole vocabulary in a
// fixed total order (see snapshotFirst), so the alternatives, and with them hits, totals and
// order, do not depend on how the index is split into segments.
/** Prefix completions of a word, in code-unit order. */
const MAX_PREFIX_EXPANSIONS = 60;
/** A word of a script segmented by dictionary found inside a longer indexed word. */
const SUBSTRING_WEIGHT = 0.7;
/**
 * Words holding a segmented-script word inside, shortest first, then in code-unit order. 120
 * rather than 60: on the Japanese known-item set substring MRR@10 0.9737 instead of 0.9678 and
 * content 0.9867 instead of 0.9800 (240 gains nothing more); the words of other scripts have
 * no substring alternatives, so nothing else changes.
 */
const MAX_SUBSTRING_EXPANSIONS = 120;
/** Typo matches of a whole word, in the order of {@link fuzzyOrder}. */
const MAX_TYPO_MATCHES = 200;
/** Typo matches of a prefix (words starting within one edit of it), in the order of {@link fuzzyOrder}. */
const MAX_PREFIX_TYPO_MATCHES = 60;
/** Queries with at least this many significant words use OR semantics with coordination. */
export const LONG_QUERY_WORDS = 4;

/** The words a query must match, and whether it is a long natural-language question. */
export interface QueryWords {
  /** Significant words in query order: stop words count only when the query has nothing else. */
  slots: QueryWord[];
  /**
   * At least {@link LONG_QUERY_WORDS} significant non-phrase words and no phrase: matched with
   * OR semantics, scored with the long-query BM25F parameters, typo variants only for words
   * the index does not know.
   */
  long: boolean;
}

/**
 * The significant words of `parsed` (its slots) under the project's stop words.
 *
 * @example significantWords(parseQuery('the table'), settings).slots.map((w) => w.word) // ['table']
 */
export function significantWords(parsed: ParsedQuery, settings: SearchSettings, languages: readonly string[] = [settings.language]): QueryWords {
  const stops = stopWordsFor(settings, languages);
  let slots = parsed.words.filter((w) => w.phrase >= 0 || !stops.has(w.word));
  if (slots.length === 0) slots = parsed.words;
  const long = !parsed.browse && parsed.phrases.length === 0 && slots.filter((s) => !s.exactOnly).length >= LONG_QUERY_WORDS;
  return { slots, long };
}

const stopCache = new WeakMap<SearchSettings, Map<string, ReadonlySet<string>>>();

/**
 * The stop words of a query: `search.stopWords` when set; otherwise the lists of the project
 * language and of every language present in the snapshot, plus `search.stopWordAdditions` of
 * those languages. Cached per settings object and language set.
 *
 * @example stopWordsFor(settings, ['de']).has('und') // true
 */
export function stopWordsFor(settings: SearchSettings, languages: readonly string[]): ReadonlySet<string> {
  if (settings.stopWords) return new Set(settings.stopWords);
  let bySet = stopCache.get(settings);
  if (!bySet) stopCache.set(settings, (bySet = new Map()));
  const key = languages.join(',');
  let r = bySet.get(key);
  if (!r) {
    const langs = new Set([settings.language, ...languages]);
    if (langs.size === 1) r = withAdditions(stopWordsOf(settings.language), settings, [settings.language]);
    else {
      const u = new Set<string>();
      for (const l of langs) for (const w of stopWordsOf(l)) u.add(w);
      r = withAdditions(u, settings, [...langs]);
    }
    bySet.set(key, r);
  }
  return r;
}

function withAdditions(base: ReadonlySet<string>, settings: SearchSettings, languages: string[]): ReadonlySet<string> {
  const extra = languages.flatMap((l) => settings.stopWordAdditions?.[l] ?? []).flatMap((w) => analyse(w));
  return extra.length ? new Set([...base, ...extra]) : base;
}

const languageCache = new WeakMap<IndexSnapshot, readonly string[]>();

/**
 * The languages of the searchable rows of `snap` (each a page's own language or the project
 * default when it was indexed), sorted; cached per snapshot.
 *
 * @example snapshotLanguages(snap) // ['de', 'en']
 */
export function snapshotLanguages(snap: IndexSnapshot): readonly string[] {
  let r = languageCache.get(snap);
  if (!r) {
    const set = new Set<string>();
    for (const s of snap.segments) for (const l of s.reader.languages) set.add(l);
    languageCache.set(snap, (r = [...set].sort()));
  }
  return r;
}

const vocabCache = new WeakMap<object, Vocabulary>();
const fuzzyCache = new WeakMap<object, Map<string, FuzzyMatch[]>>();
const FUZZY_CACHE_SIZE = 20_000;

/**
 * Typo matches of `word` in one segment, cached per segment (segments are immutable, and
 * visitors repeat queries): the trie walk is the costliest part of query expansion.
 */
function fuzzyIn(seg: LiveSegment, word: string, budget: number, prefix: boolean, limit?: number): FuzzyMatch[] {
  let cache = fuzzyCache.get(seg.reader);
  if (!cache) fuzzyCache.set(seg.reader, (cache = new Map()));
  const key = `${budget}${prefix ? 'p' : 'w'}${limit ?? ''}:${word}`;
  let r = cache.get(key);
  if (!r) {
    r = vocabularyOf(seg).fuzzy(word, budget, prefix, limit);
    if (cache.size >= FUZZY_CACHE_SIZE) cache.clear();
    cache.set(key, r);
  }
  return r;
}

/**
 * The first `limit` items of the snapshot in `order`, from `lists`, each one segment's first
 * `limit` items in that order (an item's term keys it; the same term gives the same item in
 * every segment): an item among the first `limit` of the union is among the first `limit` of
 * its own segment, since its segment's items before it are items of the union before it. A
 * single segment's list is returned as it is.
 */
function snapshotFirst<T>(lists: ReadonlyArray<readonly T[]>, termOf: (x: T) => string, order: (a: string, b: string) => number, limit: number): readonly T[] {
  if (lists.length === 1) return lists[0]!;
  const byTerm = new Map<string, T>();
  for (const l of lists) for (const x of l) if (!byTerm.has(termOf(x))) byTerm.set(termOf(x), x);
  return [...byTerm.values()].sort((a, b) => order(termOf(a), termOf(b))).slice(0, limit);
}

const itself = (t: string) => t;
const byTerm = (m: FuzzyMatch) => m.term;
/** Code-unit order, the order of `<` on strings. */
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const shortestFirst = (a: string, b: string) => a.length - b.length || byCodeUnits(a, b);

/** The first `limit` words of the snapshot starting with `prefix`, in code-unit order. */
function prefixTerms(segs: readonly LiveSegment[], prefix: string, limit: number): readonly string[] {
  return snapshotFirst(segs.map((s) => termsWithPrefix(s, prefix, limit)), itself, byCodeUnits, limit);
}

/** {@link termsContaining} over the snapshot: shortest first, then in code-unit order, at most `limit`. */
function substringTerms(segs: readonly LiveSegment[], part: string, limit: number): readonly string[] {
  return snapshotFirst(segs.map((s) => termsContaining(s, part, limit)), itself, shortestFirst, limit);
}

/** Typo matches of `word` over the snapshot: the first `limit` in {@link fuzzyOrder}. */
function fuzzyMatches(segs: readonly LiveSegment[], word: string, budget: number, prefix: boolean, limit: number): readonly FuzzyMatch[] {
  return snapshotFirst(segs.map((s) => fuzzyIn(s, word, budget, prefix, limit)), byTerm, fuzzyOrder(word), limit);
}

/**
 * Words of the snapshot from `lists` (one per segment, each in code-point order as SQLite lists
 * them), in code-point order: the order one segment holding them all would list them in.
 */
function unionInCodePointOrder(lists: ReadonlyArray<readonly string[]>): readonly string[] {
  if (lists.length === 1) return lists[0]!;
  return [...new Set(lists.flat())].sort(byCodePoints);
}

/** Code-point order (UTF-16 code units with surrogates moved above U+E000–U+FFFF). */
function byCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointKey(x) - codePointKey(y);
  }
  return a.length - b.length;
}

function codePointKey(u: number): number {
  return u >= 0xd800 ? (u >= 0xe000 ? u - 0x800 : u + 0x2000) : u;
}

/**
 * Builds the segment's typo and prefix lookups (its vocabulary read once into a trie) ahead of
 * the first query that needs them: a search thread warming a new generation
 * (src/search/remote.ts).
 */
export function warmVocabulary(seg: LiveSegment): void {
  vocabularyOf(seg);
}

function vocabularyOf(seg: LiveSegment): Vocabulary {
  let v = vocabCache.get(seg.reader);
  if (!v) vocabCache.set(seg.reader, (v = new Vocabulary(seg.reader.terms())));
  return v;
}

const stemCache = new WeakMap<object, Map<string, string[]>>();
const sortedTerms = new WeakMap<object, readonly string[]>();

const langStemCache = new WeakMap<object, Map<string, string[]>>();

/** Words of one segment whose Snowball stem in `language` is `stem`, cached per segment. */
function termsWithLanguageStem(seg: LiveSegment, language: string, stem: string): string[] {
  let cache = langStemCache.get(seg.reader);
  if (!cache) langStemCache.set(seg.reader, (cache = new Map()));
  const key = `${language}:${stem}`;
  let r = cache.get(key);
  if (!r) {
    r = seg.reader.termsWithLanguageStem(language, stem);
    if (cache.size >= FUZZY_CACHE_SIZE) cache.clear();
    cache.set(key, r);
  }
  return r;
}

/** Words of one segment sharing `stem`, cached per segment (visitors repeat words). */
export function termsWithStem(seg: LiveSegment, stem: string): string[] {
  let cache = stemCache.get(seg.reader);
  if (!cache) stemCache.set(seg.reader, (cache = new Map()));
  let r = cache.get(stem);
  if (!r) {
    r = seg.reader.termsWithStem(stem);
    if (cache.size >= FUZZY_CACHE_SIZE) cache.clear();
    cache.set(stem, r);
  }
  return r;
}

const segmentedTerms = new WeakMap<object, readonly string[]>();

/**
 * Words of one segment in scripts segmented by dictionary that hold `part` without being it or
 * starting with it (those are exact and prefix matches), shortest first, at most `limit`.
 */
function termsContaining(seg: LiveSegment, part: string, limit: number): string[] {
  let terms = segmentedTerms.get(seg.reader);
  if (!terms) segmentedTerms.set(seg.reader, (terms = seg.reader.terms().filter(isSegmentedScript)));
  const out: string[] = [];
  for (const t of terms) if (t.length > part.length && t.includes(part) && !t.startsWith(part)) out.push(t);
  out.sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  return out.slice(0, limit);
}

/**
 * The first `limit` words of one segment starting with `prefix`, in code-unit order: listed from
 * the segment's typo trie (loaded once for typo matching anyway) instead of an SQLite range
 * query per keystroke. Where the trie cannot list in code-unit order (surrogates in the prefix
 * or a lone one in the vocabulary), a binary search over the sorted word list.
 *
 * @example termsWithPrefix(snap.segments[0], 'tab', 3) // ['table', 'tables', 'tablespace']
 */
export function termsWithPrefix(seg: LiveSegment, prefix: string, limit: number): string[] {
  const fromTrie = vocabularyOf(seg).withPrefix(prefix, limit);
  if (fromTrie) return fromTrie;
  let terms = sortedTerms.get(seg.reader);
  if (!terms) sortedTerms.set(seg.reader, (terms = inCodeUnitOrder(seg.reader.terms())));
  return sortedWithPrefix(terms, prefix, limit);
}

/** Expansions of one query word present anywhere in the snapshot. */
function expand(
  q: QueryWord, snap: IndexSnapshot, settings: SearchSettings, tolerance: Tolerance, allowPrefix: boolean,
  typosOnlyWhenUnknown: boolean,
): Map<string, Alternative> {
  const alts = new Map<string, Alternative>();
  const add = (term: string, kind: Kind, distance: number, weight = KIND_WEIGHT[kind]) => {
    const old = alts.get(term);
    if (!old || weight > old.weight) alts.set(term, { term, kind, distance, weight });
  };
  const w = q.word;
  const segs = snap.segments;
  for (const s of segs) if (s.reader.hasTerm(w)) { add(w, 'exact', 0); break; }
  if (q.exactOnly) return alts;
  if (q.joinNext) for (const s of segs) if (s.reader.hasTerm(q.joinNext)) { add(q.joinNext, 'stem', 0, KIND_WEIGHT.stem); break; }
  // Same-stem words in each language present: a page's words were stemmed in its own language.
  const languages = snapshotLanguages(snap);
  const english = languages.includes('en') || settings.language === 'en';
  // A word the index does not hold whose stem is a stop word's (`dese` → `des`) is a
  // misspelling, not an inflection: a function word is no match for it.
  const stops = alts.has(w) ? null : stopWordsFor(settings, languages);
  const sameStem = (word: string, kind: Kind, weight: number) => {
    const keep = (t: string) => (t !== word || kind === 'synonym') && !(stops && kind === 'stem' && stops.has(t));
    const st = english ? stemEn(word) : word;
    // In one order whatever the segmentation: the list's order breaks ties downstream.
    for (const t of unionInCodePointOrder(segs.map((s) => termsWithStem(s, st)))) if (keep(t)) add(t, kind, 0, weight);
    for (const l of languages) {
      if (l === 'en') continue;
      const ls = stemSnowball(word, l);
      for (const t of unionInCodePointOrder(segs.map((s) => termsWithLanguageStem(s, l, ls)))) if (keep(t)) add(t, kind, 0, weight);
    }
  };
  sameStem(w, 'stem', KIND_WEIGHT.stem);
  for (const syn of synonymsOf(w, settings)) {
    for (const s of segs) if (s.reader.hasTerm(syn)) { add(syn, 'synonym', 0); break; }
    sameStem(syn, 'synonym', KIND_WEIGHT.synonym * 0.95);
  }
  if (isSegmentedScript(w)) {
    // Scripts without spaces: no typo edits inside a word; any part of a word finds it, since a
    // visitor's query may start or stop inside a dictionary word.
    if (allowPrefix) {
      for (const t of prefixTerms(segs, w, MAX_PREFIX_EXPANSIONS)) {
        if (t !== w) add(t, 'prefix', 0, KIND_WEIGHT.prefix * Math.max(0.5, w.length / t.length) ** 0.5);
      }
      for (const t of substringTerms(segs, w, MAX_SUBSTRING_EXPANSIONS)) add(t, 'prefix', 0, SUBSTRING_WEIGHT * Math.max(0.5, w.length / t.length) ** 0.5);
    }
    if (q.compound) for (const s of segs) if (s.reader.hasTerm(q.compound)) { add(q.compound, 'exact', 0); break; }
    return alts;
  }
  if (q.prefix && allowPrefix) {
    for (const t of prefixTerms(segs, w, MAX_PREFIX_EXPANSIONS)) {
      // Closer completions are likelier what the visitor is typing.
      if (t !== w) add(t, 'prefix', 0, KIND_WEIGHT.prefix * Math.max(0.5, w.length / t.length) ** 0.5);
    }
  }
  // Identifiers typed with a joiner also match their joined form, with its own typo budget.
  if (q.compound) {
    const c = q.compound;
    for (const s of segs) if (s.reader.hasTerm(c)) { add(c, 'exact', 0); break; }
    if (q.prefix && allowPrefix) for (const t of prefixTerms(segs, c, MAX_PREFIX_EXPANSIONS)) if (t !== c) add(t, 'prefix', 0, KIND_WEIGHT.prefix);
    const cb = typoBudget([...c].length, tolerance);
    if (cb > 0) for (const m of fuzzyMatches(segs, c, cb, false, MAX_TYPO_MATCHES)) if (m.distance > 0) add(m.term, 'typo', m.distance, KIND_WEIGHT.typo / m.distance);
  }
  // In long OR queries, typo variants of words the index knows only add noise.
  const budget = typosOnlyWhenUnknown && alts.size > 0 ? 0 : typoBudget([...w].length, tolerance);
  if (budget > 0) {
    for (const m of fuzzyMatches(segs, w, budget, false, MAX_TYPO_MATCHES)) {
      if (m.distance > 0) add(m.term, 'typo', m.distance, KIND_WEIGHT.typo / m.distance);
    }
    if (q.prefix && allowPrefix && w.length >= 4) {
      for (const m of fuzzyMatches(segs, w, 1, true, MAX_PREFIX_TYPO_MATCHES)) {
        if (m.distance > 0) add(m.term, 'typo', m.distance, KIND_WEIGHT.typo * KIND_WEIGHT.prefix);
      }
    }
  }
  return alts;
}

/**
 * Query words in scripts written without spaces that match no indexed word in any way (exact,
 * prefix, inside a word) are cut in two where both halves match, the right half cut again if
 * needed: the dictionary keeps a sequence it does not know whole (`ケースス` from a query that
 * stops inside `ケーススタディ`), while a page has it as two words (`ケース`, `スタディ`). Longest
 * left half first. Other words pass through unchanged.
 *
 * @example splitUnmatched(slots, snap, settings, 'default', true, false) // ケースス → ケース, ス
 */
export function splitUnmatched(
  slots: QueryWord[], snap: IndexSnapshot, settings: SearchSettings, tolerance: Tolerance, allowPrefix: boolean, long: boolean,
): QueryWord[] {
  if (!allowPrefix || !slots.some((q) => !q.exactOnly && isSegmentedScript(q.word))) return slots;
  const matches = (q: QueryWord) => expansionsOf(q, snap, settings, tolerance, allowPrefix, long).length > 0;
  const cut = (q: QueryWord, depth: number): QueryWord[] | null => {
    if (matches(q)) return [q];
    const chars = [...q.word];
    if (depth >= 3 || chars.length < 2) return null;
    for (let i = chars.length - 1; i >= 1; i--) {
      const left: QueryWord = { word: chars.slice(0, i).join(''), prefix: false, exactOnly: false, phrase: -1 };
      if (!matches(left)) continue;
      const right = cut({ ...q, word: chars.slice(i).join(''), compound: undefined, joinNext: undefined }, depth + 1);
      if (right) return [left, ...right];
    }
    return null;
  };
  const out: QueryWord[] = [];
  for (const q of slots) {
    if (q.exactOnly || !isSegmentedScript(q.word)) out.push(q);
    else out.push(...(cut(q, 0) ?? [q]));
  }
  return out;
}

const expansionCache = new WeakMap<IndexSnapshot, WeakMap<SearchSettings, Map<string, Alternative[]>>>();
/** Cached expansions per snapshot and settings object, cleared when full (like the typo cache). */
const EXPANSION_CACHE_SIZE = 5_000;

/**
 * The alternatives of query word `q` in `snap`, as a read-only list, cached per snapshot and
 * settings object: an expansion depends only on the snapshot's segment vocabularies (not on
 * deletes), the settings (language, synonyms) and the word's own flags, all in the key or the
 * maps' owners; visitors repeat words. A new generation (another snapshot object) starts empty.
 * `typosOnlyWhenUnknown` (long queries): no typo variants for a word that has other alternatives.
 *
 * @example expansionsOf(word, snap, settings, 'default', true, false).map((a) => a.term) // ['table', 'tables', …]
 */
export function expansionsOf(
  q: QueryWord, snap: IndexSnapshot, settings: SearchSettings, tolerance: Tolerance, allowPrefix: boolean,
  typosOnlyWhenUnknown: boolean,
): Alternative[] {
  let bySettings = expansionCache.get(snap);
  if (!bySettings) expansionCache.set(snap, (bySettings = new WeakMap()));
  let cache = bySettings.get(settings);
  if (!cache) bySettings.set(settings, (cache = new Map()));
  const key = `${tolerance}\u0000${allowPrefix ? 1 : 0}${typosOnlyWhenUnknown ? 1 : 0}${q.prefix ? 1 : 0}${q.exactOnly ? 1 : 0}\u0000${q.word}\u0000${q.joinNext ?? ''}\u0000${q.compound ?? ''}`;
  let r = cache.get(key);
  if (!r) {
    r = [...expand(q, snap, settings, tolerance, allowPrefix, typosOnlyWhenUnknown).values()];
    if (cache.size >= EXPANSION_CACHE_SIZE) cache.clear();
    cache.set(key, r);
  }
  return r;
}

/** Single-word synonyms of `word` from settings (groups both ways, mappings one way). */
function synonymsOf(word: string, settings: SearchSettings): string[] {
  const out: string[] = [];
  for (const s of settings.synonyms) {
    if ('terms' in s) {
      const forms = s.terms.map((t) => analyse(t).join(' '));
      if (forms.includes(word)) for (const f of forms) if (f !== word && !f.includes(' ')) out.push(f);
    } else if (analyse(s.from).join(' ') === word) {
      for (const t of s.to) {
        const f = analyse(t).join(' ');
        if (f && !f.includes(' ')) out.push(f);
      }
    }
  }
  return out;
}
