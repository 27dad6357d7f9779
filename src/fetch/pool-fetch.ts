/**
 * Fetches through the worker pool in batches (main thread): the `runFetch` of a running server.
 *
 * Why: the pool runs one task per thread at a time (Piscina's default), and a fetch spends most
 * of its time waiting for the network. With one pool task per page, a thread would sit idle
 * during every request, so at most one request per thread would be in flight however many
 * fetch slots the crawler granted, and every page would pay a full task round trip. Here the pages the scheduler
 * hands out are collected and sent as one `fetch-extract` task per thread: the worker fetches
 * them concurrently and extracts each as its response arrives.
 *
 * Results stream back: each page's result is posted on a MessagePort of its own batch as soon
 * as it is extracted, so a slow page holds up neither the other pages' index writes nor their
 * fetch and host slots (those are freed per page by the dispatcher, src/crawl/dispatch.ts).
 *
 * Invariants:
 * - At most `threads` batches are in flight (submitted and not yet finished); pages handed out
 *   meanwhile wait here and form the next batch, so a batch never queues behind another batch
 *   in the pool (segment builds and merges may still run between batches).
 * - Each `runFetch` promise settles exactly once: with its page's result, or rejected when the
 *   batch's pool task failed before that page's result arrived (a crashed thread).
 * - Batches split the waiting pages evenly over the free threads, at most `maxBatch` each, so
 *   both threads get pages to extract.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { FetchExtractResult, FetchExtractTask } from './page.js';

/** What the batcher needs of a pool (Piscina's `run`); tests pass a fake. */
export interface FetchPool {
  run(payload: Record<string, unknown>, opts?: { transferList?: MessagePort[] }): Promise<unknown>;
}

/** The `fetch-extract` pool task payload for several pages (see workers/fetch-extract.ts). */
export interface FetchExtractBatch {
  batch: FetchExtractTask[];
  /** Where each page's {@link BatchMessage} is posted as soon as it is done; without it the task returns the results in order. */
  port?: MessagePort;
}

/** One page's outcome, posted on the batch's port. */
export type BatchMessage = { i: number; result: FetchExtractResult } | { i: number; error: string };

export interface PoolFetchOptions {
  /** Pool threads (SITESIFT_WORKERS): batches in flight at once. */
  threads: number;
  /** Pages per batch at most (default 8). */
  maxBatch?: number;
}

interface Waiting {
  task: FetchExtractTask;
  resolve: (r: FetchExtractResult) => void;
  reject: (err: Error) => void;
}

/**
 * Returns a `runFetch` for {@link CrawlService} that runs pages in the pool in batches (see the
 * module comment). Pages handed out in one scheduler pass go together: the first batch is sent
 * on the next turn of the event loop.
 */
export function batchedPoolFetch(pool: FetchPool, opts: PoolFetchOptions): (task: FetchExtractTask) => Promise<FetchExtractResult> {
  const threads = Math.max(1, opts.threads);
  const maxBatch = Math.max(1, opts.maxBatch ?? 8);
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let flushQueued = false;

  const queueFlush = (): void => {
    if (flushQueued || !waiting.length || inFlight >= threads) return;
    flushQueued = true;
    // Next turn: the scheduler hands out all of a pass's pages before the batch is cut.
    setImmediate(flush);
  };

  function flush(): void {
    flushQueued = false;
    while (waiting.length && inFlight < threads) {
      const size = Math.min(maxBatch, Math.ceil(waiting.length / (threads - inFlight)));
      send(waiting.slice(0, size));
      waiting = waiting.slice(size);
    }
  }

  function send(items: Waiting[]): void {
    inFlight++;
    const { port1, port2 } = new MessageChannel();
    const settled = new Array<boolean>(items.length).fill(false);
    let left = items.length;
    const settle = (i: number, fn: () => void): void => {
      if (settled[i]) return;
      settled[i] = true;
      fn();
      if (--left === 0) port1.close();
    };
    port1.on('message', (m: BatchMessage) => {
      const item = items[m.i];
      if (!item) return;
      if ('result' in m) settle(m.i, () => item.resolve(m.result));
      else settle(m.i, () => item.reject(new Error(m.error)));
    });
    const payload: Record<string, unknown> = { task: 'fetch-extract', batch: items.map((w) => w.task), port: port2 };
    pool.run(payload, { transferList: [port2] }).then(
      // Every result was posted before the task returned; those not read yet are on their way.
      () => undefined,
      (err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        items.forEach((item, i) => settle(i, () => item.reject(e)));
      },
    ).finally(() => {
      inFlight--;
      queueFlush();
    });
  }

  return (task) =>
    new Promise<FetchExtractResult>((resolve, reject) => {
      waiting.push({ task, resolve, reject });
      queueFlush();
    });
}
