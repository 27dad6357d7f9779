/**
 * Speed per language (`make bench-languages`, also run by `make bench-search`): indexing rate and
 * search latency for a German and a Japanese corpus next to the English one, in process (no
 * HTTP: the figures are the text analysis and the engine, which is what differs by language).
 * A report, not a test: it prints a table and one JSON line, and exits 0 whatever the numbers.
 *
 * Corpora: the PostgreSQL 15 manual (English, 1,169 pages, its 799 known-item queries) and the
 * Debian sets of `../shared/corpus/ml/{de,ja}` (374 and 331 pages, 855 and 770 queries), every
 * page sent with the set's `language`.
 *
 * Each language is measured in child processes of its own (this file with `--build=xx`, then
 * `--search=xx`), so each starts with cold caches and a cold JIT, like a fresh thread:
 * - indexing (the build child): the corpus is written as one segment BENCH_LANG_BUILDS times
 *   (default 4) by `writeSegment`, the pool worker's build, with the built-in embedder when
 *   `dist/embeddings/sg100.wv` exists (as a default project does); the rate is pages per
 *   second of the process's CPU time (a build's wall time also holds its fsyncs, which a
 *   shared disk makes noisy). "first" is the first build of the process (stem, segmenter and
 *   word caches empty), "later" the median of the others (a long-running pool thread);
 * - search (the search child, which has built nothing, as a search thread never builds): the
 *   full search path (`search()`: engine, snippets, highlighting, facets) over the segment the
 *   build child kept, every query once to warm up, then BENCH_LANG_ROUNDS (default 3) timed
 *   passes; p50 and p99 of the wall time per query. Building in the searching process left
 *   the builds' garbage to its searches: full collections during the timed passes in one
 *   language and not in another, whichever corpus the builds happened to leave near a limit.
 *
 * One run's p99 is its ~20th slowest query and moves by a quarter from run to run, so the
 * languages are measured BENCH_LANG_REPEATS times (default 5), alternated (en, de, ja, en, …:
 * a change of the machine's load falls on every language alike); every figure of the table is
 * the median of its repeats, and the goal lines show each repeat's ratio too.
 *
 * Goal (issue 26): within 1.5× of English per page (later builds) and per query (p99).
 *
 * A reference beside the goal (BENCH_LANG_SAME_PAGES=0 leaves it out): English built from only
 * as many pages as each other corpus holds (its first 374 and 331 pages, indexing only). Part of
 * a build's cost is per distinct term (its postings, positions and stems rows, its sort), and a
 * small corpus spreads its vocabulary over fewer pages: the German and Japanese sets are a third
 * of the English one, so per page they pay for about three times as many terms. The goal still
 * compares with the whole English corpus, as the issue asks.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSegment, type SegmentEntry } from '../src/index/index.js';
import { builtinEmbed } from '../src/index/tasks.js';
import { search } from '../src/search/index.js';
import { embedderFingerprint } from '../src/text/index.js';
import type { PageDoc, Settings } from '../src/core/index.js';
import { snapshotOfFiles } from '../test/helpers/snapshot.js';
import { makeDoc } from '../test/helpers/docs.js';
import { loadPgDocs, loadPgQueries, PG_BASE } from './lib/corpus.js';
import { loadMlSet, ML_BASE } from './lib/multilingual.js';
import { markdownTable, writeBenchSection } from './lib/report.js';
import { ROOT } from './lib/server.js';

const LANGS = (process.env.BENCH_LANGS ?? 'en,de,ja').split(',').filter(Boolean);
const BUILDS = Math.max(2, Number(process.env.BENCH_LANG_BUILDS ?? 4));
const ROUNDS = Math.max(1, Number(process.env.BENCH_LANG_ROUNDS ?? 3));
const GOAL = 1.5;
const SAME_PAGES = process.env.BENCH_LANG_SAME_PAGES !== '0';
const REPEATS = Math.max(1, Number(process.env.BENCH_LANG_REPEATS ?? 5));

interface LangResult {
  lang: string;
  /** English cut to another corpus's page count: indexing only (no search figures). */
  reference?: boolean;
  docs: number;
  charsPerDoc: number;
  queries: number;
  embedded: boolean;
  /** Pages per CPU second: the first build, and the median of the later ones. */
  firstRate: number;
  laterRate: number;
  p50: number;
  p99: number;
  mean: number;
  /** Each repeat's own figures (the row holds their medians). */
  repeats?: LangResult[];
}

