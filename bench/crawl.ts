/**
 * Crawl benchmark (`make bench-crawl`). A report, not a test: prints a table a person can read
 * and one JSON line a script can compare; exits 0 whatever the numbers (non-zero only when the
 * harness itself fails).
 *
 * 1. Unpacks ../shared/corpus/postgresql-15/site.tar.gz and serves it from a static server on
 *    127.0.0.1 (in this process).
 * 2. `wget --mirror` of the site from index.html: the ceiling (pages/s of a plain mirror), the
 *    median of three mirrors: two before the crawl and one right after it.
 * 3. sitesift (server child process, SITESIFT_CRAWLER_ALLOW_PRIVATE=true, politeness delays
 *    off; started, then left until idle, so its pool threads have warmed up) crawls the site
 *    from index.html through `POST /sites/crawl`; timed until the crawl task is done and
 *    nothing is pending (every page searchable). Peak RSS of the server.
 *    Broken links are listed with their status.
 * 4. A sitemap of the same site (lastmod = file mtime) is imported twice: the second import
 *    must queue nothing.
 * 5. The known-item queries (queries.jsonl) run against the crawled project and against a
 *    project filled from docs.jsonl.gz through pagesJson; MRR@10, S@1, S@10, zero-result rate.
 *
 * Environment: BENCH_WORKERS (server pool threads, default 2), BENCH_SERVER (dist or tsx; default:
 * dist/ when built, which `make bench-crawl` does first),
 * BENCH_CRAWL_ONLY=1 (stop after the crawl: for profiling runs, not for reported numbers),
 * BENCH_WORKER_NICE (SITESIFT_WORKER_NICE of the server), BENCH_SERVER_NODE_OPTIONS (NODE_OPTIONS of
 * the server child only, e.g. `--require <profiler>`),
 * BENCH_SERVER_NODE_ARGS (node flags of the server child, space-separated, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/p`: flags NODE_OPTIONS refuses),
 * BENCH_PROFILE_SIGNAL (with BENCH_CRAWL_ONLY: a signal sent to the server after the crawl, for
 * a profiler preload to write its profiles).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { knownItemScores, loadPgDocs, loadPgQueries, SHARED, type KnownItem } from './lib/corpus.js';
import { processCpuMs, threadCpu } from './lib/proc.js';
import { markdownTable, median, writeBenchSection } from './lib/report.js';
import { call, createProject, indexDocs, startBenchServer, toPageDocs, type BenchServer } from './lib/server.js';

const GOAL_RATIO = 0.3;
const WORKERS = process.env.BENCH_WORKERS ?? '2';
const fmt = (x: number, d = 3) => x.toFixed(d);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Per-thread-name CPU seconds used between two {@link threadCpu} snapshots. */
function threadCpuDelta(before: Map<string, [string, number]>, after: Map<string, [string, number]>): Record<string, number> {
  const by: Record<string, number> = {};
  for (const [tid, [name, sec]] of after) {
    const d = sec - (before.get(tid)?.[1] ?? 0);
    const key = process.env.BENCH_TIDS ? `${name}#${tid}` : name;
    if (d > 0) by[key] = (by[key] ?? 0) + d;
  }
  return by;
}

/**
 * Waits until the server child is idle: at most one 10 ms clock tick of CPU in a 200 ms window
 * (at most 15 s). A freshly started server warms its pool threads (workers/warm-up.ts, ≈0.5 s of CPU
 * each); the crawl is timed on a settled server, as a long-running one is. Returns the ms waited.
 */
async function waitServerIdle(pid: number | undefined): Promise<number> {
  const t0 = performance.now();
  let last = processCpuMs(pid);
  while (performance.now() - t0 < 15_000) {
    await sleep(200);
    const now = processCpuMs(pid);
    if (now - last <= 10) break;
    last = now;
  }
  return performance.now() - t0;
}

/** Load average over the last minute (the machine is shared: report it with every number). */
function load1(): number {
  return os.loadavg()[0]!;
}

