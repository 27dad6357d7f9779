/**
 * What semantic search costs at indexing time (`make bench-ingest-semantic`). A report, not a
 * test: prints a table and one JSON line, writes the "ingest-semantic" section of bench/README.md.
 *
 * The same documents — about BENCH_DOCS (default 50,000) from the PostgreSQL manual, multiplied
 * as bench/ingest.ts does — are indexed into a fresh server child (the launcher, dist/ when
 * built) with the project's embedder set to `none` and to the built-in one, alternating, for
 * BENCH_ROUNDS rounds (default 2). Measured per run: documents per second from the first request
 * to the answer of the last batch, sent with `refresh=true` (so the time includes building and
 * embedding every segment: everything is searchable, with vectors, when it ends); then, after a
 * full merge, the vector storage per document: the stored vector blobs (`vecs` table) and the
 * index's bytes on disk compared with the `none` run's.
 *
 * Goal (issue 25): the built-in embedder's rate at least 0.5 × the rate without.
 * Environment: BENCH_DOCS, BENCH_ROUNDS, BENCH_CONCURRENCY (default 3), BENCH_SERVER (dist|tsx|auto).
 * Run it under the bench lock: `flock /work/bench.lock make bench-ingest-semantic`.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadPgDocs } from './lib/corpus.js';
import { writeBenchSection } from './lib/report.js';
import { call, createProject, indexDocs, multiplyCorpus, startBenchServer, type BenchServer } from './lib/server.js';

const DOCS = Number(process.env.BENCH_DOCS ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 3);
const SITE = 'bench';

interface Run {
  embedder: 'none' | 'builtin';
  docs: number;
  seconds: number;
  docsPerSecond: number;
  /** Pages searched lexically only after the run (0: every page has its vector). */
  lexicalOnly: number;
  /** After a full merge. */
  indexBytes: number;
  vectors: number;
  vectorBlobBytes: number;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/** Bytes of the project's segment files and its stored vectors (after a full merge: one segment). */
function storage(server: BenchServer): { indexBytes: number; vectors: number; vectorBlobBytes: number } {
  const files = filesUnder(path.join(server.dataDir, 'data')).filter((f) => f.includes(`${path.sep}${SITE}${path.sep}`) && f.endsWith('.seg'));
  let indexBytes = 0;
  let vectors = 0;
  let vectorBlobBytes = 0;
  for (const f of files) {
    indexBytes += statSync(f).size;
    const db = new Database(f, { readonly: true, fileMustExist: true });
    try {
      const hasVecs = db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'vecs'").pluck().get() as number;
      if (hasVecs) {
        const r = db.prepare('SELECT count(*) AS n, coalesce(sum(length(v)), 0) AS b FROM vecs').get() as { n: number; b: number };
        vectors += r.n;
        vectorBlobBytes += r.b;
      }
    } finally {
      db.close();
    }
  }
  return { indexBytes, vectors, vectorBlobBytes };
}

async function run(embedder: 'none' | 'builtin', docs: ReturnType<typeof multiplyCorpus> extends Generator<infer T> ? T[] : never): Promise<Run> {
  const server = await startBenchServer({ mode: process.env.BENCH_SERVER === 'dist' || process.env.BENCH_SERVER === 'tsx' ? process.env.BENCH_SERVER : 'auto', env: { SITESIFT_RATE_PUBLIC_PER_SECOND: '0', SITESIFT_RATE_INDEX_PER_SECOND: '0' } });
  try {
    await createProject(server, SITE);
    const set = await call(server, 'PATCH', `/admin/projects/${SITE}/settings`, JSON.stringify({ search: { semantic: { embedder } } }));
    if (set.status !== 200) throw new Error(`settings: ${set.status} ${JSON.stringify(set.json).slice(0, 300)}`);
    const r = await indexDocs(server, SITE, docs, { concurrency: CONCURRENCY });
    const probe = await call(server, 'GET', `/sites?site=${SITE}&query=${encodeURIComponent('make my queries faster')}&log=false`);
    const lexicalOnly = embedder === 'none' ? 0 : Number(probe.json?.semantic?.lexicalOnlyDocuments ?? NaN);
    const merged = await call(server, 'POST', `/admin/projects/${SITE}/merge`);
    if (merged.status !== 200) throw new Error(`merge: ${merged.status} ${JSON.stringify(merged.json).slice(0, 300)}`);
    return { embedder, docs: r.indexed, seconds: r.seconds, docsPerSecond: r.indexed / r.seconds, lexicalOnly, ...storage(server) };
  } catch (err) {
    process.stderr.write(`server log (tail):\n${server.logTail()}\n`);
    throw err;
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const docs = [...multiplyCorpus(loadPgDocs(), DOCS)];
  const runs: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, so that a change of machine load between runs hits both sides.
    for (const e of round % 2 === 0 ? (['none', 'builtin'] as const) : (['builtin', 'none'] as const)) {
      const r = await run(e, docs);
      runs.push(r);
      process.stderr.write(`ingest-semantic: ${e} ${r.docsPerSecond.toFixed(0)} docs/s\n`);
    }
  }
  const of = (e: Run['embedder']) => runs.filter((r) => r.embedder === e);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const none = of('none');
  const builtin = of('builtin');
  const rate = (rs: Run[]) => mean(rs.map((r) => r.docsPerSecond));
  const ratio = rate(builtin) / rate(none);
  const n = builtin[0]!.docs;
  const blobPerDoc = mean(builtin.map((r) => r.vectorBlobBytes / Math.max(1, r.vectors)));
  const diskPerDoc = (mean(builtin.map((r) => r.indexBytes)) - mean(none.map((r) => r.indexBytes))) / n;
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  const lines = [
    `Indexing with the built-in embedder next to \`embedder: none\` — ${fmt(n)} documents (PostgreSQL manual multiplied), ${CONCURRENCY} requests in flight, ${ROUNDS} round(s) alternating${process.env.BENCH_NOTE ? `; ${process.env.BENCH_NOTE}` : ""}`,
    '',
    '| embedder | docs/s (each run) | mean docs/s | index on disk after a full merge | pages without a vector after the run |',
    '|---|---|---:|---:|---:|',
    ...(['none', 'builtin'] as const).map((e) => {
      const rs = of(e);
      return `| ${e} | ${rs.map((r) => fmt(r.docsPerSecond)).join(', ')} | ${fmt(rate(rs))} | ${(mean(rs.map((r) => r.indexBytes)) / 1e6).toFixed(1)} MB | ${e === 'none' ? '—' : rs.map((r) => r.lexicalOnly).join(', ')} |`;
    }),
    '',
    `- Built-in / none: **${ratio.toFixed(2)} ×** the indexing rate (goal ≥ 0.5 ×): ${ratio >= 0.5 ? 'met' : 'missed'}.`,
    `- Vector storage per document: ${fmt(blobPerDoc)} bytes of vector (${builtin[0]!.vectors ? (blobPerDoc / 4).toFixed(0) : '?'} float32 dimensions); the index grows by ${fmt(diskPerDoc)} bytes per document on disk (vectors with their SQLite rows and pages, after a full merge).`,
  ];
  writeBenchSection('ingest-semantic', lines.join('\n'));
  process.stdout.write(lines.join('\n') + '\n\n' + JSON.stringify({ bench: 'ingest-semantic', at: new Date().toISOString(), docs: n, ratio, blobPerDoc, diskPerDoc, runs }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`ingest-semantic: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
