/**
 * The search widget: a WAI-ARIA 1.2 combobox whose listbox shows query suggestions and
 * suggested results (`GET /sites/suggest`), and a results layer (`GET /sites`) with content
 * group tabs and counts, filters, sorting and "more results". Rendered by Preact into a shadow
 * root (src/web/widget/mount.ts).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Client, Latest, shownFilters, type Selection, type ShownFilter } from './client';
import { decodeEntities, Marked, OwnerHtml } from './text';
import type { MountOptions, Result, SearchAnswer, SelectDetail, SuggestAnswer, Texts } from './types';

export const DEFAULT_TEXTS: Texts = {
  label: 'Search this site',
  placeholder: 'Search…',
  submit: 'Search',
  clear: 'Clear search',
  suggestions: 'Suggestions',
  querySuggestions: 'Searches',
  all: 'All',
  other: 'Other',
  resultsFor: (n, q) => `${n} ${n === 1 ? 'result' : 'results'} for “${q}”`,
  noResults: (q) => `No results for “${q}”.`,
  tryInstead: 'Try:',
  more: 'More results',
  sortBy: 'Sort by',
  relevance: 'Relevance',
  ascending: 'ascending',
  descending: 'descending',
  filters: 'Filters',
  from: 'From',
  to: 'To',
  clearFilters: 'Clear filters',
  error: 'Search is not available right now. Please try again.',
  loading: 'Searching…',
  close: 'Close results',
};

/** One option of the listbox. */
type Option =
  | { kind: 'query'; id: string; query: string }
  | { kind: 'result'; id: string; result: Result; position: number };

interface SuggestView {
  query: string;
  groups: Array<{ id: string; label: string; options: Option[] }>;
  options: Option[];
}

interface ResultsState {
  query: string;
  group: string | null;
  selection: Selection;
  sort: string;
  sortOrder: 'ASC' | 'DESC';
}

interface ResultsView extends ResultsState {
  groups: Array<{ name: string; results: Result[] }>;
  /** Results of the current tab (the group's, or all). */
  total: number;
  /** Per content group, without the tab restriction (tab counts). */
  counts: Record<string, number>;
  allTotal: number;
  loaded: number;
  filters: ShownFilter[];
  sortingOptions: string[];
  loading: boolean;
  error: boolean;
  alternatives: string[];
}

/** What the widget needs besides the owner's options. */
export interface WidgetProps {
  opts: MountOptions;
  base: URL;
  uid: string;
  /** Fires DOM events on the host element. */
  emit: (type: string, detail: unknown) => void;
  /** Lets `sitesift.mount`'s handle run searches. */
  register: (api: { search(q: string): void }) => void;
}

function groupLabel(name: string, texts: Texts, labels: Record<string, string> | undefined): string {
  if (labels?.[name]) return labels[name]!;
  return name === '_' ? texts.other : name;
}

/** Group counts with the group names decoded (a highlighted answer escapes them). */
function decodedKeys(counts: Record<string, number> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counts ?? {})) out[decodeEntities(k)] = v;
  return out;
}

function clampInt(v: number | undefined, min: number, max: number, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(max, Math.max(min, Math.round(v))) : dflt;
}

/** A session: from the first keystroke (or search) to a select, or to an abandon event. */
interface Session {
  start: number;
  query: string;
  selected: boolean;
  ended: boolean;
}

