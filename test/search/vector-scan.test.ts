// The vector side of hybrid search at scale: the SIMD scan (rows in a WebAssembly memory)
// computes the same float32 similarities as the JavaScript scan, bit for bit; the neighbour bar
// (one pass, a heap of the best) is the HYBRID_NEIGHBOURS-th best candidate with ties, however
// the rows are split into segments; whole queries rank identically with either scan and any
// segmentation.
import t from 'tap';
import { allocRowVectors, vectorMemoryOptions, type SegmentVectors } from '../../src/index/index.js';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { neighbourBar, segmentMarks, type SemanticQuery } from '../../src/search/hybrid.js';
import { jsDots, rowDots, scansWithSimd } from '../../src/search/vector-scan.js';
import type { LiveSegment } from '../../src/index/index.js';
import type { PageDoc, SearchSettings } from '../../src/core/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';

/** Deterministic pseudo-random numbers in [-0.5, 0.5). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

function vectorsOf(rows: number, dims: number, rnd: () => number): SegmentVectors {
  const block = allocRowVectors(rows, dims);
  for (let i = 0; i < block.data.length; i++) block.data[i] = rnd();
  const has = new Uint8Array(rows).fill(1);
  return { fp: 'test', dims, has, ...block };
}

t.test('the SIMD scan and the JavaScript scan give the same float32 values, bit for bit', async (t) => {
  const saved = vectorMemoryOptions.minBytes;
  t.teardown(() => void (vectorMemoryOptions.minBytes = saved));
  const rnd = rng(7);
  for (const dims of [4, 8, 100, 384]) {
    for (const rows of [1, 7, 1000]) {
      vectorMemoryOptions.minBytes = 0;
      const vs = vectorsOf(rows, dims, rnd);
      t.ok(scansWithSimd(vs), `${rows} × ${dims}: in a WebAssembly memory, scanned with SIMD`);
      const q = new Float32Array(dims).map(() => rnd());
      const simd = rowDots(vs, q, rows).slice();
      const js = new Float32Array(rows);
      jsDots(vs.data, Float64Array.from(q), dims, rows, js);
      let differ = 0;
      for (let i = 0; i < rows; i++) if (!Object.is(simd[i], js[i])) differ++;
      t.equal(differ, 0, `${rows} × ${dims}: no row differs`);
      // The next query overwrites the same scratch: no stale value.
      const q2 = new Float32Array(dims).map(() => rnd());
      const again = rowDots(vs, q2, rows);
      jsDots(vs.data, Float64Array.from(q2), dims, rows, js);
      t.same(Array.from(again), Array.from(js), `${rows} × ${dims}: a second query`);
    }
  }
  vectorMemoryOptions.minBytes = saved;
  const plain = vectorsOf(10, 6, rnd);
  t.equal(plain.memory, null, 'a small segment, or dimensions not a multiple of 4: a plain array');
  t.notOk(scansWithSimd(plain));
});

t.test('the neighbour bar is the max-th best candidate with ties, whatever the split into segments', async (t) => {
  const rnd = rng(11);
  // Similarities on a coarse grid (many ties), some NaN (no vector), some below the threshold.
  const n = 5000;
  const all = new Float32Array(n).map(() => (rnd() < -0.45 ? NaN : Math.round((rnd() + 0.5) * 200) / 200));
  const marked = new Uint8Array(n).map(() => (rnd() < -0.3 ? 1 : 0));
  const reference = (threshold: number, max: number): number => {
    const c = [...all].filter((s, i) => s >= threshold && marked[i] !== 1).sort((a, b) => a - b);
    return c.length <= max ? threshold : c[c.length - max]!;
  };
  for (const threshold of [0.1, 0.5, 0.97]) {
    for (const max of [1, 3, 100, 400]) {
      const want = reference(threshold, max);
      for (const cuts of [[], [1], [2500], [17, 1000, 1001, 4999]]) {
        const bounds = [0, ...cuts, n];
        const sims = bounds.slice(1).map((end, i) => all.slice(bounds[i], end));
        const marks = bounds.slice(1).map((end, i) => marked.slice(bounds[i], end));
        t.equal(neighbourBar(sims, marks, threshold, max), want, `threshold ${threshold}, max ${max}, cut at ${cuts.join(',') || 'none'}`);
      }
    }
  }
  t.equal(neighbourBar([null, all.slice(0, 0)], [new Uint8Array(0), new Uint8Array(0)], 0.3, 5), 0.3, 'no candidate: the threshold');
});

t.test('segment marks are handed out zeroed, one array per segment reused', async (t) => {
  const seg = { dead: new Uint8Array(50), reader: {} } as unknown as LiveSegment;
  const m = segmentMarks(seg);
  t.equal(m.length, 50);
  m[3] = 1;
  const again = segmentMarks(seg);
  t.equal(again, m, 'the same array');
  t.equal(again.reduce((a, b) => a + b, 0), 0, 'cleared');
});

t.test('whole hybrid queries: the same hits, scores and totals with either scan and any segmentation', async (t) => {
  const saved = vectorMemoryOptions.minBytes;
  t.teardown(() => void (vectorMemoryOptions.minBytes = saved));
  const DIMS = 12;
  const vectorOf = (key: string): Float32Array => {
    let h = 2166136261;
    for (const c of key) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    const r = rng(h);
    const v = new Float32Array(DIMS).map(() => r());
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const topics = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
  const docs: PageDoc[] = [];
  for (let i = 0; i < 240; i++) {
    // Pages of the same topic and parity share a vector: ties at the bar.
    docs.push(makeDoc(`https://v.test/p${i}`, `Page ${i} ${topics[i % 5]}`, `${topics[(i * 3) % 5]} text ${i % 2 ? 'odd' : 'even'}`));
  }
  const write = { embed: (d: PageDoc) => vectorOf(`${d.title.split(' ')[2]}${Number(d.url.slice(18)) % 2}`), embedder: 'test:12' };
  const settings: SearchSettings = {
    language: 'en', stopWords: null, typoTolerance: 'default',
    fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [],
  };
  const sem = (key: string, ratio: number): SemanticQuery => ({ ratio, fp: 'test:12', threshold: -1, vector: vectorOf(key) });
  const req = (query: string, s: SemanticQuery, topK: number): SearchRequest => ({
    query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [], topK, semantic: s,
  });
  const layouts = [[docs], [docs.slice(0, 70), docs.slice(70, 71), docs.slice(71)]];
  const snaps = [];
  for (const minBytes of [0, saved]) {
    for (const batches of layouts) {
      vectorMemoryOptions.minBytes = minBytes;
      const s = snapshotOf(batches, undefined, write);
      t.teardown(() => s.cleanup());
      runQuery(s, settings, req('alpha', sem('alpha0', 0.5), 10)); // reads the vectors under this option
      t.equal(s.segments.every((seg) => scansWithSimd(seg.reader.vectors('test:12')!)), minBytes === 0, `segments of ${batches.length} scanned with ${minBytes === 0 ? 'SIMD' : 'JavaScript'}`);
      snaps.push(s);
    }
  }
  vectorMemoryOptions.minBytes = saved;
  for (const [query, key] of [['alpha', 'beta1'], ['odd', 'gamma0'], ['zzzz', 'delta1'], ['page', 'omega0']] as const) {
    for (const ratio of [0.25, 1]) {
      for (const topK of [10, 300]) {
        const [a, ...rest] = snaps.map((s) => runQuery(s, settings, req(query, sem(key, ratio), topK)));
        t.ok(a!.total > 0, `${query}/${key} at ${ratio}: ${a!.total} results`);
        for (const [i, b] of rest.entries()) {
          t.same(b.hits.map((h) => [h.url, h.score]), a!.hits.map((h) => [h.url, h.score]), `${query}/${key} at ${ratio}, top ${topK}: same hits and scores (${i + 1})`);
          t.equal(b.total, a!.total);
          t.same(b.semantic, a!.semantic);
        }
      }
    }
  }
});
