/**
 * `make bench-suggest`: the query log under a realistic load.
 *
 * 1. Generates 1,000,000 synthetic logged searches over the last 365 days from the PostgreSQL
 *    manual (titles, headings, known-item queries, Zipf-distributed, plus a long tail of
 *    mostly-unique word combinations and ~8% no-result queries), written through the real
 *    batching writer (`record` + `flush`).
 * 2. Rolls them up (a year of backfill in one run) and times the time chart: 1 year by day and
 *    2 days by hour (goal ≤ 20 ms each).
 * 3. Times `querySuggestions` for 1–6-character prefixes of real titles (goal: a small part of
 *    the route's p99 ≤ 5 ms budget) and the cost of `record` on the search path.
 * 4. HTTP (unless BENCH_HTTP=0): the log above is generated straight into the project folder
 *    of a server child (bench/lib/server.ts) that has the PostgreSQL manual indexed through
 *    `pagesJson`; then, with 8 connections: BENCH_MISS_PAIRS (default 3) alternated pairs of
 *    BENCH_MISS_SECONDS (default 5) rows of `GET /sites/suggest` and `GET /sites` with every
 *    request a miss of the answer caches (unique absent `excludeContentGroups`; the medians are
 *    reported, and the first pair also shows what the search threads' first touch of every
 *    prefix costs), `GET /sites/suggest` on 1–6-character title prefixes for BENCH_SECONDS
 *    (default 10; maxQuerySuggestions=3; the cache fills as the run goes) and the same again
 *    (every prefix answered before), BENCH_HIT_PAIRS (default 6) alternated pairs of
 *    BENCH_HIT_SECONDS (default 2) rows of cached suggest and cached search (titles,
 *    `log=false`; the median ratio), then BENCH_LOG_ROUNDS (default 40) alternated pairs of
 *    BENCH_LOG_SECONDS (default 2) rows of `GET /sites` with `log=false` and with logging on
 *    (titles): per pair, the goal as the median over ABBA quads (each two consecutive pairs:
 *    off, on, on, off), the median over pairs beside it, plus the CPU per request of all "on"
 *    rows over all "off" rows together, also per server thread. Every row reports the server
 *    process's CPU (main and search threads, from /proc) per answered request, which other
 *    processes on a shared machine disturb far less than req/s. Load comes from `wrk` when it
 *    is installed, else from a keep-alive Node client in this process (noted in the output).
 *    Goals: suggest p99 ≤ 5 ms and ≥ 1.5× search throughput; logging costs ≤ 10%.
 *
 * Prints a table and one JSON line (`BENCH_SUGGEST {...}`).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { QueryLogService } from '../src/analytics/index.js';
import { loadPgDocs, loadPgQueries } from './lib/corpus.js';
import { createProject, indexDocs, startBenchServer, toPageDocs, type BenchServer } from './lib/server.js';
import { mainThreadCpuMs, processCpuMs, threadCpu } from './lib/proc.js';
import { markdownTable, writeBenchSection } from './lib/report.js';
import { hasWrk, rotatingScript, runWrk } from './lib/wrk.js';

const TOTAL = Number(process.env.SITESIFT_BENCH_QUERIES ?? 1_000_000);
const DAY = 86_400_000;
// Real time: the HTTP server's clock decides the 90-day window and the open hour.
const NOW = Date.now();
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WITH_HTTP = process.env.BENCH_HTTP !== '0';

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function timeIt(n: number, fn: (i: number) => void): { p50: number; p95: number; p99: number; max: number; mean: number } {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    fn(i);
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const mean = times.reduce((a, b) => a + b, 0) / n;
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99), max: times[times.length - 1]!, mean };
}

const cleanTitle = (t: string) => t.replace(/^([A-Z]\.)?[\dA-Z.]*\.\s+/, '').replace(/^(Part|Appendix|Chapter) [IVXLC\d]+\.\s*/, '').trim();

// ---------------------------------------------------------------- vocabulary
const docs = loadPgDocs();
const titles = docs.map((d) => cleanTitle(d.title)).filter(Boolean);
const phrases = new Set<string>();
for (const t of titles) {
  phrases.add(t.toLowerCase());
  const words = t.toLowerCase().split(/\s+/);
  if (words.length > 2) phrases.add(words.slice(0, 2).join(' '));
}
for (const d of docs) for (const h of d.headings.split(/\s{2,}|\n/)) if (h.length > 3 && h.length < 60) phrases.add(h.toLowerCase());
for (const q of loadPgQueries()) phrases.add(q.q.toLowerCase());
const vocab = [...phrases];
const contentWords = [...new Set(docs.slice(0, 400).flatMap((d) => d.content.toLowerCase().match(/[a-z_]{4,14}/g) ?? []))];

