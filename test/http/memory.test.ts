/**
 * One memory budget (SITESIFT_MEMORY_MB, src/core/memory.ts): a running server sizes every cache
 * of every thread from its share of the budget and `GET /admin/memory` reports the split and
 * what each cache holds (master key only).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { planMemory, searchThreadHeapLimitMb, WORD_VECTORS_MB } from '../../src/core/memory.js';
import { writeFixtureWordVectors } from '../helpers/word-vectors.js';
import { api, startTestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;

t.test('every cache is sized from its share of the budget, and the split is reported', async (t) => {
  const s = await startTestServer({ t, env: { SITESIFT_MEMORY_MB: '400', SITESIFT_SEARCH_THREADS: '2', SITESIFT_WORKERS: '1' } });
  const plan = planMemory({ memoryMb: 400, searchThreads: 2, workers: 1 });
  t.same(s.services.memory, plan, 'the server runs the plan of its configuration');

  // Main thread: the answer caches take their share, not fixed sizes.
  t.equal(s.services.search.cache.maxBytes, Math.floor(plan.main.searchAnswersMb * MiB), 'search answers: their share');
  t.equal(s.services.suggest.cache.maxBytes, Math.floor(plan.main.suggestAnswersMb * MiB), 'suggest answers: their share');

  // Some searches, so the search threads open segment readers and fill caches.
  const docs = Array.from({ length: 30 }, (_, i) => ({ url: `https://example.com/p${i}`, title: `Page ${i} about memory`, content: `budget cache thread ${i} share split` }));
  const push = await api(s.url, '/sites/pagesJson?refresh=true', { method: 'POST', token: s.token, json: docs });
  t.equal(push.status, 200);
  for (const q of ['memory', 'budget', 'cache thread', 'share']) t.equal((await api(s.url, `/sites?site=default&query=${encodeURIComponent(q)}&includeContent=true`)).status, 200);

  const r = await api(s.url, '/admin/memory', { token: s.masterKey });
  t.equal(r.status, 200);
  t.equal(r.body.budgetMb, 400);
  t.ok(r.body.rssMb > 0, 'the process resident set is reported');
  t.same(r.body.plan, plan);
  const threads = r.body.threads as Array<Record<string, any>>;
  t.same(threads.map((x) => x.thread), ['main', 'search 1', 'search 2', 'pool × 1'], 'main, each search thread, the pool');
  const main = threads[0]!;
  t.equal(main.shareMb, plan.main.totalMb);
  t.equal(main.searchAnswers.budgetMb, plan.main.searchAnswersMb);
  t.ok(main.searchAnswers.entries >= 1, 'the answers are counted');
  t.equal(main.queryLog.pageCaches.budgetMb, plan.main.queryLogMb, 'the query log page caches: their share');
  const share = plan.searchThreads.share!;
  for (const th of threads.slice(1, 3)) {
    t.equal(th.shareMb, plan.searchThreads.eachTotalMb);
    const engine = th.engine.postings.budgetMb + th.engine.cards.budgetMb;
    t.ok(Math.abs(engine - share.engineMb) < 0.3, `${th.thread}: engine caches sized to its share (${engine} of ${share.engineMb} MB)`);
    t.ok(Math.abs(th.readerPageCaches.budgetMb - share.pageCacheMb) < 0.2, `${th.thread}: segment page caches sized to its share`);
    t.ok(th.heap.usedMb > 0);
    // V8 reports the limit with its own overheads (young generation, large objects): within 64 MB.
    const limit = searchThreadHeapLimitMb(share);
    t.ok(th.heap.limitMb >= limit && th.heap.limitMb < limit + 64, `${th.thread}: V8 heap capped near twice its share (${th.heap.limitMb} MB, cap ${limit})`);
  }
  const searched = threads.slice(1, 3).find((th) => th.readerPageCaches.connections > 0);
  t.ok(searched, 'a search thread opened segment readers');
  t.ok(searched!.readerPageCaches.eachKb * searched!.readerPageCaches.connections <= Math.max(share.pageCacheMb * 1024, 128 * searched!.readerPageCaches.connections), 'its readers stay within their page-cache share');

  t.equal((await api(s.url, '/admin/memory', { token: s.token })).status, 403, 'a project key may not read it');
  t.equal((await api(s.url, '/admin/memory')).status, 401);
});

t.test('the word vectors are one part of the budget, loaded once and used by the pool threads that embed', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-memwv-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const table = writeFixtureWordVectors(dir);
  const s = await startTestServer({ t, env: { SITESIFT_MEMORY_MB: '512', SITESIFT_SEARCH_THREADS: '1', SITESIFT_WORKERS: '1', SITESIFT_WORD_VECTORS: table } });
  t.equal(s.services.memory.base.wordVectorsMb, WORD_VECTORS_MB, 'the plan reserves the table once');
  const docs = [
    { url: 'https://example.com/undo', title: 'Rollback', content: 'revert changes after a mistake' },
    { url: 'https://example.com/cake', title: 'Chocolate cake', content: 'a recipe' },
  ];
  t.equal((await api(s.url, '/sites/pagesJson?refresh=true', { method: 'POST', token: s.token, json: docs })).status, 200);
  const r = await api(s.url, `/sites?site=default&query=${encodeURIComponent('undo mistake')}`);
  t.equal(r.status, 200);
  t.match(r.body.semantic, { lexicalOnlyDocuments: 0 }, 'the pool thread embedded the pages with the table');
  const m = await api(s.url, '/admin/memory', { token: s.masterKey });
  t.same(m.body.threads[0].wordVectors, { budgetMb: WORD_VECTORS_MB, usedMb: 0 }, 'reported with the main thread (the fixture is under 0.05 MB)');
});
