import t from 'tap';
import { DEFAULT_SEARCH_MEMORY_MB } from '../../src/core/index.js';
import { engineCacheBudget, engineCacheUsed, postingsPool, setSearchMemoryMb } from '../../src/index/index.js';
import { cachedPostingsBytes } from '../../src/index/segment-reader.js';
import { search, type SearchParams } from '../../src/search/service.js';
import { defaultSettings } from '../../src/projects/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { scoringFor } from '../../src/search/score.js';
import { makeDoc } from '../helpers/docs.js';

const MiB = 1024 * 1024;

t.test('the total is split 384 : 544 between postings (with their BM25F values) and cards', async (t) => {
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  setSearchMemoryMb(928);
  t.same({ ...engineCacheBudget }, { postings: 384 * MiB, cards: 544 * MiB });
  setSearchMemoryMb(58);
  t.same({ ...engineCacheBudget }, { postings: 24 * MiB, cards: 34 * MiB });
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
      for (const k of ['postings', 'cards'] as const) if (engineCacheUsed[k] > engineCacheBudget[k]) over++;
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
  for (const k of ['postings', 'cards'] as const) t.ok(engineCacheUsed[k] > before[k], `${k} cached while open`);
  snap.cleanup();
  t.same({ ...engineCacheUsed }, before, 'every cache back to what it held before (none of the closed readers left)');
});

t.test('BM25F values are kept with their decoded list and counted with it, once', async (t) => {
  const settings = defaultSettings();
  const snap = snapshotOf([docs.slice(0, 200)]);
  t.teardown(() => snap.cleanup());
  const seg = snap.segments[0]!;
  const word = docs[0]!.title.split(' ')[0]!;
  const before = engineCacheUsed.postings;
  search(snap, settings, params(word), {});
  const p = seg.reader.postings(word)!;
  const kept = seg.reader.postingValues(word, p, scoringFor(settings.search.fieldWeights, snap, false).key);
  t.ok(kept, 'the values of the searched word are kept with its list');
  t.equal(kept!.length, p.ids.length, 'one per posting');
  const listBytes = p.ids.byteLength + p.tfs.byteLength;
  t.ok(engineCacheUsed.postings - before >= listBytes + kept!.byteLength, 'the postings budget counts the list and its values');
  // A list decoded again (another object) does not see values computed for the old one.
  t.equal(seg.reader.postingValues(word, { ids: p.ids.slice(), tfs: p.tfs.slice() }, 'x'), undefined);
});

t.test('lists and values recycled by the pool: identical answers when every search evicts and reuses buffers, and the accounting holds', async (t) => {
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  const settings = defaultSettings();
  // Long queries (OR: every word's list and values in full) and short ones (AND probing), so a
  // search holds many lists at once while a tiny budget evicts them under it.
  const mixed = queries.map((q, i) => (i % 4 === 0 ? Array.from({ length: 6 }, pick).join(' ') : q));
  const run = (mb: number) => {
    setSearchMemoryMb(mb);
    const snap = snapshotOf([docs.slice(0, 200), docs.slice(200)]);
    const owner = {};
    const problems: string[] = [];
    const answers = [0, 1].flatMap(() =>
      mixed.map((q) => {
        const a = JSON.stringify(search(snap, settings, params(q), owner));
        if (engineCacheUsed.postings > engineCacheBudget.postings) problems.push(`${q}: over budget`);
        if (engineCacheUsed.postings !== cachedPostingsBytes() + postingsPool.freeBytes) problems.push(`${q}: counted ${engineCacheUsed.postings}, held ${cachedPostingsBytes() + postingsPool.freeBytes}`);
        if (postingsPool.freeBytes > engineCacheBudget.postings / 8) problems.push(`${q}: pool over its cap`);
        return a;
      }),
    );
    const reused = postingsPool.freeBytes;
    snap.cleanup();
    return { answers, problems, reused };
  };
  const tiny = run(0.05);
  const large = run(DEFAULT_SEARCH_MEMORY_MB);
  t.same(tiny.problems, [], 'within the budget, and counted = cache entries + free buffers, after every search');
  t.same(large.problems, []);
  t.ok(tiny.reused > 0, 'the tiny budget left free buffers to reuse');
  t.equal(tiny.answers.length, large.answers.length);
  let same = 0;
  for (let i = 0; i < tiny.answers.length; i++) if (tiny.answers[i] === large.answers[i]) same++;
  t.equal(same, tiny.answers.length, 'identical answers with a tiny and a large budget');
  t.equal(postingsPool.freeBytes, 0, 'the last reader closed: the pool is empty');
});
