import t from 'tap';
import { DEFAULT_SEARCH_MEMORY_MB } from '../../src/core/index.js';
import { engineCacheBudget, engineCacheUsed, evictByClock, setSearchMemoryMb, type ClockEntry } from '../../src/index/budgets.js';

t.test('evictByClock: down to 7/8 of the budget, recently used entries get a second chance', async (t) => {
  const saved = { ...engineCacheUsed };
  t.teardown(() => {
    setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB);
    Object.assign(engineCacheUsed, saved);
  });
  setSearchMemoryMb(1);
  const budget = engineCacheBudget.cards;
  const size = budget / 8;
  const entries = Array.from({ length: 10 }, (_, i): ClockEntry & { name: number } => ({ name: i, bytes: size, used: i === 0 || i === 2 }));
  const clock = new Set(entries);
  engineCacheUsed.cards = 10 * size;
  const dropped: number[] = [];
  evictByClock('cards', clock, (e) => dropped.push(e.name));
  t.same(dropped, [1, 3, 4], 'unused entries go in insertion order until 7/8 of the budget is left');
  t.equal(engineCacheUsed.cards, 7 * size);
  t.same([...clock].map((e) => e.name), [5, 6, 7, 8, 9, 0, 2], 'the spared entries moved to the back');
  t.notOk(entries[0]!.used, 'their second-chance bit is cleared');
  t.equal(engineCacheUsed.postings, saved.postings, 'other caches are untouched');
});
