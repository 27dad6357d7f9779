import t from 'tap';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { defaultSettings } from '../../src/projects/index.js';

// Deterministic pseudo-random numbers for the fixtures.
let seed = 11;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const words = ['vacuum', 'tuple', 'planner', 'index', 'trigger', 'schema', 'replica', 'cursor'];

const settings = defaultSettings();
const base: SearchRequest = { query: '', filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [] };
const answer = (snap: Parameters<typeof runQuery>[0], q: string, extra: Partial<SearchRequest> = {}) => {
  const r = runQuery(snap, settings.search, { ...base, query: q, ...extra });
  // Scores compared exactly, group counts in their key order.
  return JSON.stringify({ total: r.total, perGroup: Object.entries(r.perGroup), hits: r.hits.map((h) => [h.url, h.group, h.score, h.typos]) });
};

t.test('plain requests (one read of liveness, status and boost per match) answer like the general path', async (t) => {
  // Rows deleted by a later batch, rows whose status is not 200 and boosts other than 1, in
  // two segments; an exclude list naming no group sends the same request through the general
  // path, which checks tombstone, status and boost one by one.
  const doc = (i: number, tag: string) => {
    const w: string[] = [];
    for (let k = 0; k < 3 + (i % 9); k++) w.push(words[Math.floor(rnd() * words.length)]!);
    return makeDoc(`https://s.test/${tag}/${i}`, `${words[i % words.length]} ${i}`, w.join(' '), {
      contentGroup: i % 3 === 0 ? 'guide' : i % 3 === 1 ? 'api' : '',
      boost: i % 5 === 0 ? 2.5 : i % 7 === 0 ? 0.25 : 1,
      status: i % 11 === 0 ? 404 : 200,
    });
  };
  const a = Array.from({ length: 70 }, (_, i) => doc(i, 'a'));
  const b = Array.from({ length: 50 }, (_, i) => doc(i, 'b'));
  const snap = snapshotOf([a, b, a.filter((_, i) => i % 4 === 0).map((d) => ({ delete: d.url })), b.slice(0, 10).map((d) => ({ delete: d.url }))]);
  t.teardown(() => snap.cleanup());
  const general = { excludeContentGroups: ['no such group'] };
  // Browsing (every row reaches the match path: tombstones are not filtered before it), AND,
  // prefix, typo and long OR-mode queries.
  for (const q of ['*', '', 'vacuum', 'tuple planner', 'plan', 'trigge', 'vacum', 'vacuum tuple planner index', 'schema replica cursor trigger vacuum']) {
    for (const topK of [undefined, 3]) {
      const plain = answer(snap, q, { topK });
      t.equal(plain, answer(snap, q, { ...general, topK }), `${q}${topK ? ' top 3' : ''}`);
      const parsed = JSON.parse(plain) as { total: number; hits: Array<[string, string, number, number]> };
      t.ok(parsed.total > 0, `${q} matches`);
      if (topK === undefined) {
        t.notOk(parsed.hits.some(([url]) => /\/(a\/(0|4|8|12)|b\/[0-9])$/.test(url)), `${q}: no deleted row`);
        t.notOk(parsed.hits.some(([url]) => /\/(0|11|22|33|44|55|66)$/.test(url) && !url.includes('/b/')), `${q}: no 404 row of a`);
      }
    }
  }
});

t.test('pooled match arrays: an answer after other queries equals the first one', async (t) => {
  // A segment size no other test in this file uses, so the first search takes fresh (zeroed)
  // arrays from the pool; later searches reuse arrays whose scores were left by earlier ones.
  const docs = Array.from({ length: 137 }, (_, i) => {
    const w: string[] = [];
    for (let k = 0; k < 2 + (i % 6); k++) w.push(words[Math.floor(rnd() * words.length)]!);
    return makeDoc(`https://p.test/${i}`, `${words[(i * 5) % words.length]} page`, w.join(' '), { boost: 1 + (i % 4) });
  });
  const snap = snapshotOf([docs]);
  t.teardown(() => snap.cleanup());
  const queries = ['cursor', 'replica schema', 'vacuum tuple planner index', 'trig', 'planer'];
  const first = queries.map((q) => answer(snap, q));
  // Other queries with many high scores over the same rows, in between.
  for (let r = 0; r < 3; r++) for (const q of ['vacuum', 'tuple', 'index trigger schema replica', 'planner vacuum']) answer(snap, q);
  for (const [i, q] of queries.entries()) t.equal(answer(snap, q), first[i], q);
});