// ---------------------------------------------------------------- server (optional)
let server: BenchServer | null = null;
const SITE = 'pg';
if (WITH_HTTP) {
  // BENCH_SERVER_ARGS: node flags for the server child, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
  // (every row reports its start and end on the monotonic clock the profile's samples use).
  const nodeArgs = (process.env.BENCH_SERVER_ARGS ?? '').split(/\s+/).filter(Boolean);
  server = await startBenchServer({ nodeArgs });
  await createProject(server, SITE);
  const { indexed, seconds } = await indexDocs(server, SITE, toPageDocs(docs));
  console.error(`bench-suggest: indexed ${indexed} pages in ${seconds.toFixed(1)} s (${server.mode})`);
}

// ---------------------------------------------------------------- generate + write
// Into the server's project folder (it opens the query log lazily, after this process closed it).
const dataDir = server ? join(server.dataDir, 'data') : mkdtempSync(join(tmpdir(), 'sitesift-bench-suggest-'));
const svc = new QueryLogService({ dataDir, clock: () => NOW });
const LOG_SITE = server ? SITE : 'bench';
const r = rng(42);
// Zipf(s≈1) over the vocabulary via inverse-power sampling.
const zipf = () => Math.min(vocab.length - 1, Math.floor(Math.exp(r() * Math.log(vocab.length + 1)) - 1));
const wroteStart = process.hrtime.bigint();
const recordTimes: number[] = [];
let flushMs = 0;
for (let i = 0; i < TOTAL; i++) {
  const longTail = r() < 0.3;
  const query = longTail
    ? `${contentWords[Math.floor(r() * contentWords.length)]} ${contentWords[Math.floor(r() * contentWords.length)]}`
    : vocab[zipf()]!;
  const noResults = longTail ? r() < 0.25 : r() < 0.01;
  // Chronological, like a live log (the writer appends to its time index).
  const at = NOW - 365 * DAY + Math.floor(((i + r()) * 365 * DAY) / TOTAL);
  const s = i % 100 === 0 ? process.hrtime.bigint() : 0n;
  svc.record(LOG_SITE, { query, results: noResults ? 0 : 1 + Math.floor(r() * 40), ip: `10.0.${i & 255}.${(i >> 8) & 255}`, userAgent: 'bench', at });
  if (s) recordTimes.push(Number(process.hrtime.bigint() - s) / 1e6);
  if (svc.pending >= 1000) {
    const f0 = process.hrtime.bigint();
    svc.flush();
    flushMs += Number(process.hrtime.bigint() - f0) / 1e6;
  }
}
svc.flush();
const writeSeconds = Number(process.hrtime.bigint() - wroteStart) / 1e9;
recordTimes.sort((a, b) => a - b);

const rollStart = process.hrtime.bigint();
const roll = svc.rollup(LOG_SITE, NOW);
const rollupMs = Number(process.hrtime.bigint() - rollStart) / 1e6;

// ---------------------------------------------------------------- time chart
const nowSec = Math.floor(NOW / 1000);
svc.timechart(LOG_SITE, nowSec - 365 * 86400, nowSec, 'day');
const yearByDay = timeIt(300, () => svc.timechart(LOG_SITE, nowSec - 365 * 86400, nowSec, 'day'));
const twoDaysByHour = timeIt(300, () => svc.timechart(LOG_SITE, nowSec - 2 * 86400, nowSec, 'hour'));
const top30 = timeIt(5, () => svc.topQueries(LOG_SITE, { start: nowSec - 30 * 86400, end: nowSec }, 10));

// ---------------------------------------------------------------- query suggestions
const loadStart = process.hrtime.bigint();
svc.querySuggestions(LOG_SITE, 'a', { max: 3, minSearches: 2 });
const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
const prefixes: string[] = [];
const pr = rng(7);
for (let i = 0; i < 20_000; i++) {
  const t = titles[Math.floor(pr() * titles.length)]!.toLowerCase();
  prefixes.push(t.slice(0, 1 + Math.floor(pr() * 6)));
}
let hits = 0;
const suggest = timeIt(prefixes.length, (i) => {
  hits += svc.querySuggestions(LOG_SITE, prefixes[i]!, { max: 10, minSearches: 2 }).length > 0 ? 1 : 0;
});
const index = svc.site(LOG_SITE).suggestionIndex(NOW);

