/**
 * Search speed benchmark (`make bench-search`). A report, not a test: it prints a table a person
 * can read and one JSON line a script can compare; exits 0 whatever the numbers (1 when wrk is
 * missing or a server fails).
 *
 * Everything runs on 127.0.0.1; load comes from `wrk` (2 threads, `--latency`) with a Lua script
 * that rotates through all 799 corpus queries (bench/lib/wrk.ts). For each corpus size:
 *
 * 1. sitesift: a server child (`node dist/src/main.js` when built — `make bench-search` builds
 *    first — else `node --import tsx src/main.ts`; SITESIFT_WORKERS=2; info-level request logs
 *    written to a file as in production), filled through `POST /sites/pagesJson` (batches of
 *    100, 3 in flight), then loaded with `GET /sites?…&includeContent=true&
 *    highlightQueryTerms=true&filterOptions=true&log=false` at 8 and 32 connections; then at 1 and
 *    8 connections the project's default (hybrid) next to `&semanticRatio=0` (lexical only), in
 *    BENCH_HYBRID_ROUNDS alternated rounds (default 3), the goal comparing their medians.
 * 2. MiniSearch: a plain Node `http` server child (this file with `--serve-minisearch`) holding
 *    the same documents in MiniSearch 7 (options of bench/lib/peers.ts) and answering
 *    `/search?query=…` with the top 10 in the same JSON shape (escaped, highlighted snippet).
 * 3. Empty Koa route (PostgreSQL corpus only): a Koa app child (`--serve-koa`) whose route
 *    answers a constant small JSON body — the ceiling for any HTTP service on this machine.
 *
 * Sizes: the PostgreSQL 15 manual (1,169 pages), then ~BENCH_DOCS (default 100,000) documents:
 * the manual multiplied with distinct URLs and shuffled content words (bench/lib/server.ts).
 * Before each load one client asks the queries in order, then 8 clients rotate through them
 * BENCH_WARMUP_PASSES more times (default 4): warm-up (every search thread's JIT and engine
 * caches) and error check. The passes bound it; BENCH_WARMUP_SECONDS (default 300) is only a
 * safety cap (MiniSearch's warm-up keeps a 20-s cap), and the notes say how far each got.
 * For each sitesift row the notes also say where the server's busiest threads spent the row's
 * wall time (on a CPU, waiting in the run queue, asleep; Linux schedstat), which tells a server
 * idling by itself from one starved by other work on the machine. At ~100k documents MiniSearch builds in
 * its own process while sitesift indexes, and is paused (SIGSTOP) while sitesift is measured.
 *
 * Environment: BENCH_SECONDS (per load, default 10), BENCH_WARMUP_SECONDS, BENCH_WARMUP_PASSES, BENCH_HYBRID_ROUNDS, BENCH_DOCS (default 100000; 0 skips the
 * large run), BENCH_CONCURRENCY (indexing requests in flight, default 3), BENCH_SERVER
 * (dist|tsx; default dist when built), BENCH_PEERS=0 (sitesift only, manual only: for quick
 * iterations), BENCH_ONLY_LARGE=1 (diagnostic: only the sitesift rows at ~BENCH_DOCS, no manual,
 * MiniSearch or Koa rows, so an A/B of the large rows fits a short bench-lock slot; the goals
 * against peers and the manual's goals are then not checked).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPgDocs, loadPgQueries, type CorpusDoc } from './lib/corpus.js';
import { MiniSearchPeer } from './lib/peers.js';
import { mainThreadCpuMs, processCpuMs } from './lib/proc.js';
import { call, createProject, indexDocs, multiplyCorpus, ROOT, startBenchServer, toPageDocs, type BenchServer } from './lib/server.js';
import { markdownTable, median, writeBenchSection } from './lib/report.js';
import { hasWrk, rotatingScript, runWrk, type WrkResult } from './lib/wrk.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BIG = Number(process.env.BENCH_DOCS ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 3);
// A cap, not the bound: at ~100k documents one ordered pass alone takes 25-45 s, and a warm-up
// cut short by time would leave the rows measuring cache fill.
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 300);
// MiniSearch gets a 20-s warm-up: it has no caches to fill, and at ~100k one ordered pass of its
// (~0.6 s) searches would take the whole cap.
const PEER_WARMUP_SECONDS = 20;
// Alternated rounds of the hybrid and lexical rows (BENCH_HYBRID_ROUNDS, default 3).
const HYBRID_ROUNDS = Math.max(1, Number(process.env.BENCH_HYBRID_ROUNDS ?? 3));

const WARMUP_PASSES = Number(process.env.BENCH_WARMUP_PASSES ?? 4);
const WARMUP_CONCURRENCY = 8;
const CONNECTIONS = [8, 32];
const SELF = fileURLToPath(import.meta.url);
const SEARCH_PARAMS = 'includeContent=true&highlightQueryTerms=true&filterOptions=true&log=false';

interface Row {
  corpus: string;
  docs: number;
  engine: string;
  result: WrkResult;
  /** Server CPU (all its threads, from /proc) per request; NaN when not measured. */
  cpuMs: number;
  /** The same for the server's main thread alone (HTTP, hand-off); NaN when not measured. */
  mainCpuMs: number;
}



