/**
 * Similar pages (`GET /sites/similar`): the pages nearest to one indexed page, by the cosine
 * similarity of their stored vectors to its stored vector, for "related pages" boxes.
 *
 * The page's own vector is the query vector, so nothing is embedded at request time and the
 * answer is the same on a primary and on a search node. Neighbours are the live searchable
 * rows at or above the project's similarity threshold (the one hybrid search uses), at most the
 * nearest `HYBRID_NEIGHBOURS` (100) of them as in hybrid search (src/search/hybrid.ts), the page itself left out; they
 * go through the same page/group stage as search results (content groups,
 * filters, facets, exact totals) and are ranked by similarity × the page's boost, or sorted by a
 * data point. Similarities come from {@link segmentSims} over each segment's vectors, the
 * page's vector is the same whatever segment holds it, so the ranking does not depend on how
 * the index is split.
 *
 * Search thread (pure over the pinned snapshot), except {@link similarSemantic}, which the
 * search service calls on the main thread.
 */
import { AppError, type EmbedderSpec, type SemanticSettings } from '../core/index.js';
import type { IndexSnapshot, LiveSegment } from '../index/index.js';
import { BUILTIN_THRESHOLD, HTTP_THRESHOLD } from '../text/index.js';
import type { EngineResult, SearchRequest, SemanticOutcome } from './engine.js';
import { HitCollector } from './group.js';
import { neighbourBar, segmentSims, type SemanticQuery } from './hybrid.js';
import { parseQuery } from './query.js';
import { orderHits } from './rerank.js';

/**
 * A similar-pages request as the engine runs it (built by results.ts from the parameters): the
 * filtering, grouping, facet and order fields of a search, a page instead of a query.
 */
export interface SimilarRequest
  extends Pick<SearchRequest, 'filters' | 'sort' | 'sortOrder' | 'includeContentGroups' | 'excludeContentGroups' | 'facetDefs' | 'defaultLanguage' | 'topK'> {
  /** The page whose neighbours are wanted (canonical URL, as indexed). */
  url: string;
  /** The project's vector space and threshold (`vector` and `ratio` are not read). */
  semantic: SemanticQuery;
}

/** {@link runSimilar}'s answer: an engine result, and why it is empty when the page has no vector. */
export interface SimilarResult extends EngineResult {
  semantic: SemanticOutcome;
  /** Set when the page has no vector in the project's vector space (the answer is then empty). */
  noVector?: string;
}

/**
 * The neighbours of `req.url` over a pinned snapshot. Throws 404 `not_found` (field `url`) when
 * the URL is not a live searchable page of the snapshot.
 *
 * @example
 * const r = runSimilar(snap, { url: 'https://docs.test/rollback', filters: [], sort: null, sortOrder: 'ASC',
 *   includeContentGroups: null, excludeContentGroups: null, facetDefs: [], topK: 5,
 *   semantic: { ratio: 1, fp: 'builtin:sg100:1', threshold: 0.55, vector: null } });
 * r.hits.map((h) => h.url); // the five nearest pages
 */
