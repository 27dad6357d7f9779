/** In-process relevance check (no HTTP): for fast tuning of the engine. `make relevance` is the real harness. */
import { runQuery } from '../src/search/index.js';
import { snapshotOf } from '../test/helpers/snapshot.js';
import { makeDoc } from '../test/helpers/docs.js';
import { loadPgDocs, loadPgQueries, loadCranfield, knownItemScores, ndcgAt10, PG_BASE, CRAN_DEPTH } from './lib/corpus.js';
import type { SearchSettings } from '../src/core/index.js';

const settings: SearchSettings = {
  language: 'en', stopWords: null, typoTolerance: 'default',
  fieldWeights: JSON.parse(process.env.FW ?? '{"title":8,"keywords":6,"headings":4,"url":3,"content":1}'),
  synonyms: [], resultMappings: [],
};
const req = (query: string) => ({ query, filters: [], sort: null, sortOrder: 'ASC' as const, includeContentGroups: null, excludeContentGroups: null, facetDefs: [] });

const docs = loadPgDocs();
const snap = snapshotOf([docs.map((d) => makeDoc(PG_BASE + d.url, d.title, d.content, { headings: d.headings ? d.headings.split(" | ") : [] }))]);
const byKind = new Map<string, { n: number; rr: number; s1: number; s10: number; zero: number }>();
const misses: string[] = [];
let t0 = performance.now();
for (const q of loadPgQueries()) {
  const r = runQuery(snap, settings, req(q.q));
  const ranked = r.hits.slice(0, 10).map((h) => h.url.slice(PG_BASE.length));
  const s = knownItemScores(ranked, q.url);
  const k = byKind.get(q.kind) ?? { n: 0, rr: 0, s1: 0, s10: 0, zero: 0 };
  k.n++; k.rr += s.rr; k.s1 += s.s1; k.s10 += s.s10; k.zero += s.zero;
  byKind.set(q.kind, k);
  if (s.s1 === 0 && process.env.SHOW?.split(',').includes(q.kind)) misses.push(`${q.kind}\t${q.q}\t→ want ${q.url}, got ${ranked.slice(0, 3).join(' ')} (${r.hits.length})`);
}
const pgMs = performance.now() - t0;
for (const [k, v] of byKind) console.log(k.padEnd(8), 'MRR', (v.rr / v.n).toFixed(3), 'S@1', (v.s1 / v.n).toFixed(3), 'S@10', (v.s10 / v.n).toFixed(3), 'zero', (v.zero / v.n).toFixed(3), 'n', v.n);
console.log(`pg queries: ${pgMs.toFixed(0)} ms total`);
if (misses.length) console.log(misses.slice(0, Number(process.env.NMISS ?? 40)).join('\n'));
snap.cleanup();

if (!process.env.NOCRAN) {
  const cran = loadCranfield();
  const cs = snapshotOf([cran.docs.map((d) => makeDoc('https://cran.test/' + d.id, d.title, d.content))]);
  let nd = 0;
  let ndJudged = 0;
  let n = 0;
  for (const q of cran.queries) {
    const rel = cran.qrels.get(q.id);
    if (!rel) continue;
    const r = runQuery(cs, settings, { ...req(q.text), prefix: false } as never);
    const ranked = r.hits.slice(0, CRAN_DEPTH).map((h) => h.url.slice('https://cran.test/'.length));
    nd += ndcgAt10(ranked, rel);
    ndJudged += ndcgAt10(ranked, rel, 'judged');
    n++;
  }
  console.log('cranfield nDCG@10', (nd / n).toFixed(3), '(ideal over all judged:', (ndJudged / n).toFixed(3) + ')', 'queries', n);
  cs.cleanup();
}
