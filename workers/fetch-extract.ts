/**
 * Pool task: fetch URLs and extract them (HTML or documents). Runs in a Piscina worker thread;
 * politeness (robots.txt, delays, per-host concurrency) is decided on the main thread before
 * the task is submitted, so this task only fetches.
 *
 * Two payload forms:
 * - one page, {@link FetchExtractTask} → its {@link FetchExtractResult};
 * - a batch ({@link FetchExtractBatch}, sent by `src/fetch/pool-fetch.ts`): the pages are fetched
 *   concurrently (a thread would otherwise idle while each request waits for the network) and
 *   each result is posted on `port` as a {@link BatchMessage} the moment it is extracted; the
 *   task resolves with the page count once all are posted. Without a port the results are
 *   returned in order instead.
 *
 * Everything crossing the thread boundary is structured-clonable.
 */
import { fetchAndExtract, type FetchExtractResult, type FetchExtractTask, type BatchMessage, type FetchExtractBatch } from '../src/fetch/index.js';

export type { FetchExtractResult, FetchExtractTask, FetchExtractBatch };

async function runBatch(b: FetchExtractBatch): Promise<{ pages: number } | FetchExtractResult[]> {
  const port = b.port;
  const results = await Promise.all(
    b.batch.map(async (task, i) => {
      let msg: BatchMessage;
      try {
        msg = { i, result: await fetchAndExtract(task) };
      } catch (err) {
        // fetchAndExtract answers every failure with a status; this is a bug, reported per page.
        msg = { i, error: (err as Error)?.message ?? String(err) };
      }
      port?.postMessage(msg);
      return msg;
    }),
  );
  if (port) {
    port.close();
    return { pages: results.length };
  }
  return results.map((m) => {
    if ('error' in m) throw new Error(m.error);
    return m.result;
  });
}

/** The task entry point (the pool dispatcher calls it with the task payload). */
export default function fetchExtract(payload: FetchExtractTask | FetchExtractBatch): Promise<FetchExtractResult | FetchExtractResult[] | { pages: number }> {
  if (Array.isArray((payload as FetchExtractBatch).batch)) return runBatch(payload as FetchExtractBatch);
  return fetchAndExtract(payload as FetchExtractTask);
}

export { fetchExtract };
