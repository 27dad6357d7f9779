/**
 * Search task (search threads): answers one `GET /sites` search from segment files the main
 * thread has pinned. See src/search/remote.ts for the protocol and why results are identical to
 * a main-thread search. One {@link ThreadSnapshots} per thread keeps readers warm between calls.
 */
import { IDLE_SNAPSHOT_MS, runRemoteSearch, ThreadSnapshots, type RemoteSearchResult, type RemoteSearchTask } from '../src/search/remote.js';

const cache = new ThreadSnapshots();
// Close generations nobody searched for a while, so deleted segment files are not held open.
setInterval(() => cache.sweep(), IDLE_SNAPSHOT_MS).unref();

export default async function searchTask(payload: Record<string, unknown>): Promise<RemoteSearchResult> {
  return runRemoteSearch(cache, payload as unknown as RemoteSearchTask);
}