export function runSimilar(snap: IndexSnapshot, req: SimilarRequest): SimilarResult {
  const self = locate(snap, req.url);
  if (!self) throw new AppError('not_found', `No searchable page with url "${req.url}" in this project's index (give the URL as it was indexed).`, 'url');
  const outcome: SemanticOutcome = { lexicalOnlySegments: 0, lexicalOnlyDocs: 0, neighbours: 0 };
  const fp = req.semantic.fp;
  const vs = self.seg.reader.vectors(fp);
  const empty = (why: string): SimilarResult => ({ ...emptyResult(), semantic: outcome, noVector: why });
  if (!vs) {
    countLexicalOnly(snap, fp, outcome);
    return empty(`the page has no vector yet: its segment is not embedded with the project's embedder (${fp}); it will be once re-embedding reaches it`);
  }
  if (vs.dims === 0 || !vs.has[self.id]) {
    countLexicalOnly(snap, fp, outcome);
    return empty('the page has no vector: the embedder found no known word in it, or failed when it was indexed (it is embedded again when its segment is merged)');
  }
  const q: SemanticQuery = { ...req.semantic, ratio: 1, vector: vs.data.slice(self.id * vs.dims, (self.id + 1) * vs.dims) };
  const keep = req.topK !== undefined && !req.sort ? req.topK : 0;
  const page = new HitCollector(req, keep);
  const sims = snap.segments.map((seg) => {
    const sim = segmentSims(seg, q);
    if (!sim && seg.liveCount > 0) {
      outcome.lexicalOnlySegments++;
      outcome.lexicalOnlyDocs += seg.liveCount;
    }
    return sim;
  });
  // The page itself is marked, so it is neither a neighbour nor counted for the bar.
  const marks = snap.segments.map((seg) => new Uint8Array(seg === self.seg ? seg.dead.length : 0));
  marks[snap.segments.indexOf(self.seg)]![self.id] = 1;
  // As in hybrid search: the nearest HYBRID_NEIGHBOURS above the threshold, chosen before filters.
  const bar = neighbourBar(sims, marks, q.threshold);
  snap.segments.forEach((seg, si) => {
    const sim = sims[si];
    if (!sim) return;
    const skip = seg === self.seg ? self.id : -1;
    page.segment(seg, [], null, (consider) => {
      for (let id = 0; id < sim.length; id++) {
        const s = sim[id]!;
        if (s >= bar && id !== skip) consider(id, s, 0);
      }
    });
  });
  outcome.neighbours = page.total;
  orderHits(page.hits, req, keep > 0);
  return {
    total: page.total,
    hits: page.hits,
    perGroup: page.perGroup,
    facets: page.facets.map((f) => f.out()).filter((x): x is Record<string, unknown> => x !== null),
    matched: new Set(),
    usedWords: [],
    parsed: parseQuery(''),
    semantic: outcome,
  };
}

/** The live status-200 row of `url` in the snapshot, or null. */
function locate(snap: IndexSnapshot, url: string): { seg: LiveSegment; id: number } | null {
  for (const seg of snap.segments) {
    const id = seg.reader.idOf(url);
    if (id !== null && seg.dead[id] !== 1 && seg.reader.docValues().status[id] === 200) return { seg, id };
  }
  return null;
}

function countLexicalOnly(snap: IndexSnapshot, fp: string, out: SemanticOutcome): void {
  for (const seg of snap.segments) {
    if (seg.liveCount > 0 && !seg.reader.vectors(fp)) {
      out.lexicalOnlySegments++;
      out.lexicalOnlyDocs += seg.liveCount;
    }
  }
}

function emptyResult(): EngineResult {
  return { total: 0, hits: [], perGroup: {}, facets: [], matched: new Set(), usedWords: [], parsed: parseQuery('') };
}

/** The vector-space name a project without an embedder answers with (no segment carries it). */
export const NO_EMBEDDER = 'none';

/**
 * The semantic part of a similar-pages request for a project (main thread): its vector space
 * and threshold, or, when the project has no embedder, a space no segment is in and the reason.
 *
 * @example
 * const { semantic, error } = similarSemantic(embedderOf(siteId), settings.search.semantic);
 */
export function similarSemantic(spec: EmbedderSpec | null, settings: SemanticSettings | undefined): { semantic: SemanticQuery; error?: string } {
  if (!spec || !settings) {
    return {
      semantic: { ratio: 1, fp: NO_EMBEDDER, threshold: 1, vector: null },
      error: 'similar pages need page vectors, and this project has no embedder (search.semantic.embedder is "none", or the built-in word vectors are not installed)',
    };
  }
  const threshold = settings.threshold ?? (spec.kind === 'builtin' ? BUILTIN_THRESHOLD : HTTP_THRESHOLD);
  return { semantic: { ratio: 1, fp: spec.fp, threshold, vector: null } };
}
