/**
 * Page/group, the engine's side of the result page: each matched row becomes a hit or is
 * turned away (tombstoned, not status 200, excluded, missing a phrase, outside the requested
 * content groups, failing a filter), and the page's totals are counted on the way: the number
 * of matches, matches per content group, and facets. Paging and grouping of the ranked hits
 * into the answer is src/search/results.ts's.
 *
 * Input: per segment, the candidate rows with score and typo count (match), the phrase and
 * exclusion sets, the request's filters, content groups and facet definitions.
 * Output: a {@link HitCollector}: hits (all, or with `keep` only the best `keep` by relevance,
 * unordered), `total`, `perGroup`, facets.
 * Invariants: totals, group counts and facets count every accepted match, kept or not; a row
 * failing exactly one filter still counts in that filter's facet (so a facet shows what
 * removing its own filter would add); group counts are added in first-seen order, as the
 * response's key order shows them.
 */
import type { IndexSnapshot, LiveSegment } from '../index/index.js';
import type { FilterDefinition } from '../core/index.js';
import { type ActiveFilter, Facet, passes } from './filters.js';
import type { Consider } from './match.js';
import { heapDown, heapUp, type Hit } from './score.js';
import { unescapeHtml } from './snippet.js';

/**
 * A content group's name as reported: '_' for pages in no group.
 *
 * @example groupName('') // '_'
 */
export function groupName(g: string): string {
  return g === '' ? '_' : g;
}

/**
 * An empty object for keys that are content-group names: without a prototype, so a group named
 * `__proto__` or `constructor` is a key like any other (on `{}` the first would set the
 * prototype and the second read `Object`). JSON.stringify writes it like any object.
 *
 * @example const perGroup = groupRecord<number>(); perGroup['__proto__'] = 1;
 */
export function groupRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * The content groups a request names (`includeContentGroups`, `excludeContentGroups`) as a set
 * of group names to test against, or null for no restriction: not given, or an empty list (an
 * empty `includeContentGroups` means every group, as when it is not given). A name is taken as
 * given and also HTML-unescaped: with `highlightQueryTerms=true` answers show group names
 * escaped (`R&amp;D`), and a client may send back either form.
 *
 * @example groupSet(['R&amp;D']) // Set {'R&amp;D', 'R&D'}
 * @example groupSet([]) // null
 */
export function groupSet(names: string[] | null): Set<string> | null {
  if (names === null || names.length === 0) return null;
  const set = new Set<string>();
  for (const n of names) {
    set.add(n);
    set.add(unescapeHtml(n));
  }
  return set;
}

/** What the collector reads of a search request. */
export interface GroupRequest {
  filters: ActiveFilter[];
  includeContentGroups: string[] | null;
  excludeContentGroups: string[] | null;
  /** Compute facets for these filter definitions (empty: none). */
  facetDefs: FilterDefinition[];
  /** The project's `search.language`: the language of pages without their own (language filter and facet); default `en`. */
  defaultLanguage?: string;
}

/** Each row's group as an index into the distinct group names (as reported), per doc values. */
interface GroupIndex {
  ids: Int32Array;
  names: string[];
}
const groupIndexes = new WeakMap<object, GroupIndex>();

function groupIndex(dv: { group: string[] }): GroupIndex {
  let g = groupIndexes.get(dv);
  if (!g) {
    const byName = new Map<string, number>();
    const names: string[] = [];
    const ids = new Int32Array(dv.group.length);
    for (let id = 0; id < dv.group.length; id++) {
      const name = groupName(dv.group[id] ?? '');
      let k = byName.get(name);
      if (k === undefined) {
        k = names.push(name) - 1;
        byName.set(name, k);
      }
      ids[id] = k;
    }
    groupIndexes.set(dv, (g = { ids, names }));
  }
  return g;
}

/**
 * Each row's boost where the row is live in this generation and has status 200, NaN elsewhere:
 * the plain path's one read per match instead of three (tombstone, status, boost; random reads
 * into row-sized arrays are most of that path's cost at ~100k rows). Cached per tombstone
 * bitmap (one segment in one generation) and doc values.
 */
const liveBoostCache = new WeakMap<Uint8Array, WeakMap<object, Float64Array>>();

function liveBoosts(dead: Uint8Array, dv: { status: Int32Array; boost: Float64Array }): Float64Array {
  let byDv = liveBoostCache.get(dead);
  if (!byDv) liveBoostCache.set(dead, (byDv = new WeakMap()));
  let lb = byDv.get(dv);
  if (!lb) {
    lb = new Float64Array(dv.boost.length);
    for (let id = 0; id < lb.length; id++) lb[id] = dead[id] !== 1 && dv.status[id] === 200 ? dv.boost[id]! : NaN;
    byDv.set(dv, lb);
  }
  return lb;
}

/**
 * Collects one pass over a query's matches: hits, total, matches per group and facets. With
 * `keep` > 0 only the best `keep` hits are kept while collecting (a bounded heap, worst on top),
 * so large result sets allocate no object per match.
 */
export class HitCollector {
  /** The kept hits (see {@link startSecondList}). */
  hits: Hit[] = [];
  total = 0;
  readonly perGroup: Record<string, number> = groupRecord();
  readonly facets: Facet[];
  private readonly facetIndex: Map<string, number>;
  private readonly includeGroups: Set<string> | null;
  private readonly excludeGroups: Set<string> | null;

  constructor(private readonly req: GroupRequest, private keep: number) {
    this.facets = req.facetDefs.map((d) => new Facet(d));
    this.facetIndex = new Map(req.facetDefs.map((d, i) => [d.id, i]));
    this.includeGroups = groupSet(req.includeContentGroups);
    this.excludeGroups = groupSet(req.excludeContentGroups);
  }

