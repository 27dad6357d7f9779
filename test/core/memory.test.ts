import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { tempDataDir } from '../helpers/server.js';
import { DEFAULT_MEMORY_MB, MemoryPlanError, PageCacheShare, planMemory, searchThreadHeapLimitMb, THREAD_BASE_MB, WORD_VECTORS_MB, type MemoryPlan } from '../../src/core/memory.js';

/** Everything the plan gives out, added up from its parts. */
function given(p: MemoryPlan): number {
  const m = p.main;
  const mainSearch = m.search ? m.search.engineMb + m.search.pageCacheMb : 0;
  const each = p.searchThreads.share ? p.base.searchThreadMb + p.searchThreads.share.engineMb + p.searchThreads.share.pageCacheMb : 0;
  return p.base.mainMb + p.base.writerMb + p.base.wordVectorsMb + m.searchAnswersMb + m.suggestAnswersMb + m.queryLogMb + m.readersMb + mainSearch + p.searchThreads.count * each + p.poolThreads.count * p.base.poolThreadMb;
}

t.test('the default budget is split between the threads and every cache, and the parts fit in it', async (t) => {
  const p = planMemory({ memoryMb: DEFAULT_MEMORY_MB, searchThreads: 2, workers: 2 });
  t.equal(p.budgetMb, 512);
  t.equal(p.base.totalMb, THREAD_BASE_MB.main + 2 * THREAD_BASE_MB.search + 2 * THREAD_BASE_MB.pool + THREAD_BASE_MB.writer);
  const rest = 512 - p.base.totalMb;
  t.ok(p.main.searchAnswersMb > 0 && p.main.suggestAnswersMb > 0 && p.main.queryLogMb > 0 && p.main.readersMb > 0, 'the main thread has a share for each of its caches');
  t.equal(p.main.search, null, 'with search threads the main thread does not search');
  const share = p.searchThreads.share!;
  t.ok(share.engineMb > 0 && share.pageCacheMb > 0, 'each search thread: engine caches and page caches');
  t.ok(Math.abs(share.engineMb + share.pageCacheMb - (rest * 0.6) / 2) < 0.3, 'the search threads share 60% of what the bases leave');
  t.ok(given(p) <= 512, `all parts together (${given(p)} MB) fit in the budget`);
  t.ok(given(p) > 500, 'and the budget is used, not left idle');
  t.ok(Math.abs(p.plannedMb - given(p)) < 1, 'plannedMb is the sum of the parts');
});

t.test('the word vectors count once in the budget, not per thread, and shrink the cache shares', async (t) => {
  const without = planMemory({ memoryMb: 512, searchThreads: 2, workers: 2, wordVectors: 'none' });
  const one = planMemory({ memoryMb: 512, searchThreads: 2, workers: 2, wordVectors: '/srv/sitesift/dist/embeddings/sg100.wv' });
  const more = planMemory({ memoryMb: 2048, searchThreads: 8, workers: 8, wordVectors: '/srv/sitesift/dist/embeddings/sg100.wv' });
  t.equal(without.base.wordVectorsMb, 0, 'SITESIFT_WORD_VECTORS=none: nothing reserved');
  t.equal(one.base.wordVectorsMb, WORD_VECTORS_MB);
  t.equal(more.base.wordVectorsMb, WORD_VECTORS_MB, 'whatever the number of threads');
  t.equal(one.base.totalMb - without.base.totalMb, WORD_VECTORS_MB, 'part of the bases');
  t.ok(one.searchThreads.share!.engineMb < without.searchThreads.share!.engineMb, 'the caches get what is left');
  t.ok(given(one) <= 512 && Math.abs(one.plannedMb - given(one)) < 1, 'and the parts still fit the budget');
});

t.test('a bigger budget gives bigger caches; no search threads: the main thread takes a search share', async (t) => {
  const small = planMemory({ memoryMb: 512, searchThreads: 2, workers: 2 });
  const big = planMemory({ memoryMb: 2048, searchThreads: 2, workers: 2 });
  t.ok(big.main.searchAnswersMb > small.main.searchAnswersMb * 4);
  t.ok(big.searchThreads.share!.engineMb > small.searchThreads.share!.engineMb * 4);
  const local = planMemory({ memoryMb: 512, searchThreads: 0, workers: 1 });
  t.equal(local.searchThreads.share, null);
  t.ok(local.main.search && local.main.search.engineMb > 0, 'the main thread searches with its own engine share');
  t.ok(given(local) <= 512);
});