export function Widget({ opts, base, uid, emit, register }: WidgetProps) {
  const texts = useMemo(() => ({ ...DEFAULT_TEXTS, ...opts.texts }), [opts.texts]);
  const client = useMemo(() => new Client(base, opts.site), [base, opts.site]);
  const suggestOn = opts.suggest !== false;
  const suggestLimit = clampInt(opts.suggest ? opts.suggest.limit : undefined, 1, 2, 2);
  const maxQs = clampInt(opts.suggest ? opts.suggest.maxQuerySuggestions : undefined, 0, 10, 3);
  const pageSize = clampInt(opts.results?.limit, 1, 100, 10);
  const analytics = opts.analytics !== false;
  const debounceMs = clampInt(opts.debounceMs, 0, 2000, 120);

  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [sugg, setSugg] = useState<SuggestView | null>(null);
  const [active, setActive] = useState(-1);
  const [res, setRes] = useState<ResultsView | null>(null);

  const suggestReq = useRef(new Latest()).current;
  const searchReq = useRef(new Latest()).current;
  const countReq = useRef(new Latest()).current;
  const altReq = useRef(new Latest()).current;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const session = useRef<Session | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const resRef = useRef<ResultsView | null>(null);
  resRef.current = res;

  const listboxId = `${uid}-listbox`;
  const optionId = (i: number) => `${uid}-opt-${i}`;

  // ------------------------------------------------------------ events
  function touchSession(q: string): Session {
    let s = session.current;
    if (!s || s.ended || s.selected) {
      s = { start: Date.now(), query: q, selected: false, ended: false };
      session.current = s;
    }
    s.query = q;
    return s;
  }

  function abandon(): void {
    const s = session.current;
    if (!s || s.ended || s.selected || s.query.trim() === '') return;
    s.ended = true;
    if (analytics) client.log({ query: s.query, action: 'abandon', timeToAction: Date.now() - s.start });
    emit('sitesift:abandon', { query: s.query });
  }

  /** Logs a select and tells the owner; false when the owner's onSelect kept the visitor here. */
  function select(detail: SelectDetail): boolean {
    const s = touchSession(detail.query);
    s.selected = true;
    s.ended = true;
    if (analytics) {
      client.log({ query: detail.query, action: 'select', link: detail.link, position: detail.position, timeToAction: Date.now() - s.start });
    }
    emit('sitesift:select', detail);
    return opts.onSelect?.(detail) !== false;
  }

  useEffect(() => {
    const onHide = () => abandon();
    window.addEventListener('pagehide', onHide);
    return () => {
      window.removeEventListener('pagehide', onHide);
      suggestReq.cancel();
      searchReq.cancel();
      countReq.cancel();
      altReq.cancel();
      if (timer.current) clearTimeout(timer.current);
    };
  }, []);

  // ------------------------------------------------------------ suggestions
  function requestSuggestions(q: string): void {
    if (timer.current) clearTimeout(timer.current);
    if (!suggestOn || q.trim() === '') {
      suggestReq.cancel();
      setOpen(false);
      setSugg(null);
      setActive(-1);
      return;
    }
    timer.current = setTimeout(() => {
      suggestReq.run(
        (signal) => client.suggest(q, suggestLimit, maxQs, signal),
        (answer) => showSuggestions(q, answer),
        () => {
          setOpen(false);
          setSugg(null);
        },
      );
    }, debounceMs);
  }

  function showSuggestions(q: string, answer: SuggestAnswer): void {
    const groups: SuggestView['groups'] = [];
    const options: Option[] = [];
    // A highlighted answer is HTML: query suggestions, group names and data points come escaped.
    const qs = (answer.querySuggestions ?? []).map((s) => ({ query: decodeEntities(s.query) })).filter((s) => s.query.trim().toLowerCase() !== q.trim().toLowerCase());
    if (qs.length) {
      const g = { id: `${uid}-g-q`, label: texts.querySuggestions, options: [] as Option[] };
      for (const s of qs) {
        const o: Option = { kind: 'query', id: optionId(options.length), query: s.query };
        options.push(o);
        g.options.push(o);
      }
      groups.push(g);
    }
    let position = 0;
    for (const [name, results] of Object.entries(answer.suggests ?? {})) {
      if (!results.length) continue;
      const g = { id: `${uid}-g-${groups.length}`, label: groupLabel(decodeEntities(name), texts, opts.results?.labels), options: [] as Option[] };
      for (const r of results) {
        const o: Option = { kind: 'result', id: optionId(options.length), result: r, position: ++position };
        options.push(o);
        g.options.push(o);
      }
      groups.push(g);
    }
    setSugg({ query: q, groups, options });
    setActive(-1);
    setOpen(options.length > 0);
  }

  function closeList(): void {
    if (timer.current) clearTimeout(timer.current);
    suggestReq.cancel();
    setOpen(false);
    setActive(-1);
  }

  function choose(o: Option): void {
    if (o.kind === 'query') {
      setQuery(o.query);
      submit(o.query);
      return;
    }
    const q = sugg?.query ?? query;
    const r = o.result;
    let link = r.link;
    if (r.type === 'custom') {
      // A custom suggestion is followed through its first link, if it has one.
      const holder = document.createElement('div');
      holder.innerHTML = r.suggestionHtml ?? r.html ?? '';
      link = holder.querySelector('a')?.href ?? '';
    }
    closeList();
    if (select({ query: q, link, position: o.position, source: 'suggest' }) && link) window.location.assign(link);
  }

  // ------------------------------------------------------------ results
  function runSearch(state: ResultsState, append: boolean, log: boolean): void {
    const prev = resRef.current;
    const offset = append && prev ? prev.loaded : 0;
    const loadingView: ResultsView = append && prev
      ? { ...prev, loading: true }
      : {
          ...state,
          groups: [],
          total: 0,
          counts: prev && prev.query === state.query ? prev.counts : {},
          allTotal: prev && prev.query === state.query ? prev.allTotal : 0,
          loaded: 0,
          filters: prev && prev.query === state.query ? prev.filters : [],
          sortingOptions: prev && prev.query === state.query ? prev.sortingOptions : [],
          loading: true,
          error: false,
          alternatives: [],
        };
    setRes(loadingView);
    searchReq.run(
      (signal) =>
        client.search(
          { query: state.query, offset, limit: pageSize, group: state.group, selection: state.selection, sort: state.sort, sortOrder: state.sortOrder, log: log && analytics, filterOptions: !append },
          signal,
        ),
      (answer) => {
        if (answer.redirect && !append && log && opts.followRedirects !== false) {
          // Following the owner's redirect ends the search; it is not abandoned.
          if (session.current) session.current.ended = true;
          window.location.assign(answer.redirect);
          return;
        }
        setRes((cur) => mergeAnswer(cur ?? loadingView, state, answer, append));
        if (!append && answer.totalResults === 0) findAlternatives(state.query);
      },
      () => setRes((cur) => (cur ? { ...cur, loading: false, error: true } : cur)),
    );
    if (!append) {
      if (state.group === null) {
        countReq.cancel();
      } else {
        // Tab counts stay those of the whole result set (with the same filters).
        countReq.run(
          (signal) =>
            client.search(
              { query: state.query, offset: 0, limit: 1, group: null, selection: state.selection, sort: '', sortOrder: 'ASC', log: false, filterOptions: false },
              signal,
            ),
          (answer) => setRes((cur) => (cur ? { ...cur, counts: decodedKeys(answer.totalResultsPerContentGroup), allTotal: answer.totalResults } : cur)),
          () => {},
        );
      }
    }
  }

  function mergeAnswer(cur: ResultsView, state: ResultsState, a: SearchAnswer, append: boolean): ResultsView {
    const groups = append ? cur.groups.map((g) => ({ name: g.name, results: g.results.slice() })) : [];
    let loaded = append ? cur.loaded : 0;
    for (const [escaped, results] of Object.entries(a.suggests ?? {})) {
      const name = decodeEntities(escaped);
      let g = groups.find((x) => x.name === name);
      if (!g) {
        g = { name, results: [] };
        groups.push(g);
      }
      // The next page starts after every result the server sent, custom ones included.
      loaded += results.length;
      for (const r of results) {
        // A server that repeats a custom result on every page shows it once here.
        if (r.type === 'custom' && append && g.results.some((x) => x.type === 'custom' && x.html === r.html)) continue;
        g.results.push(r);
      }
    }
    const view: ResultsView = { ...cur, ...state, groups, loaded, total: a.totalResults, loading: false, error: false };
    if (!append) {
      view.alternatives = [];
      view.sortingOptions = a.sortingOptions ?? [];
      view.filters = shownFilters(a.filterOptions, opts.results?.filters);
      if (state.group === null) {
        view.counts = decodedKeys(a.totalResultsPerContentGroup);
        view.allTotal = a.totalResults;
      }
    }
    return view;
  }

  /** Query suggestions to offer when a search found nothing: for the query, else its first letters. */
  function findAlternatives(q: string): void {
    const tries = [q.trim()];
    const first = q.trim().split(/\s+/)[0] ?? '';
    if (first.length > 2) tries.push(first.slice(0, 2));
    const attempt = (i: number): void => {
      if (i >= tries.length || maxQs === 0) return;
      altReq.run(
        (signal) => client.suggest(tries[i]!, 1, Math.max(maxQs, 3), signal),
        (answer) => {
          const found = (answer.querySuggestions ?? []).map((s) => decodeEntities(s.query)).filter((s) => s.toLowerCase() !== q.trim().toLowerCase());
          if (found.length) setRes((cur) => (cur && cur.query === q ? { ...cur, alternatives: found } : cur));
          else attempt(i + 1);
        },
        () => {},
      );
    };
    attempt(0);
  }

  function submit(q: string): void {
    const trimmed = q.trim();
    closeList();
    if (trimmed === '') return;
    touchSession(trimmed);
    emit('sitesift:search', { query: trimmed });
    runSearch({ query: trimmed, group: null, selection: {}, sort: '', sortOrder: 'ASC' }, false, true);
  }

  register({
    search(q: string) {
      setQuery(q);
      submit(q);
    },
  });

  function clearAll(): void {
    abandon();
    closeList();
    searchReq.cancel();
    countReq.cancel();
    altReq.cancel();
    setQuery('');
    setSugg(null);
    setRes(null);
    session.current = null;
    inputRef.current?.focus();
  }

  // ------------------------------------------------------------ input handlers
  function onInput(e: Event): void {
    const v = (e.currentTarget as HTMLInputElement).value;
    setQuery(v);
    if (v.trim() !== '') touchSession(v.trim());
    requestSuggestions(v);
  }

  function onKeyDown(e: KeyboardEvent): void {
    const n = sugg?.options.length ?? 0;
    switch (e.key) {
      case 'ArrowDown':
        e.preventDefault();
        if (!open) {
          if (n > 0) {
            setOpen(true);
            setActive(0);
          } else requestSuggestions(query);
          return;
        }
        setActive((a) => (n === 0 ? -1 : (a + 1) % n));
        return;
      case 'ArrowUp':
        e.preventDefault();
        if (!open) {
          if (n > 0) {
            setOpen(true);
            setActive(n - 1);
          }
          return;
        }
        setActive((a) => (n === 0 ? -1 : a <= 0 ? n - 1 : a - 1));
        return;
      case 'Enter': {
        e.preventDefault();
        const o = open && active >= 0 ? sugg?.options[active] : undefined;
        if (o) choose(o);
        else submit(query);
        return;
      }
      case 'Escape':
        if (open) {
          e.preventDefault();
          closeList();
        } else if (query !== '' || res) {
          e.preventDefault();
          clearAll();
        }
        return;
      case 'Tab':
        closeList();
        return;
    }
  }

  function onFocusOut(e: FocusEvent): void {
    const next = e.relatedTarget as Node | null;
    const root = (e.currentTarget as HTMLElement).querySelector('.ss-box');
    if (!next || !root?.contains(next)) setOpen(false);
  }

  // ------------------------------------------------------------ results handlers
  function refine(patch: Partial<ResultsState>): void {
    if (!res) return;
    const state: ResultsState = { query: res.query, group: res.group, selection: res.selection, sort: res.sort, sortOrder: res.sortOrder, ...patch };
    runSearch(state, false, patch.group === undefined);
  }

  function toggleValue(key: string, value: string, on: boolean): void {
    if (!res) return;
    const cur = Array.isArray(res.selection[key]) ? (res.selection[key] as string[]) : [];
    const next = on ? [...cur.filter((v) => v !== value), value] : cur.filter((v) => v !== value);
    const selection = { ...res.selection };
    if (next.length) selection[key] = next;
    else delete selection[key];
    refine({ selection });
  }

  function setRange(key: string, bound: 'min' | 'max', raw: string): void {
    if (!res) return;
    const prev = (!Array.isArray(res.selection[key]) && res.selection[key]) || {};
    const r: { min?: number; max?: number } = { ...(prev as { min?: number; max?: number }) };
    const n = raw.trim() === '' ? undefined : Number(raw);
    if (n === undefined || !Number.isFinite(n)) delete r[bound];
    else r[bound] = n;
    const selection = { ...res.selection };
    if (r.min === undefined && r.max === undefined) delete selection[key];
    else selection[key] = r;
    refine({ selection });
  }

  function onSort(e: Event): void {
    const v = (e.currentTarget as HTMLSelectElement).value;
    if (v === '') refine({ sort: '', sortOrder: 'ASC' });
    else {
      const [order, ...key] = v.split(':');
      refine({ sort: key.join(':'), sortOrder: order === 'DESC' ? 'DESC' : 'ASC' });
    }
  }

  function onResultClick(e: MouseEvent, r: Result, position: number): void {
    if (!res) return;
    if (!select({ query: res.query, link: r.link, position, source: 'results' })) e.preventDefault();
  }

  function onCustomClick(e: MouseEvent, position: number): void {
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || !res) return;
    if (!select({ query: res.query, link: a.href, position, source: 'results' })) e.preventDefault();
  }

  function onTabKey(e: KeyboardEvent, names: Array<string | null>, i: number): void {
    let j = -1;
    if (e.key === 'ArrowRight') j = (i + 1) % names.length;
    else if (e.key === 'ArrowLeft') j = (i - 1 + names.length) % names.length;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = names.length - 1;
    if (j < 0) return;
    e.preventDefault();
    refine({ group: names[j] ?? null });
    const tabs = (e.currentTarget as HTMLElement).parentElement?.querySelectorAll<HTMLElement>('[role=tab]');
    tabs?.[j]?.focus();
  }

  // ------------------------------------------------------------ render
  const activeId = open && active >= 0 ? sugg?.options[active]?.id : undefined;
  const labels = opts.results?.labels;

  return (
    <div class="ss-root" onFocusOut={onFocusOut}>
      <div class="ss-box">
        <form
          class="ss-form"
          role="search"
          part="form"
          onSubmit={(e) => {
            e.preventDefault();
            submit(query);
          }}
        >
          <label class="ss-sr" for={`${uid}-input`}>
            {texts.label}
          </label>
          <input
            id={`${uid}-input`}
            ref={inputRef}
            class="ss-input"
            part="input"
            type="search"
            role="combobox"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            enterkeyhint="search"
            placeholder={texts.placeholder}
            aria-autocomplete="list"
            aria-expanded={open}
            aria-controls={listboxId}
            aria-activedescendant={activeId}
            value={query}
            onInput={onInput}
            onKeyDown={onKeyDown}
            onFocus={() => {
              if (sugg && sugg.options.length && sugg.query === query) setOpen(true);
            }}
          />
          {query !== '' && (
            <button type="button" class="ss-clear" aria-label={texts.clear} onClick={clearAll}>
              <svg viewBox="0 0 16 16" aria-hidden="true" width="14" height="14">
                <path d="M3 3l10 10M13 3L3 13" stroke="currentColor" stroke-width="2" fill="none" />
              </svg>
            </button>
          )}
          <button type="submit" class="ss-submit" part="submit" aria-label={texts.submit}>
            <svg viewBox="0 0 20 20" aria-hidden="true" width="18" height="18">
              <circle cx="8.5" cy="8.5" r="6" stroke="currentColor" stroke-width="2" fill="none" />
              <path d="M13 13l5 5" stroke="currentColor" stroke-width="2" />
            </svg>
          </button>
        </form>
        <div id={listboxId} class="ss-listbox" part="listbox" role="listbox" aria-label={texts.suggestions} hidden={!open} data-query={sugg?.query}>
          {open &&
            sugg?.groups.map((g) => (
              <div role="group" aria-labelledby={g.id} class="ss-group" key={g.id}>
                <div role="presentation" id={g.id} class="ss-group-label">
                  {g.label}
                </div>
                {g.options.map((o) => {
                  const i = sugg.options.indexOf(o);
                  return (
                    <div
                      id={o.id}
                      key={o.id}
                      role="option"
                      part="option"
                      aria-selected={i === active}
                      class={`ss-option ss-option-${o.kind}${i === active ? ' ss-active' : ''}`}
                      onMouseDown={(e) => e.preventDefault()}
                      onMouseMove={() => i !== active && setActive(i)}
                      onClick={() => choose(o)}
                    >
                      {o.kind === 'query' ? (
                        <span class="ss-qs">{o.query}</span>
                      ) : o.result.type === 'custom' ? (
                        <OwnerHtml class="ss-custom" html={o.result.suggestionHtml ?? o.result.html ?? ''} />
                      ) : (
                        <SuggestedResult r={o.result} />
                      )}
                    </div>
                  );
                })}
              </div>
            ))}
        </div>
      </div>
      {res && (
        <ResultsLayer
          res={res}
          uid={uid}
          texts={texts}
          labels={labels}
          sorting={opts.results?.sorting !== false}
          onTab={(g) => refine({ group: g })}
          onTabKey={onTabKey}
          onToggle={toggleValue}
          onRange={setRange}
          onClearFilters={() => refine({ selection: {} })}
          onSort={onSort}
          onMore={() => runSearch(res, true, false)}
          onResultClick={onResultClick}
          onCustomClick={onCustomClick}
          onAlternative={(q) => {
            setQuery(q);
            submit(q);
          }}
          onClose={clearAll}
        />
      )}
    </div>
  );
}