// ---------------------------------------------------------------- HTTP (optional)
async function drive(url: string, paths: string[], seconds: number, connections: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const times: number[] = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  let k = 0;
  const one = (path: string) =>
    new Promise<void>((resolve) => {
      const s = process.hrtime.bigint();
      http
        .get(url + path, { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) errors++;
            times.push(Number(process.hrtime.bigint() - s) / 1e6);
            resolve();
          });
        })
        .on('error', () => {
          errors++;
          resolve();
        });
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) await one(paths[k++ % paths.length]!);
    }),
  );
  agent.destroy();
  times.sort((a, b) => a - b);
  return { requests: times.length, rps: Math.round(times.length / seconds), p50: percentile(times, 50), p99: percentile(times, 99), errors };
}
svc.close();

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  driver: string;
  /**
   * CPU of the whole server process (main and search threads) per answered request, in ms:
   * far less sensitive than req/s to what other processes do on a shared machine.
   */
  cpuMsPerRequest: number;
  /** The main thread's share of it (HTTP, routes, caches; the rest is search and writer threads). */
  mainCpuMsPerRequest: number;
  /** Answered requests and the CPU behind them (to pool several rows). */
  requests: number;
  cpuMs: number;
  mainCpuMs: number;
  /**
   * ms per second of the row the server's main thread waited on a CPU run queue (runnable,
   * another thread on the core), and the same summed over wrk's threads (from its start to the
   * last sample, ≤ 200 ms before its end): more runnable threads than cores show here.
   */
  mainRunQueueMsPerS: number;
  wrkRunQueueMsPerS: number;
  /** The row's start and end, µs of the monotonic clock (to slice a server CPU profile). */
  startUs: number;
  endUs: number;
  /** wrk's tail beyond p99 in ms (NaN with the Node client). */
  tail: { p95: number; p995: number; p999: number; max: number };
  /**
   * CPU of the server's threads in ms per second of the row, summed by thread name (`main`,
   * the search threads, the query-log writer, libuv's pool, V8's platform threads): which
   * threads competed with the main thread for the cores.
   */
  threadsMsPerS: Record<string, number>;
}
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
/**
 * ms a thread has waited on a CPU run queue so far (Linux `/proc/…/schedstat`, 2nd field, ns;
 * needs schedstats in the kernel): time it was runnable but another thread had the core.
 */