interface StaticSite {
  url: string;
  hits: number;
  close(): Promise<void>;
}

function serveStatic(root: string, extra: Map<string, () => string>): Promise<StaticSite> {
  const site = { hits: 0 } as StaticSite;
  const server = http.createServer((req, res) => {
    site.hits++;
    const p = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const gen = extra.get(p);
    if (gen) {
      res.writeHead(200, { 'content-type': 'application/xml' });
      return res.end(gen());
    }
    const file = path.join(root, p.endsWith('/') ? p + 'index.html' : p);
    if (!file.startsWith(root)) {
      res.writeHead(400);
      return res.end();
    }
    try {
      const body = readFileSync(file);
      const type = file.endsWith('.html') ? 'text/html; charset=utf-8' : file.endsWith('.css') ? 'text/css' : file.endsWith('.svg') ? 'image/svg+xml' : 'application/octet-stream';
      res.writeHead(200, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>404 Not Found</h1>');
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      site.close = () => new Promise((r) => server.close(() => r()));
      resolve(site);
    }),
  );
}

async function waitTask(server: BenchServer, site: string, taskId: string): Promise<any> {
  for (;;) {
    const r = await call(server, 'GET', `/tasks/${taskId}?site=${site}`);
    if (r.status !== 200) throw new Error(`GET /tasks: ${r.status} ${JSON.stringify(r.json)}`);
    if (r.json.state === 'done' || r.json.state === 'failed') return r.json;
    await sleep(100);
  }
}

async function waitPending0(server: BenchServer, site: string): Promise<any> {
  for (;;) {
    const r = await call(server, 'GET', `/sites/indexStatus?site=${site}`);
    if (r.json.pending === 0) return r.json;
    await sleep(50);
  }
}

async function search(server: BenchServer, site: string, query: string): Promise<{ urls: string[]; total: number }> {
  const qs = new URLSearchParams({ site, query, limit: '10', log: 'false', groupResults: 'false' });
  const res = await fetch(`${server.url}/sites?${qs}`);
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`GET /sites ${query}: ${res.status}`);
  const list: Array<{ link: string; type: string }> = Object.values(body.suggests as Record<string, any[]>).flat();
  return { urls: list.filter((r) => r.type !== 'custom').map((r) => r.link), total: Number(body.totalResults) };
}

async function scoreQueries(server: BenchServer, site: string, base: string, queries: KnownItem[], ranks?: Map<KnownItem, number>) {
  const by = new Map<string, { n: number; rr: number; s1: number; s10: number; zero: number }>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < queries.length) {
        const q = queries[next++]!;
        const r = await search(server, site, q.q);
        const s = knownItemScores(r.urls, base + q.url);
        ranks?.set(q, s.rr);
        for (const k of [q.kind, 'all']) {
          const a = by.get(k) ?? { n: 0, rr: 0, s1: 0, s10: 0, zero: 0 };
          a.n++;
          a.rr += s.rr;
          a.s1 += s.s1;
          a.s10 += s.s10;
          a.zero += r.total === 0 ? 1 : 0;
          by.set(k, a);
        }
      }
    }),
  );
  return by;
}

/** Mirrors run before the crawl; one more runs right after it (the ceiling is their median). */
const WGET_RUNS_BEFORE = 2;

interface WgetRun {
  pages: number;
  seconds: number;
  rate: number;
}


/**
 * One `wget --mirror` of the site into a fresh directory (a second mirror into the same one
 * would only compare timestamps), timed from spawn to exit; prints and returns its rate.
 * Asynchronous: the static server answering wget lives in this process.
 */
