/**
 * The search engine: one query over one pinned index generation (search thread, synchronous,
 * no I/O beyond SQLite reads of immutable segments). {@link runQuery} runs the stages in order,
 * each in a file named after it:
 *
 * 1. parse (query.ts): words, phrases, exclusions, the last word as a prefix;
 * 2. expand (expand.ts): each significant word's alternatives in the snapshot;
 * 3. match (match.ts) and score (score.ts): per segment and word, the matching rows with their
 *    BM25F values; per row, the words combined (AND, or OR for long questions);
 * 4. page/group (group.ts): liveness, phrases, exclusions, content groups, filters; totals, group
 *    counts and facets; the hits (or the best of them);
 * 5. rerank (rerank.ts): order by relevance or a data point, then phrase and exactness bonuses
 *    for the top.
 *
 * When nothing matches every word, the last droppable words are dropped one at a time and the
 * query retried (drop-last-words fallback). Paging and grouping of the answer are in
 * results.ts.
 */
import { fold, segmentedRuns, words } from '../text/index.js';
import { inPostingsScope, type IndexSnapshot, type LiveSegment } from '../index/index.js';
import type { FilterDefinition, SearchSettings } from '../core/index.js';
import { foldedCard } from './cards.js';
import { expansionsOf, significantWords, snapshotLanguages, splitUnmatched, stopWordsFor, type Alternative, type Tolerance } from './expand.js';
import type { ActiveFilter } from './filters.js';
import { HitCollector } from './group.js';
import { fuse, HYBRID_LEXICAL_KEEP, neighbourBar, segmentMarks, segmentSims, type SemanticQuery } from './hybrid.js';
import { excludedIds, forEachMatch, phraseSets, WordMatches } from './match.js';
import { parseQuery, type ParsedQuery, type QueryWord } from './query.js';
import { orderHits, rerankTop, RERANK_TOP } from './rerank.js';
import { scoringFor, type Hit } from './score.js';

export type { Hit } from './score.js';

/** One query as the engine runs it (the search service builds it from the request). */
export interface SearchRequest {
  query: string;
  filters: ActiveFilter[];
  sort: string | null;
  sortOrder: 'ASC' | 'DESC';
  includeContentGroups: string[] | null;
  excludeContentGroups: string[] | null;
  /** Compute facets for these filter definitions (empty: none). */
  facetDefs: FilterDefinition[];
  /** The project's `search.language`, for pages without their own (language filter and facet); default `en`. */
  defaultLanguage?: string;
  /** Overrides settings.typoTolerance (suggest uses its own). */
  typoTolerance?: Tolerance;
  /** Last word as prefix (default true). */
  prefix?: boolean;
  /**
   * Only the first `topK` hits need to be in order (the rest still count in totals and
   * facets): large result sets are then ranked by a partial selection instead of a full sort.
   */
  topK?: number;
  /** Hybrid search: blend in vector neighbours (absent, ratio 0 or no vector: lexical only). */
  semantic?: SemanticQuery;
}

/** What the vector side of a hybrid query did. */
export interface SemanticOutcome {
  /** Segments with live pages searched lexically only (not yet embedded in the query's vector space). */
  lexicalOnlySegments: number;
  /** Live pages in those segments. */
  lexicalOnlyDocs: number;
  /** Results found only by their vector (above the threshold, passing filters and groups). */
  neighbours: number;
}

/** The answer of {@link runQuery}. */
export interface EngineResult {
  /** Number of matches (all of them, even when `hits` holds only the top `topK`). */
  total: number;
  /** Every match, ranked (or sorted); with `topK` and no sort, only the best ones, ranked. */
  hits: Hit[];
  perGroup: Record<string, number>;
  facets: Array<Record<string, unknown>>;
  /** Folded words that matched (for highlighting). */
  matched: Set<string>;
  /** Query words actually required after the drop-last-words fallback. */
  usedWords: string[];
  parsed: ParsedQuery;
  /** Present when the query ran hybrid. */
  semantic?: SemanticOutcome;
}

/**
 * Runs a query over a pinned snapshot. Pure with respect to its inputs; statistics are
 * snapshot-wide, so the answer does not depend on how the index is split into segments.
 *
 * @example
 * const r = runQuery(snap, settings.search, { query: 'create table', filters: [], sort: null, sortOrder: 'ASC',
 *   includeContentGroups: null, excludeContentGroups: null, facetDefs: [], topK: 10 });
 * r.hits[0]?.url; // the best page
 */
export function runQuery(snap: IndexSnapshot, settings: SearchSettings, req: SearchRequest): EngineResult {
  // One postings scope per search: decoded lists and BM25F values stay valid until it returns,
  // and their buffers are recycled after (src/index/budgets.ts, BufferPool).
  return inPostingsScope(() => runQueryInScope(snap, settings, req));
}

