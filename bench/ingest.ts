/**
 * Ingest benchmark (`make bench-ingest`, part of `make bench`). Not a test: it prints a table a
 * person can read and one JSON line a script can compare.
 *
 * 1. Prepare: the PostgreSQL 15 manual (../shared/corpus/postgresql-15/docs.jsonl.gz, 1,169
 *    pages, relative URLs prefixed with https://www.postgresql.org/docs/15/) and a multiplied set
 *    of about BENCH_DOCS (default 100,000) documents — copy k has its own URL prefix and its
 *    content's words shuffled with a seeded PRNG, so every document is distinct. The batch bodies
 *    are written to a temp file first, so that generating them costs neither side any time.
 * 2. Reference: a raw better-sqlite3 FTS5 bulk insert of the same documents (one transaction,
 *    default unicode61 tokenizer, columns url UNINDEXED, title, headings, content), timed over
 *    JSON parsing + inserts + commit.
 * 3. sitesift: a server child process started through the launcher like `make start`
 *    (`bin/sitesift serve`, or `bin/sitesift --node --import tsx src/main.ts` when dist/ is
 *    missing or stale; own temp data dir,
 *    default settings) fed over HTTP `POST /sites/pagesJson` in batches of 100 with
 *    BENCH_CONCURRENCY (default 3) requests in flight. Measured: docs/s from the first request to
 *    the last acknowledgement; time from the last acknowledgement until a word only the last
 *    document has is found by `GET /sites` (polled every 10 ms; if the server has no search
 *    route, the latency of a one-document `refresh=true` write instead); index size on disk;
 *    segment count (manifest) before and after `POST /admin/projects/:site/merge` (full merge);
 *    peak RSS of the server process (VmHWM from /proc/<pid>/status, Linux only).
 *
 * Environment: BENCH_SERVER (dist|tsx|auto), BENCH_DOCS, BENCH_CONCURRENCY, BENCH_CORPUS (path), BENCH_KEEP=1 keeps the temp dir,
 * BENCH_SERVER_NODE_OPTIONS: NODE_OPTIONS for the server only (e.g. --max-old-space-size=256),
 * BENCH_SERVER_NODE_ARGS: node flags for the server that NODE_OPTIONS refuses (--cpu-prof, --single-threaded-gc),
 * BENCH_SERVER_ENV: extra server environment as K=V,K=V (e.g. SITESIFT_SEARCH_THREADS=0).
 * BENCH_MEMORY_TRACE=1: where the server's memory is at its peak (a diagnostic; it costs the
 * server some CPU, so rates of such a run are not comparable): see {@link MEMORY_TRACE_PRELOAD}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { mainThreadCpuMs, processCpuMs } from './lib/proc.js';
import { writeBenchSection } from './lib/report.js';
import { benchServerEnv, prng, serverLaunch } from './lib/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = process.env.BENCH_CORPUS ?? path.resolve(ROOT, '..', 'shared', 'corpus', 'postgresql-15', 'docs.jsonl.gz');
const BASE_URL = 'https://www.postgresql.org/docs/15/';
const DEFAULT_TARGET_DOCS = 100_000;
const TARGET_DOCS = intEnv('BENCH_DOCS', DEFAULT_TARGET_DOCS);
const MEMORY_TRACE = process.env.BENCH_MEMORY_TRACE === '1';
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 3);
const BATCH = 100;

interface CorpusDoc {
  url: string;
  title: string;
  headings: string;
  content: string;
}

interface PhaseResult {
  name: string;
  docs: number;
  ingestSeconds: number;
  docsPerSecond: number;
  searchableAfterMs: number;
  searchableHow: 'search' | 'refresh';
  indexBytes: number;
  segmentsBefore: number;
  segmentsAfter: number;
  mergeSeconds: number;
  rawFts5Seconds: number;
  rawFts5DocsPerSecond: number;
  rawFts5Bytes: number;
  /** Server CPU (all threads, /proc) from the first request to the last acknowledgement, per document. */
  cpuMsPerDoc: number;
  /** The main thread's part of it. */
  mainCpuMsPerDoc: number;
  /** The raw FTS5 insert's CPU per document (this process, one thread). */
  rawFts5CpuMsPerDoc: number;
}

/** Documents per second from the first request until the last acknowledged one is searchable. */
function untilSearchable(r: { docs: number; ingestSeconds: number; searchableAfterMs: number }): number {
  return r.docs / (r.ingestSeconds + r.searchableAfterMs / 1000);
}