// ---------------------------------------------------------------- child servers

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** ~240 characters around the first query word, escaped, query words marked (peer server). */
function peerSnippet(text: string, words: string[]): string {
  const lower = text.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = Math.max(0, at - 80);
  const cut = text.slice(start, start + 240);
  let html = escapeHtml(cut);
  const re = words.length ? new RegExp(`(${words.map((w) => escapeHtml(w).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'gi') : null;
  if (re) html = html.replace(re, '<mark>$1</mark>');
  return html;
}

/** `--serve-minisearch <docs>`: MiniSearch over the corpus (multiplied to <docs>) on node:http. */
async function serveMiniSearch(target: number): Promise<void> {
  const docs = loadPgDocs();
  const t0 = performance.now();
  const ms = new MiniSearchPeer();
  const source = target <= docs.length ? toPageDocs(docs) : multiplyCorpus(docs, target);
  const batch: Array<{ url: string; title: string; headings: string; content: string }> = [];
  for (const d of source) {
    batch.push({ url: d.url, title: d.title, headings: d.headings.join(' | '), content: d.content });
    if (batch.length === 1000) {
      ms.add(batch);
      batch.length = 0;
      if (ms.size % 20_000 === 0) process.stderr.write(`  MiniSearch: ${ms.size} docs added (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
    }
  }
  ms.add(batch);
  const buildSeconds = (performance.now() - t0) / 1000;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const query = u.searchParams.get('query') ?? '';
    const hits = ms.searchIds(query);
    const words = query.toLowerCase().split(/\W+/).filter((w) => w.length > 1);
    const results = hits.slice(0, 10).map((h) => {
      const d = ms.doc(h.id);
      return { name: escapeHtml(d.title), image: null, link: d.url, type: 'html', dataPoints: [], content: peerSnippet(d.content, words) };
    });
    const body = JSON.stringify({
      status: 'success',
      query,
      suggests: results.length ? { _: results } : {},
      totalResults: hits.length,
      totalResultsPerContentGroup: hits.length ? { _: hits.length } : {},
      sortingOptions: [],
      sorting: '',
      filterOptions: [],
      activeFilterOptions: [],
    });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address() as { port: number };
    process.stdout.write(JSON.stringify({ listening: `http://127.0.0.1:${addr.port}`, docs: ms.size, buildSeconds }) + '\n');
  });
}

/** `--serve-koa`: an empty Koa route. */
async function serveKoa(): Promise<void> {
  const { default: Koa } = await import('koa');
  const { default: Router } = await import('@koa/router');
  const app = new Koa();
  const router = new Router();
  router.get('/empty', (ctx) => {
    ctx.body = { status: 'success' };
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1', () => {
    const addr = server.address() as { port: number };
    process.stdout.write(JSON.stringify({ listening: `http://127.0.0.1:${addr.port}`, docs: 0, buildSeconds: 0 }) + '\n');
  });
}