function runQueryInScope(snap: IndexSnapshot, settings: SearchSettings, req: SearchRequest): EngineResult {
  const languages = snapshotLanguages(snap);
  const parsed = parseQuery(req.query, stopWordsFor(settings, languages));
  // Expand.
  const significant = significantWords(parsed, settings, languages);
  const long = significant.long;
  const tolerance = req.typoTolerance ?? settings.typoTolerance;
  const slots = splitUnmatched(significant.slots, snap, settings, tolerance, req.prefix !== false, long);
  const alternatives = slots.map((w) => expansionsOf(w, snap, settings, tolerance, req.prefix !== false, long));
  // Match and score; the lazy AND walk for several words (OR queries walk every word in full).
  const scoring = scoringFor(settings.fieldWeights, snap, long);
  // The typed form's own idf in short queries only: a long question's inflections are the
  // asker's wording, not the page's.
  // Stop words of a short query count when a page holds them, without being required: among
  // pages matching the significant words, the one holding the rest of the wording wins.
  const optional = long || significant.slots.length === parsed.words.length ? [] : optionalWords(parsed, significant.slots, snap, settings);
  const matches = new WordMatches(snap, [...alternatives, ...optional], scoring, !long && slots.length + optional.length > 1, long ? undefined : slots, slots.length);
  const idfs = matches.idfs();
  // Page/group, with the drop-last-words fallback: require the first k words, k from all down
  // to 1 (phrase words and quoted words are always required).
  const mustKeep = slots.map((s) => s.phrase >= 0 || s.exactOnly);
  const keep = req.topK !== undefined && !req.sort ? Math.max(req.topK, RERANK_TOP) : 0;
  const sem = req.semantic && req.semantic.ratio > 0 && req.semantic.vector && !parsed.browse ? req.semantic : null;
  // Hybrid: more lexical hits are kept, so that fusion re-ranks a deeper lexical list, and the
  // rows each pass matched are marked (a neighbour that matched lexically is not counted twice).
  const keepLexical = sem && keep > 0 ? Math.max(keep, HYBRID_LEXICAL_KEEP) : keep;
  let marks: Uint8Array[] | null = null;
  let required = slots.length;
  let page: HitCollector;
  for (;;) {
    const use = [...slots.map((_, i) => i < required || mustKeep[i]!), ...optional.map(() => true)];
    marks = sem ? snap.segments.map(segmentMarks) : null;
    page = collect(snap, parsed, settings, req, keepLexical, matches, idfs, use, long, marks, optional.length);
    if (page.hits.length > 0 || parsed.browse) break;
    let next = required - 1;
    while (next > 0 && mustKeep[next]) next--;
    if (next <= 0 || slots.length <= 1) break;
    required = next;
    matches.scoreAllInFull();
  }
  const used = slots.filter((_, i) => i < required || mustKeep[i]!);
  const matched = new Set<string>();
  for (const [i, alts] of alternatives.entries()) if (i < required || mustKeep[i]) for (const a of alts) matched.add(a.term);
  matches.release();
  let hits = page.hits;
  let semantic: SemanticOutcome | undefined;
  if (sem) {
    // Vector neighbours: the same collector, so that totals, group counts and facets count each
    // page once; their hits are kept in a list of their own until fusion.
    const lexical = page.startSecondList(keep);
    const sims = new Map<LiveSegment, Float32Array | null>();
    semantic = { lexicalOnlySegments: 0, lexicalOnlyDocs: 0, neighbours: 0 };
    const before = page.total;
    const segSims = snap.segments.map((seg) => {
      const sim = segmentSims(seg, sem);
      sims.set(seg, sim);
      if (!sim && seg.liveCount > 0) {
        semantic!.lexicalOnlySegments++;
        semantic!.lexicalOnlyDocs += seg.liveCount;
      }
      return sim;
    });
    // The nearest pages only (HYBRID_NEIGHBOURS), chosen before filters and groups.
    const bar = neighbourBar(segSims, marks!, sem.threshold);
    snap.segments.forEach((seg, si) => {
      const sim = segSims[si];
      if (!sim) return;
      const mark = marks![si]!;
      const phrases = parsed.phrases.length ? phraseSets(seg, parsed.phrases) : [];
      const excluded = parsed.excludes.length || parsed.excludedPhrases.length ? excludedIds(seg, parsed, settings.language) : null;
      page.segment(seg, phrases, excluded, (consider) => {
        for (let id = 0; id < sim.length; id++) {
          const s = sim[id]!;
          if (s >= bar && mark[id] !== 1) consider(id, s, 0);
        }
      });
    });
    semantic.neighbours = page.total - before;
    hits = fuse(lexical, page.hits, sims, sem);
  }
  // Rerank.
  orderHits(hits, req, keep > 0);
  if (!req.sort && !parsed.browse && hits.length > 1) rerankTop(hits, parsed, slots, alternatives, snap);
  if (!req.sort && !parsed.browse) contiguousFirst(hits, cjkRuns(parsed.raw));
  return {
    total: page.total,
    hits,
    perGroup: page.perGroup,
    facets: page.facets.map((f) => f.out()).filter((x): x is Record<string, unknown> => x !== null),
    matched,
    usedWords: used.map((s) => s.word),
    parsed,
    ...(semantic ? { semantic } : {}),
  };
}

