/**
 * The answer of one search over a pinned snapshot, on the calling thread (a search thread, or
 * the main thread when `SITESIFT_SEARCH_THREADS` is 0): runs the engine, applies the result
 * mappings, pages, groups and renders the results. Pure with respect to the snapshot; callers
 * pin and release it (`SearchService` in src/search/service.ts does that for the routes).
 */
import type { IndexSnapshot } from '../index/index.js';
import { type DataPoint, type FilterValue, type ResultMapping, type Settings, safeImageUrl } from '../core/index.js';
import { compilePattern } from '../text/index.js';
import { cardOf } from './cards.js';
import { runQuery, type Hit } from './engine.js';
import type { SemanticQuery } from './hybrid.js';
import type { SemanticMeta } from './semantic.js';
import { runSimilar } from './similar.js';
import { dataPointKeys, groupName, groupRecord, groupSet, hasSeveralLanguages } from './group.js';
import { echoFilter, LANGUAGE_FACET, passes, type ActiveFilter } from './filters.js';
import { normaliseQuery } from './query.js';
import { escapeHtml, highlight, snippet } from './snippet.js';

export interface SearchParams {
  query: string;
  filters: ActiveFilter[];
  filterOptions: boolean;
  sort: string | null;
  sortOrder: 'ASC' | 'DESC';
  offset: number;
  limit: number;
  includeContent: boolean;
  highlightQueryTerms: boolean;
  includeContentGroups: string[] | null;
  excludeContentGroups: string[] | null;
  groupResults: boolean;
  limitPerGroup: boolean;
  /** Suggest: its own typo setting; no result mappings other than custom/pin/hide. */
  typoTolerance?: 'default' | 'strict' | 'off';
  /** Snippet length in characters (default 240). */
  snippetSize?: number;
  /** Requested blend of vector ranking (0–1); absent: the project's `search.semantic.semanticRatio`. */
  semanticRatio?: number;
  /** Resolved by the search service (src/search/semantic.ts): the query vector, ratio and threshold. */
  semantic?: SemanticQuery;
  /** The embedder's failure for this query (it then ran lexically). */
  semanticError?: string;
  /**
   * `GET /sites/similar`: rank the neighbours of this page's vector instead of matching `query`
   * (src/search/similar.ts); `semantic` names the vector space. Result mappings do not apply
   * (they are triggered by query text).
   */
  similarTo?: string;
}

export interface SearchResult {
  name: string;
  /** An http(s) URL or a relative reference; `""` when the page has none. */
  image: string;
  link: string;
  type: string;
  dataPoints: DataPoint[];
  content?: string;
  html?: string;
}

export interface SearchResponse {
  status: 'success';
  query: string;
  suggests: Record<string, SearchResult[]>;
  totalResults: number;
  totalResultsPerContentGroup: Record<string, number>;
  sortingOptions: string[];
  sorting: string;
  filterOptions: Array<Record<string, unknown>>;
  activeFilterOptions: Array<Record<string, unknown>>;
  redirect?: string;
  /** Present when the project has an embedder and the query asked for a blend above 0. */
  semantic?: SemanticMeta;
}

const sortKeyCache = new WeakMap<object, { generation: number; keys: string[] }>();

/** Sorting options: data points marked sortable in settings, else every data-point key indexed. */
export function sortingOptions(settings: Settings, snap: IndexSnapshot, cacheOwner: object): string[] {
  if (settings.dataPoints.length > 0) return settings.dataPoints.filter((d) => d.sortable).map((d) => d.key);
  const c = sortKeyCache.get(cacheOwner);
  if (c && c.generation === snap.generation) return c.keys;
  const keys = dataPointKeys(snap);
  sortKeyCache.set(cacheOwner, { generation: snap.generation, keys });
  return keys;
}

function triggers(m: ResultMapping, normalised: string): boolean {
  const v = m.trigger.value;
  switch (m.trigger.type) {
    case 'equals':
      return normaliseQuery(v) === normalised;
    case 'contains': {
      const nv = normaliseQuery(v);
      return nv !== '' && ` ${normalised} `.includes(` ${nv} `);
    }
    case 'regex': {
      const re = compilePattern(v);
      if (!re) return false;
      re.lastIndex = 0;
      return re.test(normalised);
    }
  }
}

/** Live searchable row of `url` in the snapshot, if any and if `admits` its group and filter values. */
function findLive(snap: IndexSnapshot, url: string, defaultLanguage: string, admits: (group: string, filterValues: FilterValue[] | null, language: string | null) => boolean): Hit | null {
  for (const seg of snap.segments) {
    const dv = seg.reader.docValues();
    const id = seg.reader.idOf(url);
    if (id !== null && seg.dead[id] !== 1 && dv.status[id] === 200) {
      const group = groupName(dv.group[id]!);
      return admits(group, dv.filters[id] ?? null, dv.language[id] ?? defaultLanguage) ? { seg, id, url, group, score: 0, typos: 0 } : null;
    }
  }
  return null;
}

