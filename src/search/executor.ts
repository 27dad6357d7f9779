/**
 * Where searches run (main thread API). With `SITESIFT_SEARCH_THREADS` > 0 (the default)
 * searches run on a pool of search threads of their own — separate from the pool that builds
 * and merges segments, so a long merge never queues a search — and the main thread only parses
 * requests, pins a generation and writes the answer. With 0 they run on the main thread.
 * Both return the same {@link SearchOutcome}; src/search/remote.ts explains the thread protocol.
 * The executor caches no answers: the search services (src/search/service.ts, suggest.ts) do.
 */
import type { Worker } from 'node:worker_threads';
import { type IndexSnapshot, type ThreadCacheUsage, setThreadCacheShare } from '../index/index.js';
import { AppError, searchThreadHeapLimitMb, startThread, type Settings, type SearchThreadShare, DEFAULT_SEARCH_MEMORY_MB } from '../core/index.js';
import { searchAnswer, snapshotSpec, type RemoteSearchResult, type SearchReply, type SearchRequest } from './remote.js';
import type { SearchParams } from './results.js';
import { objectId } from './object-id.js';

/** A finished search: the response body as JSON and the parts the route reads. */
export type SearchOutcome = RemoteSearchResult;

/**
 * Runs searches over pinned snapshots. The caller keeps the snapshot pinned until it settles.
 *
 * @example
 * const executor = createSearchExecutor(2);
 * const snap = index.acquire();
 * const outcome = await executor.run(index, snap, settings, params).finally(() => snap.release());
 */
export interface SearchExecutor {
  /** `owner` is the project's index object (keys per-project caches). */
  run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome>;
  /**
   * Has an idle search thread load what the first search of `snap` reads (doc values, typo
   * lookups, vectors of embedder `fp`: src/search/remote.ts `warmSnapshot`). Resolves false at
   * once when no thread is idle (a warm never queues before a search) and on the main thread
   * (it would block requests); true once warmed. The caller keeps the snapshot pinned until it
   * settles.
   */
  warm(owner: object, snap: IndexSnapshot, settings: Settings, fp: string | null): Promise<boolean>;
  /** Threads in use (0: the main thread). */
  readonly threads: number;
  /** What each search thread's caches and heap hold now (none without threads: see the main thread's). */
  memory(): Promise<ThreadCacheUsage[]>;
  close(): Promise<void>;
}

/** Searches on the calling (main) thread. */
export class LocalSearchExecutor implements SearchExecutor {
  readonly threads = 0;

  async run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome> {
    return searchAnswer(snap, settings, params, owner);
  }

  async warm(): Promise<boolean> {
    return false;
  }

  async memory(): Promise<ThreadCacheUsage[]> {
    return [];
  }

  async close(): Promise<void> {}
}

interface Pending {
  /** The request without settings and snapshot (sent when the thread may lack them). */
  req: SearchRequest;
  settings: Settings;
  snap: IndexSnapshot;
  resolve: (r: SearchOutcome) => void;
  reject: (e: Error) => void;
  /** Already resent with settings and snapshot after a `missing` reply. */
  full: boolean;
}

interface SearchThread {
  worker: Worker;
  /** The request it works on (one at a time). */
  busy: Pending | null;
  /** Settings ids and `owner:generation` keys sent to it (it may have dropped them since). */
  sentSettings: Set<number>;
  sentSnapshots: Set<string>;
}

/** Threads restarted after losses in a row (no answer in between) before giving up. */
const MAX_RESPAWNS = 5;

/** Remembered sent keys per thread before the sets are cleared (they only save resends). */
const SENT_KEYS = 256;

/**
 * Searches on `threads` search threads of its own (`worker_threads`, workers/search.ts),
 * separate from the pool that builds and merges segments, so a long merge never queues a
 * search and the main thread only parses requests, pins a generation and writes the answer.
 *
 * Hand-off (main thread): a request goes to an idle thread — the one that became idle most
 * recently — or waits in one FIFO queue; each thread has at most one in flight, so a slow search
 * never holds up a queued one while another thread is idle. Searches that come one at a time (a
 * quiet site, a poll) thus all run on one thread, which alone opens the generation's segment
 * readers (typo tries, doc values: ≈ 2–3 MB per segment at 100k documents) and keeps its caches
 * warm; the others join only under concurrency, and readers they stop using are closed by their
 * idle sweep (src/search/remote.ts). Taking the thread idle longest instead would make every
 * thread open every segment of a poll's generation. Which thread answers is not visible in the
 * answer. Settings and snapshot specs are sent once per thread (src/search/remote.ts). Plain
 * messages rather than Piscina tasks: a Piscina round trip costs several times the process CPU
 * of a message pair. A thread that dies is replaced; its request fails (a 500).
 */