const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function corpus(lang: string): { docs: PageDoc[]; queries: string[] } {
  if (lang === 'en') {
    const docs = loadPgDocs().map((d) => makeDoc(PG_BASE + d.url, d.title, d.content, { headings: d.headings ? d.headings.split(' | ').filter(Boolean) : [] }));
    return { docs, queries: loadPgQueries().map((q) => q.q) };
  }
  const set = loadMlSet(lang);
  const docs = set.docs.map((d) => makeDoc(ML_BASE + d.url, d.title, d.content, { headings: d.headings ? d.headings.split(' | ').filter(Boolean) : [], language: lang }));
  return { docs, queries: set.queries.map((q) => q.q) };
}

/** Indexing figures of one language (a build child). */
type Indexing = Pick<LangResult, 'lang' | 'docs' | 'charsPerDoc' | 'embedded' | 'firstRate' | 'laterRate'>;

/**
 * Builds one language's corpus (its first `pages` pages when given) BUILDS times in this (child)
 * process and keeps the last segment in `dir` for the search child.
 */
function buildLanguage(lang: string, dir: string, pages?: number): Indexing & { segment: string } {
  const docs = pages === undefined ? corpus(lang).docs : corpus(lang).docs.slice(0, pages);
  const table = path.join(ROOT, 'dist/embeddings/sg100.wv');
  const fp = embedderFingerprint('builtin');
  const embed = fs.existsSync(table) ? builtinEmbed({ kind: 'builtin', fp, table }) : null;
  const rates: number[] = [];
  let segment = '';
  for (let b = 0; b < BUILDS; b++) {
    const file = path.join(dir, `s${b}.seg`);
    const entries: SegmentEntry[] = docs.map((doc, i) => ({ seq: i + 1, at: i + 1, firstAt: i + 1, doc }));
    const c0 = cpuMs();
    writeSegment(file, entries, [], { defaultLanguage: 'en', ...(embed ? { embed, embedder: fp } : {}) });
    rates.push(docs.length / ((cpuMs() - c0) / 1000));
    if (segment) fs.rmSync(segment);
    segment = file;
  }
  const chars = docs.reduce((a, d) => a + d.title.length + d.content.length + d.headings.join(' ').length, 0);
  return {
    lang: pages === undefined ? lang : `${lang} (first ${docs.length} pages)`, docs: docs.length, charsPerDoc: Math.round(chars / docs.length),
    embedded: embed !== null, firstRate: rates[0]!, laterRate: median(rates.slice(1)), segment,
  };
}

/**
 * Times one language's queries over the segment a build child left (in this child process,
 * which has built nothing, as a search thread never does): a warm-up pass, then ROUNDS passes.
 */
function searchLanguage(lang: string, segment: string): Pick<LangResult, 'queries' | 'p50' | 'p99' | 'mean'> {
  const queries = corpus(lang).queries;
  const snap = snapshotOfFiles([segment]);
  const settings = {
    search: { language: 'en', stopWords: null, typoTolerance: 'default', fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [] },
    dataPoints: [], filters: [],
  } as unknown as Settings;
  const owner = {};
  const run = (q: string) => search(snap, settings, {
    query: q, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: true,
    highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false,
  }, owner);
  for (const q of queries) run(q);
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const q of queries) {
      const t = performance.now();
      run(q);
      times.push(performance.now() - t);
    }
  }
  snap.cleanup();
  times.sort((a, b) => a - b);
  return {
    queries: queries.length, p50: times[Math.floor(times.length * 0.5)]!, p99: times[Math.floor(times.length * 0.99)]!,
    mean: times.reduce((a, b) => a + b, 0) / times.length,
  };
}

/** The median of each figure over one language's repeats (the repeats' own figures are kept in `repeats`). */
function medianOf(runs: LangResult[]): LangResult {
  const m = (k: 'firstRate' | 'laterRate' | 'p50' | 'p99' | 'mean') => median(runs.map((r) => r[k]));
  return { ...runs[0]!, firstRate: m('firstRate'), laterRate: m('laterRate'), p50: m('p50'), p99: m('p99'), mean: m('mean'), repeats: runs };
}

