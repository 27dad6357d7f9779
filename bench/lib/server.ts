/**
 * Benchmark helpers (bench process only): spawn a sitesift server as a child process with its
 * own temp data dir, create projects, and feed it documents through the public HTTP API.
 *
 * - {@link startBenchServer}: `bin/sitesift serve` (the launcher of `make start`, built JS,
 *   realistic speed) or the launcher's `--node --import tsx src/main.ts`; 127.0.0.1 on a free
 *   port, a known master key, the server's own logs (info level, one line per request, as in
 *   production) written to a file in the data dir so that reading them costs the benchmark
 *   process nothing.
 * - {@link createProject}, {@link indexDocs}: admin and pagesJson calls with the master key.
 * - {@link toPageDocs}, {@link multiplyCorpus}: corpus documents → pagesJson bodies; a seeded,
 *   deterministic multiplication of the corpus (distinct URLs, shuffled content words) for the
 *   ~100k-document runs. Deterministic so that two processes generate the same documents.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PG_BASE, type CorpusDoc } from './corpus.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A document as `POST /sites/pagesJson` takes it. */
export interface PageBody {
  url: string;
  title: string;
  content: string;
  headings: string[];
  contentGroup: string;
  imageUrl: string;
  appendPageContent: boolean;
}

export interface BenchServer {
  url: string;
  masterKey: string;
  dataDir: string;
  child: ChildProcess;
  /** 'dist' (built JS) or 'tsx' (TypeScript through the tsx loader). */
  mode: 'dist' | 'tsx';
  /** The last lines the server logged (for error reports). */
  logTail(): string;
  /** Peak resident set size so far in MB (VmHWM; NaN off Linux). */
  peakRssMb(): number;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** 'auto' (default): dist when `dist/src/main.js` exists, else tsx. */
  mode?: 'auto' | 'dist' | 'tsx';
  /** Extra environment for the server (e.g. `{ SITESIFT_WORKERS: '2' }`). */
  env?: Record<string, string>;
  /** Keep the data dir after stop (debugging, or a restart on the same data). */
  keep?: boolean;
  /** Reuse this data dir and master key (a restart of a kept server) instead of fresh ones. */
  reuse?: { dataDir: string; masterKey: string };
  /** Node flags for the server child before the script (e.g. `--cpu-prof`; NODE_OPTIONS refuses it). */
  nodeArgs?: string[];
}

/**
 * `BENCH_SERVER_ENV="K=V,K=V"`: extra environment for the server only, SITESIFT_* included
 * (e.g. SITESIFT_SEARCH_THREADS=0, or SITESIFT_HEAP_GROWING_PERCENT=0 for the launcher).
 */
export function benchServerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of (process.env.BENCH_SERVER_ENV ?? '').split(',').filter((x) => x.trim() !== '')) {
    const eq = kv.indexOf('=');
    if (eq < 1) throw new Error(`BENCH_SERVER_ENV entries are K=V, got "${kv}"`);
    env[kv.slice(0, eq).trim()] = kv.slice(eq + 1);
  }
  return env;
}

