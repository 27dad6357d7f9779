/**
 * Prometheus metrics of one server (main thread), served as text by `GET /metrics` (master key)
 * and, when `SITESIFT_METRICS_ADDRESS` is set, on that address without a key
 * ({@link startMetricsServer}). docs/OPERATIONS.md lists the series and sample queries.
 *
 * Cost: a request costs one counter increment and one histogram observation in plain arrays
 * kept per method and route ({@link RouteStats}); the scrape turns them into the exposition.
 * prom-client's own `inc`/`observe` validate and hash the label set on every call (several
 * microseconds each, as much as a cached search costs), so the request path does not use them.
 * Everything that needs index, crawl, cache or query-log state is read by collect callbacks when
 * a scrape asks, never on the request path. Each server has its own registry (tests run several
 * servers in one process).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'koa';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Services } from '../services.js';

/** Route label of a request no route matched (unknown path, or a known path with another method). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Latency buckets in seconds: a cached search answers in well under a millisecond, a batch of 100 pages in tens of ms. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Requests of one method and route: counts per status, and the latency histogram. */
interface RouteStats {
  method: string;
  route: string;
  byStatus: Map<number, number>;
  /** Observations per bucket of {@link LATENCY_BUCKETS} (not cumulative), the last for +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** The value rows of a histogram in prom-client's exposition shape (cumulative buckets). */
function histogramValues(name: string, all: Iterable<RouteStats>): Array<{ metricName: string; labels: Record<string, string | number>; value: number }> {
  const out: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
  for (const r of all) {
    const labels = { method: r.method, route: r.route };
    let acc = 0;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      acc += r.buckets[i]!;
      out.push({ metricName: `${name}_bucket`, labels: { le: LATENCY_BUCKETS[i]!, ...labels }, value: acc });
    }
    out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: r.count });
    out.push({ metricName: `${name}_sum`, labels, value: r.sum });
    out.push({ metricName: `${name}_count`, labels, value: r.count });
  }
  return out;
}

/** The metrics of one server; see the module comment. */
export interface Metrics {
  readonly registry: Registry;
  /**
   * Counts one answered request: `route` is the router's pattern (`/tasks/:taskId`), never
   * the URL; `seconds` its latency.
   */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** The exposition text of every metric (collect callbacks run now). */
  text(): Promise<string>;
  readonly contentType: string;
}

/**
 * The route label of a finished request: the pattern the router matched, else {@link UNMATCHED_ROUTE}.
 *
 * @example metrics.observeRequest(ctx.method, routeLabel(ctx), ctx.status, seconds)
 */
export function routeLabel(ctx: Context): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}

/**
 * Builds the registry of a server: request counters and latency histograms, answer caches,
 * indexes, merges, crawl queue and fetches, query-log lag, pool queue, and prom-client's
 * default process metrics (event-loop lag, memory, CPU, GC).
 *
 * @example
 * const metrics = createMetrics(services);
 * const app = createApp(services, { metrics });
 */