interface PeerServer {
  url: string;
  docs: number;
  buildSeconds: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns this file in a server mode; `ready` resolves once it prints its address. */
function startPeer(args: string[]): { child: ChildProcess; ready: Promise<PeerServer> } {
  const child = spawn(process.execPath, ['--max-old-space-size=16384', '--import', 'tsx', SELF, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  // Never leave a peer server behind when this process ends early.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  const stop = () =>
    new Promise<void>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) return r();
      child.once('exit', () => r());
      child.kill('SIGCONT');
      child.kill('SIGTERM');
    });
  const ready = new Promise<PeerServer>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"listening"'));
      if (!line) return;
      const info = JSON.parse(line) as { listening: string; docs: number; buildSeconds: number };
      resolve({ url: info.listening, docs: info.docs, buildSeconds: info.buildSeconds, child, stop });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before listening`)));
  });
  ready.catch(() => undefined);
  return { child, ready };
}

// ---------------------------------------------------------------- driver

/** Segments in the project's manifest (merges may still be pending after a bulk load). */
function segmentCount(server: BenchServer, site = 'pgdocs'): number | string {
  try {
    const m = JSON.parse(readFileSync(path.join(server.dataDir, 'data', 'projects', site, 'manifest.json'), 'utf8')) as { segments?: unknown[] };
    return m.segments?.length ?? '?';
  } catch {
    return '?';
  }
}

/**
 * Warm-up and sanity check: one client asks the paths in order (throws on the first non-200),
 * then WARMUP_CONCURRENCY clients go through them WARMUP_PASSES more times; WARMUP_SECONDS caps
 * the whole (a pass cut by it is reported as partial). At ~100k documents the engine caches fill
 * during the first pass: a row after a cut warm-up measures that fill, not the steady state.
 * A fresh search thread's JIT needs thousands of searches to settle (in process,
 * bench/search-quick.ts THREADS=1 WARMROUNDS=8: 2.8, 1.0, 0.88, 0.82, 0.61, 0.58, 0.49, 0.51 ms
 * CPU per search over the first eight passes of 799 queries), and one client feeds mostly one of the threads,
 * so a single ordered pass left the first wrk row measuring cold threads. Resolves the first
 * pass's count and mean ms, the server's CPU per request of each concurrent pass (`pid`), the
 * queries asked in the last concurrent pass and the seconds taken.
 */
async function warmUp(base: string, paths: string[], pid?: number, capSeconds = WARMUP_SECONDS): Promise<WarmUp> {
  const t0 = performance.now();
  const deadline = t0 + capSeconds * 1000;
  const ask = async (p: string) => {
    const res = await fetch(base + p);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`warm-up ${p}: ${res.status} ${text.slice(0, 300)}`);
  };
  let n = 0;
  for (const p of paths) {
    await ask(p);
    n++;
    if (performance.now() > deadline) break;
  }
  const meanMs = (performance.now() - t0) / n;
  const passCpuMs: number[] = [];
  let lastPassAsked = 0;
  for (let pass = 0; pass < WARMUP_PASSES && performance.now() < deadline; pass++) {
    const cpu0 = processCpuMs(pid);
    let next = 0;
    let asked = 0;
    await Promise.all(
      Array.from({ length: WARMUP_CONCURRENCY }, async () => {
        while (next < paths.length && performance.now() < deadline) {
          await ask(paths[next++]!);
          asked++;
        }
      }),
    );
    passCpuMs.push((processCpuMs(pid) - cpu0) / Math.max(1, asked));
    lastPassAsked = asked;
  }
  return { n, meanMs, passCpuMs, lastPassAsked, seconds: (performance.now() - t0) / 1000, capSeconds };
}

interface WarmUp {
  n: number;
  meanMs: number;
  passCpuMs: number[];
  lastPassAsked: number;
  seconds: number;
  capSeconds: number;
}

const warmNote = (w: WarmUp, total: number) =>
  `${w.meanMs.toFixed(1)} ms/query (one client, ${w.n === total ? 'all' : `first ${w.n} of`} ${total} queries)` +
  (w.passCpuMs.length ? `, then ${w.passCpuMs.length} pass(es) at ${WARMUP_CONCURRENCY} clients: server CPU ${w.passCpuMs.map((c) => (Number.isNaN(c) ? '?' : c.toFixed(2))).join(' / ')} ms/request` : '') +
  (w.n < total || w.passCpuMs.length < WARMUP_PASSES || (w.passCpuMs.length > 0 && w.lastPassAsked < total) ? ` — cut by its ${w.capSeconds}-s cap (last pass ${w.lastPassAsked} of ${total})` : '') +
  `; ${w.seconds.toFixed(0)} s`;

/** Per thread of `pid`: [seconds on a CPU, seconds runnable but waiting for one] (Linux schedstat; empty elsewhere). */
function threadSched(pid: number | undefined): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        out.set(tid, [run! / 1e9, wait! / 1e9]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // Not Linux, or no schedstats.
  }
  return out;
}

/**
 * Where the server's busiest threads spent a row's wall time: on a CPU, waiting in the run
 * queue (another process or thread had the core: a loaded machine), or neither (sleeping:
 * no work handed to it, or blocked). Low req/s with little run-queue wait and much sleep means
 * the server idled by itself; with much run-queue wait, that the machine was busy.
 */
function schedNote(pid: number | undefined, before: Map<string, [number, number]>, wallSeconds: number): string {
  const rows = [...threadSched(pid)]
    .map(([tid, [run, wait]]) => ({ tid, run: run - (before.get(tid)?.[0] ?? 0), wait: wait - (before.get(tid)?.[1] ?? 0) }))
    .filter((x) => x.tid === String(pid) || x.run > 0.05 * wallSeconds)
    .sort((a, b) => (a.tid === String(pid) ? -1 : b.tid === String(pid) ? 1 : b.run - a.run));
  if (rows.length === 0) return '';
  const f = (x: { run: number; wait: number }) => `${x.run.toFixed(1)}/${x.wait.toFixed(1)}/${Math.max(0, wallSeconds - x.run - x.wait).toFixed(1)}`;
  return `threads on CPU / run-queue wait / sleep, s of ${wallSeconds.toFixed(1)}: ${rows.map((x) => `${x.tid === String(pid) ? 'main' : 'thread'} ${f(x)}`).join(', ')}`;
}

/** Loads `base` at each connection count; `pid`: the server process whose CPU per request is reported. */
async function load(rows: Row[], corpus: string, docs: number, engine: string, base: string, script: string, connections = CONNECTIONS, pid?: number, notes?: string[]): Promise<void> {
  for (const c of connections) {
    const cpu0 = processCpuMs(pid);
    const main0 = mainThreadCpuMs(pid);
    const sched0 = threadSched(pid);
    const wall0 = performance.now();
    const result = await runWrk({ url: base, connections: c, seconds: SECONDS, threads: 2, script });
    const sched = notes ? schedNote(pid, sched0, (performance.now() - wall0) / 1000) : '';
    if (sched) notes!.push(`${corpus}: ${engine}, ${c} conn: ${sched}`);
    const cpuMs = (processCpuMs(pid) - cpu0) / Math.max(1, result.rps * SECONDS);
    const mainCpuMs = (mainThreadCpuMs(pid) - main0) / Math.max(1, result.rps * SECONDS);
    rows.push({ corpus, docs, engine, result, cpuMs, mainCpuMs });
    process.stderr.write(
      `  ${engine.padEnd(24)} ${String(c).padStart(2)} conn: ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms${Number.isNaN(cpuMs) ? '' : `  server CPU ${cpuMs.toFixed(3)} ms/request (main thread ${mainCpuMs.toFixed(3)})`}${result.errors ? `  errors ${result.errors}` : ''}${sched ? `\n    ${sched}` : ''}\n`,
    );
  }
}

/**
 * Indexes `source` into a fresh sitesift server and loads it. `building` is a peer still building
 * its index in parallel: it is stopped (SIGSTOP) while sitesift is warmed up and loaded, so that
 * the measurement has the CPUs the peer will have for its own, and continued afterwards.
 */
async function sitesiftPhase(rows: Row[], corpus: string, source: Iterable<ReturnType<typeof toPageDocs>[number]>, queryPaths: string[], outDir: string, notes: string[], building?: ChildProcess): Promise<number> {
  let paused: ChildProcess | undefined;
  // BENCH_SEARCH_THREADS sets the server's SITESIFT_SEARCH_THREADS (default: the server's own, one per core).
  const threadsEnv: Record<string, string> = process.env.BENCH_SEARCH_THREADS ? { SITESIFT_SEARCH_THREADS: process.env.BENCH_SEARCH_THREADS } : {};
  const mode = process.env.BENCH_SERVER === 'tsx' ? 'tsx' : process.env.BENCH_SERVER === 'dist' ? 'dist' : 'auto';
  // First the engine itself: answer cache off. Then the same data dir restarted with the
  // default answer cache, as a site would run it.
  let server: BenchServer = await startBenchServer({ mode, env: { ...threadsEnv, SITESIFT_SEARCH_CACHE_MB: '0' }, keep: true });
  try {
    await createProject(server, 'pgdocs');
    let last = 0;
    const ix = await indexDocs(server, 'pgdocs', source, {
      concurrency: CONCURRENCY,
      progress: (n) => {
        if (n - last >= 10_000) {
          last = n;
          process.stderr.write(`  indexed ${n}\n`);
        }
      },
    });
    notes.push(`${corpus}: sitesift (${server.mode}) indexed ${ix.indexed} docs over HTTP in ${ix.seconds.toFixed(1)} s (${(ix.indexed / ix.seconds).toFixed(0)} docs/s)${ix.retries ? `; ${ix.retries} batch(es) retried after a 5xx` : ''}`);
    process.stderr.write(`${corpus}: indexed ${ix.indexed} docs in ${ix.seconds.toFixed(1)} s (${server.mode}); warming up…\n`);
    if (building && building.exitCode === null) {
      building.kill('SIGSTOP');
      paused = building;
    }
    const paths = queryPaths.map((q) => `/sites?site=pgdocs&query=${q}&${SEARCH_PARAMS}`);
    const script = rotatingScript(path.join(outDir, 'sitesift.lua'), paths);
    const warm = await warmUp(server.url, paths, server.child.pid);
    notes.push(`${corpus}: sitesift warm-up ${warmNote(warm, paths.length)}`);
    const segmentsBefore = segmentCount(server);
    if (typeof segmentsBefore === 'number' && segmentsBefore > 1 && ix.indexed >= 10_000) {
      // Goal: a search during a heavy merge keeps its p99 within 2× of idle.
      // A full merge of every segment runs in the pool while wrk loads the search route (warm
      // search threads; the merged segment's caches are built by the first searches after it).
      // The idle reference is the same index state (same segments, same warmth) just before.
      await load(rows, corpus, ix.indexed, `sitesift (${server.mode}, no cache, ${segmentsBefore} segments, before the merge)`, server.url, script, [8], server.child.pid, notes);
      const t0 = performance.now();
      const merging = call(server, 'POST', '/admin/projects/pgdocs/merge');
      await load(rows, corpus, ix.indexed, `sitesift (${server.mode}, no cache, during full merge)`, server.url, script, [8], server.child.pid, notes);
      const r = await merging;
      if (r.status !== 200) throw new Error(`merge: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      notes.push(`${corpus}: full merge of ${segmentsBefore} segments took ${((performance.now() - t0) / 1000).toFixed(1)} s (the first ${SECONDS} s of it under load)`);
      const rewarm = await warmUp(server.url, paths, server.child.pid);
      notes.push(`${corpus}: after the merge, warm-up again ${warmNote(rewarm, paths.length)}`);
    }
    await load(rows, corpus, ix.indexed, `sitesift (${server.mode}, no cache)`, server.url, script, CONNECTIONS, server.child.pid, notes);
    // The vector side's cost: the default (hybrid: semanticRatio from the project's settings)
    // next to lexical only (semanticRatio=0) at 1 and 8 connections, in HYBRID_ROUNDS alternated
    // rounds. A p99 of one 10-s row at 1 connection is its ~5th slowest request, so one stall of
    // the machine decides it; the goal compares the medians of the rounds, and every round is
    // in the table. Both modes of a round start at the same query (a row at 1 connection covers
    // only the first ~500-700 queries of the rotation), each round at another.
    for (const c of [1, 8]) {
      for (let round = 1; round <= HYBRID_ROUNDS; round++) {
        const offset = ((round - 1) * 263) % paths.length;
        const hybrid = rotatingScript(path.join(outDir, `sitesift-hybrid-${round}.lua`), paths, offset);
        const lexical = rotatingScript(path.join(outDir, `sitesift-lexical-${round}.lua`), paths.map((p) => `${p}&semanticRatio=0`), offset);
        await load(rows, corpus, ix.indexed, `sitesift (${server.mode}, no cache, hybrid default) round ${round}`, server.url, hybrid, [c], server.child.pid, notes);
        await load(rows, corpus, ix.indexed, `sitesift (${server.mode}, no cache, lexical only) round ${round}`, server.url, lexical, [c], server.child.pid, notes);
      }
    }
    notes.push(`${corpus}: sitesift peak RSS ${server.peakRssMb()} MB; ${segmentCount(server)} segments after the load`);
    await server.stop();
    server = await startBenchServer({ mode, env: threadsEnv, reuse: { dataDir: server.dataDir, masterKey: server.masterKey } });
    const warm2 = await warmUp(server.url, paths, server.child.pid);
    notes.push(`${corpus}: restarted with the default answer cache; warm-up ${warmNote(warm2, paths.length)} (fills the cache: wrk then repeats the same ${paths.length} queries)`);
    await load(rows, corpus, ix.indexed, `sitesift (${server.mode}, cache)`, server.url, script, CONNECTIONS, server.child.pid, notes);
    return ix.indexed;
  } catch (err) {
    process.stderr.write(`sitesift server log (tail):\n${server.logTail()}\n`);
    throw err;
  } finally {
    await server.stop();
    rmSync(server.dataDir, { recursive: true, force: true });
    paused?.kill('SIGCONT');
  }
}