function runQueueWaitMs(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return NaN;
  }
}
/** Run-queue wait so far, summed over the threads of `pid` whose name starts with `name` (all when ''). */
function threadsRunQueueWaitMs(pid: number, name = ''): number {
  let total = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      if (name && !readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith(name)) continue;
      total += runQueueWaitMs(`/proc/${pid}/task/${tid}/schedstat`) || 0;
    }
  } catch {
    // The process ended.
  }
  return total;
}
/** Pids of this process's `wrk` children (the load generator of the current row). */
function wrkChildren(): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      for (const c of readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) {
        if (readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'wrk') out.push(Number(c));
      }
    }
  } catch {
    // Not Linux, or a child ended between the reads.
  }
  return out;
}
/** One row of `paths` for `seconds` at 8 connections; `wrkThreads`: wrk's threads (the goal rows use 2). */
async function load(paths: string[], seconds = SECONDS, wrkThreads = 2, wrkNice = 0): Promise<Load> {
  const pid = server!.child.pid!;
  const threads0 = threadCpu(pid);
  const cpu0 = processCpuMs(pid);
  const main0 = mainThreadCpuMs(pid);
  const wait0 = runQueueWaitMs(`/proc/${pid}/task/${pid}/schedstat`);
  const startUs = nowUs();
  // wrk's threads' run-queue wait: sampled while it runs (it is gone when the row ends), the
  // last sample counts (≤ 200 ms before its end).
  let wrkWaitMs = NaN;
  const sample = setInterval(() => {
    const w = wrkChildren();
    if (w.length) wrkWaitMs = w.reduce((t, p) => t + threadsRunQueueWaitMs(p), 0);
  }, 200);
  let r: Awaited<ReturnType<typeof loadOnce>>;
  try {
    r = await loadOnce(paths, seconds, wrkThreads, wrkNice);
  } finally {
    clearInterval(sample);
  }
  const endUs = nowUs();
  const requests = Math.max(1, r.rps * seconds);
  const cpuMs = processCpuMs(pid) - cpu0;
  const mainCpuMs = mainThreadCpuMs(pid) - main0;
  const mainWaitMs = runQueueWaitMs(`/proc/${pid}/task/${pid}/schedstat`) - wait0;
  const threadsMsPerS: Record<string, number> = {};
  for (const [tid, [name, s]] of threadCpu(pid)) {
    const ms = (1000 * (s - (threads0.get(tid)?.[1] ?? 0))) / seconds;
    threadsMsPerS[name] = (threadsMsPerS[name] ?? 0) + ms;
  }
  return {
    threadsMsPerS, ...r, requests, cpuMs, mainCpuMs, cpuMsPerRequest: cpuMs / requests, mainCpuMsPerRequest: mainCpuMs / requests, mainRunQueueMsPerS: mainWaitMs / seconds, wrkRunQueueMsPerS: wrkWaitMs / seconds, startUs, endUs };
}
async function loadOnce(paths: string[], seconds: number, wrkThreads: number, wrkNice: number): Promise<Pick<Load, 'rps' | 'p50' | 'p99' | 'errors' | 'driver' | 'tail'>> {
  if (hasWrk()) {
    const script = rotatingScript(join(server!.dataDir, `paths-${Math.random().toString(36).slice(2)}.lua`), paths);
    const r = await runWrk({ url: server!.url, connections: 8, seconds, threads: wrkThreads, script, nice: wrkNice });
    const driver = (wrkThreads === 2 ? 'wrk' : `wrk -t${wrkThreads}`) + (wrkNice ? ` at nice ${wrkNice}` : '');
    return { rps: r.rps, p50: r.p50, p99: r.p99, errors: r.errors, driver, tail: r.tail };
  }
  const r = await drive(server!.url, paths, seconds, 8);
  return { rps: r.rps, p50: r.p50, p99: r.p99, errors: r.errors, driver: 'node', tail: { p95: NaN, p995: NaN, p999: NaN, max: NaN } };
}
let httpResults: Record<string, Load> | null = null;
/** Log off/on pairs, alternated (off,on / on,off / …) so that drift in the machine's load cancels. */
const logRounds: Array<{ off: Load; on: Load }> = [];
// Many short alternated pairs rather than a few long ones: the machine's load drifts over
// tens of seconds, and a pair of adjacent short rows sees nearly the same load (a few long
// pairs scatter widely between runs of identical code). The pairs
// alternate which side runs first, so two consecutive pairs are an ABBA quad (off, on, on,
// off) whose cost cancels a load that drifts linearly across its four rows: the throughput of
// consecutive rows is correlated beyond the logging effect, and quads scatter much less than
// single pairs, with medians as high. 40 pairs: the goal's median is over 20 quads.
const ROUNDS = Number(process.env.BENCH_LOG_ROUNDS ?? 40);
const LOG_SECONDS = Number(process.env.BENCH_LOG_SECONDS ?? 2);
/** Suggest/search pairs with every request a cache miss, alternated like the logging pairs. */
const missRounds: Array<{ suggest: Load; search: Load }> = [];
let missFirstTouch: { suggest: Load; search: Load } | null = null;
/** Suggest/search pairs with every answer cached (both routes as shipped). */
const hitRounds: Array<{ suggest: Load; search: Load }> = [];
const HIT_PAIRS = Number(process.env.BENCH_HIT_PAIRS ?? 6);
const HIT_SECONDS = Number(process.env.BENCH_HIT_SECONDS ?? 2);
const MISS_PAIRS = Number(process.env.BENCH_MISS_PAIRS ?? 3);
const MISS_SECONDS = Number(process.env.BENCH_MISS_SECONDS ?? 5);
/**
 * BENCH_DIAG_ROWS=1 adds diagnostic rows after the goal rows, not goal rows: the same cached
 * prefixes with wrk's two threads at nice 10 (a load generator that does not preempt the
 * server's main thread, as a client on another machine would not).
 */
const DIAG_ROWS = process.env.BENCH_DIAG_ROWS === '1';
/**
 * `pairs` pairs of loads, alternating which runs first (a first, then b first, …) so neither
 * always meets the machine in the same state. Each load gets its row number, counted from
 * `firstRow` in the order the loads run. Keys appear in each pair in the order they ran.
 */
async function alternatedPairs<A extends string, B extends string>(
  pairs: number,
  firstRow: number,
  a: [A, (row: number) => Promise<Load>],
  b: [B, (row: number) => Promise<Load>],
): Promise<Array<Record<A | B, Load>>> {
  const out: Array<Record<A | B, Load>> = [];
  let row = firstRow;
  for (let round = 0; round < pairs; round++) {
    const pair = {} as Record<A | B, Load>;
    for (const [key, run] of round % 2 === 0 ? [a, b] : [b, a]) pair[key] = await run(row++);
    out.push(pair);
  }
  return out;
}

