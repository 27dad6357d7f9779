/** In-process timing of the full search path (engine + rendering), no HTTP. For profiling. */
import { search } from '../src/search/service.js';
import { snapshotOf } from '../test/helpers/snapshot.js';
import { makeDoc } from '../test/helpers/docs.js';
import { loadPgDocs, loadPgQueries, PG_BASE } from './lib/corpus.js';
import type { Settings } from '../src/types.js';

const settings = {
  search: { language: 'en', stopWords: null, typoTolerance: 'default', fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [] },
  dataPoints: [], filters: [],
} as unknown as Settings;
const docs = loadPgDocs();
const snap = snapshotOf([docs.map((d) => makeDoc(PG_BASE + d.url, d.title, d.content, { headings: d.headings ? d.headings.split(' | ') : [] }))]);
const queries = loadPgQueries().map((q) => q.q);
const owner = {};
const run = (q: string) => search(snap, settings, { query: q, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: true, highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false }, owner);
// DUMP=<file>: write every query's full answer (one JSON line each) for before/after comparisons
// of rankings and answers (bench/compare-answers is a diff of two such files).
if (process.env.DUMP) {
  const fs = await import('node:fs');
  fs.writeFileSync(process.env.DUMP, queries.map((q) => JSON.stringify({ q, answer: run(q) })).join('\n') + '\n');
}
for (const q of queries) run(q); // warm
const times: number[] = [];
const t0 = performance.now();
const c0 = process.cpuUsage();
for (let r = 0; r < Number(process.env.ROUNDS ?? 2); r++) for (const q of queries) {
  const s = performance.now();
  run(q);
  times.push(performance.now() - s);
}
const total = performance.now() - t0;
const cpu = process.cpuUsage(c0);
console.log(`CPU per query ${((cpu.user + cpu.system) / 1000 / times.length).toFixed(3)} ms`);
times.sort((a, b) => a - b);
console.log(`queries ${times.length}, mean ${(total / times.length).toFixed(3)} ms, p50 ${times[Math.floor(times.length * 0.5)]!.toFixed(3)}, p99 ${times[Math.floor(times.length * 0.99)]!.toFixed(3)}, max ${times[times.length - 1]!.toFixed(2)}`);
snap.cleanup();
