/**
 * Indexed content: `GET /sites/indexedContent` with its filters (URL part, content type,
 * index status), paging, and what each index status means.
 */
import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { Notice, Select, TextInput, useLoad, when } from '../ui';

interface Page {
  url: string;
  title: string;
  contentType: string;
  status: number;
  message?: string;
  contentGroup: string;
  source: string;
  indexedAt: string;
  updatedAt: string;
}

/** What each index status means (SPEC §4). */
export const STATUS_TEXT: Record<number, string> = {
  200: 'Indexed and searchable',
  801: 'Skipped: matches a blacklist pattern',
  802: 'Skipped: outside the whitelist',
  803: 'Skipped: noindex (meta robots, X-Robots-Tag or a no-index rule)',
  804: 'Skipped: disallowed by robots.txt',
  805: 'Skipped: the canonical link points elsewhere',
  806: 'Skipped: unsupported content type',
  807: 'Skipped: host not allowed',
  808: 'Skipped: too large',
  809: 'Skipped: empty after extraction',
  810: 'Skipped: fetch timeout or network error',
  404: 'Not found: removed from search',
  410: 'Gone: removed from search',
};

/** A sentence for an index status code. */
export function statusText(code: number): string {
  if (STATUS_TEXT[code]) return STATUS_TEXT[code]!;
  if (code >= 300 && code < 400) return 'Redirected: the target is tracked as its own URL';
  if (code >= 400 && code < 500) return 'The site answered with a client error';
  if (code >= 500 && code < 600) return 'The site answered with a server error';
  if (code >= 800) return 'Skipped by a crawler rule';
  return 'Status ' + code;
}

const TYPES = ['HTML', 'PDF', 'XLS', 'DOC', 'PPT', 'ODP', 'ODS', 'ODT', 'TXT', 'YOUTUBE_VIDEO'];
const STATUSES: Array<[string, string]> = [
  ['', 'Any'],
  ['200', '200 — indexed'],
  ['3XX', '3XX — redirected'],
  ['4XX', '4XX — client errors'],
  ['5XX', '5XX — server errors'],
  ['8XX', '8XX — skipped by rules'],
  ...[801, 802, 803, 804, 805, 806, 807, 808, 809, 810].map((c): [string, string] => [String(c), `${c} — ${STATUS_TEXT[c]!.replace(/^Skipped: /, '')}`]),
];

export function ContentPage({ api }: { api: Api }) {
  const [url, setUrl] = useState('');
  const [applied, setApplied] = useState('');
  const [contentType, setContentType] = useState('');
  const [status, setStatus] = useState('');
  const [limit, setLimit] = useState(50);
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => api.project<{ total: number; offset: number; limit: number; pages: Page[] }>('GET', '/sites/indexedContent', { url: applied, contentType, status, offset, limit }),
    [applied, contentType, status, offset, limit],
  );
  const total = list.data?.total ?? 0;
  const from = total === 0 ? 0 : offset + 1;
  const to = Math.min(total, offset + limit);

  return (
    <section>
      <h1>Indexed content</h1>
      <form
        class="filters"
        role="search"
        aria-label="Filter indexed pages"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setApplied(url.trim());
        }}
      >
        <TextInput label="URL contains" path="url" errs={null} value={url} onChange={setUrl} />
        <Select label="Content type" path="contentType" errs={null} value={contentType} options={[['', 'Any'], ...TYPES.map((t): [string, string] => [t, t.replace('_', ' ')])]} onChange={(v) => (setOffset(0), setContentType(v))} />
        <Select label="Index status" path="status" errs={null} value={status} options={STATUSES} onChange={(v) => (setOffset(0), setStatus(v))} />
        <button type="submit">Filter</button>
      </form>
      {list.error && <Notice kind="error">{list.error}</Notice>}
      <p class="hint" aria-live="polite">
        {list.loading ? 'Loading…' : total === 0 ? 'No pages match.' : `Pages ${from}–${to} of ${total.toLocaleString()}`}
      </p>
      <table class="table content">
        <caption class="sr-only">Indexed pages</caption>
        <thead>
          <tr>
            <th scope="col">Page</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Group</th>
            <th scope="col">Source</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.pages ?? []).map((p) => (
            <tr key={p.url}>
              <td class="page-cell">
                <span class="page-title">{p.title || <em>untitled</em>}</span>
                <a class="url" href={p.url} target="_blank" rel="noopener noreferrer">
                  {p.url}
                </a>
              </td>
              <td>{p.contentType}</td>
              <td>
                <span class={`code code-${String(p.status)[0]}xx`}>{p.status}</span> <span class="status-text">{p.message || statusText(p.status)}</span>
              </td>
              <td>{p.contentGroup || '_'}</td>
              <td>{p.source}</td>
              <td>{when(p.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - limit))}>
          ← Previous
        </button>
        <button type="button" disabled={to >= total} onClick={() => setOffset(offset + limit)}>
          Next →
        </button>
        <Select label="Per page" path="limit" errs={null} value={String(limit)} options={[['25', '25'], ['50', '50'], ['100', '100'], ['250', '250']]} onChange={(v) => (setOffset(0), setLimit(Number(v)))} />
      </nav>
      <details class="legend">
        <summary>What the index statuses mean</summary>
        <dl>
          {Object.entries(STATUS_TEXT).map(([c, t]) => (
            <div key={c}>
              <dt>{c}</dt>
              <dd>{t}</dd>
            </div>
          ))}
          <div>
            <dt>3XX</dt>
            <dd>Redirected: the target is tracked as its own URL</dd>
          </div>
          <div>
            <dt>other 4XX / 5XX</dt>
            <dd>The site answered with an error; the page is not searchable</dd>
          </div>
        </dl>
      </details>
    </section>
  );
}