/** `BENCH_SERVER_NODE_ARGS="--trace-gc …"`: extra Node flags for the server child (space-separated). */
export function benchServerNodeArgs(): string[] {
  return (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((x) => x !== '');
}

/**
 * Starts a server child and resolves once its "listening" log line appears (60 s limit).
 * `BENCH_SERVER_ENV` ({@link benchServerEnv}) comes last, over `opts.env`.
 */
export async function startBenchServer(opts: StartOptions = {}): Promise<BenchServer> {
  const distMain = path.join(ROOT, 'dist/src/main.js');
  const mode = opts.mode === 'dist' || opts.mode === 'tsx' ? opts.mode : existsSync(distMain) ? 'dist' : 'tsx';
  const dataDir = opts.reuse?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'sitesift-bench-'));
  const masterKey = opts.reuse?.masterKey ?? `ssm_${randomBytes(24).toString('base64url')}`;
  // One log per start: a restart on the same data dir must not find the previous "listening" line.
  const logFile = path.join(dataDir, `server-${Date.now()}.log`);
  const clean: NodeJS.ProcessEnv = {};
  // The server rejects unknown SITESIFT_* variables; pass none of the caller's.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SITESIFT_') && k !== 'HOST' && k !== 'PORT' && k !== 'LOG_LEVEL') clean[k] = v;
  const launch = serverLaunch(mode, [...(opts.nodeArgs ?? []), ...benchServerNodeArgs()]);
  const fd = openSync(logFile, 'a');
  const child = spawn(launch.file, launch.args, {
    cwd: ROOT,
    env: {
      ...clean,
      ...launch.env,
      HOST: '127.0.0.1',
      PORT: '0',
      SITESIFT_DATA_DIR: path.join(dataDir, 'data'),
      SITESIFT_MASTER_KEY: masterKey,
      SITESIFT_WORKERS: '2',
      LOG_LEVEL: 'info',
      // Load comes from one address (wrk on 127.0.0.1): the per-address rate limits would measure
      // themselves. A benchmark that wants them passes its own values in opts.env.
      SITESIFT_RATE_PUBLIC_PER_SECOND: '0',
      SITESIFT_RATE_INDEX_PER_SECOND: '0',
      ...opts.env,
      ...benchServerEnv(),
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  // Never leave a server behind when the benchmark ends early.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  let exited: number | string | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? signal ?? -1;
      resolve();
    }),
  );
  const started = Date.now();
  let url: string | undefined;
  while (!url) {
    if (exited !== null) throw new Error(`server exited (${exited}) before listening:\n${tail(logFile)}`);
    if (Date.now() - started > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`server did not listen within 60 s:\n${tail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
    const m = /"msg":"listening"[^\n]*"url":"([^"]+)"|"url":"([^"]+)"[^\n]*"msg":"listening"/.exec(readFileSync(logFile, 'utf8'));
    if (m) url = m[1] ?? m[2];
  }
  return {
    url,
    masterKey,
    dataDir,
    child,
    mode,
    logTail: () => tail(logFile),
    peakRssMb: () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Math.round(Number(m[1]) / 1024) : NaN;
      } catch {
        return NaN;
      }
    },
    stop: async () => {
      if (exited === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exit;
        clearTimeout(t);
      }
      if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The product's launcher (`bin/sitesift`: glibc malloc settings, then `exec node`). */
export const LAUNCHER = path.join(ROOT, 'bin/sitesift');

/**
 * How a benchmark starts a server: through {@link LAUNCHER} like `make start`, so the measured
 * process has the product's start-up environment and is the launcher's own PID (it `exec`s).
 * dist without node flags is exactly `sitesift serve`; tsx or node flags (`--cpu-prof`, which
 * NODE_OPTIONS refuses) go through the launcher's `--node` form. `env.NODE` pins the bench's
 * own node binary.
 */
export function serverLaunch(mode: 'dist' | 'tsx', nodeArgs: string[] = []): { file: string; args: string[]; env: { NODE: string } } {
  const env = { NODE: process.execPath };
  if (mode === 'dist' && nodeArgs.length === 0) return { file: LAUNCHER, args: ['serve'], env };
  const entry = mode === 'dist' ? [path.join(ROOT, 'dist/src/main.js')] : ['--import', 'tsx', path.join(ROOT, 'src/main.ts')];
  return { file: LAUNCHER, args: ['--node', ...nodeArgs, ...entry], env };
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-3000);
  } catch {
    return '(no log)';
  }
}

/** An HTTP call with the master key; JSON in, JSON (or text) out. */
export async function call(server: BenchServer, method: string, pathAndQuery: string, body?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(server.url + pathAndQuery, {
    method,
    headers: { authorization: `Bearer ${server.masterKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.status, json };
}

/** Creates a project through `POST /admin/projects`; resolves its first API key. */
export async function createProject(server: BenchServer, siteId: string): Promise<string> {
  const r = await call(server, 'POST', '/admin/projects', JSON.stringify({ siteId }));
  if (r.status !== 201) throw new Error(`create project ${siteId}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  const key = r.json.apiKey;
  return typeof key === 'string' ? key : (key?.token ?? '');
}

export interface IndexOptions {
  /** Requests in flight (default 3). */
  concurrency?: number;
  /** Documents per request (default 100, the API's maximum). */
  batch?: number;
  /** Called after each acknowledged batch with the running count. */
  progress?: (indexed: number) => void;
}

/**
 * Indexes documents through `POST /sites/pagesJson?site=…` in batches, `concurrency` in flight;
 * the last batch is sent alone, after all others were acknowledged, with `refresh=true` so that
 * everything is searchable when this resolves. Resolves the number indexed, the seconds taken and
 * how many requests were retried after a 5xx.
 */
export async function indexDocs(server: BenchServer, siteId: string, docs: Iterable<PageBody>, opts: IndexOptions = {}): Promise<{ indexed: number; seconds: number; retries: number }> {
  const concurrency = opts.concurrency ?? 3;
  const size = opts.batch ?? 100;
  const endpoint = `/sites/pagesJson?site=${encodeURIComponent(siteId)}`;
  const t0 = performance.now();
  let indexed = 0;
  let failure: Error | undefined;
  const inFlight = new Set<Promise<void>>();
  let retries = 0;
  const send = async (batch: PageBody[], refresh: boolean) => {
    const body = JSON.stringify(batch);
    // A dropped connection (a kept-alive socket the server closed as it was reused) is a 599 here:
    // the batch is an upsert, so sending it again is safe.
    const post = () =>
      call(server, 'POST', endpoint + (refresh ? '&refresh=true' : ''), body).catch((err: Error) => ({ status: 599, json: `${err.message}: ${String((err as { cause?: unknown }).cause ?? '')}` }));
    let r = await post();
    // A 5xx says "please retry": do so (at most 3 times) and count it, so one transient failure
    // does not void a long run but still shows up in the report.
    for (let attempt = 1; r.status >= 500 && attempt <= 3; attempt++) {
      retries++;
      process.stderr.write(`pagesJson answered ${r.status} (${JSON.stringify(r.json).slice(0, 300)}); retry ${attempt}\n`);
      await new Promise((res) => setTimeout(res, 500));
      r = await post();
    }
    if (r.status !== 200) throw new Error(`pagesJson answered ${r.status}: ${JSON.stringify(r.json).slice(0, 500)}`);
    indexed += Number(r.json.indexed);
    opts.progress?.(indexed);
  };
  let pending: PageBody[] | null = null;
  let batch: PageBody[] = [];
  const flush = async (b: PageBody[]) => {
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (failure) throw failure;
    const p: Promise<void> = send(b, false)
      .catch((err: Error) => {
        failure ??= err;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  for (const d of docs) {
    batch.push(d);
    if (batch.length === size) {
      // Hold one batch back: the last one goes with refresh=true.
      if (pending) await flush(pending);
      pending = batch;
      batch = [];
    }
  }
  if (batch.length) {
    if (pending) await flush(pending);
    pending = batch;
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
  if (pending) await send(pending, true);
  return { indexed, seconds: (performance.now() - t0) / 1000, retries };
}

/** Corpus documents → pagesJson bodies (absolute URLs, headings split on " | "). */
export function toPageDocs(docs: CorpusDoc[], base = PG_BASE): PageBody[] {
  return docs.map((d) => toPageDoc(d, base + d.url));
}

function toPageDoc(d: CorpusDoc, url: string, content = d.content): PageBody {
  return {
    url,
    title: d.title,
    content,
    headings: d.headings ? d.headings.split(' | ').filter(Boolean) : [],
    contentGroup: '',
    imageUrl: '',
    appendPageContent: false,
  };
}

/** Deterministic PRNG (mulberry32): every run and every process shuffles the same way. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * About `target` documents from the corpus: copy 0 is the corpus itself (so the known items
 * still exist at their URLs); copy k ≥ 1 lives under `<base>copy<k>/` and has its content's
 * words shuffled (seeded), so every document is distinct while titles, headings and the
 * vocabulary stay realistic. A generator: nothing is held beyond the current document.
 */
export function* multiplyCorpus(docs: CorpusDoc[], target: number, base = PG_BASE, seed = 42): Generator<PageBody> {
  const copies = Math.max(1, Math.round(target / docs.length));
  const rnd = prng(seed);
  for (let k = 0; k < copies; k++) {
    for (const d of docs) {
      if (k === 0) {
        yield toPageDoc(d, base + d.url);
        continue;
      }
      const words = d.content.split(/\s+/);
      for (let i = words.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        const w = words[i]!;
        words[i] = words[j]!;
        words[j] = w;
      }
      yield toPageDoc(d, `${base}copy${k}/${d.url}`, words.join(' '));
    }
  }
}