let distinctSuggest = 0;
if (server) {
  try {
    const enc = encodeURIComponent;
    const suggestPaths = prefixes.slice(0, 5000).map((p) => `/sites/suggest?site=${SITE}&query=${enc(p)}&maxQuerySuggestions=3`);
    distinctSuggest = new Set(suggestPaths).size;
    // Every request a miss of the suggest answer cache: the same prefixes, each with its own
    // (absent) excluded content group, which changes the cache key but not the answer (the
    // corpus has no content groups). Measures the uncached page search over HTTP.
    // Each row gets names of its own, so no request of a later row hits an earlier row's answer.
    const absent = (row: number, i: number) => `&excludeContentGroups=${enc(JSON.stringify([`bench-${row}-${i}`]))}`;
    const COLD = 40_000;
    const coldPaths = (row: number) => Array.from({ length: COLD }, (_, i) => `/sites/suggest?site=${SITE}&query=${enc(prefixes[i % prefixes.length]!)}&maxQuerySuggestions=3${absent(row, i)}`);
    // The same for search (the search route may cache answers too): every request a miss.
    const searchColdPaths = (row: number) => Array.from({ length: COLD }, (_, i) => `/sites?site=${SITE}&query=${enc(titles[i % titles.length]!)}&log=false${absent(row, i)}`);
    const searchOff = titles.map((t) => `/sites?site=${SITE}&query=${enc(t)}&log=false`);
    const searchOn = titles.map((t) => `/sites?site=${SITE}&query=${enc(t)}`);
    // Seeding the log above blocks this process's event loop for seconds, so fetch's pooled
    // keep-alive socket may have been closed by the server (its 5 s idle timeout) without this
    // process noticing yet: let the pending close events run before reusing the pool.
    await new Promise((r) => setTimeout(r, 200));
    // Warm-up: loads the suggestion index and the segments once.
    for (const p of [...suggestPaths.slice(0, 200), ...searchOff.slice(0, 200)]) await fetch(server.url + p).then((r) => r.arrayBuffer());
    // First touch: the search threads meet every prefix and title for the first time (typo
    // tries, BM25F values, postings): reported apart, then alternated pairs (suggest first,
    // then search first, …) in the threads' steady state.
    missFirstTouch = { suggest: await load(coldPaths(0), MISS_SECONDS), search: await load(searchColdPaths(1), MISS_SECONDS) };
    // Rows 0 and 1 were the first touch; each later row gets cache-key names of its own.
    missRounds.push(...(await alternatedPairs(MISS_PAIRS, 2, ['suggest', (row) => load(coldPaths(row), MISS_SECONDS)], ['search', (row) => load(searchColdPaths(row), MISS_SECONDS)])));
    const median = (xs: Load[]): Load => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;
    httpResults = {
      ...(missRounds.length ? { suggestCold: median(missRounds.map((r) => r.suggest)), searchCold: median(missRounds.map((r) => r.search)) } : {}),
      // The cold rows above pushed the warm-up's answers out: each distinct prefix misses once.
      suggest: await load(suggestPaths),
      // The same paths again: every distinct prefix has been answered (steady state, no write).
      suggestWarm: await load(suggestPaths),
      // Not a goal row (the goal rows are the two above): the same again with one wrk thread
      // (`wrk -t1 -c8`). On 2 cores, wrk's two threads and the server's main thread are three
      // runnable threads for two cores and the main thread waits on a run queue for several ms
      // at a time (its run-queue wait is printed per row); with one wrk thread each has a core.
      suggestWarmOneWrkThread: await load(suggestPaths, SECONDS, 1),
      ...(DIAG_ROWS ? { suggestWarmWrkNice: await load(suggestPaths, SECONDS, 2, 10) } : {}),
    };
    // Every title answered once, so that no row of the pairs below pays the search cache's
    // misses (`log` is not part of its key: on and off rows share the entries).
    for (const p of searchOff) await fetch(server.url + p).then((r) => r.arrayBuffer());
    // Both routes as shipped, every answer cached: alternated pairs of short rows, so that the
    // ratio compares rows of nearly the same machine load.
    hitRounds.push(...(await alternatedPairs(HIT_PAIRS, 0, ['suggest', () => load(suggestPaths, HIT_SECONDS)], ['search', () => load(searchOff, HIT_SECONDS)])));
    logRounds.push(...(await alternatedPairs(ROUNDS, 0, ['off', () => load(searchOff, LOG_SECONDS)], ['on', () => load(searchOn, LOG_SECONDS)])));
    // BENCH_LOG_ROUNDS=0 skips the logging pairs (and the rows that compare against them).
    if (logRounds.length) {
      httpResults.searchLogOff = median(logRounds.map((r) => r.off));
      httpResults.searchLogOn = median(logRounds.map((r) => r.on));
    }
  } finally {
    await server.stop();
  }
} else {
  rmSync(dataDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- report
const f = (n: number) => n.toFixed(3);
/** A signed percentage: +3.1 %, −2.0 %. */
const pct = (n: number) => `${n < 0 ? '−' : '+'}${Math.abs(n).toFixed(1)} %`;
const rows: Array<[string, string, string]> = [
  ['logged searches written', `${TOTAL.toLocaleString('en')} in ${writeSeconds.toFixed(1)} s`, `${Math.round(TOTAL / writeSeconds).toLocaleString('en')}/s`],
  ['record() on the search path (a queue push; normalised and hashed at the hand-over)', `p50 ${f(percentile(recordTimes, 50))} ms`, `p99 ${f(percentile(recordTimes, 99))} ms`],
  ['writer per logged search (in process; the server runs it on its writer thread)', `${f(flushMs / TOTAL)} ms`, `batches of 1,000: ${f(flushMs / (TOTAL / 1000))} ms each`],
  ['rollup: 1 year backfill', `${rollupMs.toFixed(0)} ms`, `${roll.hoursClosed} hours`],
  ['timechart 1 year by day', `p50 ${f(yearByDay.p50)} ms`, `p95 ${f(yearByDay.p95)} ms, p99 ${f(yearByDay.p99)} ms (goal ≤ 20)`],
  ['timechart 2 days by hour', `p50 ${f(twoDaysByHour.p50)} ms`, `p95 ${f(twoDaysByHour.p95)} ms, p99 ${f(twoDaysByHour.p99)} ms (goal ≤ 20)`],
  ['top queries, 30 days', `p50 ${f(top30.p50)} ms`, `max ${f(top30.max)} ms`],
  ['suggestion index load', `${loadMs.toFixed(0)} ms`, `${index.size.toLocaleString('en')} distinct queries in 90 days`],
  ['querySuggestions 1–6 chars', `p50 ${f(suggest.p50)} ms`, `p99 ${f(suggest.p99)} ms, max ${f(suggest.max)} ms, ${Math.round((100 * hits) / prefixes.length)}% non-empty`],
];
if (httpResults) {
  const label: Record<string, string> = {
    suggestCold: `suggest, every request a cache miss (median of ${missRounds.length} rows of ${MISS_SECONDS} s)`,
    searchCold: `search, log=false, every request a cache miss (median of ${missRounds.length} rows of ${MISS_SECONDS} s)`,
    suggest: `suggest, ${distinctSuggest.toLocaleString('en')} distinct prefixes, first run (cache fills)`,
    suggestWarm: 'suggest, same prefixes again (every one answered before)',
    suggestWarmOneWrkThread: 'suggest, same prefixes, one wrk thread (not a goal row: wrk -t1 -c8)',
    suggestWarmWrkNice: 'suggest, same prefixes, wrk at nice 10 (diagnostic, not a goal row)',
    searchLogOff: `search, log=false (median of ${logRounds.length} rows of ${LOG_SECONDS} s)`,
    searchLogOn: `search, logging on (median of ${logRounds.length} rows of ${LOG_SECONDS} s)`,
  };
  for (const [name, v] of Object.entries(httpResults)) {
    rows.push([`HTTP ${label[name] ?? name} (8 conns, ${v.driver})`, `${Math.round(v.rps)} req/s`, `p50 ${f(v.p50)} ms, p99 ${f(v.p99)} ms, ${v.errors} errors, server CPU ${f(v.cpuMsPerRequest)} ms/request (main thread ${f(v.mainCpuMsPerRequest)}); run-queue wait ms/s: main ${v.mainRunQueueMsPerS.toFixed(0)}, wrk ${v.wrkRunQueueMsPerS.toFixed(0)}`]);
    // The suggest rows' tail and the server threads beside the main thread (ms of CPU per s).
    if (name.startsWith('suggest') && !name.endsWith('Cold')) {
      const others = Object.entries(v.threadsMsPerS).filter(([n, ms]) => n !== 'main' && ms >= 1).map(([n, ms]) => `${n} ${ms.toFixed(0)}`);
      rows.push(['  its tail; other server threads, CPU ms/s', `p99.9 ${f(v.tail.p999)} ms`, `p95 ${f(v.tail.p95)}, p99.5 ${f(v.tail.p995)}, max ${f(v.tail.max)} ms; ${others.join(', ') || 'none ≥ 1'}`]);
    }
  }
  const { suggest: sg, suggestCold: cold, searchCold, searchLogOff: off } = httpResults as Record<string, Load>;
  if (off) rows.push(['suggest ÷ search throughput', `${(sg!.rps / off.rps).toFixed(2)}×`, `goal ≥ 1.5× (second suggest run: ${(httpResults.suggestWarm!.rps / off.rps).toFixed(2)}×)`]);
  if (hitRounds.length) {
    const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratios = hitRounds.map((r) => r.suggest.rps / r.search.rps);
    const cpu = hitRounds.map((r) => r.search.cpuMsPerRequest / r.suggest.cpuMsPerRequest);
    rows.push([
      `suggest ÷ search, both cached, ${hitRounds.length} alternated pairs of ${HIT_SECONDS} s`,
      `${medianOf(ratios).toFixed(2)}× (median)`,
      `goal ≥ 1.5×; pairs ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×; CPU per request ${medianOf(cpu).toFixed(2)}× cheaper (median); main thread ${f(medianOf(hitRounds.map((r) => r.suggest.mainCpuMsPerRequest)))} vs ${f(medianOf(hitRounds.map((r) => r.search.mainCpuMsPerRequest)))} ms`,
    ]);
  }
  if (cold && searchCold) rows.push(['suggest ÷ search, both missing every cache', `${(cold.rps / searchCold.rps).toFixed(2)}×`, '(medians)']);
  if (missFirstTouch) {
    const { suggest: a, search: b } = missFirstTouch;
    rows.push(['  first touch (not in the medians): suggest / search', `${Math.round(a.rps)} / ${Math.round(b.rps)} req/s`, `CPU ${f(a.cpuMsPerRequest)} / ${f(b.cpuMsPerRequest)} ms/request, main thread ${f(a.mainCpuMsPerRequest)} / ${f(b.mainCpuMsPerRequest)}`]);
  }
  missRounds.forEach((r, i) =>
    rows.push([
      `  miss pair ${i + 1}: suggest / search`,
      `${Math.round(r.suggest.rps)} / ${Math.round(r.search.rps)} req/s`,
      `${(r.suggest.rps / r.search.rps).toFixed(2)}×; CPU ${f(r.suggest.cpuMsPerRequest)} / ${f(r.search.cpuMsPerRequest)} ms/request (${(r.search.cpuMsPerRequest / r.suggest.cpuMsPerRequest).toFixed(2)}× cheaper), main thread ${f(r.suggest.mainCpuMsPerRequest)} / ${f(r.search.mainCpuMsPerRequest)}`,
    ]),
  );
  if (off) rows.push(['suggest ÷ search, server CPU per request', `${(off.cpuMsPerRequest / sg!.cpuMsPerRequest).toFixed(2)}× cheaper`, `second suggest run ${(off.cpuMsPerRequest / httpResults.suggestWarm!.cpuMsPerRequest).toFixed(2)}×${cold && searchCold ? `, both missing caches ${(searchCold.cpuMsPerRequest / cold.cpuMsPerRequest).toFixed(2)}×` : ''}`]);
  logRounds.forEach((r, i) =>
    rows.push([
      `  log round ${i + 1}: off / on`,
      `${Math.round(r.off.rps)} / ${Math.round(r.on.rps)} req/s`,
      `req/s ${pct((100 * (r.on.rps - r.off.rps)) / r.off.rps)}; CPU ${f(r.off.cpuMsPerRequest)} / ${f(r.on.cpuMsPerRequest)} ms/request (${pct((100 * (r.on.cpuMsPerRequest - r.off.cpuMsPerRequest)) / r.off.cpuMsPerRequest)}), main thread ${f(r.off.mainCpuMsPerRequest)} / ${f(r.on.mainCpuMsPerRequest)} (${pct((100 * (r.on.mainCpuMsPerRequest - r.off.mainCpuMsPerRequest)) / r.off.mainCpuMsPerRequest)})`,
    ]),
  );
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const costs = logRounds.map((r) => (100 * (r.off.rps - r.on.rps)) / r.off.rps);
  const cpuCosts = logRounds.map((r) => (100 * (r.on.cpuMsPerRequest - r.off.cpuMsPerRequest)) / r.off.cpuMsPerRequest);
  const mainCosts = logRounds.map((r) => (100 * (r.on.mainCpuMsPerRequest - r.off.mainCpuMsPerRequest)) / r.off.mainCpuMsPerRequest);
  // ABBA quads: pairs 1+2, 3+4, … (off, on, then on, off); the rows are equally long, so the
  // summed req/s of a side stand for its requests.
  const quads: number[] = [];
  for (let i = 0; i + 1 < logRounds.length; i += 2) {
    const [a, b] = [logRounds[i]!, logRounds[i + 1]!];
    quads.push((100 * (a.off.rps + b.off.rps - a.on.rps - b.on.rps)) / (a.off.rps + b.off.rps));
  }
  if (quads.length) {
    rows.push([
      'logging cost on search throughput',
      `${med(quads).toFixed(1)} % (median of ${quads.length} ABBA quads)`,
      `goal ≤ 10 %; quads ${Math.min(...quads).toFixed(1)} … ${Math.max(...quads).toFixed(1)} %`,
    ]);
  }
  if (logRounds.length) rows.push(['  the same, median of single pairs', `${med(costs).toFixed(1)} % (median of ${costs.length} pairs)`, `server CPU per request ${pct(med(cpuCosts))}, main thread ${pct(med(mainCosts))} (medians)`]);
  // All "on" rows against all "off" rows: CPU summed over the rows and divided by their
  // requests, so a row disturbed by other processes weighs no more than its share.
  const pooled = (side: 'on' | 'off', k: 'cpuMs' | 'mainCpuMs') => logRounds.reduce((t, r) => t + r[side][k], 0) / logRounds.reduce((t, r) => t + r[side].requests, 0);
  if (logRounds.length) {
    rows.push([
      'logging cost, CPU of all rows pooled',
      `${pct((100 * (pooled('on', 'cpuMs') - pooled('off', 'cpuMs'))) / pooled('off', 'cpuMs'))} server CPU per request`,
      `${f(pooled('off', 'cpuMs'))} → ${f(pooled('on', 'cpuMs'))} ms; main thread ${f(pooled('off', 'mainCpuMs'))} → ${f(pooled('on', 'mainCpuMs'))} ms (${pct((100 * (pooled('on', 'mainCpuMs') - pooled('off', 'mainCpuMs'))) / pooled('off', 'mainCpuMs'))})`,
    ]);
    // The same per server thread (by /proc name: `main`, the query-log writer `sitesift-qlog`,
    // `node` for V8's and libuv's threads and the search threads), µs per request.
    const perThread = (side: 'on' | 'off') => {
      const us: Record<string, number> = {};
      for (const r of logRounds) for (const [name, msPerS] of Object.entries(r[side].threadsMsPerS)) us[name] = (us[name] ?? 0) + msPerS * LOG_SECONDS * 1000;
      const requests = logRounds.reduce((t, r) => t + r[side].requests, 0);
      for (const name of Object.keys(us)) us[name] = us[name]! / requests;
      return us;
    };
    const [offUs, onUs] = [perThread('off'), perThread('on')];
    const names = [...new Set([...Object.keys(offUs), ...Object.keys(onUs)])].sort((a, b) => (onUs[b] ?? 0) - (onUs[a] ?? 0));
    rows.push([
      '  per thread, µs per request off → on',
      names.map((n) => `${n} ${(onUs[n] ?? 0) - (offUs[n] ?? 0) >= 0 ? '+' : '−'}${Math.abs((onUs[n] ?? 0) - (offUs[n] ?? 0)).toFixed(1)}`).join(', '),
      names.map((n) => `${n} ${(offUs[n] ?? 0).toFixed(1)} → ${(onUs[n] ?? 0).toFixed(1)}`).join('; '),
    ]);
  }
}
rows.push(['machine load average (1 min)', os.loadavg()[0]!.toFixed(2), `${os.availableParallelism()} cores`]);
const w0 = Math.max(...rows.map((x) => x[0].length));
const w1 = Math.max(...rows.map((x) => x[1].length));
for (const [a, b, c] of rows) console.log(`${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`);
// Indented labels are details of the row above; the table keeps their indent visible.
writeBenchSection(
  'suggest',
  `${TOTAL.toLocaleString('en')} logged searches over 365 days; HTTP rows at 8 connections.\n\n` +
    markdownTable(['measure', 'value', 'detail'], rows.map(([a, b, c]) => [a.replace(/^ {2}/, '↳ '), b, c])),
  // Without the HTTP rows, or with diagnostic rows added, the run is not the current figures.
  { partial: !WITH_HTTP || DIAG_ROWS || TOTAL !== 1_000_000 },
);
console.log(
  'BENCH_SUGGEST ' +
    JSON.stringify({
      queries: TOTAL,
      writePerSec: Math.round(TOTAL / writeSeconds),
      writerMsPerSearch: flushMs / TOTAL,
      loadAverage: os.loadavg()[0],
      recordP99Ms: percentile(recordTimes, 99),
      rollupMs,
      timechartYearByDay: yearByDay,
      timechartTwoDaysByHour: twoDaysByHour,
      suggestionIndexLoadMs: loadMs,
      distinctQueries90d: index.size,
      querySuggestions: suggest,
      http: httpResults,
      logRounds,
      missRounds,
      missFirstTouch,
      hitRounds,
    }),
);