export class ThreadSearchExecutor implements SearchExecutor {
  private readonly all: SearchThread[] = [];
  /** Idle threads in the order they became idle: the last one is taken first (LIFO). */
  private readonly idle: SearchThread[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closing = false;
  /** Threads lost since the last answer; past {@link MAX_RESPAWNS} none are started again. */
  private lostInARow = 0;
  /** Why searches fail at once: every thread was lost and none restarted. */
  private broken: Error | null = null;
  private drained: (() => void) | null = null;
  /** Answers of the threads to a {@link memory} request, by request number. */
  private readonly memoryWaiters = new Map<number, (u: ThreadCacheUsage) => void>();

  /**
   * `share`: each thread's cache share of the memory plan (engine caches, src/index/budgets.ts,
   * and its segment connections' page caches); `openProjects`: generations each thread keeps
   * open (SITESIFT_OPEN_PROJECTS).
   */
  constructor(
    readonly threads: number,
    private readonly share: SearchThreadShare = DEFAULT_THREAD_SHARE,
    private readonly openProjects?: number,
  ) {
    for (let i = 0; i < threads; i++) this.spawn();
  }

  run(owner: object, snap: IndexSnapshot, settings: Settings, params: SearchParams): Promise<SearchOutcome> {
    if (this.closing) return Promise.reject(new Error('search threads are closing'));
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      const req: SearchRequest = { id: this.nextId++, settingsId: objectId(settings), owner: objectId(owner), generation: snap.generation, params };
      const p: Pending = { req, settings, snap, resolve, reject, full: false };
      const t = this.idle.pop();
      if (t) this.send(t, p);
      else this.queue.push(p);
    });
  }

  warm(owner: object, snap: IndexSnapshot, settings: Settings, fp: string | null): Promise<boolean> {
    if (this.closing || this.broken || this.queue.length > 0) return Promise.resolve(false);
    const t = this.idle.pop();
    if (!t) return Promise.resolve(false);
    return new Promise<boolean>((resolve, reject) => {
      const req: SearchRequest = { id: this.nextId++, settingsId: objectId(settings), owner: objectId(owner), generation: snap.generation, params: WARM_PARAMS, warm: { fp } };
      this.send(t, { req, settings, snap, resolve: () => resolve(true), reject, full: false });
    });
  }

  /**
   * Asks every thread for its {@link ThreadCacheUsage}; a thread answers between two searches.
   * A thread that does not answer within 5 s (stuck on a search, or lost) is left out.
   */
  async memory(): Promise<ThreadCacheUsage[]> {
    const answers = await Promise.all(
      this.all.map(
        (t) =>
          new Promise<ThreadCacheUsage | null>((resolve) => {
            const id = this.nextId++;
            const timer = setTimeout(() => {
              this.memoryWaiters.delete(id);
              resolve(null);
            }, 5000);
            this.memoryWaiters.set(id, (u) => {
              clearTimeout(timer);
              this.memoryWaiters.delete(id);
              resolve(u);
            });
            t.worker.postMessage({ memory: id });
          }),
      ),
    );
    return answers.filter((u): u is ThreadCacheUsage => u !== null);
  }

  /** Lets searches already queued finish (their pins are released by their requests), then stops. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.queue.length > 0 || this.all.some((t) => t.busy)) await new Promise<void>((r) => (this.drained = r));
    await Promise.all(this.all.map((t) => t.worker.terminate()));
  }

  private spawn(): SearchThread {
    const worker = startThread(
      import.meta.url,
      '../../workers/search',
      { workerData: { searchMemoryMb: this.share.engineMb, pageCacheMb: this.share.pageCacheMb, openProjects: this.openProjects } },
      // Only a share from the memory plan caps the heap (the default share is no budget).
      this.share === DEFAULT_THREAD_SHARE ? undefined : searchThreadHeapLimitMb(this.share),
    );
    const t: SearchThread = { worker, busy: null, sentSettings: new Set(), sentSnapshots: new Set() };
    worker.on('message', (reply: SearchReply | { memory: number; usage: ThreadCacheUsage }) => {
      if ('memory' in reply) this.memoryWaiters.get(reply.memory)?.(reply.usage);
      else this.settle(t, reply);
    });
    worker.on('error', (err) => this.lost(t, err));
    worker.on('exit', (code) => this.lost(t, new Error(`search thread exited with code ${code}`)));
    // An idle thread does not keep the process alive (close() terminates them).
    worker.unref();
    this.all.push(t);
    this.idle.push(t);
    return t;
  }

  private send(t: SearchThread, p: Pending): void {
    t.busy = p;
    const snapKey = `${p.req.owner}:${p.req.generation}`;
    let msg: SearchRequest = p.req;
    if (p.full || !t.sentSettings.has(p.req.settingsId) || !t.sentSnapshots.has(snapKey)) {
      msg = { ...p.req, settings: p.settings, snapshot: snapshotSpec(p.snap, p.req.owner) };
      if (t.sentSettings.size >= SENT_KEYS) t.sentSettings.clear();
      if (t.sentSnapshots.size >= SENT_KEYS) t.sentSnapshots.clear();
      t.sentSettings.add(p.req.settingsId);
      t.sentSnapshots.add(snapKey);
    }
    // Referenced while a search is in flight, so its answer is handled.
    t.worker.ref();
    t.worker.postMessage(msg);
  }

  private settle(t: SearchThread, reply: SearchReply): void {
    const p = t.busy;
    if (!p || p.req.id !== reply.id) return;
    if ('missing' in reply && !p.full) {
      // The thread dropped the generation or settings: same thread, everything included.
      p.full = true;
      this.send(t, p);
      return;
    }
    t.busy = null;
    this.lostInARow = 0;
    if ('result' in reply) p.resolve(reply.result);
    else if ('error' in reply) {
      const e = reply.error;
      p.reject(e.code ? new AppError(e.code, e.message, e.field) : Object.assign(new Error(e.message), { stack: e.stack }));
    }
    else p.reject(new Error('search thread lacks the settings or generation it was sent'));
    this.next(t);
  }

  private next(t: SearchThread): void {
    const p = this.queue.shift();
    if (p) return this.send(t, p);
    t.worker.unref();
    this.idle.push(t);
    if (this.drained && !this.all.some((x) => x.busy)) this.drained();
  }

  private lost(t: SearchThread, err: Error): void {
    const i = this.all.indexOf(t);
    if (i < 0) return;
    this.all.splice(i, 1);
    const j = this.idle.indexOf(t);
    if (j >= 0) this.idle.splice(j, 1);
    const p = t.busy;
    t.busy = null;
    p?.reject(err);
    if (this.closing) {
      if (this.drained && !this.all.some((x) => x.busy)) this.drained();
      return;
    }
    void t.worker.terminate();
    // A thread that cannot start (a broken build, no memory) would otherwise be restarted in a
    // tight loop: after a few losses without a single answer, stop and fail searches instead.
    if (++this.lostInARow > MAX_RESPAWNS) {
      if (this.all.length === 0) {
        this.broken = new Error(`search threads keep failing: ${err.message}`);
        for (const q of this.queue.splice(0)) q.reject(this.broken);
      }
      return;
    }
    const fresh = this.spawn();
    // spawn() listed it as idle (last); next() gives it the queue's head or lists it again.
    this.idle.pop();
    this.next(fresh);
  }
}

/** Parameters a warm request carries (not read: a warm runs no search). */
const WARM_PARAMS: SearchParams = {
  query: '', filters: [], filterOptions: false, sort: null, sortOrder: 'ASC', offset: 0, limit: 0, includeContent: false,
  highlightQueryTerms: false, includeContentGroups: null, excludeContentGroups: null, groupResults: false, limitPerGroup: false,
};

/** A searching thread's caches when no memory plan sizes them (tests, tools). */
const DEFAULT_THREAD_SHARE: SearchThreadShare = { engineMb: DEFAULT_SEARCH_MEMORY_MB, pageCacheMb: 16, shareMb: DEFAULT_SEARCH_MEMORY_MB + 16 };

/**
 * The executor for `threads` (0: the main thread), each searching thread with `share` of the
 * memory plan for its caches. With 0 the calling thread searches and takes `share` itself;
 * with threads it keeps its own settings (the server sets the main thread's from its plan).
 */
export function createSearchExecutor(threads: number, share: SearchThreadShare = DEFAULT_THREAD_SHARE, openProjects?: number): SearchExecutor {
  if (threads === 0) setThreadCacheShare(share);
  return threads > 0 ? new ThreadSearchExecutor(threads, share, openProjects) : new LocalSearchExecutor();
}