/** A custom result of a result mapping, placed in the ranked list like a page. */
interface Custom {
  custom: true;
  html: string;
  /** 1-based position in its group (0 is also first). */
  position: number;
  group: string;
}

/**
 * The ranked list with the custom results in it. Grouped, a custom result goes before the
 * `position`-th result of its group (after the group's last result when it has fewer; at
 * `position` of the whole list when the group has none), so it shows once, on the page and in
 * the group where its position falls. Ungrouped (`groupResults=false`, one list) it goes at
 * `position` of the whole list. Customs are placed in mapping order, each counting the ones
 * placed before.
 */
function placeCustoms(hits: Hit[], customs: Custom[], grouped: boolean): Array<Hit | Custom> {
  const list: Array<Hit | Custom> = hits.slice();
  for (const c of customs) {
    const want = Math.max(1, c.position);
    let at = -1;
    if (grouped) {
      let seen = 0;
      let last = -1;
      for (let i = 0; i < list.length; i++) {
        if (list[i]!.group !== c.group) continue;
        if (++seen === want) {
          at = i;
          break;
        }
        last = i;
      }
      if (at < 0 && last >= 0) at = last + 1;
    }
    if (at < 0) at = Math.min(list.length, want - 1);
    list.splice(at, 0, c);
  }
  return list;
}

/** The same object with HTML-escaped keys (content-group names), in the same order. */
function escapeKeys<T>(o: Record<string, T>): Record<string, T> {
  const out = groupRecord<T>();
  for (const [k, v] of Object.entries(o)) out[escapeHtml(k)] = v;
  return out;
}

/** A facet with its display names escaped; `key` and `values[].value` are what requests send back. */
function escapeFacet(f: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...f, name: escapeHtml(String(f.name)) };
  if (Array.isArray(f.values)) {
    out.values = (f.values as Array<Record<string, unknown>>).map((v) => ({ ...v, name: escapeHtml(String(v.name)) }));
  }
  return out;
}

/**
 * Runs one search over a pinned snapshot (the caller acquires and releases it).
 * `cacheOwner` keys per-project caches (the ProjectIndex object).
 *
 * @example
 * const snap = index.acquire();
 * try {
 *   const body = search(snap, settings, params, index);
 * } finally {
 *   snap.release();
 * }
 */
