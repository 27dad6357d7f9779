/**
 * `GET /metrics` (src/http/metrics.ts): after a known set of requests a scrape shows exactly
 * those requests by route pattern and status, the answer caches' hits and misses, the index
 * gauges, and prom-client's process metrics; the route needs the master key, and
 * SITESIFT_METRICS_ADDRESS serves the same registry on its own address without a key.
 */
import t from 'tap';
import { startTestServer } from '../helpers/server.js';

/** `name{labels} value` lines of an exposition text, as a map from `name{labels}` to the value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

t.test('a scrape counts the requests made before it, by route pattern and status', async (t) => {
  const s = await startTestServer({ t });
  const get = (path: string) => fetch(`${s.url}${path}`);
  const doc = { url: 'https://site.test/gadgets', title: 'Gadgets', content: 'All about gadgets and widgets.' };
  const put = await fetch(`${s.url}/sites/pageJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc) });
  t.equal(put.status, 200);
  for (let i = 0; i < 3; i++) t.equal((await get('/sites?site=default&query=gadgets&log=false')).status, 200);
  t.equal((await get('/sites?site=default&query=nothing-here&log=false')).status, 200);
  for (let i = 0; i < 2; i++) t.equal((await get('/sites/suggest?site=default&query=gad')).status, 200);
  t.equal((await get('/sites?site=nosuch&query=x')).status, 404);
  t.equal((await get(`/tasks/t_00000000000000000000?token=${s.token}`)).status, 404);
  t.equal((await get('/no/such/path')).status, 404);

  const noKey = await get('/metrics');
  t.equal(noKey.status, 401, 'no key');
  t.equal((await fetch(`${s.url}/metrics?token=${s.token}`)).status, 403, 'a project key is not enough');
  const scrape = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.masterKey}` } });
  t.equal(scrape.status, 200);
  t.match(scrape.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await scrape.text();
  const m = samples(text);

  t.equal(m.get('sitesift_http_requests_total{method="POST",route="/sites/pageJson",status="200"}'), 1);
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/sites",status="200"}'), 4);
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/sites",status="404"}'), 1);
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/sites/suggest",status="200"}'), 2);
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/tasks/:taskId",status="404"}'), 1, 'the route pattern, not the URL');
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/metrics",status="401"}'), 1);
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/metrics",status="403"}'), 1);
  t.notOk(text.includes('t_00000000000000000000') || text.includes('/no/such/path') || text.includes(s.token), 'no URL, id or key in a label');
  t.equal(m.get('sitesift_http_request_duration_seconds_count{method="GET",route="/sites"}'), 5);
  t.equal(m.get('sitesift_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/sites"}'), 5);

  // Three identical searches: one miss then two hits; one other query; two identical suggests.
  t.equal(m.get('sitesift_cache_requests_total{cache="search",result="miss"}'), 2);
  t.equal(m.get('sitesift_cache_requests_total{cache="search",result="hit"}'), 2);
  t.equal(m.get('sitesift_cache_requests_total{cache="suggest",result="miss"}'), 1);
  t.equal(m.get('sitesift_cache_requests_total{cache="suggest",result="hit"}'), 1);

  t.equal(m.get('sitesift_index_documents{site="default"}'), 1);
  t.equal(m.get('sitesift_index_segments{site="default"}'), 1);
  t.ok((m.get('sitesift_index_bytes{site="default"}') ?? 0) > 0, 'segment bytes');
  t.equal(m.get('sitesift_index_merges_running'), 0);
  t.equal(m.get('sitesift_pool_queue_length'), 0);
  t.ok(m.has('sitesift_querylog_lag_seconds') && m.has('sitesift_querylog_pending_entries'), 'query-log lag');
  t.ok(m.has('nodejs_eventloop_lag_seconds'), 'event-loop lag');
  t.ok((m.get('process_resident_memory_bytes') ?? 0) > 0, 'memory');

  // The scrape itself is counted once it is answered.
  const again = samples(await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.masterKey}` } })).text());
  t.equal(again.get('sitesift_http_requests_total{method="GET",route="/metrics",status="200"}'), 1);
  t.equal(again.get('sitesift_http_requests_total{method="GET",route="/sites",status="200"}'), 4, 'nothing else moved');
  t.equal(s.metricsUrl, null, 'no separate address unless configured');
});

t.test('SITESIFT_METRICS_ADDRESS serves the same registry without a key', async (t) => {
  const s = await startTestServer({ t, env: { SITESIFT_METRICS_ADDRESS: '127.0.0.1:0' } });
  t.ok(s.metricsUrl, 'listening');
  t.not(s.metricsUrl, s.url);
  t.equal((await fetch(`${s.url}/sites?site=default&query=x&log=false`)).status, 200);
  const r = await fetch(`${s.metricsUrl}/metrics`);
  t.equal(r.status, 200);
  const m = samples(await r.text());
  t.equal(m.get('sitesift_http_requests_total{method="GET",route="/sites",status="200"}'), 1);
  t.equal((await fetch(`${s.metricsUrl}/sites?site=default&query=x`)).status, 404, 'only /metrics there');
  t.equal((await fetch(`${s.metricsUrl}/metrics`, { method: 'POST' })).status, 405);
  t.equal((await fetch(`${s.url}/metrics`)).status, 401, 'the API address still wants the master key');
});
