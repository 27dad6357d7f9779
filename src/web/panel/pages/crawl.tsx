/**
 * Crawl & index: index status, buttons that start a site crawl, a sitemap import or a URL
 * push, and live progress from `GET /sites/tasks` (polled every second while anything is
 * queued or running): page counts per state, the newest runs and the task list.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api';
import { errorsOf, Notice, Select, TextInput, useLoad, when, type FieldErrors } from '../ui';
import { statusText } from './content';

type State = 'queued' | 'running' | 'done' | 'failed';
type Counts = Record<State, number>;

interface Task {
  taskId: string;
  type: string;
  state: State;
  url?: string;
  indexStatus?: number;
  message?: string;
  createdAt: string;
  finishedAt?: string;
  runId?: string;
  pagesQueued?: number;
}

interface Run extends Task {
  pages: Counts;
}

interface Tasks {
  counts: Counts;
  runs: Run[];
  tasks: Task[];
}

interface IndexStatus {
  pages: number;
  '4XX': number;
  '5XX': number;
  '8XX': number;
  pending: number;
  lastUpdated: string | null;
}

const STATES: State[] = ['queued', 'running', 'done', 'failed'];
const TYPE_NAMES: Record<string, string> = { crawl: 'Site crawl', sitemap: 'Sitemap import', url: 'URL push', append: 'Appended page', page: 'Page' };

function active(t: Tasks | null): boolean {
  return !!t && (t.counts.queued > 0 || t.counts.running > 0 || t.runs.some((r) => r.state === 'queued' || r.state === 'running'));
}

export function CrawlPage({ api }: { api: Api }) {
  const [tasks, setTasks] = useState<Tasks | null>(null);
  const [status, setStatus] = useState<IndexStatus | null>(null);
  const [filter, setFilter] = useState<'' | State>('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [pushUrl, setPushUrl] = useState('');
  const [pushErrs, setPushErrs] = useState<FieldErrors | null>(null);
  const [tick, setTick] = useState(0);
  const settings = useLoad(() => api.admin<{ crawler: { rootUrls: string[]; sitemapUrls: string[] } }>('GET', '/settings'), []);
  const live = useRef(true);

  async function refresh(): Promise<{ t: Tasks; s: IndexStatus } | null> {
    try {
      const [t, s] = await Promise.all([
        api.project<Tasks>('GET', '/sites/tasks', { limit: 100, state: filter || undefined }),
        api.project<IndexStatus>('GET', '/sites/indexStatus'),
      ]);
      if (!live.current) return null;
      setTasks(t);
      setStatus(s);
      setError(null);
      return { t, s };
    } catch (e) {
      if (live.current) setError(errorsOf(e).message);
      return null;
    }
  }

  // Poll every second while the crawler has work (or just after a button), else stop.
  useEffect(() => {
    live.current = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let stopped = false;
    let quietRounds = 0;
    const loop = async () => {
      const r = await refresh();
      if (stopped) return;
      quietRounds = r && (active(r.t) || r.s.pending > 0) ? 0 : quietRounds + 1;
      if (quietRounds < 3) timer = setTimeout(loop, 1000);
    };
    void loop();
    return () => {
      stopped = true;
      live.current = false;
      if (timer) clearTimeout(timer);
    };
  }, [filter, tick]);

  async function start(path: string, what: string) {
    setNotice(null);
    setError(null);
    try {
      const r = await api.project<{ taskId: string; queued?: number; urls?: number }>('POST', path);
      setNotice(`${what} started (task ${r.taskId})${r.urls !== undefined ? `: ${r.urls} URLs in the sitemaps, ${r.queued} queued` : ''}.`);
      setTick((x) => x + 1);
    } catch (e) {
      setError(errorsOf(e).message);
    }
  }

  async function push(e: Event) {
    e.preventDefault();
    setPushErrs(null);
    try {
      const r = await api.project<{ taskId: string }>('POST', '/index/documents', { url: pushUrl.trim() });
      setNotice(`The URL was queued (task ${r.taskId}).`);
      setPushUrl('');
      setTick((x) => x + 1);
    } catch (err) {
      setPushErrs(errorsOf(err));
    }
  }

  const run = tasks?.runs[0];
  const runTotal = run ? Math.max(run.pagesQueued ?? 0, STATES.reduce((n, s) => n + run.pages[s], 0)) : 0;
  const runDone = run ? run.pages.done + run.pages.failed : 0;
  const roots = settings.data?.crawler.rootUrls ?? [];
  const sitemaps = settings.data?.crawler.sitemapUrls ?? [];

  return (
    <section>
      <h1>Crawl &amp; index</h1>
      {error && <Notice kind="error">{error}</Notice>}
      {notice && <Notice kind="ok">{notice}</Notice>}

      <div class="tiles" aria-label="Index status">
        <div class="tile">
          <span class="tile-n">{status ? status.pages.toLocaleString() : '…'}</span> searchable pages
        </div>
        <div class="tile">
          <span class="tile-n">{status?.pending ?? '…'}</span> pending
        </div>
        <div class="tile">
          <span class="tile-n">{status ? status['4XX'] + status['5XX'] : '…'}</span> fetch errors
        </div>
        <div class="tile">
          <span class="tile-n">{status?.['8XX'] ?? '…'}</span> skipped by rules
        </div>
        <div class="tile tile-wide">Last change: {when(status?.lastUpdated)}</div>
      </div>

      <div class="card">
        <h2>Start</h2>
        <p class="hint">
          {roots.length ? (
            <>
              A site crawl starts at {roots.join(', ')}; <a href={`#/p/${encodeURIComponent(api.siteId)}/settings/crawler`}>crawler rules</a>.
            </>
          ) : (
            <>
              No start URLs yet: set them in the <a href={`#/p/${encodeURIComponent(api.siteId)}/settings/crawler`}>crawler rules</a>.
            </>
          )}
        </p>
        <div class="actions left">
          <button type="button" class="primary" onClick={() => start('/sites/crawl', 'The site crawl')} disabled={!roots.length}>
            Crawl the site
          </button>
          <button type="button" onClick={() => start('/sites/sitemap', 'The sitemap import')} disabled={!sitemaps.length}>
            Import sitemaps
          </button>
        </div>
        <form class="form-row" onSubmit={push}>
          <TextInput label="Fetch one URL" path="url" errs={pushErrs} value={pushUrl} onChange={setPushUrl} placeholder="https://www.example.com/page" />
          <button type="submit">Push URL</button>
        </form>
        {pushErrs && !pushErrs.fields.length && <Notice kind="error">{pushErrs.message}</Notice>}
      </div>

      <h2>Progress</h2>
      <div class="progress-box" aria-live="polite" aria-busy={active(tasks)}>
        <dl class="counts" aria-label="Page tasks by state">
          {STATES.map((s) => (
            <div class={`count count-${s}`} key={s} data-state={s}>
              <dt>{s[0]!.toUpperCase() + s.slice(1)}</dt>
              <dd>{tasks ? tasks.counts[s].toLocaleString() : '…'}</dd>
            </div>
          ))}
        </dl>
        {run && (
          <div class="run" data-run-state={run.state}>
            <p>
              <strong>{TYPE_NAMES[run.type] ?? run.type}</strong> started {when(run.createdAt)} — <span class={`state state-${run.state}`}>{run.state}</span>
              {run.finishedAt ? `, finished ${when(run.finishedAt)}` : ''}
              {run.message ? ` (${run.message})` : ''}
            </p>
            <progress max={Math.max(1, runTotal)} value={runDone} aria-label="Pages of the latest run finished">
              {runDone} / {runTotal}
            </progress>
            <p class="hint">
              {runDone} of {runTotal} pages finished: {run.pages.done} done, {run.pages.failed} failed, {run.pages.running} running, {run.pages.queued} queued.
            </p>
          </div>
        )}
      </div>

      <div class="table-head">
        <h2>Tasks</h2>
        <Select<'' | State>
          label="State"
          path="state"
          errs={null}
          value={filter}
          options={[['', 'All'], ['queued', 'Queued'], ['running', 'Running'], ['done', 'Done'], ['failed', 'Failed']]}
          onChange={setFilter}
        />
        <button type="button" class="small" onClick={() => setTick((x) => x + 1)}>
          Refresh
        </button>
      </div>
      <table class="table tasks">
        <caption class="sr-only">Newest crawl tasks</caption>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">URL</th>
            <th scope="col">State</th>
            <th scope="col">Index status</th>
            <th scope="col">Created</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {(tasks?.tasks ?? []).map((t) => (
            <tr key={t.taskId}>
              <td>{TYPE_NAMES[t.type] ?? t.type}</td>
              <td class="url">{t.url ?? (t.pagesQueued !== undefined ? `${t.pagesQueued} pages queued` : '')}</td>
              <td>
                <span class={`state state-${t.state}`}>{t.state}</span>
                {t.message && <span class="hint"> {t.message}</span>}
              </td>
              <td>{t.indexStatus !== undefined ? <abbr title={statusText(t.indexStatus)}>{t.indexStatus}</abbr> : ''}</td>
              <td>{when(t.createdAt)}</td>
              <td>{when(t.finishedAt)}</td>
            </tr>
          ))}
          {tasks && tasks.tasks.length === 0 && (
            <tr>
              <td colSpan={6}>No tasks{filter ? ` in state ${filter}` : ''}.</td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