export function search(snap: IndexSnapshot, settings: Settings, p: SearchParams, cacheOwner: object): SearchResponse {
  const sortOpts = sortingOptions(settings, snap, cacheOwner);
  const similar = p.similarTo !== undefined && p.semantic ? { url: p.similarTo, semantic: p.semantic } : null;
  const mappings = settings.search.resultMappings;
  let triggered: ResultMapping[] = [];
  if (!similar && mappings.length > 0) {
    const normalised = normaliseQuery(p.query);
    triggered = mappings.filter((m) => triggers(m, normalised));
  }
  // Pins, hides and custom results need every match (a pinned or hidden page may rank anywhere,
  // a custom result goes before the n-th result of its group); otherwise only the top of the
  // ranking is materialised.
  const needsAll = p.limitPerGroup || triggered.some((m) => m.action.type !== 'redirect');
  const facetDefs = !p.filterOptions ? [] : hasSeveralLanguages(snap, settings.search.language) ? [...settings.filters, LANGUAGE_FACET] : settings.filters;
  const topK = needsAll ? undefined : p.offset + p.limit;
  // Object literals rather than spreads of a common part: this runs once per search.
  const res = similar
    ? runSimilar(snap, {
        filters: p.filters, sort: p.sort, sortOrder: p.sortOrder, includeContentGroups: p.includeContentGroups, excludeContentGroups: p.excludeContentGroups,
        facetDefs, defaultLanguage: settings.search.language, topK, url: similar.url, semantic: similar.semantic,
      })
    : runQuery(snap, settings.search, {
        filters: p.filters, sort: p.sort, sortOrder: p.sortOrder, includeContentGroups: p.includeContentGroups, excludeContentGroups: p.excludeContentGroups,
        facetDefs, defaultLanguage: settings.search.language, topK, query: p.query, typoTolerance: p.typoTolerance, semantic: p.semantic,
      });

  // Result mappings (Result Manager). A mapping's result is a result like any other: it obeys
  // the request's content groups and filters, and counts once in the totals.
  let hits = res.hits;
  // Matches not materialised in `hits` (topK) still count.
  const unlisted = res.total - res.hits.length;
  const perGroup = Object.assign(groupRecord<number>(), res.perGroup);
  const include = groupSet(p.includeContentGroups);
  const exclude = groupSet(p.excludeContentGroups);
  const admits = (group: string, filterValues: FilterValue[] | null, language: string | null): boolean =>
    (!include || include.has(group)) && !exclude?.has(group) && p.filters.every((f) => passes(filterValues, f, language));
  // Hidden pages never appear, whichever mapping comes first.
  const hidden = new Set<string>();
  for (const m of triggered) if (m.action.type === 'hide') for (const u of m.action.urls) hidden.add(u);
  if (hidden.size > 0) {
    hits = hits.filter((h) => {
      if (!hidden.has(h.url)) return true;
      perGroup[h.group]!--;
      return false;
    });
  }
  let redirect: string | undefined;
  const customs: Custom[] = [];
  for (const m of triggered) {
    const a = m.action;
    if (a.type === 'redirect') redirect ??= a.url;
    else if (a.type === 'pin') {
      // In the mapping's order before the rest; a pinned page that does not match the query is
      // added (and counted) when the request's groups and filters admit it.
      const pinned: Hit[] = [];
      for (const url of a.urls) {
        if (hidden.has(url) || pinned.some((x) => x.url === url)) continue;
        const existing = hits.find((h) => h.url === url);
        if (existing) {
          hits = hits.filter((h) => h !== existing);
          pinned.push(existing);
          continue;
        }
        const live = findLive(snap, url, settings.search.language, admits);
        if (live) {
          pinned.push(live);
          perGroup[live.group] = (perGroup[live.group] ?? 0) + 1;
        }
      }
      hits = [...pinned, ...hits];
    } else if (a.type === 'custom') {
      // A custom result has no filter values or language: like a page without them, no filter admits it.
      const group = groupName(a.contentGroup ?? '');
      if (admits(group, null, null)) customs.push({ custom: true, html: a.html, position: a.position, group });
    }
  }
  for (const g of Object.keys(perGroup)) if (perGroup[g]! <= 0) delete perGroup[g];
  const entries = customs.length ? placeCustoms(hits, customs, p.groupResults) : hits;
  for (const c of customs) perGroup[c.group] = (perGroup[c.group] ?? 0) + 1;
  const total = entries.length + unlisted;

  // With highlighting the answer is HTML: every text field is escaped (docs/API.md lists them).
  const html = p.highlightQueryTerms;
  const text = html ? escapeHtml : (s: string) => s;
  const render = (x: Hit | Custom): SearchResult => {
    if ('custom' in x) return { name: '', image: '', link: '', type: 'custom', dataPoints: [], html: x.html };
    const e = cardOf(x, p.includeContent);
    const r: SearchResult = {
      name: html ? highlight(e.title, res.matched, e) : e.title,
      // Checked again here: pages stored before ingest checked image URLs.
      image: (e.imageUrl && safeImageUrl(e.imageUrl)) || '',
      link: e.url,
      type: e.documentType,
      dataPoints: e.dataPoints.map((d) => ({ key: text(d.key), value: text(d.value), show: d.show })),
    };
    if (p.includeContent) {
      const text = e.content || e.description || '';
      r.content = snippet(text, res.matched, { highlight: p.highlightQueryTerms, size: p.snippetSize, memo: e });
    }
    return r;
  };

  const suggests = groupRecord<SearchResult[]>();
  let totalPerGroup: Record<string, number>;
  if (!p.groupResults) {
    suggests._ = entries.slice(p.offset, p.offset + p.limit).map(render);
    totalPerGroup = groupRecord();
    if (total) totalPerGroup._ = total;
  } else if (p.limitPerGroup) {
    const byGroup = new Map<string, Array<Hit | Custom>>();
    for (const h of entries) {
      let l = byGroup.get(h.group);
      if (!l) byGroup.set(h.group, (l = []));
      l.push(h);
    }
    for (const [g, l] of byGroup) {
      const page = l.slice(p.offset, p.offset + p.limit);
      if (page.length) suggests[g] = page.map(render);
    }
    totalPerGroup = perGroup;
  } else {
    for (const h of entries.slice(p.offset, p.offset + p.limit)) (suggests[h.group] ??= []).push(render(h));
    totalPerGroup = perGroup;
  }

  const out: SearchResponse = {
    status: 'success',
    query: text(p.query),
    suggests: html ? escapeKeys(suggests) : suggests,
    totalResults: total,
    totalResultsPerContentGroup: html ? escapeKeys(totalPerGroup) : totalPerGroup,
    sortingOptions: sortOpts,
    sorting: p.sort ?? '',
    filterOptions: !p.filterOptions ? [] : html ? res.facets.map(escapeFacet) : res.facets,
    activeFilterOptions: p.filters.map(echoFilter),
  };
  if (redirect) out.redirect = redirect;
  if (p.semantic) {
    out.semantic = { ratio: p.semantic.ratio, embedder: p.semantic.fp, lexicalOnlyDocuments: res.semantic?.lexicalOnlyDocs ?? 0 };
    const noVector = 'noVector' in res ? (res.noVector as string | undefined) : undefined;
    if (p.semanticError) out.semantic.error = p.semanticError;
    else if (noVector) out.semantic.error = noVector;
    else if (!p.semantic.vector && !similar) out.semantic.error = 'no word of the query is known to the embedder';
  }
  return out;
}

