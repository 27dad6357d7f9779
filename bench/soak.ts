/**
 * Memory soak (`make soak`). A report with a verdict: exits 0 when the server's resident set is
 * flat over the second half of the run (max ≤ 1.10 × min) and under its memory budget
 * (`SITESIFT_MEMORY_MB`), 1 otherwise or when a server fails.
 *
 * One server child (built JS when `dist/` exists, like the other benchmarks; default settings
 * apart from the rate limits, which are raised so the load is not refused, and
 * `BENCH_SERVER_ENV`), the PostgreSQL 15 manual (1,169 pages) indexed through `pagesJson`,
 * then SOAK_SECONDS (default 600) of mixed load from SOAK_CLIENTS (default 4) clients, each
 * sending its next request when the previous one is answered:
 *
 * - searches (45%): the corpus's 799 queries with varied limit, offset, snippets, highlighting,
 *   facets, grouping and logging; half of them from a hot set of 40 (answered from the cache
 *   until the index changes), a tenth with a unique word appended (never cached, a new query-log
 *   entry each time);
 * - suggests (30%): prefixes of the corpus queries, hot ones and rare ones;
 * - query-log events (10%): `POST /sites/queries/log` with search, select and abandon;
 * - pushes (10%) and deletes (5%) of pages under `…/soak/<n>.html` (n < 300, so the index stays
 *   about the corpus's size): each publishes a new generation, which every cache keys on.
 *
 * Every SOAK_SAMPLE_SECONDS (default 5) it reads the server's VmRSS from /proc and, at the end,
 * the resident set by kind of mapping (/proc/PID/smaps) and `GET /admin/memory` (the budget,
 * what each cache holds, each thread's V8 heap). The table goes into bench/README.md
 * (section `soak`, through bench/lib/report.ts) for full-length runs; shorter runs (SOAK_SECONDS
 * below 600) are diagnostic and leave the file alone.
 */
import { readFileSync } from 'node:fs';
import { loadPgDocs, loadPgQueries, PG_BASE } from './lib/corpus.js';
import { call, createProject, indexDocs, prng, startBenchServer, toPageDocs, type BenchServer } from './lib/server.js';
import { markdownTable, writeBenchSection } from './lib/report.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 4);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 5);
const SITE = 'pg';
/** Largest spread of RSS over the second half of the run that still counts as flat. */
const FLAT = 0.1;

type Kind = 'search' | 'suggest' | 'log' | 'push' | 'delete';
const MIX: Array<[Kind, number]> = [
  ['search', 0.45],
  ['suggest', 0.3],
  ['log', 0.1],
  ['push', 0.1],
  ['delete', 0.05],
];

interface Sample {
  /** Seconds since the load started. */
  t: number;
  rssMb: number;
}

function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Where the resident set is (MiB), from /proc/PID/smaps: file-backed pages (node's code and
 * libraries), V8 heap pages (anonymous 256 KiB mappings: every isolate's pages are that size),
 * and the rest of the anonymous memory (malloc arenas: SQLite, typed arrays, the word vectors).
 */
function rssParts(pid: number | undefined): { fileMb: number; v8PagesMb: number; otherAnonMb: number } {
  const out = { fileMb: 0, v8PagesMb: 0, otherAnonMb: 0 };
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return { fileMb: NaN, v8PagesMb: NaN, otherAnonMb: NaN };
  }
  let kind: keyof typeof out = 'otherAnonMb';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const kb = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 1024;
      const name = head[3] ?? '';
      kind = name.startsWith('/') ? 'fileMb' : name === '' && kb === 256 ? 'v8PagesMb' : 'otherAnonMb';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]) / 1024;
  }
  return out;
}

const bool = (r: () => number, p = 0.5) => (r() < p ? 'true' : 'false');

