/**
 * Search preview: the widget itself on this project (searches not logged, no events), and a
 * "why this rank" view for the last query. The API has no score explanation, so the view
 * states what the answer and the settings show: the result mapping that pinned or added a
 * result, the fields whose words matched (highlights in title and snippet, query words in the
 * URL) with the project's field weights.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ResultMapping, Settings } from '../../../core/settings';
import { mount } from '../../widget/mount';
import { decodeEntities, markedParts } from '../../widget/text';
import type { Result, SearchAnswer } from '../../widget/types';
import type { Api } from '../api';
import { Notice, useLoad } from '../ui';

/** The query as mappings see it (lower case, words joined by one space). */
function normalised(q: string): string {
  return q
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}*]+/u)
    .filter(Boolean)
    .join(' ');
}

/** Whether a mapping's trigger fires for the query (the server's rules, approximated in the browser). */
export function triggers(m: ResultMapping, query: string): boolean {
  const q = normalised(query);
  const v = normalised(m.trigger.value);
  if (m.trigger.type === 'equals') return q === v;
  if (m.trigger.type === 'contains') return v !== '' && ` ${q} `.includes(` ${v} `);
  try {
    return new RegExp(m.trigger.value).test(q);
  } catch {
    return false;
  }
}

function marked(s: string | undefined): string[] {
  return [...new Set(markedParts(s ?? '').filter((p) => p.marked).map((p) => p.text.toLowerCase()))];
}

interface Reason {
  text: string;
}

function reasons(r: Result, query: string, settings: Settings): Reason[] {
  const out: Reason[] = [];
  const w = settings.search.fieldWeights;
  settings.search.resultMappings.forEach((m, i) => {
    if (!triggers(m, query)) return;
    if (m.action.type === 'pin' && m.action.urls.includes(r.link)) out.push({ text: `Pinned to the top by result mapping ${i + 1} (“${m.trigger.type} ${m.trigger.value}”).` });
    if (m.action.type === 'custom' && r.type === 'custom' && r.html === m.action.html) out.push({ text: `Custom result of result mapping ${i + 1}, placed at position ${m.action.position}.` });
  });
  if (r.type === 'custom') return out;
  const inTitle = marked(r.name);
  const inContent = marked(r.content);
  const words = normalised(query).split(' ').filter((x) => x.length > 1 && x !== '*');
  const inUrl = words.filter((x) => r.link.toLowerCase().includes(x));
  if (inTitle.length) out.push({ text: `Title matches ${inTitle.join(', ')} (title weight ${w.title}).` });
  if (inUrl.length) out.push({ text: `URL contains ${inUrl.join(', ')} (URL weight ${w.url}).` });
  if (inContent.length) out.push({ text: `Content matches ${inContent.join(', ')} (content weight ${w.content}).` });
  if (!inTitle.length && !inContent.length && !inUrl.length) out.push({ text: `Matched in keywords (weight ${w.keywords}), headings (weight ${w.headings}) or content outside the snippet, or through a synonym or typo.` });
  return out;
}

export function PreviewPage({ api }: { api: Api }) {
  const host = useRef<HTMLDivElement>(null);
  const [query, setQuery] = useState('');
  const settings = useLoad(() => api.admin<Settings>('GET', '/settings'), []);
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const base = new URL('/', location.href).toString();
    const handle = mount(el, { site: api.siteId, endpoint: base, analytics: false, followRedirects: false, onSelect: () => false }, base);
    const onSearch = (e: Event) => setQuery((e as CustomEvent<{ query: string }>).detail.query);
    el.addEventListener('sitesift:search', onSearch);
    return () => {
      el.removeEventListener('sitesift:search', onSearch);
      handle.destroy();
    };
  }, [api.siteId]);

  useEffect(() => {
    if (!query) return;
    let live = true;
    const url = new URL('/sites', location.href);
    const params = { site: api.siteId, query, limit: '20', groupResults: 'false', includeContent: 'true', highlightQueryTerms: 'true', log: 'false' };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    fetch(url.toString(), { credentials: 'omit' })
      .then((r) => r.json() as Promise<SearchAnswer & { message?: string }>)
      .then(
        (a) => {
          if (!live) return;
          if (!a.suggests) setError(a.message ?? 'The search failed.');
          else {
            setAnswer(a);
            setError(null);
          }
        },
        (e: unknown) => live && setError(String(e)),
      );
    return () => {
      live = false;
    };
  }, [query, api.siteId]);

  const results = answer ? Object.values(answer.suggests).flat() : [];
  return (
    <section>
      <h1>Search preview</h1>
      <p class="lead">The widget as visitors see it, on this project. Searches here are not logged and selecting a result stays on this page.</p>
      <div class="preview" ref={host} />
      <h2>Why this rank</h2>
      {error && <Notice kind="error">{error}</Notice>}
      {!answer && <p class="hint">Search above to see why each result is where it is.</p>}
      {answer && settings.data && (
        <>
          <p class="hint">
            “{decodeEntities(answer.query)}”: {answer.totalResults} results. Results are ranked by BM25 relevance over the whole index with the field weights below (a page's boost multiplies its score;
            exact words rank above typo matches; ties break on the URL), after result mappings.
          </p>
          {answer.redirect && <Notice kind="info">A result mapping redirects this query to {answer.redirect}.</Notice>}
          <ol class="why">
            {results.map((r, i) => (
              <li key={r.link + i}>
                <span class="why-title">{r.type === 'custom' ? 'Custom result' : markedParts(r.name).map((p) => p.text).join('') || r.link}</span>
                {r.type !== 'custom' && <span class="url">{r.link}</span>}
                <ul>
                  {reasons(r, decodeEntities(answer.query), settings.data!).map((x, j) => (
                    <li key={j}>{x.text}</li>
                  ))}
                </ul>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