function intEnv(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${v}"`);
  return n;
}


function shuffleWords(text: string, rnd: () => number): string {
  const words = text.split(/\s+/);
  for (let i = words.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    const w = words[i]!;
    words[i] = words[j]!;
    words[j] = w;
  }
  return words.join(' ');
}

function loadCorpus(): CorpusDoc[] {
  if (!existsSync(CORPUS)) throw new Error(`corpus not found: ${CORPUS} (set BENCH_CORPUS)`);
  return gunzipSync(readFileSync(CORPUS))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as CorpusDoc);
}

/**
 * Writes the documents of one phase as batch bodies (one JSON array per line) to `file`;
 * the last document carries `nonce` in its content. Returns the number of documents.
 */
async function writeBatches(file: string, corpus: CorpusDoc[], copies: number, nonce: string, limit: number): Promise<number> {
  const out = createWriteStream(file);
  let batch: unknown[] = [];
  let n = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    if (!out.write(`${JSON.stringify(batch)}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
    batch = [];
  };
  outer: for (let k = 0; k < copies; k++) {
    const rnd = prng(k + 1);
    for (const d of corpus) {
      if (n === limit) break outer;
      n++;
      const last = n === limit;
      const doc =
        k === 0
          ? { url: BASE_URL + d.url, title: d.title, headings: d.headings, content: d.content }
          : { url: `${BASE_URL}copy-${k}/${d.url}`, title: `${d.title} (${k})`, headings: d.headings, content: shuffleWords(d.content, rnd) };
      if (last) doc.content += ` ${nonce}`;
      batch.push(doc);
      if (batch.length === BATCH) await flush();
    }
  }
  await flush();
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return n;
}

async function* readBatches(file: string): AsyncGenerator<string> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) if (line !== '') yield line;
}

/** Raw FTS5 reference: parse every batch and insert its documents, one transaction. */
async function rawFts5(file: string, dbFile: string): Promise<{ seconds: number; docs: number; bytes: number; cpuSeconds: number }> {
  const bodies: string[] = [];
  for await (const b of readBatches(file)) bodies.push(b);
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE VIRTUAL TABLE docs USING fts5(url UNINDEXED, title, headings, content)');
  const insert = db.prepare('INSERT INTO docs (url, title, headings, content) VALUES (?, ?, ?, ?)');
  let docs = 0;
  const started = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  db.exec('BEGIN');
  for (const body of bodies) {
    for (const d of JSON.parse(body) as CorpusDoc[]) {
      insert.run(d.url, d.title, d.headings, d.content);
      docs++;
    }
  }
  db.exec('COMMIT');
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  db.close();
  return { cpuSeconds: (cpu.user + cpu.system) / 1e6, seconds, docs, bytes: dirBytes(path.dirname(dbFile), (f) => f.startsWith(path.basename(dbFile))) };
}

function dirBytes(dir: string, filter: (name: string) => boolean = () => true): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else if (e.isFile() && filter(e.name)) total += statSync(p).size;
  }
  return total;
}

interface Server {
  url: string;
  child: ChildProcess;
  masterKey: string;
  dataDir: string;
}

/** Newest modification time (ms) of the .ts files under `dir`. */
function newestTs(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestTs(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * How the server runs: `dist` (`node dist/src/main.js`, what `make start` runs) or `tsx`
 * (TypeScript through the loader, which every pool thread loads too — more memory). BENCH_SERVER
 * picks; by default dist when it is built and not older than any source file (`make
 * bench-ingest` builds first), else tsx.
 */
function serverMode(): 'dist' | 'tsx' {
  const want = process.env.BENCH_SERVER;
  if (want === 'dist' || want === 'tsx') return want;
  if (want !== undefined && want !== '' && want !== 'auto') throw new Error(`BENCH_SERVER must be dist, tsx or auto, got "${want}"`);
  const distMain = path.join(ROOT, 'dist/src/main.js');
  if (!existsSync(distMain)) return 'tsx';
  const built = statSync(distMain).mtimeMs;
  const stale = ['src', 'workers', 'jobs'].some((d) => newestTs(path.join(ROOT, d)) > built);
  if (stale) process.stderr.write('dist/ is older than the sources: running the server through tsx (make bench-ingest builds first)\n');
  return stale ? 'tsx' : 'dist';
}

/**
 * BENCH_MEMORY_TRACE=1: a preload (`--require`, which Node also runs in every worker thread)
 * that makes each isolate append its V8 heap statistics to BENCH_MEMORY_OUT every 500 ms, the
 * main thread also the server's RSS split by kind of mapping every 2 s (/proc/self/smaps:
 * file-backed = code; `[heap]` = glibc's main malloc arena; anonymous mappings at 64 MiB-aligned
 * addresses = glibc's per-thread malloc arenas, where SQLite page caches and FTS5 build memory of pool and
 * search threads go; other anonymous memory = V8 heaps, thread stacks, large allocations), and
 * turns on V8's --trace-gc (not allowed in NODE_OPTIONS; a runtime flag is process-wide, so
 * every isolate logs). Pool threads run timers only between tasks (async atomics, src/core/pool.ts),
 * so a busy pool thread's heap shows only in the GC trace (server.log). Only the bench uses it.
 */
const MEMORY_TRACE_PRELOAD = `
const fs = require('node:fs');
const v8 = require('node:v8');
const { threadId, isMainThread, workerData } = require('node:worker_threads');
const out = process.env.BENCH_MEMORY_OUT;
if (out) {
  if (isMainThread) v8.setFlagsFromString('--trace-gc');
  // Search threads get { searchMemoryMb } (src/search/executor.ts), pool threads { nice, … }.
  const kind = isMainThread ? 'main' : workerData && typeof workerData === 'object' && 'nice' in workerData ? 'pool' : !workerData || (typeof workerData === 'object' && 'searchMemoryMb' in workerData) ? 'search' : 'writer';
  let tick = 0;
  setInterval(() => {
    const h = v8.getHeapStatistics();
    const line = { t: Date.now(), tid: threadId, kind, phys: h.total_physical_size, used: h.used_heap_size };
    if (isMainThread && tick++ % 4 === 0) {
      const cats = { file: 0, mainArena: 0, threadArenas: 0, otherAnon: 0 };
      let arena = false, name = '';
      for (const l of fs.readFileSync('/proc/self/smaps', 'utf8').split('\\n')) {
        const m = /^([0-9a-f]+)-[0-9a-f]+ (\\S+) \\S+ \\S+ \\d+ *(.*)$/.exec(l);
        // glibc's thread arenas are heaps of up to 64 MiB at 64 MiB-aligned addresses.
        if (m) { arena = parseInt(m[1], 16) % 67108864 === 0 && m[2].startsWith('rw'); name = m[3].trim(); continue; }
        const r = /^Rss:\\s+(\\d+) kB/.exec(l);
        if (!r) continue;
        const kb = Number(r[1]) * 1024;
        if (name === '[heap]') cats.mainArena += kb;
        else if (name && !name.startsWith('[')) cats.file += kb;
        else if (!name && arena) cats.threadArenas += kb;
        else cats.otherAnon += kb;
      }
      line.rss = Object.values(cats).reduce((a, b) => a + b, 0);
      line.smaps = cats;
    }
    fs.appendFileSync(out, JSON.stringify(line) + '\\n');
  }, 500).unref();
}
`;

/** The BENCH_MEMORY_TRACE report: the composition of the server's largest sampled RSS. */
function memoryTraceReport(dir: string): string {
  const MB = (b: number) => `${Math.round(b / 1048576)}`;
  const file = path.join(dir, 'memory.jsonl');
  if (!existsSync(file)) return 'memory trace: no samples\n';
  const latest = new Map<number, { t: number; kind: string; phys: number; used: number }>();
  let peak: { t: number; rss: number; smaps: Record<string, number>; heaps: Array<{ kind: string; phys: number; used: number }> } | null = null;
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    if (!l) continue;
    const s = JSON.parse(l) as { t: number; tid: number; kind: string; phys: number; used: number; rss?: number; smaps?: Record<string, number> };
    latest.set(s.tid, s);
    if (s.rss !== undefined && (!peak || s.rss > peak.rss)) {
      // Isolates that reported within the last 2 s (pool threads only while not blocked).
      const heaps = [...latest.values()].filter((x) => s.t - x.t < 2000).map((x) => ({ kind: x.kind, phys: x.phys, used: x.used }));
      peak = { t: s.t, rss: s.rss, smaps: s.smaps!, heaps };
    }
  }
  if (!peak) return 'memory trace: no samples\n';
  const heaps = peak.heaps.map((h) => `${h.kind} ${MB(h.phys)} (${MB(h.used)} used)`).join(', ');
  let out = `memory trace, largest sample (${MB(peak.rss)} MB): ${Object.entries(peak.smaps).map(([k, v]) => `${k} ${MB(v)}`).join(', ')} MB; V8 heaps physical: ${heaps} MB\n`;
  // Per isolate from --trace-gc: largest committed heap and largest live size after a full GC.
  const gc = /\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: (Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Compact)\S* [\d.]+ \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/;
  const iso = new Map<string, { committed: number; live: number; gcs: number }>();
  const log = path.join(dir, 'server.log');
  if (existsSync(log)) {
    for (const l of readFileSync(log, 'utf8').split('\n')) {
      const m = gc.exec(l);
      if (!m) continue;
      const e = iso.get(m[1]!) ?? { committed: 0, live: 0, gcs: 0 };
      e.gcs++;
      e.committed = Math.max(e.committed, Number(m[3]), Number(m[5]));
      if (m[2]!.startsWith('Mark')) e.live = Math.max(e.live, Number(m[4]));
      iso.set(m[1]!, e);
    }
  }
  const rows = [...iso.values()].filter((e) => e.gcs > 20).sort((a, b) => b.committed - a.committed);
  out += `V8 isolates with > 20 GCs (--trace-gc): ${rows.map((e) => `committed ≤ ${e.committed.toFixed(0)} MB, live after full GC ≤ ${e.live.toFixed(0)} MB`).join('; ')}\n`;
  return out;
}

function startServer(dataDir: string, mode: 'dist' | 'tsx'): Promise<Server> {
  const masterKey = `ssm_${randomBytes(24).toString('base64url')}`;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SITESIFT_') && k !== 'HOST' && k !== 'PORT' && k !== 'LOG_LEVEL') env[k] = v;
  // BENCH_SERVER_NODE_OPTIONS (e.g. "--max-old-space-size=256") tries heap limits on the server.
  // Through NODE_OPTIONS, not argv: worker threads inherit execArgv and refuse heap flags there.
  const serverNodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
  if (serverNodeOptions) env.NODE_OPTIONS = serverNodeOptions;
  if (MEMORY_TRACE) {
    const preload = path.join(path.dirname(dataDir), 'memory-trace.cjs');
    writeFileSync(preload, MEMORY_TRACE_PRELOAD);
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${preload}`.trim();
    env.BENCH_MEMORY_OUT = path.join(path.dirname(dataDir), 'memory.jsonl');
  }
  // BENCH_SERVER_ENV="K=V,K=V": extra environment for the server only, SITESIFT_* included.
  Object.assign(env, benchServerEnv());
  // Through the product's launcher (bin/sitesift, as `make start`): its glibc malloc settings
  // are part of what is measured; the child's PID is the server's (the launcher execs node).
  // BENCH_SERVER_NODE_ARGS: node flags for the server that NODE_OPTIONS refuses (`--cpu-prof
  // --cpu-prof-dir=DIR` profiles every thread of the server; `--single-threaded-gc`), space-separated.
  const launch = serverLaunch(mode, (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter((a) => a !== ''));
  const child = spawn(launch.file, launch.args, {
    cwd: ROOT,
    env: { ...env, ...launch.env, HOST: '127.0.0.1', PORT: '0', SITESIFT_DATA_DIR: dataDir, SITESIFT_MASTER_KEY: masterKey, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // The server's log goes to a file next to the data dir: the first place to look after a failure.
  const log = createWriteStream(path.join(path.dirname(dataDir), 'server.log'));
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    let found = false;
    child.stdout!.on('data', (c: Buffer) => {
      if (found) return;
      out += c.toString();
      const m = /"msg":"listening"[^\n]*"url":"([^"]+)"|"url":"([^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m) {
        found = true;
        out = '';
        resolve({ url: (m[1] ?? m[2])!, child, masterKey, dataDir });
      }
    });
    child.once('exit', (code) => {
      if (!found) reject(new Error(`server exited (${code}) before listening:\n${out.slice(-2000)}\n${err}`));
    });
  });
}

async function request(server: Server, method: string, pathAndQuery: string, body?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(server.url + pathAndQuery, {
    method,
    headers: { authorization: `Bearer ${server.masterKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

/** Current RSS of a process in MB (VmRSS), NaN when unreadable. */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Samples the server's RSS every 100 ms and keeps the maximum per labelled stage (ingest,
 * searchable wait, merge of each phase), so the report says *when* the peak happens.
 */
class RssSampler {
  stage = 'start';
  readonly peaks = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 100);
    this.timer.unref();
  }
  sample(): void {
    const mb = rssMb(this.pid);
    if (!Number.isNaN(mb)) this.peaks.set(this.stage, Math.max(this.peaks.get(this.stage) ?? 0, mb));
  }
  enter(stage: string): void {
    this.sample();
    this.stage = stage;
  }
  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

function segmentCount(dataDir: string, site: string): number {
  try {
    const manifest = JSON.parse(readFileSync(path.join(dataDir, 'projects', site, 'manifest.json'), 'utf8')) as { segments?: unknown[] };
    return manifest.segments?.length ?? 0;
  } catch {
    return NaN;
  }
}

async function ingestPhase(server: Server, site: string, file: string, nonce: string, rss: RssSampler): Promise<Omit<PhaseResult, 'name' | 'rawFts5Seconds' | 'rawFts5DocsPerSecond' | 'rawFts5Bytes' | 'rawFts5CpuMsPerDoc'>> {
  const created = await request(server, 'POST', '/admin/projects', JSON.stringify({ siteId: site }));
  if (created.status !== 201) throw new Error(`create project ${site}: ${created.status} ${JSON.stringify(created.json)}`);
  const endpoint = `/sites/pagesJson?site=${site}`;
  let docs = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: Error | undefined;
  rss.enter(`${site} ingest`);
  const started = process.hrtime.bigint();
  const cpu0 = { total: processCpuMs(server.child.pid) / 1000, main: mainThreadCpuMs(server.child.pid) / 1000 };
  for await (const body of readBatches(file)) {
    while (inFlight.size >= CONCURRENCY) await Promise.race(inFlight);
    if (failure) throw failure;
    const p = request(server, 'POST', endpoint, body)
      .then((r) => {
        if (r.status !== 200) throw new Error(`pagesJson answered ${r.status}: ${JSON.stringify(r.json).slice(0, 500)}`);
        docs += r.json.indexed as number;
      })
      .catch((err: Error) => {
        failure ??= err;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
  const lastAck = process.hrtime.bigint();
  const ingestSeconds = Number(lastAck - started) / 1e9;

  // Time until the last acknowledged document is searchable.
  rss.enter(`${site} until searchable`);
  let searchableAfterMs: number;
  let searchableHow: 'search' | 'refresh' = 'search';
  const probe = await request(server, 'GET', `/sites?site=${site}&query=${nonce}&log=false`);
  if (probe.status === 200 || probe.status === 400) {
    for (;;) {
      const r = await request(server, 'GET', `/sites?site=${site}&query=${nonce}&log=false`);
      if (r.status === 200 && Number(r.json.totalResults) > 0) break;
      if (Number(process.hrtime.bigint() - lastAck) / 1e6 > 120_000) throw new Error('not searchable after 120 s');
      await new Promise((res) => setTimeout(res, 10));
    }
    searchableAfterMs = Number(process.hrtime.bigint() - lastAck) / 1e6;
  } else {
    searchableHow = 'refresh';
    const t0 = process.hrtime.bigint();
    const r = await request(server, 'POST', `${endpoint}&refresh=true`, JSON.stringify([{ url: `${BASE_URL}${nonce}.html`, title: nonce, content: nonce }]));
    if (r.status !== 200) throw new Error(`refresh write: ${r.status}`);
    searchableAfterMs = Number(process.hrtime.bigint() - t0) / 1e6;
  }

  // CPU from the first request until everything is searchable (builds that end after the last
  // acknowledgement included; merges still running then are not).
  const cpu1 = { total: processCpuMs(server.child.pid) / 1000, main: mainThreadCpuMs(server.child.pid) / 1000 };
  const cpuMsPerDoc = ((cpu1.total - cpu0.total) * 1000) / docs;
  const mainCpuMsPerDoc = ((cpu1.main - cpu0.main) * 1000) / docs;
  const segmentsBefore = segmentCount(server.dataDir, site);
  rss.enter(`${site} full merge`);
  const m0 = process.hrtime.bigint();
  const merged = await request(server, 'POST', `/admin/projects/${site}/merge`);
  if (merged.status !== 200) throw new Error(`merge: ${merged.status} ${JSON.stringify(merged.json)}`);
  const mergeSeconds = Number(process.hrtime.bigint() - m0) / 1e9;
  const segmentsAfter = segmentCount(server.dataDir, site);
  // Until the next phase starts (or the run ends): what stays resident after the merge.
  rss.enter(`${site} after merge`);
  const indexBytes = dirBytes(path.join(server.dataDir, 'projects', site));
  return { docs, ingestSeconds, docsPerSecond: docs / ingestSeconds, cpuMsPerDoc, mainCpuMsPerDoc, searchableAfterMs, searchableHow, indexBytes, segmentsBefore, segmentsAfter, mergeSeconds };
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sitesift-bench-'));
  const keep = process.env.BENCH_KEEP === '1';
  let server: Server | undefined;
  try {
    await run();
  } catch (err) {
    process.exitCode = 1;
    throw err;
  } finally {
    await cleanup();
  }

  async function run(): Promise<void> {
    // Decided before the minutes of preparation, so that edits made meanwhile in a shared
    // working tree do not turn a fresh build into a "stale" one.
    const mode = serverMode();
    const corpus = loadCorpus();
    const copies = Math.ceil(TARGET_DOCS / corpus.length);
    const phases = [
      { name: `corpus (${corpus.length})`, site: 'bench-corpus', copies: 1, limit: corpus.length },
      { name: `multiplied (${copies * corpus.length})`, site: 'bench-multiplied', copies, limit: copies * corpus.length },
    ];
    process.stderr.write(`preparing ${phases.map((p) => p.limit).join(' + ')} documents in ${tmp}\n`);
    const prepared = [];
    for (const p of phases) {
      const nonce = `zqx${randomBytes(6).toString('hex')}`;
      const file = path.join(tmp, `${p.site}.batches`);
      const n = await writeBatches(file, corpus, p.copies, nonce, p.limit);
      prepared.push({ ...p, file, nonce, n });
    }

    const raw = [];
    for (const p of prepared) {
      process.stderr.write(`raw FTS5: ${p.n} documents\n`);
      raw.push(await rawFts5(p.file, path.join(tmp, `${p.site}.fts5.db`)));
    }

    const dataDir = path.join(tmp, 'data');
    process.stderr.write(`server: ${mode}\n`);
    server = await startServer(dataDir, mode);
    const rss = new RssSampler(server.child.pid!);
    const results: PhaseResult[] = [];
    for (const [i, p] of prepared.entries()) {
      process.stderr.write(`sitesift over HTTP: ${p.n} documents, batches of ${BATCH}, concurrency ${CONCURRENCY}\n`);
      const r = await ingestPhase(server, p.site, p.file, p.nonce, rss);
      results.push({ name: p.name, ...r, rawFts5Seconds: raw[i]!.seconds, rawFts5DocsPerSecond: raw[i]!.docs / raw[i]!.seconds, rawFts5Bytes: raw[i]!.bytes, rawFts5CpuMsPerDoc: (raw[i]!.cpuSeconds * 1000) / raw[i]!.docs });
    }
    rss.stop();
    const peakRss = peakRssMb(server.child.pid!);

    const rows: string[][] = [
      ['', ...results.map((r) => r.name)],
      ['sitesift HTTP ingest (docs/s)', ...results.map((r) => r.docsPerSecond.toFixed(0))],
      ['raw FTS5 bulk insert (docs/s)', ...results.map((r) => r.rawFts5DocsPerSecond.toFixed(0))],
      ['ratio sitesift / raw FTS5', ...results.map((r) => (r.docsPerSecond / r.rawFts5DocsPerSecond).toFixed(2))],
      // Acknowledged documents are durable but may still wait for their segment build; the raw
      // insert's documents are searchable at its commit. This row counts until searchable.
      ['docs/s until searchable (ratio)', ...results.map((r) => { const d = untilSearchable(r); return `${d.toFixed(0)} (${(d / r.rawFts5DocsPerSecond).toFixed(2)}×)`; })],
      ['ingest time (s)', ...results.map((r) => r.ingestSeconds.toFixed(1))],
      ['server CPU per doc until searchable, all threads (main) (ms)', ...results.map((r) => `${r.cpuMsPerDoc.toFixed(3)} (${r.mainCpuMsPerDoc.toFixed(3)})`)],
      ['raw FTS5 CPU per doc (ms)', ...results.map((r) => r.rawFts5CpuMsPerDoc.toFixed(3))],
      ['last ack → searchable (ms)', ...results.map((r) => `${r.searchableAfterMs.toFixed(0)}${r.searchableHow === 'refresh' ? ' (refresh=true)' : ''}`)],
      ['index size on disk', ...results.map((r) => mb(r.indexBytes))],
      ['raw FTS5 db size', ...results.map((r) => mb(r.rawFts5Bytes))],
      ['segments before → after full merge', ...results.map((r) => `${r.segmentsBefore} → ${r.segmentsAfter}`)],
      ['full merge time (s)', ...results.map((r) => r.mergeSeconds.toFixed(1))],
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
    const line = (row: string[]) => `| ${row.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
    const out = [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)];
    const last = results[results.length - 1]!;
    const ratio = last.docsPerSecond / last.rawFts5DocsPerSecond;
    process.stdout.write(`\n${out.join('\n')}\n\nserver (${mode}) peak RSS (VmHWM, whole run): ${peakRss} MB\n`);
    process.stdout.write(`peak RSS by stage (VmRSS sampled every 100 ms): ${[...rss.peaks].map(([k, v]) => `${k} ${v} MB`).join('; ')}\n`);
    if (MEMORY_TRACE) process.stdout.write(memoryTraceReport(tmp));
    const e2e = untilSearchable(last) / last.rawFts5DocsPerSecond;
    process.stdout.write(`goals: ingest ≥ 0.5× raw FTS5 at ${last.docs} docs: ${ratio >= 0.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}× acknowledged, ${e2e.toFixed(2)}× until searchable); peak RSS < 500 MB: ${peakRss < 500 ? 'met' : 'NOT met'} (${peakRss} MB)\n`);
    const goalLines = [
      `- ${ratio >= 0.5 ? 'met' : '**not met**'}: ingest ≥ 0.5× raw FTS5 at ${last.docs.toLocaleString('en')} docs — ${ratio.toFixed(2)}× acknowledged, ${e2e.toFixed(2)}× until searchable`,
      `- ${peakRss < 500 ? 'met' : '**not met**'}: peak RSS < 500 MB — ${peakRss} MB`,
    ];
    writeBenchSection(
      'ingest',
      [
        `${BATCH} documents per \`POST /sites/pagesJson\`, ${CONCURRENCY} requests in flight; server from ${mode === 'dist' ? 'the build (dist/)' : 'the sources (tsx)'}.`,
        '',
        out.join('\n'),
        '',
        `- server peak RSS (VmHWM, whole run): ${peakRss} MB`,
        `- peak RSS by stage (VmRSS every 100 ms): ${[...rss.peaks].map(([k, v]) => `${k} ${v} MB`).join('; ')}`,
        '',
        'Goals:',
        '',
        ...goalLines,
      ].join('\n'),
      // Another size, a tracer or server flags make a diagnostic run, not the current figures.
      { partial: TARGET_DOCS !== DEFAULT_TARGET_DOCS || MEMORY_TRACE || !!(process.env.BENCH_SERVER_ENV || process.env.BENCH_SERVER_NODE_OPTIONS || process.env.BENCH_SERVER_NODE_ARGS) },
    );
    process.stdout.write(
      `${JSON.stringify({
        bench: 'ingest',
        at: new Date().toISOString(),
        cpus: os.cpus().length,
        concurrency: CONCURRENCY,
        server: mode,
        peakRssMb: peakRss,
        peakRssByStage: Object.fromEntries(rss.peaks),
        phases: results.map((r) => ({ ...r, docsPerSecond: Math.round(r.docsPerSecond), docsPerSecondUntilSearchable: Math.round(untilSearchable(r)), rawFts5DocsPerSecond: Math.round(r.rawFts5DocsPerSecond), ratio: Number((r.docsPerSecond / r.rawFts5DocsPerSecond).toFixed(3)) })),
      })}\n`,
    );
  }

  async function cleanup(): Promise<void> {
    const child = server?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    // Keep the server log of a failed run; the data is large and goes.
    const logFile = path.join(tmp, 'server.log');
    if (process.exitCode === 1 && existsSync(logFile)) {
      const kept = path.join(os.tmpdir(), `sitesift-bench-ingest-server-${Date.now()}.log`);
      writeFileSync(kept, readFileSync(logFile));
      process.stderr.write(`server log kept in ${kept}\n`);
    }
    if (!keep) rmSync(tmp, { recursive: true, force: true });
    else process.stderr.write(`kept ${tmp}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/ingest: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
