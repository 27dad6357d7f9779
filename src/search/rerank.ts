/**
 * Rerank, the stage that puts the collected hits in their final order: by relevance (with a
 * partial selection when only the top is needed) or by a data point, then, in relevance order,
 * the top {@link RERANK_TOP} re-ranked by phrase and exactness signals: the title equal to the
 * query, starting with it or holding it as a phrase, a heading equal to the query.
 *
 * Input: the hits (group), the parsed query and its words' alternatives (expand), the snapshot.
 * Output: the same hits, reordered in place, the top ones' scores multiplied by their bonus.
 * Invariants: typo tiers are kept (a bonus never lifts a typo match above an exact one); only
 * per-document signals are used, so the order does not depend on how the index is split;
 * pages without the sort key come last in both sort orders.
 */
import { type IndexSnapshot, type LiveSegment, NFIELDS, hashWord, type Postings } from '../index/index.js';
import { indexOfSorted } from '../text/index.js';
import type { Alternative } from './expand.js';
import { compareKeys, sortKey, type SortKey } from './filters.js';
import type { ParsedQuery, QueryWord } from './query.js';
import { byRelevance, heapDown, heapUp, type Hit } from './score.js';

/** How many top results get the phrase/exactness re-ranking. */
export const RERANK_TOP = 100;
const PREFIX_READING = 0.6;
// Multipliers added to 1 for each signal a document shows.
const BONUS = { titleExact: 3, titleStart: 1, titlePhrase: 1, headingExact: 1.5 };

/** What the order of the hits depends on in a search request. */
export interface OrderRequest {
  /** A data-point key to sort by, or null for relevance. */
  sort: string | null;
  sortOrder: 'ASC' | 'DESC';
  /** Only the first `topK` hits need to be in order. */
  topK?: number;
}

/**
 * Orders `hits` in place: by relevance, or by the data point `req.sort` (relevance breaking
 * ties). `kept`: the hits are already only the best ones (collected with a bounded heap), so a
 * plain sort orders them.
 */
export function orderHits(hits: Hit[], req: OrderRequest, kept: boolean): void {
  if (kept) hits.sort(byRelevance);
  else sortHits(hits, req);
}

function sortHits(hits: Hit[], req: OrderRequest): void {
  if (!req.sort) {
    const k = req.topK === undefined ? hits.length : Math.max(req.topK, RERANK_TOP);
    if (hits.length > 4 * k) selectTop(hits, k);
    else hits.sort(byRelevance);
    return;
  }
  const key = req.sort;
  const keys = new Map<Hit, { k: SortKey; raw: string }>();
  for (const h of hits) {
    const dps = h.seg.reader.docValues().dataPoints[h.id] ?? null;
    const k = sortKey(dps, key);
    const raw = dps?.find((d) => d.key === key)?.value ?? '';
    keys.set(h, { k, raw: String(raw) });
  }
  const dir = req.sortOrder === 'DESC' ? -1 : 1;
  hits.sort((a, b) => {
    const ka = keys.get(a)!;
    const kb = keys.get(b)!;
    // Pages without the key sort last in both orders.
    if (ka.k === null || kb.k === null) {
      if (ka.k === null && kb.k === null) return byRelevance(a, b);
      return ka.k === null ? 1 : -1;
    }
    return dir * compareKeys(ka.k, kb.k, ka.raw, kb.raw) || byRelevance(a, b);
  });
}

/**
 * Moves the `k` best hits (by relevance) to the front of `hits`, in order; the rest follow in
 * no particular order. A bounded max-heap of the worst kept hit: O(n log k).
 */
export function selectTop(hits: Hit[], k: number): void {
  const heap: Hit[] = [];
  const rest: Hit[] = [];
  for (const h of hits) {
    if (heap.length < k) {
      heap.push(h);
      heapUp(heap, heap.length - 1);
    } else if (byRelevance(h, heap[0]!) < 0) {
      rest.push(heap[0]!);
      heap[0] = h;
      heapDown(heap, 0);
    } else rest.push(h);
  }
  heap.sort(byRelevance);
  for (let i = 0; i < heap.length; i++) hits[i] = heap[i]!;
  for (let i = 0; i < rest.length; i++) hits[heap.length + i] = rest[i]!;
}

/**
 * Re-ranks the top of `hits` (in relevance order) by phrase and exactness signals of the query
 * read as typed and, when its last word is unfinished, as a prefix; each hit keeps the better
 * of the two readings' bonuses. `slots` are the query's significant words and `alternatives`
 * their expansions, aligned.
 */
