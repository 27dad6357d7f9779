/**
 * The answer of one search over a pinned snapshot, on the calling thread (a search thread, or
 * the main thread when `SITESIFT_SEARCH_THREADS` is 0): runs the engine, applies the result
 * mappings, pages, groups and renders the results. Pure with respect to the snapshot; callers
 * pin and release it (`SearchService` in src/search/service.ts does that for the routes).
 */
import { type IndexSnapshot, type ResultCard, engineCacheBudget, engineCacheUsed } from '../index/index.js';
import { type DataPoint, type ResultMapping, type Settings, safeImageUrl } from '../core/index.js';
import { compilePattern } from '../text/index.js';
import { runQuery, type Hit } from './engine.js';
import { dataPointKeys, groupName, groupRecord } from './group.js';
import { echoFilter, type ActiveFilter } from './filters.js';
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
}

export interface SearchResult {
  name: string;
  image: string | null;
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

/** Live searchable row of `url` in the snapshot, if any. */
function findLive(snap: IndexSnapshot, url: string): Hit | null {
  for (const seg of snap.segments) {
    const dv = seg.reader.docValues();
    const id = seg.reader.idOf(url);
    if (id !== null && seg.dead[id] !== 1 && dv.status[id] === 200) {
      return { seg, id, url, group: groupName(dv.group[id]!), score: 0, typos: 0 };
    }
  }
  return null;
}

/**
 * Result cards of this thread, all segments together, in a byte-bounded cache (CLOCK: about LRU) in front of the
 * SQLite read (top results repeat across queries; each card also keeps its text's word runs
 * for snippets, see `snippet()`'s memo). Segments are immutable, so a card never goes stale;
 * a reader's cards leave the cache when it closes.
 */
interface CardEntry {
  card: ResultCard;
  bytes: number;
  /** Second-chance bit (CLOCK eviction: a hit never reorders a Map). */
  used: boolean;
  owner: Map<number, CardEntry>;
  key: number;
}
const cardMaps = new WeakMap<object, Map<number, CardEntry>>();
const cardClock = new Set<CardEntry>();

/** The stored fields of a hit. */
function cardOf(h: Hit, withContent: boolean): ResultCard {
  let m = cardMaps.get(h.seg.reader);
  if (!m) {
    const cards = new Map<number, CardEntry>();
    cardMaps.set(h.seg.reader, (m = cards));
    h.seg.reader.onClose(() => {
      for (const e of cards.values()) {
        cardClock.delete(e);
        engineCacheUsed.cards -= e.bytes;
      }
      cards.clear();
    });
  }
  const key = 2 * h.id + (withContent ? 1 : 0);
  const e = m.get(key);
  if (e) {
    e.used = true;
    return e.card;
  }
  const card = h.seg.reader.card(h.id, withContent);
  // Strings at up to two bytes per character; the content's word runs (12 bytes per run of
  // about 6 characters) and their index by hash add about as much again.
  const bytes = 2 * (card.title.length + card.url.length + card.description.length) + 5 * card.content.length + 512;
  const entry: CardEntry = { card, bytes, used: false, owner: m, key };
  m.set(key, entry);
  cardClock.add(entry);
  engineCacheUsed.cards += bytes;
  // Budget per thread: src/index/budgets.ts (~110 MB by this estimate for the top 10 of the
  // 799 corpus queries at ~100k pages).
  if (engineCacheUsed.cards > engineCacheBudget.cards) {
    // Evict in batches down to 7/8 of the budget; recently used cards get a second chance.
    for (const x of cardClock) {
      if (engineCacheUsed.cards <= engineCacheBudget.cards - engineCacheBudget.cards / 8) break;
      cardClock.delete(x);
      if (x.used) {
        x.used = false;
        cardClock.add(x);
        continue;
      }
      x.owner.delete(x.key);
      engineCacheUsed.cards -= x.bytes;
    }
  }
  return card;
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
  const normalised = normaliseQuery(p.query);
  const sortOpts = sortingOptions(settings, snap, cacheOwner);
  const triggered = settings.search.resultMappings.filter((m) => triggers(m, normalised));
  // Pins and hides need every match (a pinned or hidden page may rank anywhere); otherwise only
  // the top of the ranking is materialised.
  const needsAll = p.limitPerGroup || triggered.some((m) => m.action.type === 'pin' || m.action.type === 'hide');
  const res = runQuery(snap, settings.search, {
    query: p.query,
    filters: p.filters,
    sort: p.sort,
    sortOrder: p.sortOrder,
    includeContentGroups: p.includeContentGroups,
    excludeContentGroups: p.excludeContentGroups,
    facetDefs: p.filterOptions ? settings.filters : [],
    typoTolerance: p.typoTolerance,
    ...(needsAll ? {} : { topK: p.offset + p.limit }),
  });

  // Result mappings (Result Manager): first pins, then hides; custom inserts after paging.
  let hits = res.hits;
  // Matches not materialised in `hits` (topK) still count.
  const unlisted = res.total - res.hits.length;
  const perGroup = Object.assign(groupRecord<number>(), res.perGroup);
  let redirect: string | undefined;
  const customs: Array<{ html: string; position: number; group: string }> = [];
  for (const m of triggered) {
    const a = m.action;
    if (a.type === 'redirect') redirect ??= a.url;
    else if (a.type === 'hide') {
      const hide = new Set(a.urls);
      const kept: Hit[] = [];
      for (const h of hits) {
        if (hide.has(h.url)) perGroup[h.group] = (perGroup[h.group] ?? 1) - 1;
        else kept.push(h);
      }
      hits = kept;
    } else if (a.type === 'pin') {
      const pinned: Hit[] = [];
      for (const url of a.urls) {
        const existing = hits.find((h) => h.url === url);
        if (existing) {
          hits = hits.filter((h) => h !== existing);
          pinned.push(existing);
          continue;
        }
        const live = findLive(snap, url);
        if (live && !pinned.some((x) => x.url === url)) {
          pinned.push(live);
          perGroup[live.group] = (perGroup[live.group] ?? 0) + 1;
        }
      }
      hits = [...pinned, ...hits];
    } else if (a.type === 'custom') {
      customs.push({ html: a.html, position: a.position, group: a.contentGroup ?? '_' });
    }
  }
  for (const g of Object.keys(perGroup)) if (perGroup[g]! <= 0) delete perGroup[g];

  // With highlighting the answer is HTML: every text field is escaped (docs/API.md lists them).
  const html = p.highlightQueryTerms;
  const text = html ? escapeHtml : (s: string) => s;
  const render = (h: Hit): SearchResult => {
    const e = cardOf(h, p.includeContent);
    const r: SearchResult = {
      name: html ? highlight(e.title, res.matched, e) : e.title,
      // Checked again here: pages stored before ingest checked image URLs.
      image: (e.imageUrl && safeImageUrl(e.imageUrl)) || null,
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
    suggests._ = hits.slice(p.offset, p.offset + p.limit).map(render);
    totalPerGroup = groupRecord();
    if (hits.length + unlisted) totalPerGroup._ = hits.length + unlisted;
  } else if (p.limitPerGroup) {
    const byGroup = new Map<string, Hit[]>();
    for (const h of hits) {
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
    for (const h of hits.slice(p.offset, p.offset + p.limit)) (suggests[h.group] ??= []).push(render(h));
    totalPerGroup = perGroup;
  }
  for (const c of customs) {
    const group = p.groupResults ? c.group : '_';
    const list = (suggests[group] ??= []);
    const at = Math.max(0, Math.min(list.length, c.position - 1 - (p.limitPerGroup ? p.offset : 0)));
    list.splice(at, 0, { name: '', image: null, link: '', type: 'custom', dataPoints: [], html: c.html });
  }

  const out: SearchResponse = {
    status: 'success',
    query: text(p.query),
    suggests: html ? escapeKeys(suggests) : suggests,
    totalResults: hits.length + unlisted,
    totalResultsPerContentGroup: html ? escapeKeys(totalPerGroup) : totalPerGroup,
    sortingOptions: sortOpts,
    sorting: p.sort ?? '',
    filterOptions: !p.filterOptions ? [] : html ? res.facets.map(escapeFacet) : res.facets,
    activeFilterOptions: p.filters.map(echoFilter),
  };
  if (redirect) out.redirect = redirect;
  return out;
}

