/** In-process timing of the full search path (engine + rendering), no HTTP. For profiling. */
import { search } from '../src/search/index.js';
import { snapshotOf } from '../test/helpers/snapshot.js';
import { makeDoc } from '../test/helpers/docs.js';
import { loadPgDocs, loadPgQueries, PG_BASE } from './lib/corpus.js';
import type { Settings } from '../src/core/index.js';

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
// THREADS=<n> (with CONC=<c>, default 8): the same queries through the search executor the
// server uses (0: main thread; n: n search threads), c searches in flight, CPU of the whole
// process (all threads) per search: what the main-thread/search-thread hand-off costs.
if (process.env.THREADS !== undefined) {
  if (process.env.SRCH4_V8) (await import('node:v8')).setFlagsFromString(process.env.SRCH4_V8);
  const { createSearchExecutor } = await import('../src/search/index.js');
  const exec = createSearchExecutor(Number(process.env.THREADS));
  const conc = Number(process.env.CONC ?? 8);
  const p = (q: string) => ({ query: q, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC' as const, offset: 0, limit: 10, includeContent: true, highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false });
  const pass = async (rounds: number) => {
    let next = 0;
    const n = queries.length * rounds;
    await Promise.all(Array.from({ length: conc }, async () => {
      while (next < n) await exec.run(owner, snap, settings, p(queries[next++ % queries.length]!));
    }));
    return n;
  };
  // WARMROUNDS: passes before the measured ones, each printed (how long the threads take to warm).
  for (let r = 0; r < Number(process.env.WARMROUNDS ?? 2); r++) {
    const c = process.cpuUsage();
    const n = await pass(1);
    const u = process.cpuUsage(c);
    console.log(`warm pass ${r + 1}: process CPU per search ${((u.user + u.system) / 1000 / n).toFixed(3)} ms`);
  }
  const { threadCpu } = await import('./lib/proc.js');
  const th0 = threadCpu(process.pid);
  const c1 = process.cpuUsage();
  const t1 = performance.now();
  const n = await pass(Number(process.env.ROUNDS ?? 2));
  const c = process.cpuUsage(c1);
  const perThread = [...threadCpu(process.pid)].map(([tid, [name, sec]]) => [name, ((sec - (th0.get(tid)?.[1] ?? 0)) * 1000) / n] as const).filter(([, ms]) => ms >= 0.005);
  console.log(`executor threads=${exec.threads} conc=${conc}: ${(n / (performance.now() - t1) * 1000).toFixed(0)} searches/s, process CPU per search ${((c.user + c.system) / 1000 / n).toFixed(3)} ms (${perThread.map(([name, ms]) => `${name} ${ms.toFixed(3)}`).join(', ')})`);
  await exec.close();
}
snap.cleanup();
