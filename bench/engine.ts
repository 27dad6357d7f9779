/**
 * The engine at ~100k pages (`make bench-engine`): sitesift in server next to Lucene 8 and
 * SQLite FTS5 on the same documents and the same 799 known-item queries, in one run. A report,
 * not a test: it prints the table, the goals (met / not met against the Lucene rows) and one JSON
 * line; exits 0 whatever the numbers (1 when a tool is missing or an engine fails).
 *
 * Documents: ~BENCH_DOCS (default 100,000), the PostgreSQL manual multiplied with distinct URLs
 * and shuffled content words (`multiplyCorpus`, bench/lib/server.ts), generated once into a TSV
 * file before any build (generating costs ~12 s of CPU at 100k, which no engine's build should
 * carry) that every engine reads: the same text for all three. found@10: the share of the 799 queries whose target page is in the top 10.
 *
 * - sitesift: a server child (bench/lib/server.ts, dist/ when built), answer cache off
 *   (SITESIFT_SEARCH_CACHE_MB=0). Build: `POST /sites/pagesJson` batches (100 docs, 3 in flight)
 *   until the last one, sent with `refresh=true`, is searchable. Merge: `POST
 *   /admin/projects/<id>/merge` (a full merge into one segment). Index bytes: the segment files
 *   the manifest lists after the merge (the write log, query log and other project files are
 *   not counted; a note gives the whole project directory). Queries: `GET /sites?…&limit=10&
 *   log=false&groupResults=false`, one at a time over HTTP (keep-alive), timed by the client
 *   from the request to the last byte of the answer, with `semanticRatio=0` (lexical) and with
 *   the project's default (hybrid) as two rows; the cost of HTTP alone is shown by timing
 *   `GET /health` the same way. Throughput: wrk, 8 connections, rotating through the queries
 *   (bench/lib/wrk.ts). Peak RSS: the server's VmHWM after the import, and after the merge.
 * - Lucene 8 (bench/peers/LuceneEngine.java, compiled with javac against Debian's
 *   liblucene8-java): EnglishAnalyzer, BM25, title/headings/content boosted 4/2/1, on-disk
 *   FSDirectory in a temp dir; build (read, analyse, write, commit), forceMerge(1), bytes of
 *   the directory; OR and AND rows, each query timed in the JVM (parse, top 10, stored URLs).
 *   Stores the URL only, like bench/peers/LucenePeer.java (BENCH_LUCENE_STORE=text also stores
 *   title, headings and content). Its merge policy keeps documents in input order, so exact
 *   score ties (a page and its shuffled copies under BM25) go to the earlier document, as
 *   FTS5's rowid order does; sitesift breaks them by URL.
 * - SQLite FTS5 (better-sqlite3, in this process): `porter unicode61`, columns title/headings/
 *   content, an on-disk file; build (inserts, 10,000 per transaction), `optimize`, file bytes;
 *   every query word quoted, AND (bench/lib/peers.ts `Fts5Peer.terms`), `ORDER BY bm25` top 10.
 *
 * Timing: every engine is built and merged first, one after the other; then each query row runs
 * BENCH_WARMUP_PASSES (default 1) untimed passes over the queries, then BENCH_ROUNDS (default 3)
 * timed rounds, each a pass of every row, the rows' order rotated from round to round; a row's
 * p50 / p99 / mean are the medians over its rounds. A shared machine's load moves over minutes:
 * alternating spreads it over all rows alike.
 *
 * Environment: BENCH_DOCS, BENCH_ROUNDS, BENCH_WARMUP_PASSES, BENCH_SECONDS (per wrk load,
 * default 10), BENCH_ENGINES (a subset of `sitesift,lucene,fts5`), BENCH_LUCENE_STORE
 * (url|text), BENCH_SERVER (dist|tsx), BENCH_REPORT=0 (leave bench/README.md alone; a subset of
 * engines or fewer than 100,000 documents leave it alone too). Needs java and javac (openjdk),
 * liblucene8-java and wrk. Run timed runs alone on the machine (`flock` on a shared lock file).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import Database from 'better-sqlite3';
import { loadPgDocs, loadPgQueries, PG_BASE, type CorpusDoc } from './lib/corpus.js';
import { Fts5Peer } from './lib/peers.js';
import { markdownTable, median, writeBenchSection } from './lib/report.js';
import { call, createProject, indexDocs, multiplyCorpus, ROOT, startBenchServer, type BenchServer, type PageBody } from './lib/server.js';
import { hasWrk, rotatingScript, runWrk, type WrkResult } from './lib/wrk.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const WARMUP_PASSES = Math.max(0, Number(process.env.BENCH_WARMUP_PASSES ?? 1));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ALL_ENGINES = ['sitesift', 'lucene', 'fts5'] as const;
type EngineName = (typeof ALL_ENGINES)[number];
const ENGINES = new Set((process.env.BENCH_ENGINES || ALL_ENGINES.join(',')).split(',').map((s) => s.trim()).filter(Boolean));
const LUCENE_STORE = process.env.BENCH_LUCENE_STORE === 'text' ? 'text' : 'url';
const SITE = 'pgdocs';
const SEARCH_PARAMS = 'limit=10&log=false&groupResults=false';
const LUCENE_JARS = ['core', 'analyzers-common', 'queryparser'].map((j) => `/usr/share/java/lucene-${j}-8.7.0.jar`);
const FULL_SIZE = 100_000;

const log = (m: string) => process.stderr.write(`[bench-engine] ${m}\n`);

/** The sitesift server of this run, for the error report when a later step fails. */
let sitesiftServer: BenchServer | null = null;