export function rerankTop(hits: Hit[], parsed: ParsedQuery, slots: QueryWord[], alternatives: Alternative[][], snap: IndexSnapshot): void {
  const readings = [queryPhrase(parsed, slots, alternatives, snap, false), queryPhrase(parsed, slots, alternatives, snap, true)];
  applyPhraseBonus(hits, readings.filter((r, i): r is QueryPhrase => r !== null && (i === 0 || r.prefixLast)));
}

/** The query as a phrase of indexed words, for exactness signals. */
interface QueryPhrase {
  words: string[];
  /** The last word is an unfinished prefix. */
  prefixLast: boolean;
}

/**
 * The whole query as typed (stop words included) in indexed words: for each word its exact
 * form when indexed, else its most frequent closest alternative; the last word stays a prefix
 * when it is one. Null when some word has no usable form.
 */
function queryPhrase(
  parsed: ParsedQuery, slots: QueryWord[], alternatives: Alternative[][], snap: IndexSnapshot, allowPrefix: boolean,
): QueryPhrase | null {
  const out: string[] = [];
  let prefixLast = false;
  for (const [i, w] of parsed.words.entries()) {
    const si = slots.indexOf(w);
    const alts = si < 0 ? [] : alternatives[si]!;
    const isLast = i === parsed.words.length - 1;
    if (allowPrefix && w.prefix && isLast && alts.some((a) => (a.kind === 'prefix' || a.kind === 'exact') && a.term.startsWith(w.word))) {
      out.push(w.word);
      prefixLast = true;
      continue;
    }
    if (si < 0 || alts.some((a) => a.kind === 'exact' && a.term === w.word)) {
      out.push(w.word);
      continue;
    }
    const best = closestForm(w, alts, snap);
    if (best === null) return null;
    out.push(best);
  }
  return out.length ? { words: out, prefixLast } : null;
}

/**
 * Per cached list of alternatives (src/search/expand.ts: one word with its flags, one
 * snapshot): the word's closest, most frequent indexed form ({@link closestForm}), or null.
 */
const closestForms = new WeakMap<Alternative[], string | null>();

/**
 * The alternative of `w` with the fewest edits, then the most postings over the snapshot's
 * segments (not the joined compound or the word joined with the next one): `w`'s form in the
 * query phrase when `w` itself is not indexed. Remembered per alternatives list, which fixes
 * the word, its flags and the snapshot, so the postings of a prefix's many alternatives are
 * counted once, not on each query.
 */
function closestForm(w: QueryWord, alts: Alternative[], snap: IndexSnapshot): string | null {
  const known = closestForms.get(alts);
  if (known !== undefined) return known;
  let best: Alternative | null = null;
  let bestDf = -1;
  for (const a of alts) {
    if (a.term === w.compound || a.term === w.joinNext) continue;
    const df = snap.segments.reduce((n, s) => n + (s.reader.postings(a.term)?.ids.length ?? 0), 0);
    if (!best || a.distance < best.distance || (a.distance === best.distance && df > bestDf)) {
      best = a;
      bestDf = df;
    }
  }
  const form = best ? best.term : null;
  closestForms.set(alts, form);
  return form;
}

/**
 * Re-ranks the top results by phrase and exactness signals: the title equal to the query,
 * starting with it, or holding it as a phrase (checked on the in-memory title keys), a heading
 * equal to the query (its hash among the page's heading hashes). Only the top
 * {@link RERANK_TOP} are touched; typo tiers are kept.
 */
function applyPhraseBonus(hits: Hit[], phrases: QueryPhrase[]): void {
  if (phrases.length === 0) return;
  const top = hits.slice(0, RERANK_TOP);
  const best = new Float64Array(top.length).fill(1);
  const flags = new FieldFlags(top);
  for (const phrase of phrases) {
    // A prefix reading is weaker evidence than the words as typed.
    const scale = phrase.prefixLast ? PREFIX_READING : 1;
    const bonus = phraseBonus(top, phrase, flags);
    for (let i = 0; i < top.length; i++) best[i] = Math.max(best[i]!, 1 + (bonus[i]! - 1) * scale);
  }
  for (let i = 0; i < top.length; i++) top[i]!.score *= best[i]!;
  top.sort(byRelevance);
  for (let i = 0; i < top.length; i++) hits[i] = top[i]!;
}

const TITLE_FIELD = 0;
const HEADINGS_FIELD = 2;