t.test('explicit cache sizes replace their shares and must fit', async (t) => {
  const p = planMemory({ memoryMb: 1024, searchThreads: 2, workers: 2, searchCacheMb: 0, searchMemoryMb: 100 });
  t.equal(p.main.searchAnswersMb, 0);
  t.equal(p.searchThreads.share!.engineMb, 100);
  t.ok(given(p) <= 1024);
  const settingOf = (fn: () => unknown) => {
    try {
      fn();
      return null;
    } catch (err) {
      return err instanceof MemoryPlanError ? err.setting : String(err);
    }
  };
  t.equal(settingOf(() => planMemory({ memoryMb: 512, searchThreads: 2, workers: 2, searchMemoryMb: 400 })), 'SITESIFT_SEARCH_MEMORY_MB', 'explicit engine caches over the budget');
  t.equal(settingOf(() => planMemory({ memoryMb: 200, searchThreads: 2, workers: 2 })), 'SITESIFT_MEMORY_MB', 'the bases alone do not fit');
});

t.test('configuration: SITESIFT_MEMORY_MB, its config file key, and plans that cannot be made', async (t) => {
  t.equal(loadConfig([], { SITESIFT_MEMORY_MB: '2048' }).memoryMb, 2048);
  t.equal(loadConfig(['--memory-mb', '768'], {}).memoryMb, 768);
  for (const env of [
    { SITESIFT_MEMORY_MB: '256', SITESIFT_WORKERS: '4', SITESIFT_SEARCH_THREADS: '4' },
    { SITESIFT_SEARCH_MEMORY_MB: '900', SITESIFT_SEARCH_THREADS: '1' },
    { SITESIFT_MEMORY_MB: '10' },
  ]) {
    t.throws(() => loadConfig([], env), ConfigError, JSON.stringify(env));
  }
  try {
    loadConfig([], { SITESIFT_MEMORY_MB: '256', SITESIFT_WORKERS: '4', SITESIFT_SEARCH_THREADS: '4' });
  } catch (err) {
    t.match((err as Error).message, /SITESIFT_MEMORY_MB=256 is below/, 'the message names the setting and what is needed');
  }
  // Thread counts left at their defaults shrink to fit a small budget instead of failing.
  const c = loadConfig([], { SITESIFT_MEMORY_MB: '300' });
  t.ok(c.workers >= 1 && c.searchThreads >= 1);
  t.ok(planMemory(c).plannedMb <= 300);
});

t.test('PageCacheShare: connections split one page-cache budget, re-applied as they come and go', async (t) => {
  const share = new PageCacheShare(1024, 128, 768);
  const dir = tempDataDir(t);
  const dbs = Array.from({ length: 5 }, (_, i) => new Database(path.join(dir, `${i}.db`)));
  t.teardown(() => dbs.forEach((d) => d.close()));
  const cacheKb = (d: Database.Database) => -(d.pragma('cache_size', { simple: true }) as number);
  share.add(dbs[0]!);
  t.equal(cacheKb(dbs[0]!), 768, 'one connection: capped per connection');
  t.equal(dbs[0]!.pragma('mmap_size', { simple: true }), 0, 'no memory-mapped I/O outside the budget');
  share.add(dbs[1]!);
  share.add(dbs[2]!);
  share.add(dbs[3]!);
  t.same(dbs.slice(0, 4).map(cacheKb), [256, 256, 256, 256], 'four: the budget split in equal parts');
  t.equal(dbs.slice(0, 4).reduce((a, d) => a + cacheKb(d), 0), 1024, 'together they stay within the budget');
  share.add(dbs[4]!);
  t.equal(cacheKb(dbs[0]!), 204, 'five: each part shrinks');
  share.delete(dbs[4]!);
  share.delete(dbs[3]!);
  t.equal(cacheKb(dbs[0]!), 341, 'closed connections give their part back');
  share.setTotalKb(96);
  t.equal(cacheKb(dbs[0]!), 128, 'a floor per connection');
});

t.test('a search thread\'s V8 heap limit follows its share', async (t) => {
  const share = planMemory({ memoryMb: 512, searchThreads: 2, workers: 2 }).searchThreads.share!;
  t.ok(searchThreadHeapLimitMb(share) >= Math.ceil(1.25 * (THREAD_BASE_MB.search + share.shareMb)), 'room above the base and share');
  t.ok(searchThreadHeapLimitMb(planMemory({ memoryMb: 4096, searchThreads: 2, workers: 2 }).searchThreads.share!) < 2 * (THREAD_BASE_MB.search + planMemory({ memoryMb: 4096, searchThreads: 2, workers: 2 }).searchThreads.share!.shareMb), 'but not twice it: V8 keeps its heap near the limit under load');
  t.equal(searchThreadHeapLimitMb({ engineMb: 4, pageCacheMb: 1, shareMb: 5 }), 128, 'never below 128 MB');
});
