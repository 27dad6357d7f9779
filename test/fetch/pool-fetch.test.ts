/**
 * Batched pool fetches (src/fetch/pool-fetch.ts) against a fake pool the test drives by hand:
 * pages handed out together become one batch per thread, at most `threads` batches are in
 * flight, results stream back per page, and a failed pool task rejects only the pages still
 * unanswered. (A real worker thread: test/workers/fetch-extract.test.ts.)
 */
import t from 'tap';
import type { MessagePort } from 'node:worker_threads';
import { batchedPoolFetch, type BatchMessage, type FetchPool } from '../../src/fetch/pool-fetch.js';
import type { FetchExtractResult, FetchExtractTask } from '../../src/fetch/page.js';

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

interface Sent {
  urls: string[];
  port: MessagePort;
  transferred: boolean;
  done: () => void;
  fail: (err: Error) => void;
}

function fakePool(t: { teardown(fn: () => void): void }): FetchPool & { sent: Sent[] } {
  const sent: Sent[] = [];
  // Batches left open by a test: closing their channels lets the process end.
  t.teardown(() => sent.forEach((s) => s.port.close()));
  return {
    sent,
    run(payload, opts) {
      return new Promise<unknown>((resolve, reject) => {
        const port = payload.port as MessagePort;
        sent.push({
          urls: (payload.batch as FetchExtractTask[]).map((x) => x.url),
          port,
          transferred: !!opts?.transferList?.includes(port),
          done: () => resolve({ pages: (payload.batch as unknown[]).length }),
          fail: reject,
        });
      });
    },
  };
}

const task = (url: string): FetchExtractTask => ({ url, userAgent: 'test', timeoutMs: 1000, maxBytes: 1000, allowPrivate: true, rules: null });
const result = (url: string): FetchExtractResult => ({ kind: 'failure', url, status: 404, message: 'HTTP 404', hops: [], retryable: false });
const answer = (s: Sent, i: number) => s.port.postMessage({ i, result: result(s.urls[i]!) } satisfies BatchMessage);

/** Resolves when `p` has settled, without waiting for it otherwise. */
function state<T>(p: Promise<T>): { settled: boolean; value?: T; error?: Error } {
  const s: { settled: boolean; value?: T; error?: Error } = { settled: false };
  p.then(
    (v) => Object.assign(s, { settled: true, value: v }),
    (e: Error) => Object.assign(s, { settled: true, error: e }),
  );
  return s;
}

t.test('pages of one pass become one batch per thread; more wait for a free thread', async (t) => {
  const pool = fakePool(t);
  const runFetch = batchedPoolFetch(pool, { threads: 2, maxBatch: 8 });
  const first = Array.from({ length: 6 }, (_, i) => state(runFetch(task(`http://h/${i}`))));
  t.equal(pool.sent.length, 0, 'nothing is sent in the turn the pages are handed out');
  await nextTurn();
  t.same(
    pool.sent.map((s) => s.urls.length),
    [3, 3],
    'six pages, two threads: two batches of three',
  );
  t.ok(pool.sent.every((s) => s.transferred), 'each batch port is transferred to the worker');

  // Both threads busy: new pages wait here, whatever their number.
  const later = Array.from({ length: 20 }, (_, i) => state(runFetch(task(`http://h/later${i}`))));
  await nextTurn();
  t.equal(pool.sent.length, 2, 'no third batch while two are in flight');

  // Results stream: a page is answered before its batch has finished.
  answer(pool.sent[0]!, 1);
  await nextTurn();
  t.ok(first[1]!.settled && first[1]!.value?.url === 'http://h/1', 'page answered as soon as its message arrives');
  t.notOk(first[0]!.settled, 'the other pages of the batch are still open');

  for (const i of [0, 2]) answer(pool.sent[0]!, i);
  pool.sent[0]!.done();
  await nextTurn();
  await nextTurn();
  t.equal(pool.sent.length, 3, 'a finished batch makes room for the next one');
  t.equal(pool.sent[2]!.urls.length, 8, 'the waiting pages go in batches of at most maxBatch');
  t.same(pool.sent[2]!.urls.slice(0, 2), ['http://h/later0', 'http://h/later1'], 'in the order they were handed out');
  t.ok(first.slice(0, 3).every((s) => s.settled));
  t.notOk(later[0]!.settled);
});

t.test('a failed pool task rejects only the pages it had not answered', async (t) => {
  const pool = fakePool(t);
  const runFetch = batchedPoolFetch(pool, { threads: 1 });
  const pages = [0, 1, 2].map((i) => state(runFetch(task(`http://h/${i}`))));
  await nextTurn();
  t.equal(pool.sent.length, 1);
  answer(pool.sent[0]!, 0);
  await nextTurn();
  pool.sent[0]!.fail(new Error('worker crashed'));
  await nextTurn();
  t.equal(pages[0]!.value?.url, 'http://h/0', 'answered before the failure: its result stands');
  t.equal(pages[1]!.error?.message, 'worker crashed');
  t.equal(pages[2]!.error?.message, 'worker crashed');
  // The thread is free again: the next page gets a batch of its own.
  const next = state(runFetch(task('http://h/next')));
  await nextTurn();
  t.equal(pool.sent.length, 2);
  answer(pool.sent[1]!, 0);
  pool.sent[1]!.done();
  await nextTurn();
  t.equal(next.value?.url, 'http://h/next');
});

t.test('an error message for one page rejects that page only', async (t) => {
  const pool = fakePool(t);
  const runFetch = batchedPoolFetch(pool, { threads: 1 });
  const pages = [0, 1].map((i) => state(runFetch(task(`http://h/${i}`))));
  await nextTurn();
  pool.sent[0]!.port.postMessage({ i: 0, error: 'extractor bug' } satisfies BatchMessage);
  answer(pool.sent[0]!, 1);
  pool.sent[0]!.done();
  await nextTurn();
  await nextTurn();
  t.equal(pages[0]!.error?.message, 'extractor bug');
  t.equal(pages[1]!.value?.url, 'http://h/1');
});