function SuggestedResult({ r }: { r: Result }) {
  return (
    <span class="ss-sr-result">
      {r.image ? <img class="ss-thumb" src={r.image} alt="" loading="lazy" onError={hideImage} /> : null}
      <span class="ss-sr-title">
        <Marked text={r.name} />
      </span>
      {r.type !== 'HTML' && <span class="ss-type">{r.type.replace('_', ' ')}</span>}
    </span>
  );
}

function hideImage(e: Event): void {
  (e.currentTarget as HTMLElement).style.display = 'none';
}

interface LayerProps {
  res: ResultsView;
  uid: string;
  texts: Texts;
  labels: Record<string, string> | undefined;
  sorting: boolean;
  onTab: (g: string | null) => void;
  onTabKey: (e: KeyboardEvent, names: Array<string | null>, i: number) => void;
  onToggle: (key: string, value: string, on: boolean) => void;
  onRange: (key: string, bound: 'min' | 'max', raw: string) => void;
  onClearFilters: () => void;
  onSort: (e: Event) => void;
  onMore: () => void;
  onResultClick: (e: MouseEvent, r: Result, position: number) => void;
  onCustomClick: (e: MouseEvent, position: number) => void;
  onAlternative: (q: string) => void;
  onClose: () => void;
}

function ResultsLayer(p: LayerProps) {
  const { res, texts, uid } = p;
  const groupNames = Object.keys(res.counts);
  const showTabs = groupNames.length > 1;
  const tabNames: Array<string | null> = [null, ...groupNames];
  const selected = tabNames.indexOf(res.group);
  const hasFilters = res.filters.length > 0;
  const anySelected = Object.keys(res.selection).length > 0;
  let position = 0;
  const status = res.loading && res.groups.length === 0 ? texts.loading : res.error ? '' : res.total === 0 ? texts.noResults(res.query) : texts.resultsFor(res.total, res.query);

  return (
    <section class="ss-results" part="results" aria-label={texts.resultsFor(res.total, res.query)} aria-busy={res.loading}>
      <div class="ss-head">
        <p class="ss-status" role="status">
          {status}
        </p>
        <button type="button" class="ss-close" aria-label={texts.close} onClick={p.onClose}>
          <svg viewBox="0 0 16 16" aria-hidden="true" width="14" height="14">
            <path d="M3 3l10 10M13 3L3 13" stroke="currentColor" stroke-width="2" fill="none" />
          </svg>
        </button>
      </div>
      {res.error && (
        <p class="ss-error" role="alert">
          {texts.error}
        </p>
      )}
      {showTabs && (
        <div class="ss-tabs" role="tablist" aria-label={texts.filters}>
          {tabNames.map((g, i) => {
            const count = g === null ? res.allTotal : (res.counts[g] ?? 0);
            return (
              <button
                type="button"
                role="tab"
                id={`${uid}-tab-${i}`}
                key={g ?? ''}
                class="ss-tab"
                part="tab"
                aria-selected={i === selected}
                aria-controls={`${uid}-panel`}
                tabIndex={i === selected ? 0 : -1}
                onClick={() => p.onTab(g)}
                onKeyDown={(e) => p.onTabKey(e, tabNames, i)}
              >
                {g === null ? texts.all : groupLabel(g, texts, p.labels)} <span class="ss-count">{count}</span>
              </button>
            );
          })}
        </div>
      )}
      <div class="ss-body" id={`${uid}-panel`} role={showTabs ? 'tabpanel' : undefined} aria-labelledby={showTabs ? `${uid}-tab-${Math.max(0, selected)}` : undefined}>
        {(hasFilters || (p.sorting && res.sortingOptions.length > 0)) && (
          <details class="ss-side" open={typeof matchMedia === 'function' ? !matchMedia('(max-width: 600px)').matches : true}>
            <summary class="ss-summary">{texts.filters}</summary>
            {p.sorting && res.sortingOptions.length > 0 && (
              <label class="ss-sort">
                <span>{texts.sortBy}</span>
                <select value={res.sort ? `${res.sortOrder}:${res.sort}` : ''} onChange={p.onSort}>
                  <option value="">{texts.relevance}</option>
                  {res.sortingOptions.flatMap((k) => [
                    <option key={`a${k}`} value={`ASC:${k}`}>
                      {`${p.labels?.[k] ?? k} (${texts.ascending})`}
                    </option>,
                    <option key={`d${k}`} value={`DESC:${k}`}>
                      {`${p.labels?.[k] ?? k} (${texts.descending})`}
                    </option>,
                  ])}
                </select>
              </label>
            )}
            {res.filters.map((f) => (
              <fieldset class="ss-filter" key={f.key} part="filter">
                <legend>{f.name}</legend>
                {f.kind === 'multiple'
                  ? f.values.map((v) => {
                      const sel = res.selection[f.key];
                      const checked = Array.isArray(sel) && sel.includes(v.value);
                      return (
                        <label class="ss-check" key={v.value}>
                          <input type="checkbox" checked={checked} disabled={!checked && v.count === 0} onChange={(e) => p.onToggle(f.key, v.value, (e.currentTarget as HTMLInputElement).checked)} />
                          <span>{v.name}</span>
                          {v.count !== null && <span class="ss-count">{v.count}</span>}
                        </label>
                      );
                    })
                  : (() => {
                      const sel = res.selection[f.key];
                      const r = sel && !Array.isArray(sel) ? sel : {};
                      return (
                        <div class="ss-range">
                          <label>
                            <span>{texts.from}</span>
                            <input type="number" inputMode="decimal" min={f.min} max={f.max} placeholder={String(f.min)} value={r.min ?? ''} onChange={(e) => p.onRange(f.key, 'min', (e.currentTarget as HTMLInputElement).value)} />
                          </label>
                          <label>
                            <span>{texts.to}</span>
                            <input type="number" inputMode="decimal" min={f.min} max={f.max} placeholder={String(f.max)} value={r.max ?? ''} onChange={(e) => p.onRange(f.key, 'max', (e.currentTarget as HTMLInputElement).value)} />
                          </label>
                        </div>
                      );
                    })()}
              </fieldset>
            ))}
            {anySelected && (
              <button type="button" class="ss-link" onClick={p.onClearFilters}>
                {texts.clearFilters}
              </button>
            )}
          </details>
        )}
        <div class="ss-main">
          {!res.loading && !res.error && res.total === 0 && res.alternatives.length > 0 && (
            <p class="ss-alternatives">
              {texts.tryInstead}{' '}
              {res.alternatives.map((q) => (
                <button type="button" class="ss-link" key={q} onClick={() => p.onAlternative(q)}>
                  {q}
                </button>
              ))}
            </p>
          )}
          {res.groups.map((g) => (
            <section class="ss-section" key={g.name} aria-labelledby={`${uid}-sec-${g.name}`}>
              {res.group === null && res.groups.length > 1 && (
                <h3 class="ss-section-title" id={`${uid}-sec-${g.name}`}>
                  {groupLabel(g.name, texts, p.labels)} <span class="ss-count">{res.counts[g.name] ?? g.results.length}</span>
                </h3>
              )}
              <ol class="ss-list">
                {g.results.map((r, i) => {
                  if (r.type === 'custom') {
                    const pos = ++position;
                    return (
                      <li class="ss-result ss-result-custom" part="result" key={`c${i}`} onClick={(e) => p.onCustomClick(e, pos)}>
                        <OwnerHtml html={r.html ?? ''} />
                      </li>
                    );
                  }
                  const pos = ++position;
                  const shown = r.dataPoints?.filter((d) => d.show) ?? [];
                  return (
                    <li class="ss-result" part="result" key={r.link}>
                      {r.image ? <img class="ss-image" src={r.image} alt="" loading="lazy" onError={hideImage} /> : null}
                      <div class="ss-text">
                        <a class="ss-title" href={r.link} onClick={(e) => p.onResultClick(e, r, pos)}>
                          <Marked text={r.name || r.link} />
                        </a>
                        {r.type !== 'HTML' && <span class="ss-type">{r.type.replace('_', ' ')}</span>}
                        <div class="ss-url">{r.link}</div>
                        {r.content && (
                          <p class="ss-snippet">
                            <Marked text={r.content} />
                          </p>
                        )}
                        {shown.length > 0 && (
                          <dl class="ss-dp">
                            {shown.map((d) => (
                              <div key={d.key}>
                                <dt>{decodeEntities(d.key)}</dt>
                                <dd>{decodeEntities(d.value)}</dd>
                              </div>
                            ))}
                          </dl>
                        )}
                      </div>
                    </li>
                  );
                })}
              </ol>
            </section>
          ))}
          {res.loaded < res.total && !res.error && (
            <button type="button" class="ss-more" part="more" onClick={p.onMore} disabled={res.loading}>
              {res.loading ? texts.loading : texts.more}
            </button>
          )}
        </div>
      </div>
    </section>
  );
}
