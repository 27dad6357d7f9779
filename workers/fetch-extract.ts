/**
 * Pool task: fetch one URL and extract it (HTML or a document). Runs in a Piscina worker
 * thread; politeness (robots.txt, delays, per-host concurrency) is decided on the main thread
 * before the task is submitted, so this task only fetches.
 *
 * Input {@link FetchExtractTask}, output {@link FetchExtractResult}; both structured-clonable.
 */
import { fetchAndExtract, type FetchExtractResult, type FetchExtractTask } from '../src/crawl/page.js';

export type { FetchExtractResult, FetchExtractTask };

/** The task entry point (the pool dispatcher calls it with the task payload). */
export default function fetchExtract(task: FetchExtractTask): Promise<FetchExtractResult> {
  return fetchAndExtract(task);
}

export { fetchExtract };