/** Bit of {@link FieldFlags}: the word is in the page's title. */
const IN_TITLE = 1;
/** Bit of {@link FieldFlags}: the word is in one of the page's headings. */
const IN_HEADINGS = 2;

/**
 * Whether each reading word is in the title and in the headings of each of `top` (IN_TITLE |
 * IN_HEADINGS), from one binary search of the word's postings per word and page, made on first
 * use and shared by both fields and every reading of the query (the readings share words).
 */
class FieldFlags {
  private readonly byWord = new Map<string, Int8Array>();
  /**
   * Each word's postings per segment, looked up once: the top 100 mostly share a few segments,
   * and a postings lookup (a large per-reader map) costs more than the binary search itself.
   */
  private readonly postingsByWord = new Map<string, Map<LiveSegment, Postings | null>>();

  constructor(private readonly top: Hit[]) {}

  of(word: string, i: number): number {
    let a = this.byWord.get(word);
    if (!a) this.byWord.set(word, (a = new Int8Array(this.top.length).fill(-1)));
    let v = a[i]!;
    if (v < 0) {
      const h = this.top[i]!;
      let bySeg = this.postingsByWord.get(word);
      if (!bySeg) this.postingsByWord.set(word, (bySeg = new Map()));
      let p = bySeg.get(h.seg);
      if (p === undefined) bySeg.set(h.seg, (p = h.seg.reader.postings(word)));
      v = a[i] = fieldFlags(p, h.id);
    }
    return v;
  }
}

/** {@link FieldFlags} of a term in row `id`, from the term's postings `p` in the row's segment (binary search). */
function fieldFlags(p: Postings | null, id: number): number {
  const i = p ? indexOfSorted(p.ids, id) : -1;
  if (i < 0) return 0;
  return (p!.tfs[i * NFIELDS + TITLE_FIELD]! > 0 ? IN_TITLE : 0) | (p!.tfs[i * NFIELDS + HEADINGS_FIELD]! > 0 ? IN_HEADINGS : 0);
}

/**
 * The multiplier each of `top` earns for one reading of the query (aligned with `top`). A title
 * or heading can only equal, start with or hold the reading when every full word of it is in
 * that field of the page's postings (the field's postings count every folded word of the
 * title and of each heading), so the title key and the heading hashes are looked at only then:
 * most of the top 100 hold the words in their content only.
 */
function phraseBonus(top: Hit[], phrase: QueryPhrase, flags: FieldFlags): Float64Array {
  const out = new Float64Array(top.length);
  const text = phrase.words.join(' ');
  const textHash = hashWord(text);
  // Words that must be whole words of the title (a prefix reading's last word is unfinished).
  const full = phrase.prefixLast ? phrase.words.slice(0, -1) : phrase.words;
  // The phrase checks below without building a padded title per hit: `' ' + title + ' '`
  // holding `' ' + text` (prefix reading) or `' ' + text + ' '`, once the title is known not
  // to start with the text (prefix) or with `text + ' '` and not to equal it (as typed).
  const spaced = ' ' + text;
  const spacedBoth = spaced + ' ';
  const textSpace = text + ' ';
  for (let i = 0; i < top.length; i++) {
    const h = top[i]!;
    const seg = h.seg;
    let b = 0;
    let titleMay = true;
    for (const w of full) if ((flags.of(w, i) & IN_TITLE) === 0) { titleMay = false; break; }
    if (titleMay) {
      const title = seg.reader.titleKey(h.id);
      if (phrase.prefixLast ? title.startsWith(text) && wordCount(title) === phrase.words.length : title === text) b = BONUS.titleExact;
      else if (title.startsWith(phrase.prefixLast ? text : textSpace)) b = BONUS.titleStart;
      else if (phrase.prefixLast ? title.includes(spaced) : title.endsWith(spaced) || title.includes(spacedBoth)) b = BONUS.titlePhrase;
    }
    // A heading equal to the query (hash of its folded words; as typed only).
    if (!phrase.prefixLast) {
      let headingMay = true;
      for (const w of full) if ((flags.of(w, i) & IN_HEADINGS) === 0) { headingMay = false; break; }
      if (headingMay) {
        const hk = seg.reader.headingKeys(h.id);
        if (hk && hk.includes(textHash)) b += BONUS.headingExact;
      }
    }
    out[i] = 1 + b;
  }
  return out;
}

/** `s.split(' ').length` without the array. */
function wordCount(s: string): number {
  let n = 1;
  for (let i = s.indexOf(' '); i >= 0; i = s.indexOf(' ', i + 1)) n++;
  return n;
}