async function miniSearchPhase(rows: Row[], corpus: string, starting: Promise<PeerServer>, queryPaths: string[], outDir: string, notes: string[]): Promise<void> {
  process.stderr.write(`${corpus}: waiting for the MiniSearch server…\n`);
  const peer = await starting;
  try {
    notes.push(`${corpus}: MiniSearch built ${peer.docs} docs in memory in ${peer.buildSeconds.toFixed(1)} s`);
    const paths = queryPaths.map((q) => `/search?query=${q}`);
    const warm = await warmUp(peer.url, paths, peer.child.pid, PEER_WARMUP_SECONDS);
    notes.push(`${corpus}: MiniSearch warm-up ${warmNote(warm, paths.length)}`);
    await load(rows, corpus, peer.docs, 'MiniSearch (node:http)', peer.url, rotatingScript(path.join(outDir, 'minisearch.lua'), paths), CONNECTIONS, peer.child.pid);
  } finally {
    await peer.stop();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === '--serve-minisearch') return serveMiniSearch(Number(process.argv[3]));
  if (process.argv[2] === '--serve-koa') return serveKoa();
  if (!hasWrk()) {
    process.stderr.write('bench-search: wrk not found. Install it (Debian/Ubuntu: sudo apt-get install -y wrk) and run again.\n');
    process.exitCode = 1;
    return;
  }
  const t0 = performance.now();
  const outDir = path.join(ROOT, 'bench/out');
  mkdirSync(outDir, { recursive: true });
  const docs: CorpusDoc[] = loadPgDocs();
  const queryPaths = loadPgQueries().map((q) => encodeURIComponent(q.q));
  const rows: Row[] = [];
  const notes: string[] = [];

  const loadAvg = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
  notes.push(`machine: ${os.cpus().length} CPUs, load average at start ${loadAvg()} (shared machine: absolute numbers vary with other work)`);
  const pgName = 'PostgreSQL 15';
  process.stderr.write(`${pgName}: ${docs.length} docs, ${queryPaths.length} queries, ${SECONDS} s per load\n`);
  const onlyLarge = process.env.BENCH_ONLY_LARGE === '1';
  if (!onlyLarge) await sitesiftPhase(rows, pgName, toPageDocs(docs), queryPaths, outDir, notes);
  // BENCH_PEERS=0: sitesift only (quick iterations; the goals against peers are then not checked).
  if (process.env.BENCH_PEERS !== '0' && !onlyLarge) {
    await miniSearchPhase(rows, pgName, startPeer(['--serve-minisearch', String(docs.length)]).ready, queryPaths, outDir, notes);
    const koa = await startPeer(['--serve-koa']).ready;
    try {
      await load(rows, pgName, 0, 'empty Koa route', koa.url, rotatingScript(path.join(outDir, 'koa.lua'), queryPaths.map((q) => `/empty?query=${q}`)), CONNECTIONS, koa.child.pid);
    } finally {
      await koa.stop();
    }
  }

  const bigName = `~${Math.round(BIG / 1000)}k docs`;
  if (BIG > 0 && onlyLarge) {
    process.stderr.write(`${bigName}: generating and indexing (sitesift only)…\n`);
    await sitesiftPhase(rows, bigName, multiplyCorpus(docs, BIG), queryPaths, outDir, notes);
  } else if (BIG > 0 && process.env.BENCH_PEERS !== '0') {
    process.stderr.write(`${bigName}: generating and indexing…\n`);
    // MiniSearch builds its index in its own process while sitesift indexes (wall time: the
    // longer of the two, not the sum); it is paused while sitesift is measured.
    const building = startPeer(['--serve-minisearch', String(BIG)]);
    try {
      await sitesiftPhase(rows, bigName, multiplyCorpus(docs, BIG), queryPaths, outDir, notes, building.child);
    } catch (err) {
      building.child.kill('SIGCONT');
      building.child.kill('SIGTERM');
      throw err;
    }
    await miniSearchPhase(rows, bigName, building.ready, queryPaths, outDir, notes);
  }

  notes.push(`load average at end ${loadAvg()}`);
  // ---- report
  const find = (corpus: string, engine: string, c: number) => rows.find((r) => r.corpus === corpus && r.engine.startsWith(engine) && r.result.connections === c)?.result;
  const lines: string[] = [];
  lines.push(`Search speed — wrk, 2 threads, ${SECONDS} s per row, ${queryPaths.length} corpus queries rotating; sitesift with ${SEARCH_PARAMS}`);
  lines.push('');
  lines.push('| corpus | docs | engine | conn | req/s | p50 ms | p99 ms | server CPU ms/request | main thread CPU ms/request | errors |');
  lines.push('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    lines.push(`| ${r.corpus} | ${r.docs || '—'} | ${r.engine} | ${r.result.connections} | ${r.result.rps.toFixed(0)} | ${r.result.p50.toFixed(2)} | ${r.result.p99.toFixed(2)} | ${Number.isNaN(r.cpuMs) ? '—' : r.cpuMs.toFixed(3)} | ${Number.isNaN(r.mainCpuMs) ? '—' : r.mainCpuMs.toFixed(3)} | ${r.result.errors} |`);
  }
  lines.push('');
  for (const n of notes) lines.push(`- ${n}`);

  const goals: Array<{ goal: string; met: boolean; detail: string }> = [];
  const corpora = [...new Set(rows.map((r) => r.corpus))];
  // Goals are checked for the engine alone (no cache) and as shipped (default answer cache).
  const variants: Array<[string, string]> = [['no cache', ', no cache)'], ['cache', ', cache)']];
  const ofVariant = (corpus: string, suffix: string, c: number) => rows.find((r) => r.corpus === corpus && r.engine.startsWith('sitesift') && r.engine.endsWith(suffix) && r.result.connections === c)?.result;
  for (const [label, suffix] of variants) {
    for (const corpus of corpora) {
      for (const c of CONNECTIONS) {
        const ours = ofVariant(corpus, suffix, c);
        const ms = find(corpus, 'MiniSearch', c);
        if (ours && ms) goals.push({ goal: `[${label}] ${corpus}, ${c} conn: ≥ 3× MiniSearch req/s`, met: ours.rps >= 3 * ms.rps, detail: `${(ours.rps / ms.rps).toFixed(1)}×` });
      }
    }
    const pg8 = ofVariant(pgName, suffix, 8);
    if (pg8) goals.push({ goal: `[${label}] ${pgName}, 8 conn: p99 ≤ 15 ms`, met: pg8.p99 <= 15, detail: `${pg8.p99.toFixed(2)} ms` });
    // The large corpus (the second one, or the only one with BENCH_ONLY_LARGE=1).
    const large = corpora.find((c) => c !== pgName);
    if (large) {
      const big8 = ofVariant(large, suffix, 8);
      if (big8) goals.push({ goal: `[${label}] ${large}, 8 conn: p99 ≤ 50 ms`, met: big8.p99 <= 50, detail: `${big8.p99.toFixed(2)} ms` });
    }
    for (const c of CONNECTIONS) {
      const ours = ofVariant(pgName, suffix, c);
      const koa = find(pgName, 'empty Koa', c);
      if (ours && koa) goals.push({ goal: `[${label}] ${pgName}, ${c} conn: ≥ 10% of empty Koa req/s`, met: ours.rps >= 0.1 * koa.rps, detail: `${((100 * ours.rps) / koa.rps).toFixed(1)}%` });
    }
  }
  const roundsOf = (corpus: string, mode: string, c: number) => rows.filter((r) => r.corpus === corpus && r.engine.startsWith('sitesift') && r.engine.includes(`, ${mode})`) && r.result.connections === c).map((r) => r.result);
  for (const corpus of corpora) {
    for (const c of [1, 8]) {
      const hybrid = roundsOf(corpus, 'hybrid default', c);
      const lexical = roundsOf(corpus, 'lexical only', c);
      if (hybrid.length === 0 || lexical.length === 0) continue;
      const [h99, l99, h50, l50] = [median(hybrid.map((r) => r.p99)), median(lexical.map((r) => r.p99)), median(hybrid.map((r) => r.p50)), median(lexical.map((r) => r.p50))];
      const each = hybrid.map((h, i) => `${h.p99.toFixed(1)}/${lexical[i]?.p99.toFixed(1) ?? '?'}`).join(', ');
      goals.push({ goal: `${corpus}, ${c} conn: hybrid p99 ≤ 2× lexical (median of ${hybrid.length} rounds)`, met: h99 <= 2 * l99, detail: `${h99.toFixed(2)} vs ${l99.toFixed(2)} ms (${(h99 / l99).toFixed(2)}×; p50 ${h50.toFixed(2)} vs ${l50.toFixed(2)} ms; p99 hybrid/lexical by round ${each} ms)` });
    }
  }
  for (const corpus of corpora) {
    const merging = ofVariant(corpus, 'during full merge)', 8);
    const idle = ofVariant(corpus, 'before the merge)', 8);
    if (merging && idle) goals.push({ goal: `${corpus}, 8 conn: p99 during a full merge ≤ 2× idle`, met: merging.p99 <= 2 * idle.p99, detail: `${merging.p99.toFixed(2)} vs ${idle.p99.toFixed(2)} ms (${(merging.p99 / idle.p99).toFixed(2)}×)` });
  }
  lines.push('');
  lines.push(`Goals: ${goals.filter((g) => g.met).length} of ${goals.length} met`);
  for (const g of goals) lines.push(`  [${g.met ? 'met' : '   '}] ${g.goal.padEnd(60)} ${g.detail}`);

  writeBenchSection('search', searchMarkdown(rows, notes, goals), { partial: onlyLarge || process.env.BENCH_PEERS === '0' || BIG === 0 });

  const json = {
    bench: 'search',
    at: new Date().toISOString(),
    seconds: Math.round((performance.now() - t0) / 1000),
    loadSeconds: SECONDS,
    rows: rows.map((r) => ({ corpus: r.corpus, docs: r.docs, engine: r.engine, connections: r.result.connections, rps: Math.round(r.result.rps), p50: +r.result.p50.toFixed(3), p90: +r.result.p90.toFixed(3), p99: +r.result.p99.toFixed(3), cpuMsPerRequest: +r.cpuMs.toFixed(4), mainCpuMsPerRequest: +r.mainCpuMs.toFixed(4), errors: r.result.errors })),
    goals: Object.fromEntries(goals.map((g) => [g.goal, g.met])),
  };
  process.stdout.write(lines.join('\n') + '\n\n' + JSON.stringify(json) + '\n');
}

