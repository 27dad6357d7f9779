import t from 'tap';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { defaultSettings } from '../../src/projects/index.js';
import type { IndexSnapshot } from '../../src/index/index.js';

// Query expansions are cached per snapshot object and settings object; each answer here is
// compared with the same search on a fresh copy of the snapshot (a new object: nothing cached).
const base: SearchRequest = { query: '', filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [] };
const answer = (snap: IndexSnapshot, settings: ReturnType<typeof defaultSettings>['search'], q: string, extra: Partial<SearchRequest> = {}) => {
  const r = runQuery(snap, settings, { ...base, query: q, ...extra });
  return JSON.stringify({ total: r.total, hits: r.hits.map((h) => [h.url, h.score, h.typos]), matched: [...r.matched].sort() });
};
const fresh = (snap: IndexSnapshot): IndexSnapshot => ({ ...snap });

const words = ['vacuum', 'vacuums', 'vacuuming', 'tuple', 'tuples', 'planner', 'planning', 'index', 'indexes', 'trigger', 'autovacuum', 'pgproc', 'replica'];
const docs = (tag: string, n: number) => Array.from({ length: n }, (_, i) =>
  makeDoc(`https://s.test/${tag}/${i}`, `${words[i % words.length]} ${words[(i * 5 + 2) % words.length]}`, `${words[(i * 3 + 1) % words.length]} ${words[(i * 7 + 4) % words.length]} pg_proc car`));

t.test('cached expansions answer like fresh ones, per snapshot, settings and word flags', async (t) => {
  const snap = snapshotOf([docs('a', 40)]);
  const grown = snapshotOf([docs('a', 40), [makeDoc('https://s.test/new', 'vacuumdb tool', 'vacuumx automobile tuplex')]]);
  t.teardown(() => {
    snap.cleanup();
    grown.cleanup();
  });
  const plain = defaultSettings().search;
  const withSynonyms = { ...plain, synonyms: [{ terms: ['car', 'automobile'] }] } as typeof plain;
  const strict = { ...plain, typoTolerance: 'strict' } as typeof plain;
  const queries = ['vacuum', 'vacuum ', 'vacum', 'vacuu', 'vacuu ', 'vacuum tuple', 'vacuum tuple planner index', '"vacuum tuple"', 'pg_proc', 'pg proc', 'car', 'tuple vacuu', 'indexs'];
  let compared = 0;
  for (let round = 0; round < 2; round++) {
    for (const s of [plain, withSynonyms, strict]) {
      for (const q of queries) {
        for (const extra of [{}, { prefix: false }, { typoTolerance: 'off' as const }]) {
          for (const sn of [snap, grown]) {
            t.equal(answer(sn, s, q, extra), answer(fresh(sn), s, q, extra), `${q} ${JSON.stringify(extra)}`);
            compared++;
          }
        }
      }
    }
  }
  t.equal(compared, 2 * 3 * queries.length * 3 * 2);
  // The settings object is part of the key: the same word on the same snapshot finds the
  // synonym only with the settings that define it; a larger vocabulary finds the new words.
  t.notOk(answer(snap, plain, 'car').includes('automobile'));
  t.ok(answer(grown, withSynonyms, 'car').includes('automobile'));
  t.ok(answer(grown, plain, 'vacuu').includes('vacuumx'));
  t.notOk(answer(grown, plain, 'vacuu ').includes('vacuumx'), 'a word typed to its end is no prefix');
  t.notOk(answer(snap, plain, 'vacuu').includes('vacuumx'));
});