function main(): void {
  const child = <T>(args: string[]): T => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { cwd: ROOT, maxBuffer: 16 << 20, stdio: ['ignore', 'pipe', 'inherit'] }).toString('utf8');
    return JSON.parse(out.trim().split('\n').pop()!) as T;
  };
  /** One repeat of one language: a build child, then a search child over the segment it kept. */
  const measure = (lang: string, pages?: number): LangResult => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-lang-${lang}-`));
    try {
      const built = child<Indexing & { segment: string }>([`--build=${lang}`, `--dir=${dir}`, ...(pages === undefined ? [] : [`--pages=${pages}`])]);
      const { segment, ...indexing } = built;
      if (pages !== undefined) return { ...indexing, reference: true, queries: 0, p50: NaN, p99: NaN, mean: NaN };
      return { ...indexing, ...child<Pick<LangResult, 'queries' | 'p50' | 'p99' | 'mean'>>([`--search=${lang}`, `--segment=${segment}`]) };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  // Repeats alternate the languages (en, de, ja, en, de, ja, …), so a change in the machine's
  // load over the run falls on every language alike; each figure is the median of its repeats.
  const runs = new Map<string, LangResult[]>(LANGS.map((l) => [l, []]));
  for (let r = 0; r < REPEATS; r++) for (const lang of LANGS) runs.get(lang)!.push(measure(lang));
  const results = LANGS.map((l) => medianOf(runs.get(l)!));
  const en = results.find((r) => r.lang === 'en');
  // English at each other corpus's page count (after the goal rows, which compare with all of it).
  const references = new Map<string, LangResult>();
  if (en && SAME_PAGES) {
    for (const r of results) {
      if (r === en || r.docs >= en.docs) continue;
      const refRuns: LangResult[] = [];
      for (let k = 0; k < REPEATS; k++) refRuns.push(measure('en', r.docs));
      references.set(r.lang, medianOf(refRuns));
    }
  }
  const x = (v: number, base: number | undefined) => (base === undefined ? '' : `${v.toFixed(2)}×`);
  const rows = [...results, ...references.values()].map((r) => r.reference ? [
    r.lang, String(r.docs), String(r.charsPerDoc), '', r.firstRate.toFixed(0), r.laterRate.toFixed(0), x(en!.laterRate / r.laterRate, en!.laterRate), '', '', '',
  ] : [
    r.lang, String(r.docs), String(r.charsPerDoc), String(r.queries),
    r.firstRate.toFixed(0), r.laterRate.toFixed(0), x(en ? en.laterRate / r.laterRate : NaN, en?.laterRate),
    r.p50.toFixed(2), r.p99.toFixed(2), x(en ? r.p99 / en.p99 : NaN, en?.p99),
  ]);
  const lines = [
    `Speed per language — one segment of each corpus, ${BUILDS} builds per process${results[0]?.embedded ? ' with the built-in embedder' : ' (no word vectors: not embedded)'}, ${ROUNDS} timed passes of the queries in a process of their own; medians of ${REPEATS} alternated repeats`,
    '',
    markdownTable(
      ['language', 'pages', 'characters/page', 'queries', 'first build pages/CPU-s', 'later builds pages/CPU-s', 'per page vs en', 'search p50 ms', 'search p99 ms', 'p99 vs en'],
      rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
  const goals: string[] = [];
  if (en) {
    for (const r of results) {
      if (r === en) continue;
      const page = en.laterRate / r.laterRate;
      const query = r.p99 / en.p99;
      // Each repeat's own ratio (against English of the same repeat), to show the spread.
      const each = (f: (x: LangResult, e: LangResult) => number) => (r.repeats ?? []).map((x, k) => `${f(x, en.repeats![k]!).toFixed(2)}×`).join(', ');
      goals.push(`  [${page <= GOAL ? 'met' : '   '}] ${r.lang} indexing within ${GOAL}× of en per page   ${page.toFixed(2)}×   (repeats ${each((x, e) => e.laterRate / x.laterRate)})`);
      goals.push(`  [${query <= GOAL ? 'met' : '   '}] ${r.lang} search p99 within ${GOAL}× of en   ${query.toFixed(2)}×   (repeats ${each((x, e) => x.p99 / e.p99)})`);
    }
  }
  lines.push('', 'Goals:', '', '```', ...goals, '```');
  if (references.size > 0) {
    lines.push('', 'Reference (not a goal): each corpus per page against English built from as many pages.', '', '```');
    for (const [lang, ref] of references) {
      const r = results.find((x) => x.lang === lang)!;
      lines.push(`  ${lang} indexing vs en (first ${ref.docs} pages) per page   ${(ref.laterRate / r.laterRate).toFixed(2)}×`);
    }
    lines.push('```');
  }
  const md = lines.join('\n');
  process.stdout.write(md + '\n\n' + JSON.stringify({ bench: 'languages', results, references: [...references.values()] }) + '\n');
  writeBenchSection('languages', md, { partial: LANGS.join(',') !== 'en,de,ja' });
}

const argOf = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const buildArg = argOf('build');
const searchArg = argOf('search');
if (buildArg) {
  const pages = argOf('pages');
  process.stdout.write(JSON.stringify(buildLanguage(buildArg, argOf('dir')!, pages === undefined ? undefined : Number(pages))) + '\n');
} else if (searchArg) process.stdout.write(JSON.stringify(searchLanguage(searchArg, argOf('segment')!)) + '\n');
else main();
