import t from 'tap';
import { DEFAULT_SEARCH_MEMORY_MB } from '../../src/core/index.js';
import { engineCacheBudget, engineCacheUsed, setSearchMemoryMb } from '../../src/index/index.js';
import { search, type SearchParams } from '../../src/search/service.js';
import { defaultSettings } from '../../src/projects/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';

const MiB = 1024 * 1024;

t.test('the total is split 160 : 224 : 544 between postings, BM25F values and cards', async (t) => {
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  setSearchMemoryMb(928);
  t.same({ ...engineCacheBudget }, { postings: 160 * MiB, impacts: 224 * MiB, cards: 544 * MiB });
  setSearchMemoryMb(58);
  t.same({ ...engineCacheBudget }, { postings: 10 * MiB, impacts: 14 * MiB, cards: 34 * MiB });
});

// Deterministic pseudo-random words, so every query touches other postings lists.
let seed = 11;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const vocab = Array.from({ length: 1500 }, (_, i) => `w${i.toString(36)}q${'abcdefghij'[i % 10]}`);
const pick = () => vocab[Math.floor(rnd() * vocab.length)]!;
const docs = Array.from({ length: 400 }, (_, i) =>
  makeDoc(`https://budget.test/p${i}`, `${pick()} ${pick()}`, Array.from({ length: 120 }, pick).join(' ')),
);
const queries = Array.from({ length: 250 }, (_, i) => (i % 3 === 0 ? `${pick()} ${pick()}` : pick()));
const params = (query: string): SearchParams => ({
  query, filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: true,
  highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false,
});

t.test('each engine cache stays within its budget, and a small budget changes no answer', async (t) => {
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  const settings = defaultSettings();
  const run = (mb: number) => {
    setSearchMemoryMb(mb);
    const snap = snapshotOf([docs.slice(0, 200), docs.slice(200)]);
    const owner = {};
    let over = 0;
    const answers = queries.map((q) => {
      const a = JSON.stringify(search(snap, settings, params(q), owner));
      for (const k of ['postings', 'impacts', 'cards'] as const) if (engineCacheUsed[k] > engineCacheBudget[k]) over++;
      return a;
    });
    const used = { ...engineCacheUsed };
    snap.cleanup();
    return { answers, over, used };
  };
  const small = run(0.25);
  const large = run(DEFAULT_SEARCH_MEMORY_MB);
  t.equal(small.over, 0, 'no cache above its budget after any search (0.25 MiB in all)');
  t.equal(large.over, 0);
  t.same(small.answers, large.answers, 'identical answers');
  // The bound did something: with the default budget the same searches keep more than 0.25 MiB.
  t.ok(large.used.postings + large.used.cards > 0.25 * MiB, `default budget keeps ${large.used.postings + large.used.cards} bytes`);
  t.ok(small.used.postings <= engineCacheBudget.postings);
});

t.test('closing a reader gives back its postings, BM25F values and cards at once', async (t) => {
  const settings = defaultSettings();
  const before = { ...engineCacheUsed };
  const snap = snapshotOf([docs.slice(0, 150), docs.slice(150)]);
  const owner = {};
  // Two-word queries (AND probing caches BM25F values) and single words, with content.
  for (const q of queries.slice(0, 60)) search(snap, settings, params(q), owner);
  for (const k of ['postings', 'impacts', 'cards'] as const) t.ok(engineCacheUsed[k] > before[k], `${k} cached while open`);
  snap.cleanup();
  t.same({ ...engineCacheUsed }, before, 'every cache back to what it held before (none of the closed readers left)');
});
