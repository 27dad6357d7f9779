import t from 'tap';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { defaultSettings } from '../../src/projects/index.js';
import type { IndexSnapshot } from '../../src/index/index.js';

// The phrase/exactness re-ranking of the top 100 reads each reading word's postings once per
// segment (not once per re-ranked page), and a word typed with a typo gets its closest indexed
// form once per cached expansion (not by looking up every alternative on every query): a
// suggest miss for a short prefix made hundreds of postings lookups, most of them these.
const base: SearchRequest = { query: '', filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [] };
const settings = defaultSettings().search;

/** Counts `postings(term)` calls per reader and term while `fn` runs. */
function countLookups(snap: IndexSnapshot, fn: () => void): Map<string, number> {
  const counts = new Map<string, number>();
  const restore: Array<() => void> = [];
  snap.segments.forEach((s, si) => {
    const reader = s.reader;
    const orig = reader.postings;
    reader.postings = function (term: string) {
      const key = `${si}:${term}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return orig.call(this, term);
    };
    restore.push(() => {
      reader.postings = orig;
    });
  });
  try {
    fn();
  } finally {
    for (const r of restore) r();
  }
  return counts;
}

const docs = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => makeDoc(`https://s.test/${tag}/${i}`, `vacuum tuple ${i}`, `vacuums vacuumed tuple vacuum page ${i}`, { headings: ['vacuum tuple'] }));

t.test('a repeated query looks up each term once per segment, a reading word twice, whatever the number of hits', async (t) => {
  for (const n of [30, 150]) {
    const snap = snapshotOf([docs('a', n), docs('b', n)]);
    t.teardown(() => snap.cleanup());
    for (const query of ['vacuum tuple', 'vacum tuple', 'vacum tup']) {
      const first = runQuery(snap, settings, { ...base, query });
      t.ok(first.hits.length > 1, `${query}: re-ranked`);
      let again: ReturnType<typeof runQuery> | undefined;
      const counts = countLookups(snap, () => {
        again = runQuery(snap, settings, { ...base, query });
      });
      t.same(again!.hits.map((h) => [h.url, h.score]), first.hits.map((h) => [h.url, h.score]), `${query}: same answer`);
      // The words of the query as re-ranked: its indexed forms (the typo's closest form).
      const readingWords = new Set(['vacuum', 'tuple', 'tup']);
      for (const [key, c] of counts) {
        const term = key.slice(key.indexOf(':') + 1);
        t.ok(c <= (readingWords.has(term) ? 2 : 1), `${n} pages, ${query}: ${key} looked up ${c} times`);
      }
    }
  }
});

t.test('the contiguity check of a CJK query reads the top pages from SQLite once: a repeated query reads none', async (t) => {
  // 40 pages holding both words, half of them side by side: more than the 30 checked.
  const ja = Array.from({ length: 40 }, (_, i) =>
    makeDoc(`https://s.test/ja/${i}`, `文書 ${i}`, i % 2 ? `情報の説明。管理の説明。ページ ${i}` : `情報管理の扱い。ページ ${i}`, { language: 'ja' }),
  );
  const snap = snapshotOf([ja]);
  t.teardown(() => snap.cleanup());
  const reader = snap.segments[0]!.reader;
  const orig = reader.card;
  let reads = 0;
  reader.card = function (id: number, withContent: boolean) {
    reads++;
    return orig.call(this, id, withContent);
  };
  t.teardown(() => {
    reader.card = orig;
  });
  const first = runQuery(snap, settings, { ...base, query: '情報管理' });
  t.ok(reads > 0, 'the first query reads cards');
  t.ok(first.hits.slice(0, 10).every((h) => Number(h.url.split('/').pop()) % 2 === 0), 'pages holding the run as typed first');
  reads = 0;
  const again = runQuery(snap, settings, { ...base, query: '情報管理' });
  t.equal(reads, 0, 'no card read again');
  t.same(again.hits.map((h) => h.url), first.hits.map((h) => h.url), 'same order');
});
