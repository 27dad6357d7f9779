/**
 * Semantic relevance (`make relevance`, after bench/relevance.ts). A report, not a test.
 *
 * One server child (current source, temp data dir, built-in embedder from `make embeddings`)
 * indexes the PostgreSQL 15 manual and Cranfield, then answers, at each semanticRatio in
 * {@link RATIOS} and the project default: the paraphrase questions (bench/data/pg-paraphrase.jsonl:
 * visitors' wording, no content word shared with the answering page's title; MRR@10, S@1,
 * S@10), the known-item queries of the manual per kind (MRR@10) and Cranfield (nDCG@10, the
 * convention of bench/lib/corpus.ts). Lucene 8 (EnglishAnalyzer, BM25, OR over title/headings/
 * content boosted 4/2/1: bench/peers/LucenePeer.java, when java and liblucene8-java are present),
 * MiniSearch and FTS5 answer the paraphrase set too.
 * Writes the "relevance-semantic" section of bench/README.md and prints one JSON line.
 */
import { averagePrecision, CRAN_DEPTH, knownItemScores, loadCranfield, loadPgDocs, loadPgQueries, ndcgAt10, PG_BASE } from './lib/corpus.js';
import { Fts5Peer, MiniSearchPeer, type PeerDoc } from './lib/peers.js';
import { lucenePeer } from './lib/multilingual.js';
import { loadParaphrases } from './lib/paraphrase.js';
import { writeBenchSection } from './lib/report.js';
import { createProject, indexDocs, startBenchServer, toPageDocs, type BenchServer } from './lib/server.js';
import { DEFAULT_SEMANTIC_RATIO } from '../src/projects/index.js';

const RATIOS = [0, 0.25, 0.5, 0.75];
const KINDS = ['title', 'typo', 'prefix', 'heading', 'content'] as const;
const CRAN_BASE = 'https://cran.test/';
const fmt = (x: number) => x.toFixed(3);

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  }));
  return out;
}

