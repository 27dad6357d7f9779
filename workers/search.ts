/**
 * A search thread (a `worker_threads` Worker started by {@link ThreadSearchExecutor} in
 * src/search/executor.ts; not a Piscina task): answers `GET /sites` searches from segment files
 * the main thread has pinned, one {@link SearchRequest} at a time, with a {@link SearchReply}.
 * See src/search/remote.ts for the protocol and why results equal a main-thread search. Its
 * {@link SearchThreadState} keeps readers, their caches and the settings warm between requests.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { setSearchMemoryMb } from '../src/search/budgets.js';
import { IDLE_SNAPSHOT_MS, RETIRED_CHECK_MS, SearchThreadState, type SearchRequest } from '../src/search/remote.js';

// Engine cache memory of this thread (SITESIFT_SEARCH_MEMORY_MB, sent by the executor).
const memoryMb = (workerData as { searchMemoryMb?: number } | null)?.searchMemoryMb;
if (memoryMb) setSearchMemoryMb(memoryMb);

/**
 * A full GC of this thread's heap. Closed readers leave their doc values and typo tries (tens of
 * MB at 100k documents) as garbage, and an idle thread allocates nothing, so V8 would keep them
 * until some later GC — through a whole full merge at the end of an import. The `gc` function
 * is taken once from a context created while `--expose-gc` is on; the flag is turned off again
 * at once (it only affects contexts created meanwhile; V8 flags are process-wide).
 */
function exposeGc(): () => void {
  const own = (globalThis as { gc?: () => void }).gc;
  if (typeof own === 'function') return own;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
const collect = exposeGc();

const state = new SearchThreadState();
// Close generations nobody searched for a while, so deleted segment files are not held open.
setInterval(() => {
  if (state.sweep() > 0) collect();
}, IDLE_SNAPSHOT_MS).unref();
// Close the readers of segments a merge replaced as soon as the main thread retires them.
setInterval(() => {
  if (state.dropRetired() > 0) collect();
}, RETIRED_CHECK_MS).unref();

parentPort!.on('message', (req: SearchRequest) => {
  parentPort!.postMessage(state.handle(req));
});