/** The bench/README.md section: the table, the run's notes and the goals. */
function searchMarkdown(rows: Row[], notes: string[], goals: Array<{ goal: string; met: boolean; detail: string }>): string {
  const fmt = (x: number, d: number) => (Number.isNaN(x) ? '—' : x.toFixed(d));
  const table = markdownTable(
    ['corpus', 'docs', 'engine', 'conn', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/request', 'main thread CPU ms/request', 'errors'],
    rows.map((r) => [r.corpus, r.docs ? r.docs.toLocaleString('en') : '—', r.engine, String(r.result.connections), r.result.rps.toFixed(0), r.result.p50.toFixed(2), r.result.p99.toFixed(2), fmt(r.cpuMs, 3), fmt(r.mainCpuMs, 3), String(r.result.errors)]),
    ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const met = goals.filter((g) => g.met).length;
  return [
    `wrk, 2 threads, ${SECONDS} s per row, the corpus queries rotating; sitesift with \`${SEARCH_PARAMS}\`.`,
    '',
    table,
    '',
    ...notes.map((n) => `- ${n}`),
    '',
    `Goals: ${met} of ${goals.length} met.`,
    '',
    ...goals.map((g) => `- ${g.met ? 'met' : '**not met**'}: ${g.goal} — ${g.detail}`),
  ].join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-search: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