/** One engine's build: seconds to build and to merge fully, bytes on disk after the merge. */
interface Build {
  engine: EngineName;
  buildSeconds: number;
  mergeSeconds: number;
  bytes: number;
}

/** One timed pass over the queries: per-query ms and how many targets were in the top 10. */
interface Pass {
  ms: number[];
  found: number;
}

/** A query row of the table: how to run a pass of every query. */
interface Variant {
  name: string;
  engine: EngineName;
  pass(): Promise<Pass>;
}

interface Stats {
  p50: number;
  p99: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function statsOf(ms: number[]): Stats {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: percentile(s, 0.5), p99: percentile(s, 0.99), mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length) };
}


/** Sum of the sizes of the files under `dir` (recursively). */
function dirBytes(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : e.isFile() ? fs.statSync(p).size : 0;
  }
  return n;
}

const mb = (b: number) => b / 1048576;
const flat = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
/**
 * Between a page's headings in the documents file: a control character, a word separator for
 * every engine's tokenizer, that no heading holds, so sitesift gets its headings back as sent.
 */
const HEADING_SEP = '\u001f';

/** A line of the documents file: url, title, headings, content (tabs and line breaks flattened). */
interface TsvDoc {
  url: string;
  title: string;
  headings: string;
  content: string;
}

/** Writes the ~DOCS documents to `file`, one TSV line each; resolves the count. */
function writeDocsFile(docs: CorpusDoc[], file: string): number {
  const fd = fs.openSync(file, 'w');
  let n = 0;
  try {
    let chunk: string[] = [];
    for (const d of multiplyCorpus(docs, DOCS)) {
      chunk.push([flat(d.url), flat(d.title), d.headings.map(flat).join(HEADING_SEP), flat(d.content)].join('\t'));
      n++;
      if (chunk.length === 1000) {
        fs.writeSync(fd, chunk.join('\n') + '\n');
        chunk = [];
      }
    }
    if (chunk.length) fs.writeSync(fd, chunk.join('\n') + '\n');
  } finally {
    fs.closeSync(fd);
  }
  return n;
}

/** The documents file's lines, read synchronously in 1 MiB chunks. */
function* readDocsFile(file: string): Generator<TsvDoc> {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  const decoder = new TextDecoder();
  let rest = '';
  const parse = (line: string): TsvDoc => {
    const [url = '', title = '', headings = '', content = ''] = line.split('\t');
    return { url, title, headings, content };
  };
  try {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const lines = (rest + decoder.decode(buf.subarray(0, n), { stream: true })).split('\n');
      rest = lines.pop()!;
      for (const l of lines) if (l) yield parse(l);
    }
    rest += decoder.decode();
    if (rest) yield parse(rest);
  } finally {
    fs.closeSync(fd);
  }
}

/** The documents file as `POST /sites/pagesJson` bodies. */
function* pageBodies(file: string): Generator<PageBody> {
  for (const d of readDocsFile(file)) {
    yield { url: d.url, title: d.title, content: d.content, headings: d.headings ? d.headings.split(HEADING_SEP) : [], contentGroup: '', imageUrl: '', appendPageContent: false };
  }
}

// ---------------------------------------------------------------- sitesift