export function createMetrics(services: Services): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  /** method → route → stats. */
  const routes = new Map<string, Map<string, RouteStats>>();
  const allRoutes = function* (): Generator<RouteStats> {
    for (const byRoute of routes.values()) yield* byRoute.values();
  };
  new Counter({
    name: 'sitesift_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of allRoutes()) for (const [status, n] of r.byStatus) this.inc({ method: r.method, route: r.route, status }, n);
    },
  });
  const latencyName = 'sitesift_http_request_duration_seconds';
  const latencyHelp = 'Time from a request entering the application to its answer, by method and route pattern.';
  // A histogram whose buckets are filled by observeRequest: prom-client's Histogram cannot be
  // set from outside, and the registry formats any object with this shape.
  registry.registerMetric({
    name: latencyName,
    help: latencyHelp,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({ name: latencyName, help: latencyHelp, type: 'histogram', aggregator: 'sum', values: histogramValues(latencyName, allRoutes()) }),
  } as unknown as Parameters<Registry['registerMetric']>[0]);

  new Counter({
    name: 'sitesift_cache_requests_total',
    help: 'Answer-cache lookups of the search and suggest caches, by cache and result (hit or miss).',
    labelNames: ['cache', 'result'] as const,
    registers,
    collect() {
      this.reset();
      const search = services.search.cache.stats();
      const suggest = services.suggest.cache;
      this.inc({ cache: 'search', result: 'hit' }, search.hits);
      this.inc({ cache: 'search', result: 'miss' }, search.misses);
      this.inc({ cache: 'suggest', result: 'hit' }, suggest.hits);
      this.inc({ cache: 'suggest', result: 'miss' }, suggest.misses);
    },
  });

  // The index gauges read the stores that are open (at most SITESIFT_OPEN_PROJECTS): opening
  // a closed project's index for a scrape would evict one that is in use. Each gauge collects
  // on its own: prom-client runs the collect callbacks of one scrape concurrently.
  const perStore = (name: string, help: string, value: (store: Awaited<ReturnType<Services['indexes']['openProjects']>>[number]) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['site'] as const,
      registers,
      async collect() {
        this.reset();
        for (const store of await services.indexes.openProjects()) this.set({ site: store.siteId }, value(store));
      },
    });
  };
  perStore('sitesift_index_documents', 'Searchable pages (index status 200) of each open project index.', (s) => s.stats().pages);
  perStore('sitesift_index_segments', 'Segments in the current generation of each open project index.', (s) => s.segments().length);
  perStore('sitesift_index_bytes', 'Bytes of the segment files of the current generation of each open project index.', (s) => s.segments().reduce((a, x) => a + x.bytes, 0));
  new Gauge({
    name: 'sitesift_index_merges_running',
    help: 'Segment merges running now, over every open project index.',
    registers,
    async collect() {
      let merging = 0;
      for (const store of await services.indexes.openProjects()) if (store.merging) merging++;
      this.set(merging);
    },
  });

  new Gauge({
    name: 'sitesift_crawl_queue_depth',
    help: 'Crawl page tasks queued or running, per project whose crawl queue is open.',
    labelNames: ['site'] as const,
    registers,
    collect() {
      this.reset();
      for (const [site, n] of services.crawl.queueDepths()) this.set({ site }, n);
    },
  });
  new Counter({
    name: 'sitesift_crawl_fetches_total',
    help: 'Crawl page tasks finished since start, by the index status they recorded ("failed": none).',
    labelNames: ['status'] as const,
    registers,
    collect() {
      this.reset();
      for (const [status, n] of services.crawl.fetchOutcomes()) this.inc({ status }, n);
    },
  });

  new Gauge({
    name: 'sitesift_querylog_pending_entries',
    help: 'Query-log entries recorded and not committed yet (queued, or in the writer thread).',
    registers,
    collect() {
      this.set(services.analytics.backlog().entries);
    },
  });
  new Gauge({
    name: 'sitesift_querylog_lag_seconds',
    help: 'Age of the oldest query-log entry not committed yet (0 when none is waiting).',
    registers,
    collect() {
      const b = services.analytics.backlog();
      this.set(b.oldestAt === null ? 0 : Math.max(0, services.clock() - b.oldestAt) / 1000);
    },
  });
  new Counter({
    name: 'sitesift_querylog_dropped_total',
    help: 'Query-log entries dropped because the queue was full.',
    registers,
    collect() {
      this.reset();
      this.inc(services.analytics.dropped);
    },
  });

  new Gauge({
    name: 'sitesift_pool_queue_length',
    help: 'Tasks (segment builds, merges, fetches, sitemap reads) waiting for a worker-pool thread.',
    registers,
    collect() {
      this.set(services.pool.queueSize);
    },
  });
  new Gauge({
    name: 'sitesift_pool_threads',
    help: 'Worker-pool threads running.',
    registers,
    collect() {
      this.set(services.pool.threads.length);
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    observeRequest(method, route, status, seconds) {
      // Nested maps: the method and route strings are interned by the router, a joined key would not be.
      let byRoute = routes.get(method);
      if (!byRoute) routes.set(method, (byRoute = new Map()));
      let r = byRoute.get(route);
      if (!r) byRoute.set(route, (r = { method, route, byStatus: new Map(), buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 }));
      r.byStatus.set(status, (r.byStatus.get(status) ?? 0) + 1);
      let i = 0;
      while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
      r.buckets[i]!++;
      r.sum += seconds;
      r.count++;
    },
    text: () => registry.metrics(),
  };
}

/** A metrics listener on its own address. */
export interface MetricsServer {
  /** `http://host:port` bound. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (no key) on `host:port`, apart from the API: bind it to an address
 * only the monitoring network reaches. Every other path is 404, every other method 405.
 *
 * @example
 * const ms = await startMetricsServer(metrics, '127.0.0.1', 9464);
 */
export async function startMetricsServer(metrics: Metrics, host: string, port: number): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const fail = (status: number, code: string, message: string, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify({ status: 'failure', code, message }));
    };
    if (path !== '/metrics') return fail(404, 'not_found', `No route ${req.method} ${path}; this address serves GET /metrics only.`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'method_not_allowed', `${req.method} is not allowed on /metrics; use GET.`, { Allow: 'GET, HEAD' });
    metrics.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => fail(500, 'internal', 'Collecting the metrics failed; see the server log.'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