async function runWget(tmp: string, base: string, n: number): Promise<WgetRun> {
  const mirrorDir = path.join(tmp, `mirror-${n}`);
  const w0 = performance.now();
  const wget = await new Promise<{ status: number | null }>((resolve) => {
    const child = spawn('wget', ['--mirror', '--no-parent', '--no-verbose', '--reject', 'css,svg,png', '-e', 'robots=off', '-P', mirrorDir, `${base}index.html`], { stdio: 'ignore' });
    child.on('exit', (status) => resolve({ status }));
    child.on('error', () => resolve({ status: -1 }));
  });
  const seconds = (performance.now() - w0) / 1000;
  let pages = 0;
  try {
    pages = readdirSync(path.join(mirrorDir, new URL(base).host)).filter((f) => f.endsWith('.html')).length;
  } catch {
    pages = 0;
  }
  rmSync(mirrorDir, { recursive: true, force: true });
  const rate = pages / seconds;
  console.log(`wget --mirror #${n + 1}: ${pages} pages in ${fmt(seconds, 2)} s = ${fmt(rate, 1)} pages/s (exit ${wget.status})`);
  return { pages, seconds, rate };
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sitesift-bench-crawl-'));
  const results: Record<string, unknown> = {};
  let server: BenchServer | null = null;
  let site: StaticSite | null = null;
  try {
    execFileSync('tar', ['-xzf', path.join(SHARED, 'corpus/postgresql-15/site.tar.gz'), '-C', tmp]);
    const root = path.join(tmp, 'html') + path.sep;
    const htmlFiles = readdirSync(root).filter((f) => f.endsWith('.html'));
    const extra = new Map<string, () => string>();
    site = await serveStatic(root, extra);
    const base = `${site.url}/`;
    extra.set(
      '/sitemap.xml',
      () =>
        `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n` +
        htmlFiles.map((f) => `<url><loc>${base}${f}</loc><lastmod>${statSync(path.join(root, f)).mtime.toISOString()}</lastmod></url>`).join('\n') +
        '\n</urlset>\n',
    );
    console.log(`site: ${htmlFiles.length} HTML files served at ${base}`);

    // ---- wget --mirror: the ceiling. Its rate moves several-fold between runs with the machine's
    // other work, more than anything in the crawler; so the ceiling is the median of three
    // mirrors in this run: two before the crawl and one right after it, bracketing it.
    const wgetRuns: WgetRun[] = [];
    for (let i = 0; i < WGET_RUNS_BEFORE; i++) wgetRuns.push(await runWget(tmp, base, wgetRuns.length));

    // ---- sitesift crawl
    server = await startBenchServer({
      // The built server (dist/, as `make bench-crawl` builds it first, like the other server
      // benchmarks) when it exists, else tsx; BENCH_SERVER=tsx|dist forces one. Under tsx every
      // pool thread compiles the TypeScript it loads, CPU a production server never spends.
      mode: process.env.BENCH_SERVER === 'dist' || process.env.BENCH_SERVER === 'tsx' ? process.env.BENCH_SERVER : 'auto',
      // BENCH_SERVER_NODE_OPTIONS (e.g. `--require <profiler preload>`) goes to the server
      // child only, for profiling runs.
      nodeArgs: process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean),
      env: {
        SITESIFT_CRAWLER_ALLOW_PRIVATE: 'true',
        SITESIFT_WORKERS: WORKERS,
        ...(process.env.BENCH_WORKER_NICE ? { SITESIFT_WORKER_NICE: process.env.BENCH_WORKER_NICE } : {}),
        ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
      },
    });
    await createProject(server, 'crawled');
    const patch = await call(
      server,
      'PATCH',
      '/admin/projects/crawled/settings',
      JSON.stringify({ crawler: { rootUrls: [`${base}index.html`], requestDelayMs: 0, concurrencyPerHost: 16, maxPages: 100000, maxDepth: 1000 } }),
    );
    if (patch.status !== 200) throw new Error(`settings: ${patch.status} ${JSON.stringify(patch.json)}`);
    const settledMs = await waitServerIdle(server.child.pid);
    const hitsBefore = site.hits;
    const cpu0 = processCpuMs(server.child.pid) / 1000;
    const threads0 = threadCpu(server.child.pid);
    const benchCpu0 = process.cpuUsage();
    const load0 = load1();
    const c0 = performance.now();
    const started = await call(server, 'POST', '/sites/crawl?site=crawled');
    if (started.status !== 202) throw new Error(`POST /sites/crawl: ${started.status} ${JSON.stringify(started.json)}`);
    const task = await waitTask(server, 'crawled', started.json.taskId);
    const taskSeconds = (performance.now() - c0) / 1000;
    const status = await waitPending0(server, 'crawled');
    const crawlSeconds = (performance.now() - c0) / 1000;
    const crawlRate = status.pages / crawlSeconds;
    const serverCpu = processCpuMs(server.child.pid) / 1000 - cpu0;
    const byThread = threadCpuDelta(threads0, threadCpu(server.child.pid));
    const benchCpu = process.cpuUsage(benchCpu0);
    const staticCpu = (benchCpu.user + benchCpu.system) / 1e6;
    const loadEnd = load1();
    const crawlRequests = site.hits - hitsBefore;
    // On an idle server (a merge or the refresh after the crawl would slow this mirror down).
    await waitServerIdle(server.child.pid);
    wgetRuns.push(await runWget(tmp, base, wgetRuns.length));
    const wgetRate = median(wgetRuns.map((r) => r.rate));
    console.log(`wget --mirror median of ${wgetRuns.length} (${wgetRuns.map((r) => fmt(r.rate, 1)).join(', ')}): ${fmt(wgetRate, 1)} pages/s`);
    const broken = await call(server, 'GET', '/sites/indexedContent?site=crawled&status=4XX&limit=1000');
    const skipped = await call(server, 'GET', '/sites/indexedContent?site=crawled&status=8XX&limit=1000');
    const redirects = await call(server, 'GET', '/sites/indexedContent?site=crawled&status=3XX&limit=1000');
    const peakRss = server.peakRssMb();
    console.log(`server: ${server.mode === 'dist' ? 'built JS (dist/)' : 'TypeScript through tsx'}, ${WORKERS} pool threads; idle ${fmt(settledMs / 1000, 1)} s after start-up`);
    console.log(
      `sitesift crawl: ${status.pages} pages indexed in ${fmt(crawlSeconds, 2)} s = ${fmt(crawlRate, 1)} pages/s ` +
        `(${crawlRequests} requests; task ${task.state}: ${task.message}); peak RSS ${peakRss} MB`,
    );
    console.log(
      `  server CPU ${fmt(serverCpu, 2)} s = ${fmt((serverCpu * 1000) / status.pages, 2)} ms/page (all threads); ` +
        `bench process (static server + polling) ${fmt(staticCpu, 2)} s; load average ${fmt(load0, 1)} → ${fmt(loadEnd, 1)}`,
    );
    console.log(
      `  by thread (ms/page): ${Object.entries(byThread)
        .sort((a, b) => b[1] - a[1])
        .map(([n, sec]) => `${n} ${fmt((sec * 1000) / status.pages, 2)}`)
        .join(', ')}`,
    );
    console.log(`  every page fetched and written after ${fmt(taskSeconds, 2)} s; searchable (pending 0) after ${fmt(crawlSeconds, 2)} s`);
    console.log(`  4XX ${status['4XX']}, 5XX ${status['5XX']}, 8XX ${status['8XX']}, 3XX ${redirects.json.total ?? 0}`);
    for (const p of broken.json.pages ?? []) console.log(`  broken link: ${p.url} → ${p.status}`);
    for (const p of (skipped.json.pages ?? []).slice(0, 10)) console.log(`  skipped: ${p.url} → ${p.status} ${p.message ?? ''}`);
    const ratio = crawlRate / wgetRate;
    console.log(`  ratio to wget: ${fmt(ratio, 2)}× (goal ≥ ${GOAL_RATIO}×) ${ratio >= GOAL_RATIO ? 'MET' : 'NOT MET'}`);

    if (process.env.BENCH_CRAWL_ONLY === '1') {
      // A profiling preload (BENCH_SERVER_NODE_OPTIONS) may dump its profiles on SIGUSR2.
      if (process.env.BENCH_PROFILE_SIGNAL) {
        server.child.kill(process.env.BENCH_PROFILE_SIGNAL as NodeJS.Signals);
        await sleep(3000);
      }
      return;
    }

    // ---- sitemap import twice
    await call(server, 'PATCH', '/admin/projects/crawled/settings', JSON.stringify({ crawler: { rootUrls: [`${base}index.html`], sitemapUrls: [`${base}sitemap.xml`], requestDelayMs: 0, concurrencyPerHost: 16, maxPages: 100000, maxDepth: 1000 } }));
    const s0 = performance.now();
    const first = await call(server, 'POST', '/sites/sitemap?site=crawled');
    await waitTask(server, 'crawled', first.json.taskId);
    await waitPending0(server, 'crawled');
    const firstSeconds = (performance.now() - s0) / 1000;
    const second = await call(server, 'POST', '/sites/sitemap?site=crawled');
    await waitTask(server, 'crawled', second.json.taskId);
    console.log(`sitemap import 1: ${first.json.urls} URLs read, ${first.json.queued} queued, done in ${fmt(firstSeconds, 2)} s`);
    console.log(`sitemap import 2: ${second.json.urls} URLs read, ${second.json.queued} queued (goal 0) ${second.json.queued === 0 ? 'MET' : 'NOT MET'}`);

    // ---- relevance: crawled vs JSON-indexed
    await createProject(server, 'json');
    const docs = loadPgDocs();
    await indexDocs(server, 'json', toPageDocs(docs, base));
    const queries = loadPgQueries();
    const crawledRanks = new Map<KnownItem, number>();
    const jsonRanks = new Map<KnownItem, number>();
    const crawledScores = await scoreQueries(server, 'crawled', base, queries, crawledRanks);
    const jsonScores = await scoreQueries(server, 'json', base, queries, jsonRanks);
    console.log('\nknown-item queries (MRR@10 / S@1 / S@10 / zero):');
    console.log('kind      crawled                        json');
    const kinds = ['title', 'typo', 'prefix', 'heading', 'content', 'all'];
    const row = (a?: { n: number; rr: number; s1: number; s10: number; zero: number }) =>
      a ? `${fmt(a.rr / a.n)} / ${fmt(a.s1 / a.n)} / ${fmt(a.s10 / a.n)} / ${fmt(a.zero / a.n)}` : '-';
    for (const k of kinds) console.log(`${k.padEnd(9)} ${row(crawledScores.get(k)).padEnd(30)} ${row(jsonScores.get(k))}`);
    const mrr = (m: typeof crawledScores, k: string) => (m.get(k)!.rr / m.get(k)!.n);
    const worse = queries.filter((q) => (crawledRanks.get(q) ?? 0) < (jsonRanks.get(q) ?? 0));
    const better = queries.filter((q) => (crawledRanks.get(q) ?? 0) > (jsonRanks.get(q) ?? 0));
    console.log(`queries ranked worse on the crawled index: ${worse.length}, better: ${better.length}`);
    for (const q of worse.slice(0, 10)) console.log(`  worse (${q.kind}) "${q.q}" → ${q.url}: 1/rank ${fmt(crawledRanks.get(q)!)} vs ${fmt(jsonRanks.get(q)!)}`);
    const relevanceOk = mrr(crawledScores, 'all') >= mrr(jsonScores, 'all') - 1e-9;
    console.log(`crawled MRR@10 ${fmt(mrr(crawledScores, 'all'))} vs JSON ${fmt(mrr(jsonScores, 'all'))}: ${relevanceOk ? 'MET' : 'NOT MET'} (crawled ≥ JSON)`);

    const summary = markdownTable(
      ['measure', 'value'],
      [
        ['pages indexed (site: HTML files)', `${status.pages} (${htmlFiles.length})`],
        ['sitesift crawl, until every page is searchable', `${fmt(crawlSeconds, 2)} s = **${fmt(crawlRate, 1)} pages/s**`],
        [`wget --mirror, median of ${wgetRuns.length}`, `${fmt(wgetRate, 1)} pages/s (${wgetRuns.map((r) => fmt(r.rate, 1)).join(', ')})`],
        [`ratio to wget (goal ≥ ${GOAL_RATIO}×)`, `**${fmt(ratio, 2)}×** ${ratio >= GOAL_RATIO ? 'met' : 'not met'}`],
        ['server CPU per page, all threads', `${fmt((serverCpu * 1000) / status.pages, 2)} ms`],
        ['by thread, ms per page', Object.entries(byThread).sort((a, b) => b[1] - a[1]).map(([n, sec]) => `${n} ${fmt((sec * 1000) / status.pages, 2)}`).join(', ')],
        ['server peak RSS', `${peakRss} MB`],
        ['index status 4XX / 5XX / 8XX / 3XX', `${status['4XX']} / ${status['5XX']} / ${status['8XX']} / ${redirects.json.total ?? 0}`],
        ['sitemap import 1 / 2: URLs queued (goal: 0 the second time)', `${first.json.queued} / ${second.json.queued} of ${first.json.urls}`],
        ['known-item MRR@10, crawled vs JSON (goal: crawled ≥ JSON)', `${fmt(mrr(crawledScores, 'all'))} vs ${fmt(mrr(jsonScores, 'all'))} ${relevanceOk ? 'met' : 'not met'}`],
        ['load average, start → end of the crawl', `${fmt(load0, 1)} → ${fmt(loadEnd, 1)}`],
      ],
      ['l', 'r'],
    );
    const perKind = markdownTable(
      ['kind', 'crawled MRR@10 / S@1 / S@10 / zero', 'JSON MRR@10 / S@1 / S@10 / zero'],
      kinds.map((k) => [k, row(crawledScores.get(k)), row(jsonScores.get(k))]),
    );
    writeBenchSection('crawl', `${WORKERS} pool threads, server from ${server.mode === 'dist' ? 'the build (dist/)' : 'the sources (tsx)'}, politeness delays off.\n\n${summary}\n\n${perKind}`, {
      partial: WORKERS !== '2' || !!(process.env.BENCH_WORKER_NICE || process.env.BENCH_SERVER_NODE_OPTIONS || process.env.BENCH_SERVER_NODE_ARGS),
    });

    Object.assign(results, {
      bench: 'crawl',
      sitePages: htmlFiles.length,
      wget: { pagesPerSec: +fmt(wgetRate, 1), runs: wgetRuns.map((r) => ({ pages: r.pages, seconds: +fmt(r.seconds), pagesPerSec: +fmt(r.rate, 1) })) },
      crawl: {
        pages: status.pages,
        seconds: +fmt(crawlSeconds),
        pagesPerSec: +fmt(crawlRate, 1),
        peakRssMb: peakRss,
        serverCpuSeconds: +fmt(serverCpu, 2),
        cpuMsPerPage: +fmt((serverCpu * 1000) / status.pages, 2),
        load: [+fmt(load0, 1), +fmt(loadEnd, 1)],
        '4XX': status['4XX'],
        '8XX': status['8XX'],
        broken: (broken.json.pages ?? []).map((p: any) => [p.url.replace(base, ''), p.status]),
        ratioToWget: +fmt(ratio, 2),
      },
      sitemap: { urls: first.json.urls, firstQueued: first.json.queued, secondQueued: second.json.queued },
      relevance: Object.fromEntries(
        kinds.map((k) => [k, { crawled: +fmt(mrr(crawledScores, k)), json: +fmt(mrr(jsonScores, k)) }]),
      ),
      workers: Number(WORKERS),
      server: server.mode,
    });
    console.log('\n' + JSON.stringify(results));
  } finally {
    await server?.stop();
    await site?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
