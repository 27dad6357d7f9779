/**
 * Analytics: the query time chart (`GET /sites/queries/timechart`, drawn with uPlot), the top
 * queries with their selection rate (`/sites/queries/top`) and the queries that found nothing
 * (`/sites/queries/noResults`). The chart's numbers are also in a table for screen readers.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { Api } from '../api';
import { Notice, Select, useLoad, when } from '../ui';

interface Timechart {
  start: number;
  end: number;
  interval: string;
  total: number;
  buckets: Array<{ timestamp: number; count: number; noResults: number }>;
}
interface TopQuery {
  query: string;
  count: number;
  averageResults: number;
  selectRate: number;
}
interface NoResultQuery {
  query: string;
  count: number;
  lastSearched: number;
}

const RANGES: Array<[string, string]> = [
  ['86400', 'Last 24 hours'],
  ['604800', 'Last 7 days'],
  ['2592000', 'Last 30 days'],
  ['7776000', 'Last 90 days'],
];

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

function Chart({ data }: { data: Timechart }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = data.buckets.map((b) => b.timestamp);
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 260,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [
          {},
          { label: 'Searches', stroke: '#1d4ed8', fill: 'rgba(29, 78, 216, 0.12)', width: 2, points: { show: data.buckets.length < 60 } },
          { label: 'No results', stroke: '#b42318', width: 2, dash: [6, 4], points: { show: false } },
        ],
        axes: [{}, { label: 'Searches', size: 56 }],
      },
      [xs, data.buckets.map((b) => b.count), data.buckets.map((b) => b.noResults)],
      el,
    );
    const ro = typeof ResizeObserver === 'function' ? new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 260 })) : null;
    ro?.observe(el);
    return () => {
      ro?.disconnect();
      plot.destroy();
    };
  }, [data]);
  return <div ref={box} class="chart" role="img" aria-label={`Searches per ${data.interval}: ${data.total} in the range`} data-total={data.total} />;
}

export function AnalyticsPage({ api }: { api: Api }) {
  const [range, setRange] = useState('604800');
  const [now, setNow] = useState(() => Math.floor(Date.now() / 1000));
  const start = now - Number(range);
  const chart = useLoad(() => api.project<Timechart>('GET', '/sites/queries/timechart', { start, end: now + 1 }), [range, now]);
  const top = useLoad(() => api.project<{ queries: TopQuery[] }>('GET', '/sites/queries/top', { start, end: now + 1, limit: 1000 }).then((r) => r.queries), [range, now]);
  const none = useLoad(() => api.project<{ queries: NoResultQuery[] }>('GET', '/sites/queries/noResults', { start, end: now + 1, limit: 20 }).then((r) => r.queries), [range, now]);

  const searches = (top.data ?? []).reduce((n, q) => n + q.count, 0);
  const selected = (top.data ?? []).reduce((n, q) => n + q.count * q.selectRate, 0);
  const noResults = (chart.data?.buckets ?? []).reduce((n, b) => n + b.noResults, 0);
  const error = chart.error ?? top.error ?? none.error;

  return (
    <section>
      <div class="table-head">
        <h1>Analytics</h1>
        <Select label="Range" path="range" errs={null} value={range} options={RANGES} onChange={setRange} />
        <button type="button" class="small" onClick={() => setNow(Math.floor(Date.now() / 1000))}>
          Refresh
        </button>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="tiles">
        <div class="tile">
          <span class="tile-n" data-testid="total-searches">
            {chart.data ? chart.data.total.toLocaleString() : '…'}
          </span>{' '}
          searches
        </div>
        <div class="tile">
          <span class="tile-n">{chart.data && chart.data.total ? pct(noResults / chart.data.total) : '—'}</span> without results
        </div>
        <div class="tile">
          <span class="tile-n" data-testid="selection-rate">
            {searches ? pct(selected / searches) : '—'}
          </span>{' '}
          selection rate
        </div>
      </div>
      <h2>Searches over time</h2>
      {chart.data && <Chart data={chart.data} />}
      {chart.data && (
        <details class="chart-table">
          <summary>Show the numbers as a table</summary>
          <table class="table">
            <caption class="sr-only">Searches per {chart.data.interval}</caption>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col" class="num">
                  Searches
                </th>
                <th scope="col" class="num">
                  No results
                </th>
              </tr>
            </thead>
            <tbody>
              {chart.data.buckets.map((b) => (
                <tr key={b.timestamp}>
                  <td>{when(new Date(b.timestamp * 1000).toISOString())}</td>
                  <td class="num">{b.count}</td>
                  <td class="num">{b.noResults}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
      <div class="grid2">
        <div>
          <h2>Top queries</h2>
          <table class="table">
            <caption class="sr-only">Most frequent queries</caption>
            <thead>
              <tr>
                <th scope="col">Query</th>
                <th scope="col" class="num">
                  Searches
                </th>
                <th scope="col" class="num">
                  Avg. results
                </th>
                <th scope="col" class="num">
                  Selected
                </th>
              </tr>
            </thead>
            <tbody>
              {(top.data ?? []).slice(0, 20).map((q) => (
                <tr key={q.query}>
                  <td>{q.query}</td>
                  <td class="num">{q.count}</td>
                  <td class="num">{q.averageResults}</td>
                  <td class="num">{pct(q.selectRate)}</td>
                </tr>
              ))}
              {top.data && top.data.length === 0 && (
                <tr>
                  <td colSpan={4}>No searches in this range.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
        <div>
          <h2>Queries without results</h2>
          <table class="table">
            <caption class="sr-only">Queries that found nothing</caption>
            <thead>
              <tr>
                <th scope="col">Query</th>
                <th scope="col" class="num">
                  Searches
                </th>
                <th scope="col">Last searched</th>
              </tr>
            </thead>
            <tbody>
              {(none.data ?? []).map((q) => (
                <tr key={q.query}>
                  <td>{q.query}</td>
                  <td class="num">{q.count}</td>
                  <td>{when(new Date(q.lastSearched * 1000).toISOString())}</td>
                </tr>
              ))}
              {none.data && none.data.length === 0 && (
                <tr>
                  <td colSpan={3}>None in this range.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
}
