/** In-process scaling check: the corpus multiplied N times (SCALE), timing the search path. */
import { search } from '../src/search/index.js';
import fs from 'node:fs';
import path from 'node:path';
import { snapshotOf, snapshotOfFiles } from '../test/helpers/snapshot.js';
import { makeDoc } from '../test/helpers/docs.js';
import { loadPgDocs, loadPgQueries, PG_BASE } from './lib/corpus.js';
import type { Settings, PageDoc } from '../src/core/index.js';

const settings = {
  search: { language: 'en', stopWords: null, typoTolerance: 'default', fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [] },
  dataPoints: [], filters: [],
} as unknown as Settings;
const base = loadPgDocs();
const scale = Number(process.env.SCALE ?? 10);
let seed = 1;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const batchesOf = (): PageDoc[][] => {
  const batches: PageDoc[][] = [];
  for (let k = 0; k < scale; k++) {
    batches.push(base.map((d) => {
      const w = d.content.split(' ');
      if (k > 0) for (let i = w.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [w[i], w[j]] = [w[j]!, w[i]!]; }
      return makeDoc(PG_BASE + (k ? `copy${k}/` : '') + d.url, d.title, w.join(' '), { headings: d.headings ? d.headings.split(' | ') : [] });
    }));
  }
  return batches;
};
let t0 = performance.now();
// KEEP=<dir>: build once into <dir> and reopen it on later runs (a 100k build takes minutes;
// the documents are then not generated at all).
const keep = process.env.KEEP;
const files = keep && fs.existsSync(keep) ? fs.readdirSync(keep).filter((f) => f.endsWith('.seg')).sort((a, b) => parseInt(a.slice(1)) - parseInt(b.slice(1))).map((f) => path.join(keep, f)) : [];
const snap = files.length ? snapshotOfFiles(files) : snapshotOf(process.env.ONESEG ? [batchesOf().flat()] : batchesOf(), keep);
console.log(`built ${scale * base.length} docs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const queries = loadPgQueries().map((q) => q.q).slice(0, Number(process.env.NQ ?? 300));
const owner = {};
const run = (q: string) => search(snap, settings, { query: q, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: true, highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false }, owner);
// DUMP=<file>: every query's full answer, one JSON line each (before/after comparisons).
if (process.env.DUMP) fs.writeFileSync(process.env.DUMP, queries.map((q) => JSON.stringify({ q, answer: run(q) })).join('\n') + '\n');
// WARM=<n>: queries run once before timing (default 50). WARM=799 NQ=799 measures a warm
// rotation through every query, as wrk's rotation in bench-search does once its caches are filled.
for (const q of queries.slice(0, Number(process.env.WARM ?? 50))) run(q);
const times: number[] = [];
// Per query, its CPU time over all passes (TOP=<n> prints the n costliest: the tail to work on).
const perQuery = new Float64Array(queries.length);
const passes = Number(process.env.PASSES ?? 1);
const c0 = process.cpuUsage();
for (let r = 0; r < passes; r++) {
  queries.forEach((q, i) => {
    const u = process.cpuUsage();
    const s = performance.now();
    run(q);
    times.push(performance.now() - s);
    const d = process.cpuUsage(u);
    perQuery[i]! += (d.user + d.system) / 1000;
  });
}
const cpu = process.cpuUsage(c0);
if (process.env.TOP) {
  const order = queries.map((_, i) => i).sort((a, b) => perQuery[b]! - perQuery[a]!);
  for (const i of order.slice(0, Number(process.env.TOP))) console.log(`${(perQuery[i]! / passes).toFixed(2).padStart(8)} ms  ${queries[i]}`);
}
times.sort((a, b) => a - b);
console.log(`CPU/query ${((cpu.user + cpu.system) / 1000 / times.length).toFixed(2)} ms; p50 ${times[Math.floor(times.length / 2)]!.toFixed(2)} p99 ${times[Math.floor(times.length * 0.99)]!.toFixed(2)} max ${times[times.length - 1]!.toFixed(1)}`);
if (!keep) snap.cleanup();
