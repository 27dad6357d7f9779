/**
 * A search thread (a `worker_threads` Worker started by {@link ThreadSearchExecutor} in
 * src/search/executor.ts; not a Piscina task): answers `GET /sites` searches from segment files
 * the main thread has pinned, one {@link SearchRequest} at a time, with a {@link SearchReply}.
 * See src/search/remote.ts for the protocol and why results equal a main-thread search. Its
 * {@link SearchThreadState} keeps readers, their caches and the settings warm between requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { setSearchMemoryMb, setThreadCacheShare, threadCacheUsage } from '../src/index/index.js';
import { IDLE_SNAPSHOT_MS, SearchThreadState, type SearchRequest } from '../src/search/index.js';

// This thread's share of the memory plan (src/core/memory.ts, sent by the executor).
const data = workerData as { searchMemoryMb?: number; pageCacheMb?: number; openProjects?: number } | null;
if (data?.searchMemoryMb && data.pageCacheMb) setThreadCacheShare({ engineMb: data.searchMemoryMb, pageCacheMb: data.pageCacheMb });
else if (data?.searchMemoryMb) setSearchMemoryMb(data.searchMemoryMb);

// Open generations bounded like the main thread's open projects (SITESIFT_OPEN_PROJECTS).
const state = new SearchThreadState(Date.now, data?.openProjects ?? Infinity);
// Close generations nobody searched for a while, so deleted segment files are not held open.
setInterval(() => state.sweep(), IDLE_SNAPSHOT_MS).unref();

parentPort!.on('message', (req: SearchRequest | { memory: number }) => {
  // `GET /admin/memory` asks each thread what its caches and heap hold.
  if ('memory' in req) return parentPort!.postMessage({ memory: req.memory, usage: threadCacheUsage() });
  parentPort!.postMessage(state.handle(req));
});
