/**
 * Settings editors, one per Control Panel section. Each edits a draft of its part of the
 * settings and saves it with `PATCH /admin/projects/{siteId}/settings` (a JSON Merge Patch:
 * the section's arrays are replaced whole). The API validates; its message is shown at the
 * field its `field` path names, and above the form.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { CrawlerSettings, DataPointRule, ExtractionRule, FilterDefinition, ResultGroupRule, ResultMapping, Settings, SynonymGroup, SynonymMapping } from '../../../core/settings';
import type { Api } from '../api';
import { Checkbox, errorsOf, LinesInput, messageFor, Notice, NumberInput, Select, TextArea, TextInput, useLoad, when, type FieldErrors } from '../ui';

/** Sections in the navigation's order: [route, title]. */
export const SETTINGS_PAGES: Array<[string, string]> = [
  ['crawler', 'Crawler rules'],
  ['extraction', 'Content extraction'],
  ['dataPoints', 'Data points'],
  ['resultGroups', 'Result groups'],
  ['filters', 'Filters'],
  ['synonyms', 'Synonyms'],
  ['typo', 'Typo tolerance'],
  ['mappings', 'Result mappings'],
];

interface EditorProps<T> {
  value: T;
  errs: FieldErrors | null;
  save: (v: T) => Promise<void>;
}

export function SettingsPage({ api, section }: { api: Api; section: string }) {
  const settings = useLoad(() => api.admin<Settings & { status: string }>('GET', '/settings'), []);
  const [errs, setErrs] = useState<FieldErrors | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const title = SETTINGS_PAGES.find(([s]) => s === section)?.[1] ?? 'Settings';

  const save = async (patch: Record<string, unknown>): Promise<void> => {
    setErrs(null);
    setSaved(null);
    try {
      const next = await api.admin<Settings & { status: string }>('PATCH', '/settings', patch);
      settings.set(next);
      setGeneration((g) => g + 1);
      setSaved(next.updatedAt);
    } catch (e) {
      setErrs(errorsOf(e));
    }
  };

  const s = settings.data;
  let editor: ComponentChildren = null;
  if (s) {
    const k = `${section}-${generation}`;
    switch (section) {
      case 'crawler':
        editor = <CrawlerEditor key={k} value={s.crawler} errs={errs} save={(v) => save({ crawler: v })} />;
        break;
      case 'extraction':
        editor = <ExtractionEditor key={k} value={s.contentExtraction} errs={errs} save={(v) => save({ contentExtraction: v })} />;
        break;
      case 'dataPoints':
        editor = <DataPointsEditor key={k} value={s.dataPoints} errs={errs} save={(v) => save({ dataPoints: v })} />;
        break;
      case 'resultGroups':
        editor = <ResultGroupsEditor key={k} value={s.resultGroups} errs={errs} save={(v) => save({ resultGroups: v })} />;
        break;
      case 'filters':
        editor = <FiltersEditor key={k} value={s.filters} errs={errs} save={(v) => save({ filters: v })} />;
        break;
      case 'synonyms':
        editor = <SynonymsEditor key={k} value={s.search.synonyms} errs={errs} save={(v) => save({ search: { synonyms: v } })} />;
        break;
      case 'typo':
        editor = <TypoEditor key={k} value={s} errs={errs} save={(v) => save(v as unknown as Record<string, unknown>)} />;
        break;
      case 'mappings':
        editor = <MappingsEditor key={k} value={s.search.resultMappings} errs={errs} save={(v) => save({ search: { resultMappings: v } })} />;
        break;
      default:
        editor = <Notice kind="error">No settings section "{section}".</Notice>;
    }
  }

  return (
    <section>
      <h1>{title}</h1>
      {settings.error && <Notice kind="error">{settings.error}</Notice>}
      {errs && <Notice kind="error">Not saved: {errs.message}</Notice>}
      {saved && <Notice kind="ok">Saved ({when(saved)}).</Notice>}
      {editor}
    </section>
  );
}

/** The form around an editor: Save submits the draft. */
function EditorForm({ onSubmit, children, intro }: { onSubmit: () => void | Promise<void>; children: ComponentChildren; intro?: ComponentChildren }) {
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="editor"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await onSubmit();
        } finally {
          setBusy(false);
        }
      }}
    >
      {intro && <div class="lead">{intro}</div>}
      {children}
      <div class="actions sticky">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}

