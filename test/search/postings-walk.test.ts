import t from 'tap';
import { gallop, liveUnion } from '../../src/search/match.js';
import type { Postings } from '../../src/index/index.js';

// Deterministic pseudo-random numbers for the property checks.
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

function sortedIds(n: number, max: number): Int32Array {
  const s = new Set<number>();
  while (s.size < n) s.add(Math.floor(rnd() * max));
  return Int32Array.from([...s].sort((a, b) => a - b));
}

t.test('gallop finds the first id >= target after a smaller one', async (t) => {
  t.equal(gallop(Int32Array.from([1, 3, 5, 7]), 0, 5), 2);
  t.equal(gallop(Int32Array.from([1, 3, 5, 7]), 0, 4), 2);
  t.equal(gallop(Int32Array.from([1, 3, 5, 7]), 0, 8), 4, 'past the end');
  t.equal(gallop(Int32Array.from([1, 3, 5, 7]), 1, 7), 3);
  t.equal(gallop(Int32Array.from([1, 2]), 0, 2), 1, 'next element');
  let checked = 0;
  for (let round = 0; round < 200; round++) {
    const ids = sortedIds(1 + Math.floor(rnd() * 300), 2000);
    const from = Math.floor(rnd() * ids.length);
    const target = ids[from]! + 1 + Math.floor(rnd() * 500);
    let expect = from;
    while (expect < ids.length && ids[expect]! < target) expect++;
    t.equal(gallop(ids, from, target), expect);
    checked++;
  }
  t.equal(checked, 200);
});

const postings = (ids: Int32Array): Postings => ({ ids, tfs: new Uint16Array(ids.length * 5) });

t.test('liveUnion counts the live rows of the union of postings', async (t) => {
  for (let round = 0; round < 50; round++) {
    const n = 500;
    const dead = new Uint8Array(n);
    if (round % 3 !== 0) for (let i = 0; i < n; i++) dead[i] = rnd() < 0.2 ? 1 : 0;
    const lists = Array.from({ length: 1 + (round % 4) }, () => (rnd() < 0.15 ? null : postings(sortedIds(Math.floor(rnd() * 200), n))));
    const expect = new Set<number>();
    for (const p of lists) if (p) for (const id of p.ids) if (!dead[id]) expect.add(id);
    t.equal(liveUnion(lists, dead), expect.size, `round ${round}`);
  }
  t.equal(liveUnion([], new Uint8Array(3)), 0);
  t.equal(liveUnion([null], new Uint8Array(3)), 0);
});

t.test('cached BM25F values give the same answers as fresh scoring, across generations', async (t) => {
  const { snapshotOf, snapshotOfFiles } = await import('../helpers/snapshot.js');
  const { makeDoc } = await import('../helpers/docs.js');
  const { runQuery } = await import('../../src/search/engine.js');
  const { defaultSettings } = await import('../../src/projects/index.js');
  const words = ['table', 'index', 'vacuum', 'tuple', 'query', 'planner', 'function', 'trigger', 'view', 'schema'];
  const doc = (i: number) => {
    const w: string[] = [];
    for (let k = 0; k < 5 + (i % 13); k++) w.push(words[Math.floor(rnd() * words.length)]!);
    return makeDoc(`https://s.test/${i}`, `${words[i % words.length]} page ${i}`, w.join(' '), { headings: [words[(i * 3) % words.length]!] });
  };
  const a = Array.from({ length: 40 }, (_, i) => doc(i));
  const b = Array.from({ length: 25 }, (_, i) => doc(100 + i));
  const built = snapshotOf([a, b]);
  t.teardown(() => built.cleanup());
  const settings = defaultSettings();
  const files = built.segments.map((s) => s.reader.path);
  const queries = ['table', 'index vacuum', 'tuple query planner function', 'view', 'trig', 'schema table index view'];
  // Scores compared exactly (not just the order).
  const answer = (snap: typeof built, q: string) =>
    JSON.stringify(runQuery(snap, settings.search, { query: q, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [] }).hits.map((h) => [h.url, h.score]));
  // Generation 1: only the first segment (other averages); warms the cache for its reader.
  const gen1 = { ...built, segments: built.segments.slice(0, 1), totalDocs: built.segments[0]!.liveCount, totalLengths: built.segments[0]!.liveLengths };
  for (const q of queries) answer(gen1, q);
  // Generation 2 on the same readers vs the same files opened fresh (cold caches).
  const fresh = snapshotOfFiles(files);
  t.teardown(() => fresh.cleanup());
  for (const q of queries) {
    const warm1 = answer(built, q);
    const warm2 = answer(built, q);
    t.equal(warm2, warm1, `repeatable: ${q}`);
    t.equal(warm1, answer(fresh, q), `same as fresh readers: ${q}`);
  }
});

t.test('AND probing: a probed list walked whole and one galloped give the same answers', async (t) => {
  // The other words of an AND query are probed for the first (rarest) word's live documents: a
  // list at most 4x that many is walked whole, a longer one galloped. Rows deleted in a later
  // batch lengthen the lists (dead rows stay in the postings) without changing any live
  // statistic, so the same queries take the galloping branch in `padded` and the walking one
  // in `plain`, and must answer identically (scores compared exactly).
  const { snapshotOf } = await import('../helpers/snapshot.js');
  const { makeDoc } = await import('../helpers/docs.js');
  const { runQuery } = await import('../../src/search/engine.js');
  const { defaultSettings } = await import('../../src/projects/index.js');
  const common = ['vacuum', 'vacuums', 'vacuuming', 'vacuumdb', 'tuple', 'tuples'];
  const live = Array.from({ length: 60 }, (_, i) => {
    const w: string[] = [];
    for (let k = 0; k < 4 + (i % 7); k++) w.push(common[Math.floor(rnd() * common.length)]!);
    if (i % 6 === 0) w.push('planner');
    if (i % 9 === 0) w.push('plannr');
    return makeDoc(`https://s.test/live/${i}`, i % 4 === 0 ? `Vacuum ${i}` : `Page ${i}`, w.join(' '), { contentGroup: i % 3 === 0 ? 'docs' : '' });
  });
  const deadDocs = Array.from({ length: 400 }, (_, i) => makeDoc(`https://s.test/dead/${i}`, 'Dead', common.join(' ') + ' planner'));
  const plain = snapshotOf([live]);
  const padded = snapshotOf([[...live, ...deadDocs], deadDocs.map((d) => ({ delete: d.url }))]);
  t.teardown(() => (plain.cleanup(), padded.cleanup()));
  t.equal(padded.totalDocs, plain.totalDocs, 'same live documents');
  const settings = defaultSettings();
  const answer = (snap: typeof plain, q: string) => {
    const r = runQuery(snap, settings.search, { query: q, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [] });
    return JSON.stringify({ total: r.total, perGroup: r.perGroup, hits: r.hits.map((h) => [h.url, h.score, h.typos]) });
  };
  for (const q of ['planner vacuum', 'planner vacu', 'planner tuple', 'plannr tuples', 'vacuum planner tup']) {
    const a = answer(plain, q);
    t.equal(answer(padded, q), a, q);
    t.ok(JSON.parse(a).total > 0, `${q} matches`);
  }
});
