/**
 * `make bench-export`: snapshots and search nodes on the ~BENCH_DOCS (default 100,000) document
 * corpus the other benchmarks build (the PostgreSQL manual multiplied, bench/lib/server.ts),
 * on the deployment `make cluster` starts (deploy/cluster.sh: primary, nginx, 2 search nodes).
 *
 * 1. full export: time and bytes written;
 * 2. one page changed, exported again: bytes shipped and time until both nodes answer with the
 *    change (goals: < 2 % of the full export; ≤ 2 × the poll interval after the export);
 * 3. search throughput with wrk over the manual's known-item queries: one node directly, then
 *    nginx over both nodes, same run, same connections (goal ≥ 0.9×), and CPU per search per
 *    node (process CPU time of the node processes ÷ requests).
 *
 * Environment: BENCH_DOCS, BENCH_SECONDS (per wrk load, default 10), BENCH_CONNECTIONS (default
 * 8), BENCH_POLL_MS (the nodes' poll interval, default 1000), BENCH_REPORT=0 (do not touch
 * bench/README.md). Needs nginx and wrk.
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
const script = path.join(ROOT, 'deploy', 'cluster.sh');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-bench-export-'));
const env: NodeJS.ProcessEnv = { ...process.env, CLUSTER_DIR: dir, CLUSTER_POLL_MS: String(POLL_MS), CLUSTER_EXPORT_SCHEDULE: '' };
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
      const s = await fetch(`${base}/sites?site=pgdocs&query=${word}&log=false`).then((x) => x.json()).catch(() => null);
      return (s?.totalResults ?? 0) > 0;
    };
    const waitBoth = async (word: string, limitMs: number) => {
      const t0 = performance.now();
      while (performance.now() - t0 < limitMs) {
        if ((await serves(e.NODE1_URL!, word)) && (await serves(e.NODE2_URL!, word))) return performance.now() - t0;
        await new Promise((res) => setTimeout(res, 50));
      }
      return NaN;
    };
    const loaded = await waitBoth('zero', 600_000);
    log(`both nodes serve the full export after ${loaded.toFixed(0)} ms`);
    rows.push(['both nodes load the full export', `${(loaded / 1000).toFixed(2)} s`, '', `poll ${POLL_MS} ms`]);

    // One page changed.
    r = await call(primary, 'POST', '/sites/pagesJson?site=pgdocs&refresh=true', JSON.stringify([{ url: 'https://bench.test/marker', title: 'marker', content: 'benchmark marker page version quokka' }]));
    const delta = await exportNow();
    const fresh = await waitBoth('quokka', 120_000);
    const share = (100 * delta.bytes) / full.bytes;
    rows.push(['1 page changed: re-export', `${(delta.ms / 1000).toFixed(2)} s`, `${(delta.bytes / 1024).toFixed(1)} KB (${share.toFixed(3)} % of full)`, `${delta.blobs} files`]);
    rows.push(['… both nodes serve the change', `${(fresh / 1000).toFixed(2)} s after the export`, '', `${(fresh / POLL_MS).toFixed(2)} × poll interval`]);
    log(`1-page export ${delta.bytes} bytes (${share.toFixed(3)} %), fresh after ${fresh.toFixed(0)} ms`);

    // Throughput: one node direct, then nginx over both.
    const queries = loadPgQueries().map((q) => q.q);
    const paths = queries.map((q) => `/sites?site=pgdocs&query=${encodeURIComponent(q)}&log=false`);
    const scriptFile = path.join(dir, 'rotate.lua');
    rotatingScript(scriptFile, paths);
    const load = async (name: string, base: string, pids: number[]) => {
      await runWrk({ url: base, connections: CONNECTIONS, seconds: Math.max(2, Math.round(SECONDS / 3)), script: scriptFile }); // warm caches
      const cpu0 = pids.map((p) => processCpuMs(p));
      const w = await runWrk({ url: base, connections: CONNECTIONS, seconds: SECONDS, script: scriptFile });
      const cpu = pids.map((p, i) => processCpuMs(p) - cpu0[i]!);
      log(`${name}: ${w.rps.toFixed(0)} req/s, p50 ${w.p50} ms, p99 ${w.p99} ms, errors ${w.errors}`);
      return { w, cpuPerSearch: cpu.reduce((a, b) => a + b, 0) / Math.max(1, w.requests), cpu };
    };
    const direct = await load('node 1 direct', e.NODE1_URL!, [pid('node1')]);
    const lb = await load('nginx, 2 nodes', e.LB_URL!, [pid('node1'), pid('node2')]);
    const ratio = lb.w.rps / direct.w.rps;
    rows.push(['search: node 1 direct', `${direct.w.rps.toFixed(0)} req/s`, `p50 ${direct.w.p50} ms, p99 ${direct.w.p99} ms`, `${direct.cpuPerSearch.toFixed(2)} ms CPU/search`]);
    rows.push(['search: nginx → 2 nodes', `${lb.w.rps.toFixed(0)} req/s (${ratio.toFixed(2)}×)`, `p50 ${lb.w.p50} ms, p99 ${lb.w.p99} ms`, `${lb.cpuPerSearch.toFixed(2)} ms CPU/search (node 1 ${(lb.cpu[0]! / 1000).toFixed(1)} s, node 2 ${(lb.cpu[1]! / 1000).toFixed(1)} s)`]);
    notes.push(
      `${ix.indexed + 1} documents; ${queries.length} known-item queries rotated by wrk, ${CONNECTIONS} connections, ${SECONDS} s per load after a warm-up.`,
      `Goals: 1-page re-export < 2 % of a full export (${share.toFixed(3)} %); freshness ≤ 2 × poll interval (${(fresh / POLL_MS).toFixed(2)} ×); nginx + 2 nodes ≥ 0.9 × one node direct (${ratio.toFixed(2)} ×).`,
      `This machine has 2 cores shared by every process here (wrk, nginx, both nodes, the primary), so two nodes cannot add throughput; on separate machines each node serves about 1000 / ${direct.cpuPerSearch.toFixed(2)} ≈ ${(1000 / direct.cpuPerSearch).toFixed(0)} searches per CPU-second.`,
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