/** An ordered list of rules, each a fieldset with move and remove buttons. */
function Rows<T>(p: { items: T[]; onChange: (items: T[]) => void; make: () => T; noun: string; path: string; errs: FieldErrors | null; render: (item: T, set: (v: T) => void, path: string) => ComponentChildren }) {
  // Rows are keyed by position; a move or removal remounts them so their controls' own state follows.
  const [version, setVersion] = useState(0);
  const reorder = (next: T[]) => {
    setVersion((v) => v + 1);
    p.onChange(next);
  };
  const move = (i: number, d: number) => {
    const next = p.items.slice();
    const [x] = next.splice(i, 1);
    next.splice(i + d, 0, x!);
    reorder(next);
  };
  const listMsg = messageFor(p.errs, p.path);
  return (
    <div class="rows">
      {listMsg && <p class="field-error">{listMsg}</p>}
      {p.items.length === 0 && <p class="empty">No {p.noun}s yet.</p>}
      {p.items.map((item, i) => {
        const path = `${p.path}[${i}]`;
        const rowMsg = messageFor(p.errs, path);
        return (
          <fieldset class={`row${rowMsg ? ' field-invalid' : ''}`} key={`${version}-${i}`} data-field={path}>
            <legend>
              {p.noun[0]!.toUpperCase() + p.noun.slice(1)} {i + 1}
            </legend>
            {rowMsg && <p class="field-error">{rowMsg}</p>}
            <div class="row-fields">
              {p.render(
                item,
                (v) => {
                  const next = p.items.slice();
                  next[i] = v;
                  p.onChange(next);
                },
                path,
              )}
            </div>
            <div class="row-actions">
              <button type="button" class="small" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move ${p.noun} ${i + 1} up`}>
                ↑
              </button>
              <button type="button" class="small" disabled={i === p.items.length - 1} onClick={() => move(i, 1)} aria-label={`Move ${p.noun} ${i + 1} down`}>
                ↓
              </button>
              <button type="button" class="small danger" onClick={() => reorder(p.items.filter((_, j) => j !== i))} aria-label={`Remove ${p.noun} ${i + 1}`}>
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
      <button type="button" onClick={() => p.onChange([...p.items, p.make()])}>
        Add {p.noun}
      </button>
    </div>
  );
}

// ------------------------------------------------------------------ crawler rules

function CrawlerEditor({ value, errs, save }: EditorProps<CrawlerSettings>) {
  const [d, setD] = useState<Record<string, unknown>>({ ...value });
  const set = (k: string) => (v: unknown) => setD((x) => ({ ...x, [k]: v }));
  const p = (k: string) => `crawler.${k}`;
  const str = (k: string) => (d[k] as string | null) ?? '';
  return (
    <EditorForm
      onSubmit={() => save({ ...d, allowedHosts: (d.allowedHosts as string[] | null)?.length ? d.allowedHosts : null, recrawlSchedule: str('recrawlSchedule').trim() || null } as unknown as CrawlerSettings)}
      intro={<p>Where the crawler starts, what it may fetch and index, and how politely. Patterns are regular expressions matched against the URL.</p>}
    >
      <div class="grid2">
        <LinesInput label="Start URLs" path={p('rootUrls')} errs={errs} value={d.rootUrls as string[]} onChange={set('rootUrls')} placeholder="https://www.example.com/" hint="One per line; a site crawl starts here." />
        <LinesInput label="Sitemap URLs" path={p('sitemapUrls')} errs={errs} value={d.sitemapUrls as string[]} onChange={set('sitemapUrls')} placeholder="https://www.example.com/sitemap.xml" />
        <LinesInput label="Allowed hosts" path={p('allowedHosts')} errs={errs} value={d.allowedHosts as string[] | null} onChange={set('allowedHosts')} hint="Empty: the hosts of the start and sitemap URLs." />
        <LinesInput label="Blacklist (never fetch)" path={p('blacklist')} errs={errs} value={d.blacklist as string[]} onChange={set('blacklist')} placeholder="/private/" />
        <LinesInput label="Whitelist (only these)" path={p('whitelist')} errs={errs} value={d.whitelist as string[]} onChange={set('whitelist')} />
        <LinesInput label="No-index (follow links, do not index)" path={p('noIndex')} errs={errs} value={d.noIndex as string[]} onChange={set('noIndex')} />
      </div>
      <div class="grid3">
        <NumberInput label="Maximum depth" path={p('maxDepth')} errs={errs} value={d.maxDepth as number} onChange={set('maxDepth')} />
        <NumberInput label="Maximum pages" path={p('maxPages')} errs={errs} value={d.maxPages as number} onChange={set('maxPages')} />
        <NumberInput label="Delay between requests (ms)" path={p('requestDelayMs')} errs={errs} value={d.requestDelayMs as number} onChange={set('requestDelayMs')} />
        <NumberInput label="Concurrent requests per host" path={p('concurrencyPerHost')} errs={errs} value={d.concurrencyPerHost as number} onChange={set('concurrencyPerHost')} />
        <NumberInput label="Timeout (ms)" path={p('timeoutMs')} errs={errs} value={d.timeoutMs as number} onChange={set('timeoutMs')} />
        <NumberInput label="Maximum page size (bytes)" path={p('maxBytes')} errs={errs} value={d.maxBytes as number} onChange={set('maxBytes')} />
        <TextInput label="Sitemap schedule (cron)" path={p('sitemapSchedule')} errs={errs} value={str('sitemapSchedule')} onChange={set('sitemapSchedule')} />
        <TextInput label="Recrawl schedule (cron, empty: never)" path={p('recrawlSchedule')} errs={errs} value={str('recrawlSchedule')} onChange={set('recrawlSchedule')} />
        <TextInput label="User agent" path={p('userAgent')} errs={errs} value={str('userAgent')} onChange={set('userAgent')} />
      </div>
      <div class="checks">
        <Checkbox label="Respect robots.txt" path={p('respectRobotsTxt')} errs={errs} value={d.respectRobotsTxt as boolean} onChange={set('respectRobotsTxt')} />
        <Checkbox label="Respect noindex" path={p('respectNoindex')} errs={errs} value={d.respectNoindex as boolean} onChange={set('respectNoindex')} />
        <Checkbox label="Respect canonical links" path={p('respectCanonical')} errs={errs} value={d.respectCanonical as boolean} onChange={set('respectCanonical')} />
        <Checkbox label="Remove pages that leave the sitemaps" path={p('removeMissing')} errs={errs} value={d.removeMissing as boolean} onChange={set('removeMissing')} />
      </div>
    </EditorForm>
  );
}

// ------------------------------------------------------------------ content extraction

function ExtractionEditor({ value, errs, save }: EditorProps<ExtractionRule[]>) {
  const [rules, setRules] = useState<ExtractionRule[]>(value.map((r) => ({ ...r })));
  const clean = (r: ExtractionRule): ExtractionRule => {
    const out: ExtractionRule = {};
    if (r.contentGroup?.trim()) out.contentGroup = r.contentGroup.trim();
    if (r.title?.trim()) out.title = r.title.trim();
    if (r.contentInclude?.length) out.contentInclude = r.contentInclude;
    if (r.contentExclude?.length) out.contentExclude = r.contentExclude;
    if (r.image?.trim()) out.image = r.image.trim();
    return out;
  };
  return (
    <EditorForm onSubmit={() => save(rules.map(clean))} intro={<p>CSS selectors for the title, the content (included and excluded parts) and the image; a rule with a content group applies to that group's pages only.</p>}>
      <Rows<ExtractionRule>
        items={rules}
        onChange={setRules}
        make={() => ({})}
        noun="rule"
        path="contentExtraction"
        errs={errs}
        render={(r, set, path) => (
          <>
            <TextInput label="Content group (empty: all pages)" path={`${path}.contentGroup`} errs={errs} value={r.contentGroup ?? ''} onChange={(v) => set({ ...r, contentGroup: v })} />
            <TextInput label="Title selector" path={`${path}.title`} errs={errs} value={r.title ?? ''} onChange={(v) => set({ ...r, title: v })} placeholder="h1" />
            <LinesInput label="Content selectors" path={`${path}.contentInclude`} errs={errs} value={r.contentInclude ?? []} onChange={(v) => set({ ...r, contentInclude: v })} placeholder="main" rows={2} />
            <LinesInput label="Excluded selectors" path={`${path}.contentExclude`} errs={errs} value={r.contentExclude ?? []} onChange={(v) => set({ ...r, contentExclude: v })} placeholder=".ads" rows={2} />
            <TextInput label="Image selector" path={`${path}.image`} errs={errs} value={r.image ?? ''} onChange={(v) => set({ ...r, image: v })} />
          </>
        )}
      />
    </EditorForm>
  );
}

// ------------------------------------------------------------------ data points

type Source = 'selector' | 'meta' | 'jsonLd';

function DataPointsEditor({ value, errs, save }: EditorProps<DataPointRule[]>) {
  const [rules, setRules] = useState<DataPointRule[]>(value.map((r) => ({ ...r })));
  const sourceOf = (r: DataPointRule): Source => (r.meta !== undefined ? 'meta' : r.jsonLd !== undefined ? 'jsonLd' : 'selector');
  return (
    <EditorForm onSubmit={() => save(rules)} intro={<p>Values read from crawled pages: shown with results, used for sorting, or searchable. A filter can be bound to a data point.</p>}>
      <Rows<DataPointRule>
        items={rules}
        onChange={setRules}
        make={() => ({ key: '', selector: '', type: 'text', show: true, sortable: false, searchable: false })}
        noun="data point"
        path="dataPoints"
        errs={errs}
        render={(r, set, path) => {
          const src = sourceOf(r);
          const setSource = (s: Source) => {
            const { selector, meta, jsonLd, ...rest } = r;
            const v = selector ?? meta ?? jsonLd ?? '';
            set({ ...rest, [s]: v } as DataPointRule);
          };
          return (
            <>
              <TextInput label="Key" path={`${path}.key`} errs={errs} value={r.key} onChange={(v) => set({ ...r, key: v })} />
              <Select<Source> label="Read from" path={`${path}.source`} errs={errs} value={src} options={[['selector', 'CSS selector'], ['meta', 'Meta tag'], ['jsonLd', 'JSON-LD path']]} onChange={setSource} />
              <TextInput label={src === 'meta' ? 'Meta name or property' : src === 'jsonLd' ? 'JSON-LD path' : 'Selector'} path={`${path}.${src}`} errs={errs} value={(r[src] as string | undefined) ?? ''} onChange={(v) => set({ ...r, [src]: v })} />
              <TextInput label="Attribute (optional)" path={`${path}.attribute`} errs={errs} value={r.attribute ?? ''} onChange={(v) => set({ ...r, attribute: v || undefined })} />
              <Select label="Type" path={`${path}.type`} errs={errs} value={r.type} options={[['text', 'Text'], ['number', 'Number'], ['date', 'Date'], ['boolean', 'Yes/no']]} onChange={(v) => set({ ...r, type: v })} />
              <div class="checks">
                <Checkbox label="Show with results" path={`${path}.show`} errs={errs} value={r.show} onChange={(v) => set({ ...r, show: v })} />
                <Checkbox label="Sortable" path={`${path}.sortable`} errs={errs} value={r.sortable} onChange={(v) => set({ ...r, sortable: v })} />
                <Checkbox label="Searchable" path={`${path}.searchable`} errs={errs} value={r.searchable} onChange={(v) => set({ ...r, searchable: v })} />
              </div>
            </>
          );
        }}
      />
    </EditorForm>
  );
}

// ------------------------------------------------------------------ result groups

function ResultGroupsEditor({ value, errs, save }: EditorProps<ResultGroupRule[]>) {
  const [rules, setRules] = useState<ResultGroupRule[]>(value.map((r) => ({ ...r })));
  return (
    <EditorForm
      onSubmit={() => save(rules.map((r) => ({ name: r.name, ...(r.urlPattern ? { urlPattern: r.urlPattern } : {}), ...(r.selector ? { selector: r.selector } : {}) })))}
      intro={<p>Crawled pages go to the first group whose URL pattern or selector matches; the rest are in no group (shown as “_”). The order matters.</p>}
    >
      <Rows<ResultGroupRule>
        items={rules}
        onChange={setRules}
        make={() => ({ name: '' })}
        noun="group"
        path="resultGroups"
        errs={errs}
        render={(r, set, path) => (
          <>
            <TextInput label="Name" path={`${path}.name`} errs={errs} value={r.name} onChange={(v) => set({ ...r, name: v })} />
            <TextInput label="URL pattern" path={`${path}.urlPattern`} errs={errs} value={r.urlPattern ?? ''} onChange={(v) => set({ ...r, urlPattern: v })} placeholder="/blog/" />
            <TextInput label="Selector" path={`${path}.selector`} errs={errs} value={r.selector ?? ''} onChange={(v) => set({ ...r, selector: v })} placeholder="article.post" />
          </>
        )}
      />
    </EditorForm>
  );
}

// ------------------------------------------------------------------ filters

function FiltersEditor({ value, errs, save }: EditorProps<FilterDefinition[]>) {
  const [rules, setRules] = useState<FilterDefinition[]>(value.map((r) => ({ ...r })));
  const nextId = () => `fid#${1 + Math.max(0, ...rules.map((r) => Number(/^fid#(\d+)$/.exec(r.id)?.[1] ?? 0)))}`;
  return (
    <EditorForm
      onSubmit={() => save(rules.map((r) => ({ id: r.id, name: r.name, type: r.type, ...(r.dataPoint ? { dataPoint: r.dataPoint } : {}) })))}
      intro={
        <p>
          Filters visitors narrow results with. Pages pushed as JSON reference a filter by its ID (<code>fid#1</code>); crawled pages take the value of the bound data point.
        </p>
      }
    >
      <Rows<FilterDefinition>
        items={rules}
        onChange={setRules}
        make={() => ({ id: nextId(), name: '', type: 'multiple' })}
        noun="filter"
        path="filters"
        errs={errs}
        render={(r, set, path) => (
          <>
            <TextInput label="Filter ID" path={`${path}.id`} errs={errs} value={r.id} onChange={(v) => set({ ...r, id: v })} />
            <TextInput label="Name" path={`${path}.name`} errs={errs} value={r.name} onChange={(v) => set({ ...r, name: v })} />
            <Select label="Type" path={`${path}.type`} errs={errs} value={r.type} options={[['multiple', 'Multiple choice'], ['range', 'Range']]} onChange={(v) => set({ ...r, type: v })} />
            <TextInput label="Data point (optional)" path={`${path}.dataPoint`} errs={errs} value={r.dataPoint ?? ''} onChange={(v) => set({ ...r, dataPoint: v })} />
          </>
        )}
      />
    </EditorForm>
  );
}

// ------------------------------------------------------------------ synonyms

type SynonymRow = { kind: 'group'; terms: string } | { kind: 'mapping'; from: string; to: string };

const splitList = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

function SynonymsEditor({ value, errs, save }: EditorProps<Array<SynonymGroup | SynonymMapping>>) {
  const [rows, setRows] = useState<SynonymRow[]>(value.map((s) => ('terms' in s ? { kind: 'group', terms: s.terms.join(', ') } : { kind: 'mapping', from: s.from, to: s.to.join(', ') })));
  return (
    <EditorForm
      onSubmit={() => save(rows.map((r) => (r.kind === 'group' ? { terms: splitList(r.terms) } : { from: r.from.trim(), to: splitList(r.to) })))}
      intro={<p>Equivalent words find each other both ways; a one-way synonym makes a search for the first word also find the others.</p>}
    >
      <Rows<SynonymRow>
        items={rows}
        onChange={setRows}
        make={() => ({ kind: 'group', terms: '' })}
        noun="synonym"
        path="search.synonyms"
        errs={errs}
        render={(r, set, path) => (
          <>
            <Select
              label="Kind"
              path={`${path}.kind`}
              errs={errs}
              value={r.kind}
              options={[['group', 'Equivalent words'], ['mapping', 'One way']]}
              onChange={(k) => set(k === 'group' ? { kind: 'group', terms: r.kind === 'group' ? r.terms : [r.from, r.to].filter(Boolean).join(', ') } : { kind: 'mapping', from: '', to: r.kind === 'group' ? r.terms : r.to })}
            />
            {r.kind === 'group' ? (
              <TextInput label="Words (comma-separated)" path={`${path}.terms`} errs={errs} value={r.terms} onChange={(v) => set({ ...r, terms: v })} placeholder="tv, television" />
            ) : (
              <>
                <TextInput label="A search for" path={`${path}.from`} errs={errs} value={r.from} onChange={(v) => set({ ...r, from: v })} placeholder="pg" />
                <TextInput label="Also finds (comma-separated)" path={`${path}.to`} errs={errs} value={r.to} onChange={(v) => set({ ...r, to: v })} placeholder="postgresql" />
              </>
            )}
          </>
        )}
      />
    </EditorForm>
  );
}

// ------------------------------------------------------------------ typo tolerance

const TYPO: Array<['default' | 'strict' | 'off', string]> = [
  ['default', 'Default: 1 typo from 4 letters, 2 from 8'],
  ['strict', 'Strict: 1 typo from 8 letters'],
  ['off', 'Off: exact words only'],
];

function TypoEditor({ value, errs, save }: EditorProps<Settings>) {
  const [search, setSearch] = useState(value.search.typoTolerance);
  const [suggest, setSuggest] = useState(value.suggest.typoTolerance);
  const [minSearches, setMinSearches] = useState<number | string>(value.suggest.minSearches);
  return (
    <EditorForm
      onSubmit={() => save({ search: { typoTolerance: search }, suggest: { typoTolerance: suggest, minSearches } } as unknown as Settings)}
      intro={<p>How forgiving matching is with misspelled words, in search and in the suggestions while typing.</p>}
    >
      <Select label="Search" path="search.typoTolerance" errs={errs} value={search} options={TYPO} onChange={setSearch} />
      <Select label="Suggestions" path="suggest.typoTolerance" errs={errs} value={suggest} options={TYPO} onChange={setSuggest} />
      <NumberInput label="Searches before a query is suggested" path="suggest.minSearches" errs={errs} value={minSearches} onChange={setMinSearches} />
    </EditorForm>
  );
}

// ------------------------------------------------------------------ result mappings

type ActionType = ResultMapping['action']['type'];

function MappingsEditor({ value, errs, save }: EditorProps<ResultMapping[]>) {
  const [rules, setRules] = useState<ResultMapping[]>(value.map((r) => JSON.parse(JSON.stringify(r)) as ResultMapping));
  const actionFor = (type: ActionType, old: ResultMapping['action']): ResultMapping['action'] => {
    const urls = 'urls' in old ? old.urls : 'url' in old ? [old.url] : [];
    if (type === 'pin' || type === 'hide') return { type, urls };
    if (type === 'redirect') return { type, url: urls[0] ?? '' };
    return { type: 'custom', html: 'html' in old ? old.html : '', position: 1 };
  };
  return (
    <EditorForm onSubmit={() => save(rules)} intro={<p>Rules triggered by a query: pin pages to the top, hide pages, add a custom result, or send the visitor to a page.</p>}>
      <Rows<ResultMapping>
        items={rules}
        onChange={setRules}
        make={() => ({ trigger: { type: 'equals', value: '' }, action: { type: 'pin', urls: [] } })}
        noun="mapping"
        path="search.resultMappings"
        errs={errs}
        render={(r, set, path) => {
          const a = r.action;
          return (
            <>
              <Select
                label="When the query"
                path={`${path}.trigger.type`}
                errs={errs}
                value={r.trigger.type}
                options={[['equals', 'equals'], ['contains', 'contains'], ['regex', 'matches the regular expression']]}
                onChange={(v) => set({ ...r, trigger: { ...r.trigger, type: v } })}
              />
              <TextInput label="Query text" path={`${path}.trigger.value`} errs={errs} value={r.trigger.value} onChange={(v) => set({ ...r, trigger: { ...r.trigger, value: v } })} />
              <Select<ActionType>
                label="Then"
                path={`${path}.action.type`}
                errs={errs}
                value={a.type}
                options={[['pin', 'pin these pages to the top'], ['hide', 'hide these pages'], ['custom', 'add a custom result'], ['redirect', 'redirect to a page']]}
                onChange={(v) => set({ ...r, action: actionFor(v, a) })}
              />
              {(a.type === 'pin' || a.type === 'hide') && <LinesInput label="Page URLs" path={`${path}.action.urls`} errs={errs} value={a.urls} onChange={(v) => set({ ...r, action: { ...a, urls: v } })} />}
              {a.type === 'redirect' && <TextInput label="Redirect URL" path={`${path}.action.url`} errs={errs} value={a.url} onChange={(v) => set({ ...r, action: { ...a, url: v } })} />}
              {a.type === 'custom' && (
                <>
                  <TextArea label="HTML of the result" path={`${path}.action.html`} errs={errs} value={a.html} onChange={(v) => set({ ...r, action: { ...a, html: v } })} />
                  <NumberInput label="Position" path={`${path}.action.position`} errs={errs} value={a.position} onChange={(v) => set({ ...r, action: { ...a, position: v as number } })} />
                  <TextInput label="Content group (optional)" path={`${path}.action.contentGroup`} errs={errs} value={a.contentGroup ?? ''} onChange={(v) => set({ ...r, action: { ...a, contentGroup: v || undefined } })} />
                </>
              )}
            </>
          );
        }}
      />
    </EditorForm>
  );
}