  /**
   * Collects the matches of one segment: `visit` calls the function it is handed once per
   * candidate row (row id, score before boost, typo-matched words). `phrases`: row sets the
   * row must be in; `excluded`: rows it must not be.
   */
  segment(seg: LiveSegment, phrases: Array<Set<number>>, excluded: Set<number> | null, visit: (consider: Consider) => void): void {
    const dv = seg.reader.docValues();
    const req = this.req;
    const { facets, includeGroups, excludeGroups } = this;
    const defaultLanguage = req.defaultLanguage ?? 'en';
    // Without phrases, exclusions, group lists, filters or facets (the common request), a
    // match only needs liveness, its group's count and the top-k heap: groups are counted by
    // row group index into a typed array and added to `perGroup` at the end of the segment in
    // first-seen order (the order the keys would have been inserted in).
    if (phrases.length === 0 && !excluded && !includeGroups && !excludeGroups && req.filters.length === 0 && facets.length === 0) {
      const gi = groupIndex(dv);
      const groupCounts = new Int32Array(gi.names.length);
      const groupOrder: number[] = [];
      const lb = liveBoosts(seg.dead, dv);
      visit((id, score, typos) => {
        // One read for liveness, status and boost (NaN: not a live 200 row).
        const boost = lb[id]!;
        if (boost !== boost) return;
        const g = gi.ids[id]!;
        if (groupCounts[g]++ === 0) groupOrder.push(g);
        this.total++;
        this.offer(seg, id, dv.urls[id]!, gi.names[g]!, score * boost, typos);
      });
      for (const g of groupOrder) {
        const name = gi.names[g]!;
        this.perGroup[name] = (this.perGroup[name] ?? 0) + groupCounts[g]!;
      }
      return;
    }
    visit((id, score, typos) => {
      if (seg.dead[id] === 1 || dv.status[id] !== 200) return;
      if (excluded?.has(id)) return;
      for (const ph of phrases) if (!ph.has(id)) return;
      const group = groupName(dv.group[id]!);
      if (includeGroups && !includeGroups.has(group)) return;
      if (excludeGroups && excludeGroups.has(group)) return;
      // A document failing exactly one filter still counts for that filter's facet.
      let failed = -1;
      let failures = 0;
      const fv = dv.filters[id] ?? null;
      const lang = dv.language[id] ?? defaultLanguage;
      for (let fi = 0; fi < req.filters.length; fi++) {
        if (!passes(fv, req.filters[fi]!, lang)) {
          failures++;
          failed = fi;
          if (failures > 1) break;
        }
      }
      if (failures === 1) {
        const idx = this.facetIndex.get(req.filters[failed]!.key);
        if (idx !== undefined) facets[idx]!.add(fv, lang);
        return;
      }
      if (failures > 1) return;
      for (const f of facets) f.add(fv, lang);
      this.perGroup[group] = (this.perGroup[group] ?? 0) + 1;
      this.total++;
      this.offer(seg, id, dv.urls[id]!, group, score * dv.boost[id]!, typos);
    });
  }

  /**
   * Starts a second list of hits, kept (`keep`, 0: all) apart from the first: later matches
   * count in the same totals, group counts and facets. Hybrid search collects its vector
   * neighbours this way, so a page is counted once whichever list finds it. Returns the first list.
   */
  startSecondList(keep: number): Hit[] {
    const first = this.hits;
    this.hits = [];
    this.keep = keep;
    return first;
  }

  /** Adds a hit, or with `keep`, keeps it when it is better than the worst kept hit. */
  private offer(seg: LiveSegment, id: number, url: string, group: string, score: number, typos: number): void {
    const hits = this.hits;
    if (this.keep === 0) {
      hits.push({ seg, id, url, group, score, typos });
      return;
    }
    if (hits.length < this.keep) {
      hits.push({ seg, id, url, group, score, typos });
      heapUp(hits, hits.length - 1);
      return;
    }
    const worst = hits[0]!;
    if (typos > worst.typos || (typos === worst.typos && score < worst.score)) return;
    // Better than the worst kept hit? (the order of byRelevance)
    const c = typos - worst.typos || worst.score - score || (url < worst.url ? -1 : url > worst.url ? 1 : 0);
    if (c < 0) {
      hits[0] = { seg, id, url, group, score, typos };
      heapDown(hits, 0);
    }
  }
}

/**
 * Data-point keys present on live searchable pages of the snapshot (the default sorting
 * options), sorted.
 */
export function dataPointKeys(snap: IndexSnapshot): string[] {
  const keys = new Set<string>();
  for (const s of snap.segments) {
    const dv = s.reader.docValues();
    dv.dataPoints.forEach((dps, id) => {
      if (dps && s.dead[id] !== 1 && dv.status[id] === 200) for (const d of dps) keys.add(d.key);
    });
  }
  return [...keys].sort();
}

/** Distinct own languages of a segment's rows (null: rows in the project default), per doc values. */
const rowLanguageSets = new WeakMap<object, ReadonlySet<string | null>>();

/**
 * Whether the snapshot's rows are in more than one language, each row's own language or else
 * `defaultLanguage`: the language facet is computed only then.
 *
 * @example if (hasSeveralLanguages(snap, settings.search.language)) facetDefs.push(LANGUAGE_FACET);
 */
export function hasSeveralLanguages(snap: IndexSnapshot, defaultLanguage: string): boolean {
  const seen = new Set<string>();
  for (const s of snap.segments) {
    const dv = s.reader.docValues();
    let set = rowLanguageSets.get(dv);
    if (!set) rowLanguageSets.set(dv, (set = new Set(dv.language)));
    for (const l of set) {
      seen.add(l ?? defaultLanguage);
      if (seen.size > 1) return true;
    }
  }
  return false;
}
