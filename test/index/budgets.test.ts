import t from 'tap';
import { DEFAULT_SEARCH_MEMORY_MB } from '../../src/core/index.js';
import { BufferPool, engineCacheBudget, engineCacheUsed, evictByClock, setSearchMemoryMb, sizeClass, type ClockEntry } from '../../src/index/budgets.js';

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

t.test('sizeClass: four classes per power of two, at least 256 bytes', async (t) => {
  t.same([1, 256, 257, 1024, 1025, 1280, 1281, 1536, 1792, 1793, 2048, 3000].map(sizeClass), [256, 256, 320, 1024, 1280, 1280, 1536, 1536, 1792, 2048, 2048, 3072]);
});

t.test('BufferPool: a buffer given back during a search is taken again only after it ends', async (t) => {
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  setSearchMemoryMb(64);
  const pool = new BufferPool();
  const used0 = engineCacheUsed.postings;
  pool.begin();
  const a = pool.take(5000);
  t.equal(a.byteLength, sizeClass(5000));
  t.ok(pool.isLent(a));
  pool.give(a);
  const b = pool.take(5000);
  t.not(b, a, 'not reused while the search that read it runs');
  t.equal(engineCacheUsed.postings, used0, "lent and retired buffers are the search's working memory, not counted yet");
  pool.end();
  t.equal(pool.freeBytes, a.byteLength + b.byteLength, 'both free when the search ends');
  t.equal(engineCacheUsed.postings, used0 + pool.freeBytes, 'free buffers count in the postings budget');
  pool.begin();
  const c = pool.take(4500);
  t.ok(c === a || c === b, 'a free buffer of the class is reused');
  const d = pool.take(4000);
  t.ok(d === a || d === b, 'or of a class up to two above');
  t.equal(pool.freeBytes, 0);
  pool.adopt(c);
  t.notOk(pool.isLent(c), 'adopted: a cache entry holds it');
  pool.end();
  t.equal(pool.freeBytes, d.byteLength, 'the unadopted one is free again');
  pool.clear();
  t.equal(engineCacheUsed.postings, used0);
});

t.test('BufferPool: free buffers stay within an eighth of the postings budget, the oldest dropped first', async (t) => {
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  setSearchMemoryMb(1);
  const cap = engineCacheBudget.postings / 8;
  const used0 = engineCacheUsed.postings;
  const pool = new BufferPool();
  pool.begin();
  const bufs = Array.from({ length: 12 }, () => pool.take(cap / 4));
  for (const b of bufs) pool.give(b);
  pool.end();
  t.ok(pool.freeBytes <= cap, `${pool.freeBytes} <= ${cap}`);
  t.ok(pool.freeBytes > 0);
  pool.begin();
  const again = pool.take(cap / 4);
  t.ok(bufs.slice(-4).includes(again), 'the newest free buffers were kept');
  pool.end();
  pool.clear();
  t.equal(engineCacheUsed.postings, used0);
});
