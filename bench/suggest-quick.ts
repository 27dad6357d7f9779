/**
 * In-process timing of the page half of `GET /sites/suggest` (no HTTP, no query log) over
 * 1–6-character prefixes of PostgreSQL-manual titles, as `make bench-suggest` sends them.
 * For profiling: `node --import tsx --cpu-prof bench/suggest-quick.ts`.
 */
import { search, type SearchParams, computeSuggestPage, computeSuggestPageFast, type SuggestParams } from '../src/search/index.js';
import { defaultSettings } from '../src/projects/index.js';
import { snapshotOf } from '../test/helpers/snapshot.js';
import { makeDoc } from '../test/helpers/docs.js';
import { loadPgDocs, PG_BASE } from './lib/corpus.js';

const settings = defaultSettings();
const docs = loadPgDocs();
// SEGMENTS=n splits the corpus into n segments (the benchmark's server usually holds 2).
const nseg = Math.max(1, Number(process.env.SEGMENTS ?? 1));
const pages = docs.map((d) => makeDoc(PG_BASE + d.url, d.title, d.content, { headings: d.headings ? d.headings.split(' | ') : [] }));
const snap = snapshotOf(Array.from({ length: nseg }, (_, i) => pages.slice(Math.floor((i * pages.length) / nseg), Math.floor(((i + 1) * pages.length) / nseg))));
const cleanTitle = (t: string) => t.replace(/^([A-Z]\.)?[\dA-Z.]*\.\s+/, '').replace(/^(Part|Appendix|Chapter) [IVXLC\d]+\.\s*/, '').trim();
const titles = docs.map((d) => cleanTitle(d.title)).filter(Boolean);
let a = 7;
const r = () => {
  a = (a + 0x6d2b79f5) >>> 0;
  let x = Math.imul(a ^ (a >>> 15), 1 | a);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};
const prefixes: string[] = [];
for (let i = 0; i < 5000; i++) {
  const t = titles[Math.floor(r() * titles.length)]!.toLowerCase();
  prefixes.push(t.slice(0, 1 + Math.floor(r() * 6)));
}
const distinct = [...new Set(prefixes)];
console.log(`docs ${docs.length}, prefixes ${prefixes.length}, distinct ${distinct.length}`);
const owner = {};
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
// The page half of a suggest miss as the cache computes it (EXACT=1: the "limit per group"
// reference search instead of the windowed one).
const params = (query: string): SuggestParams => ({
  query, filters: [], limit: 2, groupResults: true, includeContent: false, highlightQueryTerms: false, includeContentGroups: null, excludeContentGroups: null,
});
const suggestPage = process.env.EXACT === '1' ? computeSuggestPage : computeSuggestPageFast;
for (const q of distinct) suggestPage(snap, settings, params(q), owner);
const rounds = Number(process.env.ROUNDS ?? 2);
const byLen = new Map<number, number[]>();
const times: number[] = [];
const t0 = performance.now();
const c0 = process.cpuUsage();
for (let k = 0; k < rounds; k++) for (const q of distinct) {
  const s = performance.now();
  suggestPage(snap, settings, params(q), owner);
  const d = performance.now() - s;
  times.push(d);
  const l = Math.min(q.length, 6);
  if (!byLen.has(l)) byLen.set(l, []);
  byLen.get(l)!.push(d);
}
const total = performance.now() - t0;
const cpuSuggest = cpuMs(process.cpuUsage(c0)) / (rounds * distinct.length);
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
times.sort((x, y) => x - y);
console.log(`all: n ${times.length} mean ${(total / times.length).toFixed(3)} p50 ${pct(times, 0.5).toFixed(3)} p99 ${pct(times, 0.99).toFixed(3)} max ${times.at(-1)!.toFixed(2)} ms`);
for (const [l, xs] of [...byLen].sort((x, y) => x[0] - y[0])) {
  xs.sort((x, y) => x - y);
  console.log(`len ${l}: n ${xs.length} mean ${(xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(3)} p50 ${pct(xs, 0.5).toFixed(3)} p99 ${pct(xs, 0.99).toFixed(3)}`);
}
// The search route's misses for comparison: every title as a `GET /sites` query (defaults).
const searchParams = (query: string): SearchParams => ({
  query, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: false,
  highlightQueryTerms: false, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false,
});
for (const q of titles) search(snap, settings, searchParams(q), owner);
const st: number[] = [];
const s0 = performance.now();
const c1 = process.cpuUsage();
for (let k = 0; k < rounds; k++) for (const q of titles) {
  const s = performance.now();
  search(snap, settings, searchParams(q), owner);
  st.push(performance.now() - s);
}
const stotal = performance.now() - s0;
const cpuSearch = cpuMs(process.cpuUsage(c1)) / (rounds * titles.length);
st.sort((x, y) => x - y);
console.log(`search titles: n ${st.length} mean ${(stotal / st.length).toFixed(3)} p50 ${pct(st, 0.5).toFixed(3)} p99 ${pct(st, 0.99).toFixed(3)} ms (suggest / search mean ${(total / times.length / (stotal / st.length)).toFixed(2)}x)`);
console.log(`CPU per query (this process, less disturbed by other load than wall time): suggest ${cpuSuggest.toFixed(3)} ms, search ${cpuSearch.toFixed(3)} ms (${(cpuSuggest / cpuSearch).toFixed(2)}x)`);
snap.cleanup();
