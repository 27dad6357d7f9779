/**
 * In-process check of the multilingual known-item sets (no server, no HTTP), for fast work on
 * ranking: the documents of `../shared/corpus/ml/<lang>` go through the same validation, the
 * same segment build (with the built-in embedder, as a project's default settings ask) and the
 * same search (`search()` of src/search/results.ts, hybrid with the default ratio) as
 * `make relevance`, so the MRR@10 per kind printed here is the harness's. `make relevance` is
 * still the real harness (and the one that scores the peers).
 *
 * Environment: RELEVANCE_LANGS (default de,fr,ja), SHOW=content,typo lists the queries of
 * those kinds whose target is not first (with the top 3), NMISS caps that list (default 40); RATIO
 * overrides the project's semanticRatio (0: lexical only); FW='{"headings":2}' other field
 * weights; BATCH=100 one segment per 100 documents instead of one segment. When a harness run
 * with RELEVANCE_PEER_CACHE=1 left the peers' answers in bench/out, the best peer per kind is
 * printed beside ours (four decimals: the goals compare unrounded values).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultSettings, embedderSpec } from '../src/projects/index.js';
import { validatePage } from '../src/ingest/index.js';
import { search, type SearchParams } from '../src/search/service.js';
import { QueryEmbedder } from '../src/search/semantic.js';
import { builtinEmbed } from '../src/index/tasks.js';
import type { PageDoc } from '../src/core/index.js';
import { DEFAULT_WORD_VECTORS } from '../src/core/config.js';
import { writeSegment, type SegmentEntry } from '../src/index/index.js';
import { snapshotOfFiles } from '../test/helpers/snapshot.js';
import { loadMlSet, ML_BASE, ML_LANGUAGES, scoreKnownItems } from './lib/multilingual.js';
import type { KnownItem } from './lib/corpus.js';
import { ROOT, toPageDocs } from './lib/server.js';

const defaults = defaultSettings();
// FW='{"headings":2}' tries other field weights (merged into the defaults).
const settings = process.env.FW ? { ...defaults, search: { ...defaults.search, fieldWeights: { ...defaults.search.fieldWeights, ...JSON.parse(process.env.FW) } } } : defaults;
const spec = embedderSpec(settings.search.semantic, DEFAULT_WORD_VECTORS);
const embed = builtinEmbed(spec);
const embedder = new QueryEmbedder();
const show = new Set((process.env.SHOW ?? '').split(',').filter(Boolean));
const owner = {};
const BATCH = Number(process.env.BATCH ?? 1e9);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rel-ml-'));

const params = (query: string) => ({
  query, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC' as const, offset: 0, limit: 10, includeContent: false,
  highlightQueryTerms: false, includeContentGroups: null, excludeContentGroups: null, groupResults: false, limitPerGroup: false, log: false,
});

/** The best peer's MRR@10 per kind from the harness's peer cache (empty without one). */
function bestPeers(lang: string, queries: KnownItem[]): Map<string, { name: string; mrr: number }> {
  const out = new Map<string, { name: string; mrr: number }>();
  const file = path.join(ROOT, 'bench/out', `relevance-ml-peers-${lang}.json`);
  if (!fs.existsSync(file)) return out;
  const cached = JSON.parse(fs.readFileSync(file, 'utf8')) as { peers: Array<[string, string[][]]> };
  for (const [name, ranked] of cached.peers) {
    if (ranked.length !== queries.length) return new Map();
    for (const [k, a] of scoreKnownItems(queries, ranked)) {
      const mrr = a.rr / a.n;
      if (!out.has(k) || mrr > out.get(k)!.mrr) out.set(k, { name, mrr });
    }
  }
  return out;
}

try {
  for (const lang of ML_LANGUAGES) {
    const set = loadMlSet(lang);
    const docs: PageDoc[] = toPageDocs(set.docs, ML_BASE).map((p) =>
      validatePage({ ...p, language: lang }, { settings, ignoreUndefinedFilters: true, defaultSource: 'api' }),
    );
    // One segment, as the server holds these sets once it has merged them; BATCH=100 (a segment
    // per request) ranks identically, since expansion caps are per snapshot.
    const files: string[] = [];
    let seq = 0;
    for (let i = 0; i < docs.length; i += BATCH) {
      const entries: SegmentEntry[] = docs.slice(i, i + BATCH).map((doc) => ({ seq: ++seq, at: seq, firstAt: seq, doc }));
      const file = path.join(tmp, `${lang}-${files.length}.seg`);
      writeSegment(file, entries, [], { defaultLanguage: settings.search.language, ...(embed ? { embed, embedder: spec!.fp } : {}) });
      files.push(file);
    }
    const snap = snapshotOfFiles(files);
    const t0 = performance.now();
    const ranked: string[][] = [];
    const misses: string[] = [];
    for (const q of set.queries) {
      let p: SearchParams = params(q.q);
      const sem = embedder.resolve(spec, settings.search.semantic, q.q, process.env.RATIO === undefined ? undefined : Number(process.env.RATIO));
      if (sem instanceof Promise) throw new Error('the built-in embedder answers synchronously');
      if (sem.q) p = { ...p, semantic: sem.q };
      const r = search(snap, settings, p, owner);
      const list = Object.values(r.suggests).flat();
      const got = list.filter((x) => x.type !== 'custom').map((x) => x.link);
      ranked.push(got);
      if (show.has(q.kind) && got[0] !== ML_BASE + q.url) {
        const rank = got.indexOf(ML_BASE + q.url) + 1;
        misses.push(`${lang}\t${q.kind}\t${JSON.stringify(q.q)} → want ${q.url} (rank ${rank || '-'}); got ${got.slice(0, 3).map((u) => u.slice(ML_BASE.length)).join(' ')}`);
      }
    }
    const ms = performance.now() - t0;
    const by = scoreKnownItems(set.queries, ranked);
    const best = bestPeers(lang, set.queries);
    const cell = (k: string, rr: number) => `${k} ${rr.toFixed(4)}${best.has(k) ? ` (${best.get(k)!.name} ${best.get(k)!.mrr.toFixed(4)})` : ''}`;
    console.log(`${lang}: ${[...by].map(([k, a]) => cell(k, a.rr / a.n)).join('  ')}  (${set.queries.length} queries, ${ms.toFixed(0)} ms)`);
    if (misses.length) console.log(misses.slice(0, Number(process.env.NMISS ?? 40)).join('\n'));
    snap.cleanup();
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