async function ask(server: BenchServer, site: string, query: string, limit: number, ratio: number): Promise<{ urls: string[]; total: number }> {
  const qs = new URLSearchParams({ site, query, limit: String(limit), log: 'false', groupResults: 'false', semanticRatio: String(ratio) });
  const res = await fetch(`${server.url}/sites?${qs}`);
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`GET /sites ${query}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  const list: Array<{ link: string; type: string }> = Object.values(body.suggests as Record<string, any[]>).flat();
  return { urls: list.filter((r) => r.type !== 'custom').map((r) => r.link), total: Number(body.totalResults) };
}

function mrr(ranked: string[][], wanted: string[]): { mrr: number; s1: number; s10: number } {
  let rr = 0, s1 = 0, s10 = 0;
  ranked.forEach((urls, i) => {
    const s = knownItemScores(urls, wanted[i]!);
    rr += s.rr; s1 += s.s1; s10 += s.s10;
  });
  const n = ranked.length;
  return { mrr: rr / n, s1: s1 / n, s10: s10 / n };
}

async function main(): Promise<void> {
  const pgDocs = loadPgDocs();
  const known = loadPgQueries();
  const para = loadParaphrases();
  const cran = loadCranfield();
  const ratios = [...new Set([...RATIOS, DEFAULT_SEMANTIC_RATIO])].sort();
  const server = await startBenchServer({ mode: process.env.BENCH_SERVER === 'dist' ? 'dist' : 'tsx', env: { SITESIFT_WORKERS: '2', SITESIFT_RATE_PUBLIC_PER_SECOND: '0' } });
  const rows: Array<{ ratio: number; para: ReturnType<typeof mrr>; zero: number; kinds: Record<string, number>; cran: number; map: number }> = [];
  // Known-item reciprocal ranks per ratio, to name the queries the default loses against lexical.
  const knownRr = new Map<number, number[]>();
  try {
    await createProject(server, 'pgdocs');
    await createProject(server, 'cranfield');
    await indexDocs(server, 'pgdocs', toPageDocs(pgDocs), { concurrency: 3 });
    await indexDocs(server, 'cranfield', cran.docs.filter((d) => d.title.trim() || d.content.trim()).map((d) => ({ url: CRAN_BASE + d.id, title: d.title, content: d.content, headings: [], contentGroup: '', imageUrl: '', appendPageContent: false })), { concurrency: 3 });
    for (const r of ratios) {
      const p = await mapLimit(para, 4, (q) => ask(server, 'pgdocs', q.q, 10, r));
      const k = await mapLimit(known, 4, (q) => ask(server, 'pgdocs', q.q, 10, r));
      const c = await mapLimit(cran.queries, 4, async (q) => ({ id: q.id, ranked: (await ask(server, 'cranfield', q.text, CRAN_DEPTH, r)).urls.map((u) => u.slice(CRAN_BASE.length)) }));
      knownRr.set(r, known.map((q, i) => knownItemScores(k[i]!.urls, PG_BASE + q.url).rr));
      const kinds: Record<string, number> = {};
      for (const kind of KINDS) {
        const idx = known.map((q, i) => (q.kind === kind ? i : -1)).filter((i) => i >= 0);
        kinds[kind] = mrr(idx.map((i) => k[i]!.urls), idx.map((i) => PG_BASE + known[i]!.url)).mrr;
      }
      let nd = 0, map = 0, n = 0;
      for (const run of c) {
        const rel = cran.qrels.get(run.id);
        if (!rel) continue;
        nd += ndcgAt10(run.ranked, rel);
        map += averagePrecision(run.ranked, rel);
        n++;
      }
      rows.push({ ratio: r, para: mrr(p.map((x) => x.urls), para.map((q) => PG_BASE + q.url)), zero: p.filter((x) => x.total === 0).length, kinds, cran: nd / n, map: map / n });
      process.stderr.write(`relevance-semantic: ratio ${r} done\n`);
    }
  } catch (err) {
    process.stderr.write(`sitesift server log (tail):\n${server.logTail()}\n`);
    throw err;
  } finally {
    await server.stop();
  }
  const peerDocs: PeerDoc[] = pgDocs.map((d) => ({ url: PG_BASE + d.url, title: d.title, headings: d.headings ?? '', content: d.content }));
  const peers: Array<[string, ReturnType<typeof mrr>]> = [];
  for (const make of [() => new MiniSearchPeer(), () => new Fts5Peer()]) {
    const peer = make();
    peer.add(peerDocs);
    peers.push([peer.name, mrr(para.map((q) => peer.search(q.q, 10).map((h) => h.url)), para.map((q) => PG_BASE + q.url))]);
    if (peer instanceof Fts5Peer) peer.close();
  }
  try {
    const ranked = lucenePeer(peerDocs, para.map((q) => q.q), 'english');
    peers.push(['Lucene 8 EnglishAnalyzer', mrr(ranked, para.map((q) => PG_BASE + q.url))]);
  } catch (err) {
    process.stderr.write(`relevance-semantic: Lucene peer skipped (${(err as Error).message.slice(0, 200)})\n`);
  }
  const lines = [
    `Semantic relevance — built-in embedder; ${para.length} paraphrase questions (bench/data/pg-paraphrase.jsonl), ${known.length} known-item queries, Cranfield`,
    '',
    `| semanticRatio | paraphrase MRR@10 | S@1 | S@10 | zero | ${KINDS.map((k) => `${k} MRR`).join(' | ')} | Cranfield nDCG@10 | MAP |`,
    `|---:|---:|---:|---:|---:|${KINDS.map(() => '---:').join('|')}|---:|---:|`,
    ...rows.map((x) => `| ${x.ratio}${x.ratio === DEFAULT_SEMANTIC_RATIO ? ' (default)' : ''} | ${fmt(x.para.mrr)} | ${fmt(x.para.s1)} | ${fmt(x.para.s10)} | ${x.zero} | ${KINDS.map((k) => fmt(x.kinds[k]!)).join(' | ')} | ${fmt(x.cran)} | ${fmt(x.map)} |`),
    ...peers.map(([n, s]) => `| ${n} | ${fmt(s.mrr)} | ${fmt(s.s1)} | ${fmt(s.s10)} | | ${KINDS.map(() => '').join(' | ')} | | |`),
  ];
  // Known-item queries ranked worse at the default than lexically (rank 0: not in the top 10).
  const lexRr = knownRr.get(0) ?? [];
  const defRr = knownRr.get(DEFAULT_SEMANTIC_RATIO) ?? [];
  const rank = (rr: number) => (rr > 0 ? Math.round(1 / rr) : 0);
  const losses = known
    .map((q, i) => ({ kind: q.kind, q: q.q, url: q.url, lexical: rank(lexRr[i] ?? 0), hybrid: rank(defRr[i] ?? 0), loss: (lexRr[i] ?? 0) - (defRr[i] ?? 0) }))
    .filter((x) => x.loss > 0)
    .sort((a, b) => b.loss - a.loss);
  if (losses.length) {
    lines.push('', `Known-item queries ranked lower at the default ratio than lexically (${losses.length}; rank 0 = not in the top 10):`, '');
    lines.push('| kind | query | lexical rank | default rank |', '|---|---|---:|---:|');
    for (const x of losses.slice(0, 20)) lines.push(`| ${x.kind} | ${x.q.replace(/\|/g, '\\|')} | ${x.lexical} | ${x.hybrid} |`);
  }
  writeBenchSection('relevance-semantic', lines.join('\n'));
  process.stdout.write(lines.join('\n') + '\n\n' + JSON.stringify({ bench: 'relevance-semantic', at: new Date().toISOString(), rows, peers, losses }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`relevance-semantic: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
