/**
 * A search node's query-log outbox (src/analytics/outbox.ts) while the primary is unreachable
 * for over an hour: every push fails, the wait between attempts doubles from `retryMs` up to
 * MAX_BACKOFF_MS and stays there, nothing is dropped, and once the primary answers again every
 * entry goes out, in order, once. The outbox's timers are captured (not slept through): each
 * wait is the delay it asked for, and the test runs the next attempt itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { QueryLogOutbox, type ForwardedLogEntry } from '../../src/analytics/index.js';
import { MAX_BACKOFF_MS } from '../../src/analytics/outbox.js';

t.test('an hour without the primary: backoff capped at a minute, nothing lost, everything sent once when it is back', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-outbox-hour-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  // The outbox's own timers are queued here with their delays; every other timer runs as usual.
  const realSetTimeout = globalThis.setTimeout;
  const queued: Array<{ fn: () => void; ms: number }> = [];
  globalThis.setTimeout = ((fn: () => void, ms?: number, ...rest: unknown[]) => {
    if (new Error().stack?.includes('outbox.ts')) {
      queued.push({ fn, ms: ms ?? 0 });
      return { unref() {}, ref() {} } as unknown as NodeJS.Timeout;
    }
    return realSetTimeout(fn, ms, ...rest);
  }) as typeof setTimeout;
  t.teardown(() => {
    globalThis.setTimeout = realSetTimeout;
  });

  let primaryUp = false;
  const delivered: Array<{ batchId: string; entries: ForwardedLogEntry[] }> = [];
  const attempts: string[] = [];
  const fakeFetch = (async (_url: unknown, init?: RequestInit) => {
    const body = JSON.parse(String(init!.body)) as { batchId: string; entries: ForwardedLogEntry[] };
    attempts.push(body.batchId);
    if (!primaryUp) throw new TypeError('fetch failed: ECONNREFUSED');
    // The primary counts an id once (src/http/cluster.ts); here: record the first delivery only.
    if (!delivered.some((d) => d.batchId === body.batchId)) delivered.push(body);
    return new Response(JSON.stringify({ status: 'success', batchId: body.batchId, accepted: body.entries.length, duplicate: false }), { status: 200 });
  }) as typeof fetch;

  const box = new QueryLogOutbox({ dataDir: dir, primaryUrl: 'http://primary.invalid', nodeKey: 'ssn_test', fetch: fakeFetch, batchSize: 4, intervalMs: 2000, retryMs: 1000 });
  t.teardown(() => box.close());
  const added: string[] = [];
  const add = (i: number) => {
    const query = `hour query ${i}`;
    added.push(query);
    box.add({ kind: 'search', site: 'default', at: 1_700_000_000_000 + i, query, results: 1, filters: null, sort: null, visitor: 'v' });
  };
  for (let i = 0; i < 6; i++) add(i);

  /** Runs the outbox's next timer and waits for its push to settle (and the next timer to be set). */
  const step = async (): Promise<number> => {
    const next = queued.shift();
    if (!next) throw new Error('the outbox set no timer');
    next.fn();
    await box.pushOnce();
    await new Promise((r) => setImmediate(r));
    return next.ms;
  };

  box.start();
  t.equal(await step(), 2000, 'the first push after the push interval');
  const waits: number[] = [];
  let downMs = 0;
  while (downMs < 3_600_000) {
    const ms = await step();
    waits.push(ms);
    downMs += ms;
    // Searches keep arriving while the primary is away.
    if (waits.length % 10 === 0) add(100 + waits.length);
  }
  t.same(waits.slice(0, 7), [1000, 2000, 4000, 8000, 16000, 32000, MAX_BACKOFF_MS], 'the wait doubles after each failure');
  t.ok(waits.slice(6).every((ms) => ms === MAX_BACKOFF_MS), 'and stays at the cap');
  t.equal(new Set(attempts).size, 1, 'every attempt resent the same batch id');
  t.equal(box.pending, added.length, `after ${Math.round(downMs / 60_000)} minutes down, every entry is still queued`);

  primaryUp = true;
  const queuedBefore = queued.length;
  t.equal(queuedBefore, 1, 'one timer pending');
  t.ok(queued[0]!.ms <= MAX_BACKOFF_MS, 'the primary is tried again within a minute');
  while (box.pending > 0) await step();
  t.same(delivered.flatMap((d) => d.entries.map((e) => (e as { query: string }).query)), added, 'every entry sent, in order, once');
  t.equal(delivered[0]!.batchId, attempts[0], 'the first batch under the id it was retried with');
});
