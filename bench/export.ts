/**
 * `make bench-export`: snapshots and search nodes on the ~BENCH_DOCS (default 100,000) document
 * corpus the other benchmarks build (the PostgreSQL manual multiplied, bench/lib/server.ts),
 * on the deployment `make cluster` starts (deploy/cluster.sh: primary, nginx, 2 search nodes).
 *
 * 1. full export: time and bytes written;
 * 2. one page changed, exported again: bytes shipped and time until both nodes answer with the
 *    change (goals: < 2 % of the full export; ≤ 2 × the poll interval after the export);
 *    Each node's own account of its swap (GET /health `lastSwap`) splits that time into the
 *    wait for its next poll, reading index.json and the manifest, fetching and verifying the new
 *    blobs, opening the generation, and the first search on it.
 * 3. search throughput with wrk over the manual's known-item queries (goal ≥ 0.9×): nginx over
 *    the two nodes as deployed (each with its share of the cores, deploy/cluster.sh) against one
 *    node that has the whole machine (a third node outside the balancer, started with every
 *    core's search thread), served directly. Same wrk, connections, queries and duration; the
 *    two are measured in alternation (BENCH_ROUNDS), each load after a warm-up of the same
 *    length through the same entry point. The nodes' answer caches are off
 *    (SITESIFT_SEARCH_CACHE_MB=0): every request is a search computed by the engine, as the
 *    rotating query list would otherwise replay the warm-up's answers from the cache. nginx's
 *    per-visitor limit is off (wrk is one visitor). CPU per search per node: CPU time of the
 *    node processes ÷ requests.
 *
 * Environment: BENCH_DOCS, BENCH_SECONDS (per wrk load, default 10), BENCH_CONNECTIONS (default
 * 8), BENCH_ROUNDS (alternations, default 2), BENCH_NODE_MEMORY_MB (default 1024), BENCH_POLL_MS (the nodes' poll interval, default
 * 1000), BENCH_REPORT=0 (do not touch bench/README.md). Needs nginx and wrk.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadPgDocs, loadPgQueries } from './lib/corpus.js';
import { processCpuMs } from './lib/proc.js';
import { markdownTable, writeBenchSection } from './lib/report.js';
import { call, indexDocs, multiplyCorpus, ROOT, type BenchServer } from './lib/server.js';
import { hasWrk, rotatingScript, runWrk } from './lib/wrk.js';

const run = promisify(execFile);
const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CORES = os.availableParallelism();
/**
 * Each node's memory budget (SITESIFT_MEMORY_MB), its share of the machine like its cores; the
 * reference node, which has the whole machine, gets twice as much. With hybrid search a search
 * thread's caches must hold the segments' row vectors (100 dimensions × 4 bytes a page).
 */
const NODE_MEMORY_MB = Number(process.env.BENCH_NODE_MEMORY_MB ?? 1024);
const nodeEnv = (memoryMb: number) => `SITESIFT_SEARCH_CACHE_MB=0 SITESIFT_MEMORY_MB=${memoryMb}`;
const script = path.join(ROOT, 'deploy', 'cluster.sh');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-bench-export-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  CLUSTER_DIR: dir,
  CLUSTER_POLL_MS: String(POLL_MS),
  CLUSTER_EXPORT_SCHEDULE: '',
  CLUSTER_RATE_PER_SECOND: '0',
  CLUSTER_NODE_ENV: nodeEnv(NODE_MEMORY_MB),
};
for (const k of Object.keys(env)) if (k.startsWith('SITESIFT_')) delete env[k];

const log = (m: string) => process.stderr.write(`[bench-export] ${m}\n`);
const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;

function clusterEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(dir, 'cluster.env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

async function main(): Promise<void> {
  if (!hasWrk()) throw new Error('wrk is not installed (apt-get install -y wrk)');
  log(`starting the cluster in ${dir}`);
  await run(script, ['up'], { env, timeout: 600_000 });
  const e = clusterEnv();
  const masterKey = fs.readFileSync(path.join(dir, 'master.key'), 'utf8').trim();
  const primary = { url: e.PRIMARY_URL!, masterKey } as BenchServer;
  const pid = (name: string) => Number(fs.readFileSync(path.join(dir, `${name}.pid`), 'utf8'));
  const rows: string[][] = [];
  const notes: string[] = [];
  try {
    let r = await call(primary, 'POST', '/admin/projects', JSON.stringify({ siteId: 'pgdocs' }));
    if (r.status !== 201) throw new Error(`create project: ${r.status}`);
    log(`indexing ~${DOCS} documents`);
    const ix = await indexDocs(primary, 'pgdocs', multiplyCorpus(loadPgDocs(), DOCS), { progress: (n) => n % 20_000 === 0 && log(`${n} indexed`) });
    log(`indexed ${ix.indexed} in ${ix.seconds.toFixed(0)} s`);
    // A site's steady state: the import's segments merged, as the background merges leave them
    // once an import is over. Without it the merge policy rewrites large segments between the two
    // exports, and the second one ships those merges, not the one-page change.
    const tm = performance.now();
    r = await call(primary, 'POST', '/admin/projects/pgdocs/merge');
    if (r.status !== 200) throw new Error(`merge: ${r.status}`);
    log(`full merge in ${((performance.now() - tm) / 1000).toFixed(0)} s`);
    await call(primary, 'POST', '/sites/pagesJson?site=pgdocs&refresh=true', JSON.stringify([{ url: 'https://bench.test/marker', title: 'marker', content: 'benchmark marker page version zero' }]));

    const out = path.join(dir, 'export');
    const exportNow = async () => {
      const t0 = performance.now();
      const x = await call(primary, 'POST', '/admin/export', JSON.stringify({ all: true, out }));
      if (x.status !== 200) throw new Error(`export: ${x.status} ${JSON.stringify(x.json).slice(0, 300)}`);
      return { ms: performance.now() - t0, bytes: Number(x.json.bytesWritten), blobs: x.json.projects?.[0]?.blobsWritten ?? 0 };
    };
    const full = await exportNow();
    log(`full export ${mb(full.bytes)} in ${full.ms.toFixed(0)} ms`);
    rows.push(['full export', `${(full.ms / 1000).toFixed(2)} s`, mb(full.bytes), `${full.blobs} files`]);

    const serves = async (base: string, word: string) => {
      const t0 = performance.now();
      const s = await fetch(`${base}/sites?site=pgdocs&query=${word}&log=false`).then((x) => x.json()).catch(() => null);
      return { ok: (s?.totalResults ?? 0) > 0, ms: performance.now() - t0 };
    };
    /** Polls both nodes until each answers `word`; per node: ms until it did, and that search's own latency. */
    const waitBoth = async (word: string, limitMs: number) => {
      const t0 = performance.now();
      const done: Array<{ at: number; searchMs: number } | null> = [null, null];
      const urls = [e.NODE1_URL!, e.NODE2_URL!];
      while (performance.now() - t0 < limitMs && done.some((d) => d === null)) {
        for (let i = 0; i < urls.length; i++) {
          if (done[i]) continue;
          const r = await serves(urls[i]!, word);
          if (r.ok) done[i] = { at: performance.now() - t0, searchMs: r.ms };
        }
        if (done.some((d) => d === null)) await new Promise((res) => setTimeout(res, 20));
      }
      return { ms: done.some((d) => d === null) ? NaN : Math.max(...done.map((d) => d!.at)), nodes: done };
    };
    const loaded = await waitBoth('zero', 600_000);
    log(`both nodes serve the full export after ${loaded.ms.toFixed(0)} ms`);
    rows.push(['both nodes load the full export', `${(loaded.ms / 1000).toFixed(2)} s`, '', `poll ${POLL_MS} ms`]);

    // One page changed.
    r = await call(primary, 'POST', '/sites/pagesJson?site=pgdocs&refresh=true', JSON.stringify([{ url: 'https://bench.test/marker', title: 'marker', content: 'benchmark marker page version quokka' }]));
    const delta = await exportNow();
    const exportedAt = Date.now();
    const freshness = await waitBoth('quokka', 120_000);
    const fresh = freshness.ms;
    const share = (100 * delta.bytes) / full.bytes;
    rows.push(['1 page changed: re-export', `${(delta.ms / 1000).toFixed(2)} s`, `${(delta.bytes / 1024).toFixed(1)} KB (${share.toFixed(3)} % of full)`, `${delta.blobs} files`]);
    rows.push(['… both nodes serve the change', `${(fresh / 1000).toFixed(2)} s after the export`, '', `${(fresh / POLL_MS).toFixed(2)} × poll interval`]);
    log(`1-page export ${delta.bytes} bytes (${share.toFixed(3)} %), fresh after ${fresh.toFixed(0)} ms`);
    // Where the freshness time went, per node (the node's own account of its last swap, GET /health).
    for (const [i, url] of [e.NODE1_URL!, e.NODE2_URL!].entries()) {
      const h = await fetch(`${url}/health`).then((x) => x.json()).catch(() => null);
      const t = h?.snapshot?.lastSwap;
      const seen = freshness.nodes[i];
      if (!t || !seen) continue;
      const wait = Date.parse(t.pollStartedAt) - exportedAt;
      const after = exportedAt + seen.at - Date.parse(t.servingAt);
      const phases = `poll wait ${wait} ms, index.json ${t.index}, manifest ${t.manifest}, fetch+verify ${t.fetch} (${t.fetchedBlobs} blobs, ${(t.fetchedBytes / 1024).toFixed(0)} KB), open ${t.open} (${t.openedSegments} new segment file(s), tombstones ${t.derivation}), suggestions ${t.suggestions}; serving → answered ${after.toFixed(0)} ms (that search took ${seen.searchMs.toFixed(0)} ms)`;
      log(`node ${i + 1}: ${phases}`);
      rows.push([`… node ${i + 1}: where the time went`, `${(seen.at / 1000).toFixed(2)} s`, '', phases]);
    }

    // Throughput: nginx over the two nodes as deployed, against one node with the whole machine.
    log(`starting a reference node with ${CORES} search threads (outside the balancer)`);
    await run(script, ['start-node', '3'], { env: { ...env, CLUSTER_SEARCH_THREADS: String(CORES), CLUSTER_NODE_ENV: nodeEnv(2 * NODE_MEMORY_MB) }, timeout: 600_000 });
    const ref = clusterEnv().NODE3_URL!;
    const refReady = performance.now();
    while (!(await serves(ref, 'quokka')).ok) {
      if (performance.now() - refReady > 600_000) throw new Error('the reference node did not load the snapshot');
      await new Promise((res) => setTimeout(res, 200));
    }
    const queries = loadPgQueries().map((q) => q.q);
    const paths = queries.map((q) => `/sites?site=pgdocs&query=${encodeURIComponent(q)}&log=false`);
    const scriptFile = path.join(dir, 'rotate.lua');
    rotatingScript(scriptFile, paths);
    const load = async (name: string, base: string, pids: number[]) => {
      await runWrk({ url: base, connections: CONNECTIONS, seconds: SECONDS, script: scriptFile }); // warm-up, same length
      const cpu0 = pids.map((p) => processCpuMs(p));
      const w = await runWrk({ url: base, connections: CONNECTIONS, seconds: SECONDS, script: scriptFile });
      const cpu = pids.map((p, i) => processCpuMs(p) - cpu0[i]!);
      log(`${name}: ${w.rps.toFixed(0)} req/s, p50 ${w.p50} ms, p99 ${w.p99} ms, errors ${w.errors}, CPU ${cpu.map((c) => (c / 1000).toFixed(1)).join(' + ')} s`);
      return { w, cpu };
    };
    type Load = Awaited<ReturnType<typeof load>>;
    const direct: Load[] = [];
    const lb: Load[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      direct.push(await load(`round ${i + 1}: reference node direct (${CORES} search threads)`, ref, [pid('node3')]));
      lb.push(await load(`round ${i + 1}: nginx → 2 nodes (${e.SEARCH_THREADS} search thread(s) each)`, e.LB_URL!, [pid('node1'), pid('node2')]));
    }
    await run(script, ['stop-node', '3'], { env });
    const sum = (xs: Load[]) => {
      const requests = xs.reduce((a, x) => a + x.w.requests, 0);
      const seconds = xs.reduce((a, x) => a + x.w.seconds, 0);
      const cpu = xs[0]!.cpu.map((_, i) => xs.reduce((a, x) => a + x.cpu[i]!, 0));
      return {
        rps: requests / seconds,
        requests,
        cpu,
        cpuPerSearch: cpu.reduce((a, b) => a + b, 0) / Math.max(1, requests),
        p50: xs.map((x) => x.w.p50).join(' / '),
        p99: xs.map((x) => x.w.p99).join(' / '),
        errors: xs.reduce((a, x) => a + x.w.errors, 0),
      };
    };
    const d = sum(direct);
    const l = sum(lb);
    const ratio = l.rps / d.rps;
    rows.push(['search: one node direct, whole machine', `${d.rps.toFixed(0)} req/s`, `p50 ${d.p50} ms, p99 ${d.p99} ms`, `${CORES} search threads; ${d.cpuPerSearch.toFixed(2)} ms CPU/search; ${d.errors} errors`]);
    rows.push([
      'search: nginx → 2 nodes',
      `${l.rps.toFixed(0)} req/s (${ratio.toFixed(2)}×)`,
      `p50 ${l.p50} ms, p99 ${l.p99} ms`,
      `${e.SEARCH_THREADS} search thread(s) per node; ${l.cpuPerSearch.toFixed(2)} ms CPU/search (node 1 ${(l.cpu[0]! / 1000).toFixed(1)} s, node 2 ${(l.cpu[1]! / 1000).toFixed(1)} s); ${l.errors} errors`,
    ]);
    notes.push(
      `${ix.indexed + 1} documents, hybrid search (the built-in embedder, the project's default); node memory budget ${NODE_MEMORY_MB} MB each, the reference node ${2 * NODE_MEMORY_MB} MB; ${queries.length} known-item queries rotated by wrk (2 threads, ${CONNECTIONS} connections), ${ROUNDS} alternating rounds of ${SECONDS} s per entry point, each after a ${SECONDS} s warm-up through the same entry point; answer caches off, so every request is a computed search; nginx's rate limit off.`,
      `Goals: 1-page re-export < 2 % of a full export (${share.toFixed(3)} %); freshness ≤ 2 × poll interval (${(fresh / POLL_MS).toFixed(2)} ×); nginx + 2 nodes ≥ 0.9 × one node direct (${ratio.toFixed(2)} ×).`,
      `This machine has ${CORES} cores shared by every process here (wrk, nginx, the nodes, the idle primary), so two nodes cannot add throughput; each node runs ${e.SEARCH_THREADS} search thread(s), its share of the cores (deploy/cluster.sh), and the reference node all ${CORES}. CPU per search per node: ${l.cpuPerSearch.toFixed(2)} ms behind nginx, ${d.cpuPerSearch.toFixed(2)} ms for the reference node, so on machines of their own each node serves about 1000 / ${l.cpuPerSearch.toFixed(2)} ≈ ${(1000 / l.cpuPerSearch).toFixed(0)} searches per CPU-second and N nodes about N times that.`,
    );
  } finally {
    await run(script, ['down'], { env }).catch(() => undefined);
  }
  const md = [markdownTable(['step', 'time / throughput', 'bytes / latency', 'notes'], rows, ['l', 'r', 'r', 'l']), '', ...notes.map((n) => `- ${n}`)].join('\n');
  process.stdout.write(md + '\n');
  writeBenchSection('export', md);
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  process.stderr.write(`bench-export failed: ${(err as Error).stack}\n`);
  void run(script, ['down'], { env }).finally(() => process.exit(1));
});