/**
 * The runs of the query, in scripts without spaces, that hold more than one word (folded;
 * phrases and exclusions left out): what {@link contiguousFirst} checks.
 */
function cjkRuns(raw: string): string[] {
  const out: string[] = [];
  const plain = raw.replace(/"[^"]*"?/g, ' ');
  for (const token of plain.split(/\s+/)) {
    if (token.startsWith('-')) continue;
    for (const run of segmentedRuns(fold(token))) if (words(run).length > 1) out.push(run);
  }
  return out;
}

/** Hits looked at by {@link contiguousFirst}. */
const CONTIGUOUS_TOP = 30;

/**
 * A run of text in a script without spaces is matched word by word (its segmenter words, and
 * their halves when splitUnmatched cut one), each anywhere in a page; among the top hits, pages
 * holding every such run as typed, uninterrupted (in the title or the card's content), go first,
 * in their order. Postings keep no positions, so this is the adjacency check, done on the few
 * pages a visitor sees; their folded texts are kept with the thread's result cards (cards.ts).
 */
function contiguousFirst(hits: Hit[], split: string[]): void {
  const n = Math.min(hits.length, CONTIGUOUS_TOP);
  if (n < 2 || split.length === 0) return;
  const top = hits.slice(0, n);
  const holds = top.map((h) => {
    // The title, read without the content, settles the pages whose title holds every run; a
    // run has no line break, so it is in the card when it is in the title or in the content.
    const title = foldedCard(h, false).title;
    if (split.every((w) => title.includes(w))) return true;
    const content = foldedCard(h, true).content;
    return split.every((w) => title.includes(w) || content.includes(w));
  });
  const ordered = [...top.filter((_, i) => holds[i]), ...top.filter((_, i) => !holds[i])];
  for (let i = 0; i < n; i++) hits[i] = ordered[i]!;
}

/**
 * The alternatives of each stop word of `parsed` left out of `slots`, for optional scoring: its
 * exact form (with completions and same-stem words when it is the last word read as a prefix:
 * `unique` is still being typed when a page says `uniquement`); not for a phrase word, nor a
 * word the index does not hold in any such form.
 */
function optionalWords(parsed: ParsedQuery, slots: QueryWord[], snap: IndexSnapshot, settings: SearchSettings): Alternative[][] {
  const out: Alternative[][] = [];
  const seen = new Set<string>();
  for (const w of parsed.words) {
    if (slots.includes(w) || w.phrase >= 0 || seen.has(w.word)) continue;
    seen.add(w.word);
    const alts = expansionsOf({ word: w.word, prefix: w.prefix, exactOnly: !w.prefix, phrase: -1 }, snap, settings, 'off', w.prefix, false);
    if (alts.length) out.push(alts);
  }
  return out;
}

/** One pass of page/group over the matches of the words in `use` (the last `optional` of them optional), segment by segment. */
function collect(
  snap: IndexSnapshot, parsed: ParsedQuery, settings: SearchSettings, req: SearchRequest, keep: number,
  matches: WordMatches, idfs: number[], use: boolean[], orMode: boolean, marks: Uint8Array[] | null, optional: number,
): HitCollector {
  const page = new HitCollector(req, keep);
  const useIdfs = idfs.filter((_, i) => use[i]);
  const requiredCount = use.slice(0, use.length - optional).filter(Boolean).length;
  snap.segments.forEach((seg, si) => {
    const maps = matches.maps[si]!.filter((_, i) => use[i]);
    const phrases = parsed.phrases.length ? phraseSets(seg, parsed.phrases) : [];
    const excluded = parsed.excludes.length || parsed.excludedPhrases.length ? excludedIds(seg, parsed, settings.language) : null;
    const rows = seg.reader.docValues().urls.length;
    const mark = marks?.[si];
    page.segment(seg, phrases, excluded, (consider) =>
      forEachMatch(maps, useIdfs, orMode, parsed.browse, rows, mark ? (id, score, typos) => ((mark[id] = 1), consider(id, score, typos)) : consider, requiredCount),
    );
  });
  return page;
}