async function main(): Promise<void> {
  const docs = loadPgDocs();
  const queries = loadPgQueries().map((q) => q.q);
  const hot = queries.slice(0, 40);
  const mode = process.env.BENCH_SERVER === 'tsx' || process.env.BENCH_SERVER === 'dist' ? process.env.BENCH_SERVER : 'auto';
  const server = await startBenchServer({
    mode,
    env: { SITESIFT_RATE_PUBLIC_PER_SECOND: '1000000', SITESIFT_RATE_PUBLIC_BURST: '1000000', SITESIFT_RATE_INDEX_PER_SECOND: '1000000', SITESIFT_RATE_INDEX_BURST: '1000000' },
  });
  let failed = false;
  try {
    await createProject(server, SITE);
    const { indexed, seconds } = await indexDocs(server, SITE, toPageDocs(docs));
    process.stderr.write(`soak: indexed ${indexed} pages in ${seconds.toFixed(1)} s; ${SECONDS} s of load from ${CLIENTS} clients (server: ${server.mode})\n`);

    const counts: Record<Kind, number> = { search: 0, suggest: 0, log: 0, push: 0, delete: 0 };
    const errors: string[] = [];
    let errorCount = 0;
    const samples: Sample[] = [];
    const t0 = performance.now();
    const elapsed = () => (performance.now() - t0) / 1000;
    const pid = server.child.pid;
    samples.push({ t: 0, rssMb: rssMb(pid) });
    const sampler = setInterval(() => {
      const s = { t: elapsed(), rssMb: rssMb(pid) };
      samples.push(s);
      if (samples.length % 12 === 0) process.stderr.write(`soak: ${s.t.toFixed(0)} s, RSS ${s.rssMb.toFixed(0)} MB, ${Object.values(counts).reduce((a, b) => a + b, 0)} requests\n`);
    }, SAMPLE_SECONDS * 1000);

    const one = async (rnd: () => number, serial: number): Promise<void> => {
      let x = rnd();
      let kind: Kind = 'search';
      for (const [k, w] of MIX) {
        if (x < w) {
          kind = k;
          break;
        }
        x -= w;
      }
      const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)]!;
      let r: { status: number; json: any };
      if (kind === 'search') {
        let q = rnd() < 0.5 ? pick(hot) : pick(queries);
        if (rnd() < 0.1) q = `${q} w${serial.toString(36)}`;
        const cached = q === hot.find((h) => h === q);
        const params = new URLSearchParams({ site: SITE, query: q });
        if (!cached) {
          params.set('limit', String(pick([5, 10, 20])));
          params.set('offset', String(pick([0, 0, 10, 20])));
          params.set('includeContent', bool(rnd));
          params.set('highlightQueryTerms', bool(rnd));
          params.set('filterOptions', bool(rnd, 0.3));
          params.set('groupResults', bool(rnd, 0.7));
        } else {
          params.set('includeContent', 'true');
        }
        params.set('log', bool(rnd));
        r = await call(server, 'GET', `/sites?${params}`);
      } else if (kind === 'suggest') {
        const q = rnd() < 0.5 ? pick(hot) : pick(queries);
        const prefix = q.slice(0, 1 + Math.floor(rnd() * q.length));
        const params = new URLSearchParams({ site: SITE, query: prefix, includeContent: bool(rnd, 0.3), highlightQueryTerms: bool(rnd) });
        r = await call(server, 'GET', `/sites/suggest?${params}`);
      } else if (kind === 'log') {
        const action = pick(['search', 'select', 'abandon'] as const);
        const body: Record<string, unknown> = { site: SITE, query: pick(queries), action, timeToAction: Math.floor(rnd() * 20_000) };
        if (action === 'select') Object.assign(body, { link: PG_BASE + pick(docs).url, position: 1 + Math.floor(rnd() * 5) });
        r = await call(server, 'POST', '/sites/queries/log', JSON.stringify(body));
      } else if (kind === 'push') {
        const d = pick(docs);
        const page = { ...toPageDocs([d])[0]!, url: `${PG_BASE}soak/${Math.floor(rnd() * 300)}.html` };
        r = await call(server, 'POST', `/sites/pageJson?site=${SITE}`, JSON.stringify(page));
      } else {
        r = await call(server, 'DELETE', `/index/documents?site=${SITE}&url=${encodeURIComponent(`${PG_BASE}soak/${Math.floor(rnd() * 300)}.html`)}`);
      }
      counts[kind]++;
      if (r.status !== 200) {
        errorCount++;
        if (errors.length < 5) errors.push(`${kind}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
      }
    };

    let serial = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const rnd = prng(1000 + c);
        while (elapsed() < SECONDS) await one(rnd, serial++);
      }),
    );
    clearInterval(sampler);
    samples.push({ t: elapsed(), rssMb: rssMb(pid) });
    const parts = rssParts(pid);
    const memory = await call(server, 'GET', '/admin/memory');
    const budgetMb: number = memory.status === 200 ? Number(memory.json.budgetMb) : NaN;

    // ---- verdict and table
    const half = SECONDS / 2;
    const last = samples.filter((s) => s.t >= half);
    const lastMin = Math.min(...last.map((s) => s.rssMb));
    const lastMax = Math.max(...last.map((s) => s.rssMb));
    const at = (t: number) => samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best));
    const spread = lastMax / lastMin - 1;
    const flat = spread <= FLAT;
    const under = lastMax < budgetMb;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const mb = (x: number) => `${x.toFixed(0)} MB`;
    const rows: string[][] = [
      ['RSS after indexing (load starts)', mb(samples[0]!.rssMb), ''],
      [`RSS at ${(half / 60).toFixed(1)} min`, mb(at(half).rssMb), ''],
      [`RSS at the end (${(SECONDS / 60).toFixed(1)} min)`, mb(samples[samples.length - 1]!.rssMb), `peak over the whole run ${mb(Math.max(...samples.map((s) => s.rssMb)))}`],
      ['RSS over the second half: min – max', `${mb(lastMin)} – ${mb(lastMax)}`, `spread ${(spread * 100).toFixed(1)}% (flat: ≤ ${FLAT * 100}%) → ${flat ? 'flat' : 'NOT flat'}`],
      ['RSS at the end by mapping', `${mb(parts.fileMb + parts.v8PagesMb + parts.otherAnonMb)}`, `file-backed (node's code) ${mb(parts.fileMb)}, V8 heap pages ${mb(parts.v8PagesMb)}, other anonymous (malloc: SQLite, typed arrays, word vectors) ${mb(parts.otherAnonMb)}`],
      ['threads at the end', '', memory.status === 200 ? threadText(memory.json) : 'GET /admin/memory failed'],
      ['memory budget (SITESIFT_MEMORY_MB)', mb(budgetMb), `${under ? 'under' : 'NOT under'} it; split: ${memory.status === 200 ? splitText(memory.json) : 'GET /admin/memory failed'}`],
      ['requests', String(total), `${(total / SECONDS).toFixed(0)}/s from ${CLIENTS} clients; ${errorCount} not 200`],
      ...(Object.entries(counts) as Array<[Kind, number]>).map(([k, n]) => [`↳ ${k}`, String(n), '']),
    ];
    const curve = samples.filter((_, i) => i % Math.max(1, Math.round(60 / SAMPLE_SECONDS)) === 0).map((s) => `${(s.t / 60).toFixed(0)}:${s.rssMb.toFixed(0)}`);
    const md = [
      markdownTable(['measure', 'value', 'detail'], rows, ['l', 'r', 'l']),
      '',
      `RSS each minute (min:MB): ${curve.join(' ')}. Verdict: **${flat && under ? 'pass' : 'fail'}**.`,
    ].join('\n');
    process.stdout.write(`${md}\n`);
    if (errors.length) process.stderr.write(`first errors:\n${errors.join('\n')}\n`);
    process.stdout.write(`${JSON.stringify({ bench: 'soak', seconds: SECONDS, samples: samples.map((s) => [Math.round(s.t), Math.round(s.rssMb)]), budgetMb, counts, errorCount, memory: memory.json })}\n`);
    writeBenchSection('soak', md, { partial: SECONDS < 600 });
    failed = !(flat && under);
  } catch (err) {
    process.stderr.write(`soak failed: ${(err as Error).stack}\n${server.logTail()}\n`);
    failed = true;
  } finally {
    await server.stop();
  }
  process.exit(failed ? 1 : 0);
}

/** Each thread's V8 heap and what it holds outside it, and the shared word vectors, from `GET /admin/memory`. */
function threadText(m: { threads?: Array<{ thread: string; heap?: { totalMb: number; externalMb?: number }; wordVectors?: { usedMb: number } }> }): string {
  const parts = (m.threads ?? [])
    .filter((t) => t.heap)
    .map((t) => `${t.thread}: V8 heap ${t.heap!.totalMb.toFixed(0)} MB + ${(t.heap!.externalMb ?? 0).toFixed(0)} MB outside it`);
  const wv = m.threads?.find((t) => t.wordVectors)?.wordVectors;
  return [...parts, ...(wv ? [`word vectors (one table for all threads) ${wv.usedMb.toFixed(0)} MB`] : [])].join('; ');
}

/** "main 200 MB, 2 search threads × 80 MB, …" from the `GET /admin/memory` answer. */
function splitText(m: { threads?: Array<{ thread: string; shareMb: number }> }): string {
  return (m.threads ?? []).map((t) => `${t.thread} ${t.shareMb} MB`).join(', ');
}

void main();

export type { BenchServer };