interface Sitesift {
  server: BenchServer;
  build: Build;
  indexed: number;
  rssImportMb: number;
  rssMergeMb: number;
  segmentsBeforeMerge: number;
  projectBytes: number;
  /** The merged segment's bytes by SQLite table or index (dbstat), largest first. */
  breakdown: Array<[string, number]>;
}

function manifestSegments(server: BenchServer): Array<{ file: string }> {
  const m = JSON.parse(fs.readFileSync(path.join(server.dataDir, 'data', 'projects', SITE, 'manifest.json'), 'utf8')) as { segments?: Array<{ file: string }> };
  return m.segments ?? [];
}

async function buildSitesift(docsFile: string): Promise<Sitesift> {
  const mode = process.env.BENCH_SERVER === 'tsx' ? 'tsx' : process.env.BENCH_SERVER === 'dist' ? 'dist' : 'auto';
  const server = await startBenchServer({ mode, env: { SITESIFT_SEARCH_CACHE_MB: '0' } });
  sitesiftServer = server;
  try {
    await createProject(server, SITE);
    log(`sitesift (${server.mode}): indexing ~${DOCS} documents over HTTP`);
    let last = 0;
    const ix = await indexDocs(server, SITE, pageBodies(docsFile), {
      progress: (n) => {
        if (n - last >= 10_000) {
          last = n;
          log(`  sitesift: ${n} indexed`);
        }
      },
    });
    const rssImportMb = server.peakRssMb();
    const segmentsBeforeMerge = manifestSegments(server).length;
    log(`sitesift: indexed ${ix.indexed} in ${ix.seconds.toFixed(1)} s (${segmentsBeforeMerge} segments); full merge`);
    const t0 = performance.now();
    const r = await call(server, 'POST', `/admin/projects/${SITE}/merge`);
    if (r.status !== 200) throw new Error(`merge: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    const mergeSeconds = (performance.now() - t0) / 1000;
    const rssMergeMb = server.peakRssMb();
    const segDir = path.join(server.dataDir, 'data', 'projects', SITE, 'segments');
    const files = manifestSegments(server).map((s) => path.join(segDir, s.file));
    const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
    const breakdown = new Map<string, number>();
    for (const f of files) {
      const db = new Database(f, { readonly: true, fileMustExist: true });
      try {
        for (const row of db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all() as Array<{ name: string; bytes: number }>) {
          breakdown.set(row.name, (breakdown.get(row.name) ?? 0) + row.bytes);
        }
      } catch {
        // dbstat missing from the SQLite build: no breakdown.
      } finally {
        db.close();
      }
    }
    log(`sitesift: merged in ${mergeSeconds.toFixed(1)} s; ${files.length} segment(s), ${mb(bytes).toFixed(1)} MB`);
    return {
      server,
      build: { engine: 'sitesift', buildSeconds: ix.seconds, mergeSeconds, bytes },
      indexed: ix.indexed,
      rssImportMb,
      rssMergeMb,
      segmentsBeforeMerge,
      projectBytes: dirBytes(path.join(server.dataDir, 'data', 'projects', SITE)),
      breakdown: [...breakdown].sort((a, b) => b[1] - a[1]),
    };
  } catch (err) {
    process.stderr.write(`sitesift server log (tail):\n${server.logTail()}\n`);
    await server.stop();
    throw err;
  }
}

/** Whether a failed fetch was a socket the other side closed (undici's `UND_ERR_SOCKET`). */
function isClosedSocket(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } } | null)?.cause;
  return cause?.code === 'UND_ERR_SOCKET';
}

/** One pass of `paths` against the server, one request at a time; ranked URLs parsed outside the timing. */
async function httpPass(base: string, paths: string[], targets: string[]): Promise<Pass> {
  const ms: number[] = [];
  let found = 0;
  for (let i = 0; i < paths.length; i++) {
    let t0 = performance.now();
    let res: Response;
    try {
      res = await fetch(base + paths[i]);
    } catch (err) {
      // A kept-alive connection left idle while the peers built can be closed by the server
      // just as it is reused ("other side closed"): a GET is safe to send again, once, on a
      // fresh connection, and only the retry is timed.
      if (!isClosedSocket(err)) throw err;
      t0 = performance.now();
      res = await fetch(base + paths[i]);
    }
    const text = await res.text();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`GET ${paths[i]}: ${res.status} ${text.slice(0, 300)}`);
    if (targets[i] === undefined) continue;
    const body = JSON.parse(text) as { suggests?: Record<string, Array<{ link: string; type: string }>> };
    const urls = Object.values(body.suggests ?? {})
      .flat()
      .filter((r) => r.type !== 'custom')
      .map((r) => r.link);
    if (urls.slice(0, 10).includes(targets[i]!)) found++;
  }
  return { ms, found };
}

// ---------------------------------------------------------------- Lucene

interface Lucene {
  child: ChildProcess;
  build: Build;
  ready: { docs: number; segmentsBeforeMerge: number; bytesByExt: Record<string, number> };
  command(cmd: string): Promise<any>;
  peakRssMb(): number;
  stop(): Promise<void>;
}

async function buildLucene(docsFile: string, queries: Array<{ q: string; target: string }>, tmp: string): Promise<Lucene> {
  const cp = LUCENE_JARS.join(':');
  const classes = path.join(tmp, 'classes');
  fs.mkdirSync(classes);
  execFileSync('javac', ['-d', classes, '-cp', cp, path.join(ROOT, 'bench/peers/LuceneEngine.java')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const queriesFile = path.join(tmp, 'queries.tsv');
  fs.writeFileSync(queriesFile, queries.map((q) => `${flat(q.q)}\t${q.target}`).join('\n') + '\n');
  const indexDir = path.join(tmp, 'lucene-index');
  log(`Lucene 8: building (${LUCENE_STORE === 'text' ? 'URL and text stored' : 'URL stored'})`);
  const child = spawn('java', ['-cp', `${classes}:${cp}`, 'LuceneEngine', indexDir, docsFile, queriesFile, LUCENE_STORE], { stdio: ['pipe', 'pipe', 'inherit'] });
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  const lines = readline.createInterface({ input: child.stdout! });
  const waiting: Array<{ resolve: (v: any) => void; reject: (e: Error) => void }> = [];
  lines.on('line', (line) => {
    const w = waiting.shift();
    if (!w) return;
    try {
      w.resolve(JSON.parse(line));
    } catch {
      w.reject(new Error(`LuceneEngine printed: ${line.slice(0, 300)}`));
    }
  });
  child.once('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`LuceneEngine exited (${code})`));
  });
  const next = () => new Promise<any>((resolve, reject) => waiting.push({ resolve, reject }));
  const ready = await next();
  if (ready.event !== 'ready') throw new Error(`LuceneEngine: ${JSON.stringify(ready).slice(0, 300)}`);
  log(`Lucene 8: ${ready.docs} docs built in ${ready.buildSeconds.toFixed(1)} s, merged in ${ready.mergeSeconds.toFixed(1)} s, ${mb(ready.bytes).toFixed(1)} MB`);
  return {
    child,
    build: { engine: 'lucene', buildSeconds: ready.buildSeconds, mergeSeconds: ready.mergeSeconds, bytes: ready.bytes },
    ready,
    command: (cmd: string) => {
      const p = next();
      child.stdin!.write(cmd + '\n');
      return p;
    },
    peakRssMb: () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Math.round(Number(m[1]) / 1024) : NaN;
      } catch {
        return NaN;
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.stdin!.end('quit\n');
      }),
  };
}

// ---------------------------------------------------------------- FTS5

interface Fts5 {
  db: Database.Database;
  build: Build;
  pass(): Pass;
}

function buildFts5(docsFile: string, queries: Array<{ q: string; target: string }>, tmp: string): Fts5 {
  const file = path.join(tmp, 'fts5.db');
  log('SQLite FTS5: building');
  const t0 = performance.now();
  const db = new Database(file);
  db.exec(`CREATE VIRTUAL TABLE fts USING fts5(url UNINDEXED, title, headings, content, tokenize = 'porter unicode61')`);
  const ins = db.prepare('INSERT INTO fts (url, title, headings, content) VALUES (?, ?, ?, ?)');
  const insertMany = db.transaction((batch: TsvDoc[]) => {
    for (const d of batch) ins.run(d.url, d.title, d.headings, d.content);
  });
  let batch: TsvDoc[] = [];
  for (const d of readDocsFile(docsFile)) {
    batch.push(d);
    if (batch.length === 10_000) {
      insertMany(batch);
      batch = [];
    }
  }
  if (batch.length) insertMany(batch);
  const buildSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  db.exec(`INSERT INTO fts(fts) VALUES('optimize')`);
  const mergeSeconds = (performance.now() - t1) / 1000;
  const bytes = fs.readdirSync(tmp).filter((f) => f.startsWith('fts5.db')).reduce((n, f) => n + fs.statSync(path.join(tmp, f)).size, 0);
  log(`SQLite FTS5: built in ${buildSeconds.toFixed(1)} s, optimized in ${mergeSeconds.toFixed(1)} s, ${mb(bytes).toFixed(1)} MB`);
  const stmt = db.prepare('SELECT url FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10').pluck();
  const matches = queries.map((q) => Fts5Peer.terms(q.q).join(' AND '));
  return {
    db,
    build: { engine: 'fts5', buildSeconds, mergeSeconds, bytes },
    pass: () => {
      const ms: number[] = [];
      let found = 0;
      for (let i = 0; i < queries.length; i++) {
        const t = performance.now();
        let urls: string[] = [];
        try {
          if (matches[i]) urls = stmt.all(matches[i]) as string[];
        } catch {
          // A query FTS5 cannot parse answers nothing.
        }
        ms.push(performance.now() - t);
        if (urls.includes(queries[i]!.target)) found++;
      }
      return { ms, found };
    },
  };
}

// ---------------------------------------------------------------- driver

interface Row {
  name: string;
  engine: EngineName;
  rounds: Stats[];
  found: number[];
  stats: Stats;
  found10: number;
}

async function main(): Promise<void> {
  const unknown = [...ENGINES].filter((e) => !(ALL_ENGINES as readonly string[]).includes(e));
  if (unknown.length) throw new Error(`BENCH_ENGINES: unknown engine(s) ${unknown.join(', ')} (known: ${ALL_ENGINES.join(', ')})`);
  if (ENGINES.has('sitesift') && !hasWrk()) {
    process.stderr.write('bench-engine: wrk not found. Install it (Debian/Ubuntu: sudo apt-get install -y wrk) and run again.\n');
    process.exitCode = 1;
    return;
  }
  if (ENGINES.has('lucene')) {
    const missing = LUCENE_JARS.filter((j) => !fs.existsSync(j));
    let java = true;
    try {
      execFileSync('javac', ['-version'], { stdio: 'ignore' });
      execFileSync('java', ['-version'], { stdio: 'ignore' });
    } catch {
      java = false;
    }
    if (!java || missing.length) {
      process.stderr.write(`bench-engine: ${!java ? 'java/javac not found' : `missing ${missing.join(', ')}`}. Install them (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jdk-headless liblucene8-java), or run without Lucene (BENCH_ENGINES=sitesift,fts5).\n`);
      process.exitCode = 1;
      return;
    }
  }
  const t0 = performance.now();
  const loadAtStart = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  const docs = loadPgDocs();
  const known = loadPgQueries();
  const queries = known.map((k) => ({ q: k.q, target: PG_BASE + k.url }));
  const targets = queries.map((q) => q.target);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-bench-engine-'));
  const outDir = path.join(ROOT, 'bench/out');
  fs.mkdirSync(outDir, { recursive: true });
  log(`~${DOCS} documents, ${queries.length} queries, ${ROUNDS} rounds, engines ${[...ENGINES].join(', ')}; temp dir ${tmp}`);

  let ss: Sitesift | undefined;
  let lucene: Lucene | undefined;
  let fts5: Fts5 | undefined;
  const builds: Build[] = [];
  const notes: string[] = [];
  const variants: Variant[] = [];
  let health: Stats | undefined;
  const wrk: Array<{ name: string; result: WrkResult }> = [];
  try {
    // ---- the documents, once for every engine; then the builds, one engine at a time
    const tg = performance.now();
    const docsFile = path.join(tmp, 'docs.tsv');
    const generated = writeDocsFile(docs, docsFile);
    log(`${generated} documents generated into ${docsFile} in ${((performance.now() - tg) / 1000).toFixed(1)} s (${mb(fs.statSync(docsFile).size).toFixed(0)} MB)`);
    if (ENGINES.has('sitesift')) {
      ss = await buildSitesift(docsFile);
      builds.push(ss.build);
      const base = ss.server.url;
      const paths = queries.map((q) => `/sites?site=${SITE}&query=${encodeURIComponent(q.q)}&${SEARCH_PARAMS}`);
      variants.push({ name: 'sitesift, lexical (semanticRatio=0)', engine: 'sitesift', pass: () => httpPass(base, paths.map((p) => `${p}&semanticRatio=0`), targets) });
      variants.push({ name: 'sitesift, hybrid (project default)', engine: 'sitesift', pass: () => httpPass(base, paths, targets) });
    }
    if (ENGINES.has('lucene')) {
      const l = (lucene = await buildLucene(docsFile, queries, tmp));
      builds.push(l.build);
      for (const mode of ['OR', 'AND'] as const) {
        variants.push({
          name: `Lucene 8, ${mode}`,
          engine: 'lucene',
          pass: async () => {
            const r = await l.command(`round ${mode}`);
            if (r.event !== 'round') throw new Error(`LuceneEngine: ${JSON.stringify(r).slice(0, 300)}`);
            return { ms: (r.us as number[]).map((us) => us / 1000), found: r.found as number };
          },
        });
      }
    }
    if (ENGINES.has('fts5')) {
      const f = (fts5 = buildFts5(docsFile, queries, tmp));
      builds.push(f.build);
      variants.push({ name: 'SQLite FTS5, AND', engine: 'fts5', pass: async () => f.pass() });
    }

    // ---- warm-up: untimed passes of every row
    for (let w = 0; w < WARMUP_PASSES; w++) {
      log(`warm-up pass ${w + 1} of ${WARMUP_PASSES}`);
      for (const v of variants) {
        if (v.engine === 'lucene') continue;
        await v.pass();
      }
      if (lucene) await lucene.command('warm');
    }

    // ---- timed rounds, rows alternated
    const rows: Row[] = variants.map((v) => ({ name: v.name, engine: v.engine, rounds: [], found: [], stats: { p50: NaN, p99: NaN, mean: NaN }, found10: NaN }));
    for (let r = 0; r < ROUNDS; r++) {
      const order = variants.map((_, i) => (i + r) % variants.length);
      for (const i of order) {
        const p = await variants[i]!.pass();
        const s = statsOf(p.ms);
        rows[i]!.rounds.push(s);
        rows[i]!.found.push(p.found / queries.length);
        log(`round ${r + 1}: ${variants[i]!.name}: p50 ${s.p50.toFixed(2)} p99 ${s.p99.toFixed(2)} mean ${s.mean.toFixed(2)} ms, found@10 ${(p.found / queries.length).toFixed(3)}`);
      }
    }
    for (const row of rows) {
      row.stats = { p50: median(row.rounds.map((s) => s.p50)), p99: median(row.rounds.map((s) => s.p99)), mean: median(row.rounds.map((s) => s.mean)) };
      row.found10 = median(row.found);
    }

    if (ss) {
      // What HTTP alone costs (client, Koa, one trivial route on the main thread): the same
      // one-at-a-time client on GET /health, after a short warm-up.
      const healthPaths = queries.map(() => '/health');
      await httpPass(ss.server.url, healthPaths.slice(0, 200), []);
      const hs: Stats[] = [];
      for (let r = 0; r < ROUNDS; r++) hs.push(statsOf((await httpPass(ss.server.url, healthPaths, [])).ms));
      health = { p50: median(hs.map((s) => s.p50)), p99: median(hs.map((s) => s.p99)), mean: median(hs.map((s) => s.mean)) };
      // Uncached throughput: wrk, 8 connections, rotating through the queries.
      const paths = queries.map((q) => `/sites?site=${SITE}&query=${encodeURIComponent(q.q)}&${SEARCH_PARAMS}`);
      for (const [name, ps] of [
        ['hybrid (project default)', paths],
        ['lexical (semanticRatio=0)', paths.map((p) => `${p}&semanticRatio=0`)],
      ] as const) {
        const script = rotatingScript(path.join(outDir, `engine-${name.split(' ')[0]}.lua`), ps);
        log(`wrk: sitesift ${name}, 8 connections, ${SECONDS} s`);
        wrk.push({ name, result: await runWrk({ url: ss.server.url, connections: 8, seconds: SECONDS, script }) });
      }
    }

    // ---- report
    const loadAtEnd = os.loadavg().map((x) => x.toFixed(1)).join(' ');
    const buildOf = (e: EngineName) => builds.find((b) => b.engine === e);
    const shownBuild = new Set<EngineName>();
    const fmt = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
    const tableRows = rows.map((r) => {
      const b = buildOf(r.engine);
      const first = b && !shownBuild.has(r.engine);
      if (first) shownBuild.add(r.engine);
      return [r.name, fmt(r.stats.p50), fmt(r.stats.p99, 1), fmt(r.stats.mean), fmt(r.found10, 3), first ? fmt(b.buildSeconds, 1) : '', first ? fmt(b.mergeSeconds, 1) : '', first ? fmt(mb(b.bytes), 0) : ''];
    });
    const table = markdownTable(['engine', 'p50 ms', 'p99 ms', 'mean ms', 'found@10', 'build s', 'merge s', 'index MB'], tableRows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r']);

    const docCount = ss?.indexed ?? lucene?.ready.docs ?? DOCS;
    notes.push(`${docCount.toLocaleString('en')} documents (the PostgreSQL manual multiplied, shuffled content words), ${queries.length} known-item queries; warm (${WARMUP_PASSES} untimed pass(es) per row), one query at a time, ${ROUNDS} alternated rounds, medians of the rounds' p50 / p99 / mean. sitesift: ms measured by the client over HTTP (\`GET /sites?…&${SEARCH_PARAMS}\`, answer cache off); Lucene in the JVM (parse, top 10, stored URLs); FTS5 in process.`);
    if (ss) {
      const top = ss.breakdown.slice(0, 8).map(([n, b]) => `${n} ${fmt(mb(b), 1)}`).join(', ');
      notes.push(`sitesift index MB: the segment file(s) the manifest lists after the full merge (${ss.segmentsBeforeMerge} segment(s) before it, then ${manifestSegments(ss.server).length}); the whole project directory (segments, write log, other files) ${fmt(mb(ss.projectBytes), 0)} MB.${top ? ` Largest parts of the segment (MB, SQLite dbstat): ${top}.` : ''}`);
      if (health) notes.push(`HTTP alone (the same client on \`GET /health\`): p50 ${fmt(health.p50, 3)}, p99 ${fmt(health.p99, 2)}, mean ${fmt(health.mean, 3)} ms — part of every sitesift row, absent from the Lucene and FTS5 rows.`);
      for (const w of wrk) notes.push(`sitesift ${w.name}, uncached, wrk 8 connections ${SECONDS} s: ${w.result.rps.toFixed(0)} req/s, p50 ${fmt(w.result.p50)} ms, p99 ${fmt(w.result.p99)} ms, ${w.result.errors} errors.`);
      notes.push(`sitesift peak RSS (VmHWM): ${ss.rssImportMb} MB through the import, ${ss.rssMergeMb} MB through the full merge.`);
    }
    if (lucene) {
      const ext = Object.entries(lucene.ready.bytesByExt)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([e, b]) => `${e.startsWith('segments') ? '' : '.'}${e} ${fmt(mb(b), 1)}`)
        .join(', ');
      notes.push(`Lucene 8: ${LUCENE_STORE === 'text' ? 'URL, title, headings and content stored' : 'only the URL stored (the text is indexed, not stored)'}; ${lucene.ready.segmentsBeforeMerge} segment(s) before forceMerge(1); bytes by file kind (MB): ${ext}; JVM peak RSS ${lucene.peakRssMb()} MB.`);
    }
    notes.push(`load average at start ${loadAtStart}, at end ${loadAtEnd} (a shared machine: rows of one run compare; absolute figures move with other work).`);

    const goals = goalsOf(rows, builds, wrk, ss);
    const lines = [
      `Engine at ~${Math.round(DOCS / 1000)}k pages`,
      '',
      table,
      '',
      ...notes.map((n) => `- ${n}`),
      '',
      `Goals: ${goals.filter((g) => g.met).length} of ${goals.length} met`,
      ...goals.map((g) => `  [${g.met ? 'met' : '   '}] ${g.goal.padEnd(58)} ${g.detail}`),
    ];
    const markdown = [table, '', ...notes.map((n) => `- ${n}`), '', `Goals (issue 22; against the Lucene rows): ${goals.filter((g) => g.met).length} of ${goals.length} met.`, '', ...goals.map((g) => `- ${g.met ? 'met' : '**not met**'}: ${g.goal} — ${g.detail}`)].join('\n');
    const partial = DOCS < FULL_SIZE || ALL_ENGINES.some((e) => !ENGINES.has(e));
    // What the section would hold, written whatever the size (bench/README.md only by a full run).
    fs.writeFileSync(path.join(outDir, 'engine.md'), markdown + '\n');
    writeBenchSection('engine', markdown, { partial });
    const json = {
      bench: 'engine',
      at: new Date().toISOString(),
      seconds: Math.round((performance.now() - t0) / 1000),
      docs: docCount,
      rounds: ROUNDS,
      rows: rows.map((r) => ({ engine: r.name, p50: +r.stats.p50.toFixed(3), p99: +r.stats.p99.toFixed(3), mean: +r.stats.mean.toFixed(3), found10: +r.found10.toFixed(4) })),
      builds: builds.map((b) => ({ engine: b.engine, buildSeconds: +b.buildSeconds.toFixed(2), mergeSeconds: +b.mergeSeconds.toFixed(2), bytes: b.bytes })),
      http: health ? { p50: +health.p50.toFixed(3), mean: +health.mean.toFixed(3) } : null,
      wrk: wrk.map((w) => ({ variant: w.name, rps: Math.round(w.result.rps), p50: w.result.p50, p99: w.result.p99, errors: w.result.errors })),
      peakRssMb: ss ? { import: ss.rssImportMb, merge: ss.rssMergeMb } : null,
      goals: Object.fromEntries(goals.map((g) => [g.goal, g.met])),
    };
    process.stdout.write(lines.join('\n') + '\n\n' + JSON.stringify(json) + '\n');
  } finally {
    // A server that died on its own: say how and what it logged last, before its log is removed.
    const c = sitesiftServer?.child;
    if (c && (c.exitCode !== null || c.signalCode !== null)) process.stderr.write(`sitesift server exited (${c.exitCode ?? c.signalCode}); log tail:\n${sitesiftServer!.logTail()}\n`);
    if (ss) await ss.server.stop();
    if (lucene) await lucene.stop();
    fts5?.db.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Issue 22's goals, each for both sitesift query rows where it concerns queries. */
function goalsOf(rows: Row[], builds: Build[], wrk: Array<{ name: string; result: WrkResult }>, ss: Sitesift | undefined): Array<{ goal: string; met: boolean; detail: string }> {
  const goals: Array<{ goal: string; met: boolean; detail: string }> = [];
  const ours = builds.find((b) => b.engine === 'sitesift');
  const luc = builds.find((b) => b.engine === 'lucene');
  const lucOr = rows.find((r) => r.name === 'Lucene 8, OR');
  const f = (x: number, d = 2) => x.toFixed(d);
  if (ours && luc) {
    goals.push({ goal: 'index bytes ≤ 1.2× Lucene', met: ours.bytes <= 1.2 * luc.bytes, detail: `${f(mb(ours.bytes), 0)} vs ${f(mb(luc.bytes), 0)} MB (${f(ours.bytes / luc.bytes)}×)` });
    const o = ours.buildSeconds + ours.mergeSeconds;
    const l = luc.buildSeconds + luc.mergeSeconds;
    goals.push({ goal: 'build + full merge ≤ Lucene', met: o <= l, detail: `${f(o, 1)} vs ${f(l, 1)} s (${f(o / l)}×)` });
  }
  for (const row of rows.filter((r) => r.engine === 'sitesift')) {
    const which = row.name.replace(/^sitesift, /, '');
    if (lucOr) {
      goals.push({ goal: `[${which}] mean ≤ Lucene OR`, met: row.stats.mean <= lucOr.stats.mean, detail: `${f(row.stats.mean)} vs ${f(lucOr.stats.mean)} ms (${f(row.stats.mean / lucOr.stats.mean, 1)}×)` });
      goals.push({ goal: `[${which}] p50 ≤ 2× Lucene OR`, met: row.stats.p50 <= 2 * lucOr.stats.p50, detail: `${f(row.stats.p50)} vs ${f(lucOr.stats.p50)} ms (${f(row.stats.p50 / lucOr.stats.p50, 1)}×)` });
    }
    goals.push({ goal: `[${which}] found@10 ≥ 0.666`, met: row.found10 >= 0.666, detail: f(row.found10, 3) });
    goals.push({ goal: `[${which}] p99 ≤ 10 ms`, met: row.stats.p99 <= 10, detail: `${f(row.stats.p99)} ms` });
  }
  for (const w of wrk) goals.push({ goal: `[${w.name}] uncached ≥ 1,000 req/s at 8 connections`, met: w.result.rps >= 1000, detail: `${w.result.rps.toFixed(0)} req/s` });
  if (ss) goals.push({ goal: 'peak RSS of the import ≤ 400 MB', met: ss.rssImportMb <= 400, detail: `${ss.rssImportMb} MB (${ss.rssMergeMb} MB through the merge)` });
  return goals;
}

main().catch((err: unknown) => {
  const cause = (err as { cause?: unknown }).cause;

  process.stderr.write(`bench-engine: ${(err as Error).stack ?? String(err)}${cause ? `\ncause: ${String((cause as Error).stack ?? cause)}` : ''}\n`);
  process.exitCode = 1;
});
