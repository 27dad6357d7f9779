/**
 * A read-only search node's view of a snapshot (main thread).
 *
 * The node polls the snapshot's `index.json`. For every project whose manifest changed it
 * fetches the manifest (checked against the hash in the index), fetches the blobs it lacks
 * into its cache (each checked against its hash; a temp file until it is) and opens the
 * generation from the cached files (node-index.ts): segments already open for an earlier
 * generation are reused with their readers and row columns, so a swap costs what changed,
 * and the search threads, given the same file paths, keep their caches. The tombstones are
 * derived with the primary's liveness rule and checked, with the document total, against the
 * manifest. Only a generation that passed every check is swapped in, in one assignment: a
 * request takes the project's view once, synchronously, and uses its settings, index and
 * query suggestions to the end, so it sees one generation or the other, never a mix. A failed
 * fetch or check keeps the previous generation and logs why. Swapped-out views are retired
 * after a grace period and release their files once no search pins them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AppError, type Logger, type Settings } from '../core/index.js';
import type { ProjectIndex } from '../index/index.js';
import { embedderSpec, type Project, type ProjectOverlay } from '../projects/index.js';
import { QueryEmbedder, SearchService, SuggestCache, SuggestService, type SearchExecutor, type SuggestRequest } from '../search/index.js';
import { SuggestionIndex, normaliseQuery } from '../analytics/index.js';
import { INDEX_FILE, blobPath, parseIndex, parseManifest, sha256, type ManifestPointer, type ProjectManifest } from './format.js';
import { openSource, type SnapshotSource } from './location.js';
import { NodeGeneration, SegmentFiles } from './node-index.js';

export interface SnapshotNodeOptions {
  /** Directory or http(s) URL of the export. */
  source: string;
  /** The node's own folder for fetched blobs and opened generations (`<dataDir>/snapshot`). */
  cacheDir: string;
  executor: SearchExecutor;
  /** Milliseconds between polls of `index.json` (SITESIFT_SNAPSHOT_POLL_MS). */
  pollMs: number;
  /** Budget of the search answer cache, bytes. */
  searchCacheBytes: number;
  log?: Logger;
  clock?: () => number;
  /**
   * The built-in embedder's word-vector file (SITESIFT_WORD_VECTORS), or null when it is off.
   * Queries are embedded as on the primary: with the embedder the snapshot's settings name.
   */
  wordVectors?: string | null;
  /** Embeds queries (the server's one, its cache shared with nothing else on a node). */
  queryEmbedder?: QueryEmbedder;
}

/** What one poll did. */
export interface PollResult {
  /** Projects now serving a new generation. */
  swapped: string[];
  /** Projects whose new generation was rejected (reason logged), still serving the previous one if any. */
  rejected: Array<{ siteId: string; reason: string }>;
  /** Projects no longer in the snapshot. */
  dropped: string[];
}

/**
 * Where the last swap's time went, in milliseconds (health `lastSwap`, the "serving" log line):
 * reading index.json, the manifest, fetching and hash-checking the blobs this node lacked,
 * opening the generation and checking it against the manifest, loading its query suggestions.
 */
export interface SwapTimings {
  siteId: string;
  generation: number;
  /** When the poll that found the generation started (ISO time). */
  pollStartedAt: string;
  /** When the generation started serving (ISO time). */
  servingAt: string;
  index: number;
  manifest: number;
  fetch: number;
  /** Blobs fetched (the rest were in the node's cache). */
  fetchedBlobs: number;
  fetchedBytes: number;
  /** Opening the segments this node had not open yet, deriving and checking the tombstones. */
  open: number;
  /** Loading the query-suggestion rows. */
  suggestions: number;
  /** Segment files opened (the others were open for the previous generation). */
  openedSegments: number;
  /** Tombstones derived from the previous generation (segments only added) or from scratch. */
  derivation: 'scratch' | 'incremental' | '';
  total: number;
}

/** How long a swapped-out view stays open at least (requests that took it are pinning it by then). */
const RETIRE_AFTER_MS = 2_000;

/** One project at one generation, opened. Immutable once built. */
class ProjectView {
  retiredAt: number | null = null;
  readonly suggest: SuggestService;
  constructor(
    readonly siteId: string,
    readonly pointer: ManifestPointer,
    readonly manifest: ProjectManifest,
    readonly settings: Settings,
    readonly gen: NodeGeneration,
    readonly suggestions: SuggestionIndex,
    executor: SearchExecutor,
    cache: SuggestCache,
    wordVectors: string | null,
    queryEmbedder: QueryEmbedder,
  ) {
    this.suggest = new SuggestService(
      {
        projects: { getSettings: () => this.settings },
        indexes: { get: () => this.index() },
        executor,
        embedderOf: () => embedderSpec(this.settings.search.semantic, wordVectors),
        queryEmbedder,
        querySuggestions: (_siteId, typed, o) => {
          const t = normaliseQuery(typed);
          if (o.max === 0 || t === '') return [];
          return this.suggestions.lookup(t, o.max, Math.max(1, o.minSearches));
        },
      },
      cache,
    );
  }

  index(): Promise<ProjectIndex> {
    return Promise.resolve(this.gen);
  }
}

/** `GET /sites/suggest` on a node: each request answered by the project's view of the moment. */
class NodeSuggestService extends SuggestService {
  constructor(
    private readonly node: SnapshotNode,
    cache: SuggestCache,
  ) {
    super({ projects: node.overlay, indexes: { get: (id) => node.view(id).index() }, executor: node.executor, querySuggestions: () => [] }, cache);
  }

  override run(siteId: string, req: SuggestRequest): Promise<string> {
    return this.node.view(siteId).suggest.run(siteId, req);
  }
}

/**
 * @example
 * const node = new SnapshotNode({ source: 'http://10.0.0.1/export', cacheDir, executor, pollMs: 5000, searchCacheBytes });
 * projects.serveFrom(node.overlay);
 * node.start(); // services.search = node.search, services.suggest = node.suggest
 */
export class SnapshotNode {
  readonly search: SearchService;
  readonly suggest: SuggestService;
  readonly overlay: ProjectOverlay;
  readonly executor: SearchExecutor;
  private views = new Map<string, ProjectView>();
  private retired: ProjectView[] = [];
  private readonly source: SnapshotSource;
  private readonly suggestCache = new SuggestCache();
  /** Segment files open for any view, by content hash (shared across generations). */
  readonly files = new SegmentFiles();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<PollResult> | null = null;
  private closed = false;
  /** Whether a snapshot has been served yet. */
  ready = false;
  lastPollAt: number | null = null;
  lastError: string | null = null;
  /** Phases of the last swap (diagnostics; wall-clock milliseconds). */
  lastSwap: SwapTimings | null = null;

  constructor(private readonly opts: SnapshotNodeOptions) {
    this.source = openSource(opts.source);
    this.executor = opts.executor;
    const notReady = () =>
      new AppError('not_ready', 'This search node has not loaded a snapshot yet; retry shortly.', undefined, undefined, {
        'Retry-After': String(Math.max(1, Math.ceil(opts.pollMs / 1000))),
      });
    this.overlay = {
      hasProject: (siteId) => {
        if (!this.ready) throw notReady();
        return this.views.has(siteId);
      },
      getSettings: (siteId) => this.view(siteId).settings,
      listProjects: (): Project[] =>
        [...this.views.values()].map((v) => ({ siteId: v.siteId, name: v.manifest.name, createdAt: v.manifest.createdAt })).sort((a, b) => (a.siteId < b.siteId ? -1 : 1)),
    };
    this.queryEmbedder = opts.queryEmbedder ?? new QueryEmbedder();
    const wordVectors = opts.wordVectors ?? null;
    this.search = new SearchService(
      {
        projects: this.overlay,
        indexes: { get: (siteId) => this.view(siteId).index() },
        executor: opts.executor,
        // The snapshot's settings name the embedder, so a node embeds queries as the primary does.
        embedderOf: (siteId) => embedderSpec(this.view(siteId).settings.search.semantic, wordVectors),
        queryEmbedder: this.queryEmbedder,
      },
      opts.searchCacheBytes,
    );
    this.suggest = new NodeSuggestService(this, this.suggestCache);
    this.notReady = notReady;
  }

  private readonly notReady: () => AppError;
  private readonly queryEmbedder: QueryEmbedder;

  /** The project's current view: 503 `not_ready` before the first snapshot, 404 `unknown_site` when absent. */
  view(siteId: string): ProjectView {
    if (!this.ready) throw this.notReady();
    const v = this.views.get(siteId);
    if (!v) throw new AppError('unknown_site', `No project "${siteId}".`, 'site');
    return v;
  }

  /** Health for `GET /health`. */
  health(): { ready: boolean; source: string; projects: Record<string, number>; lastPollAt: string | null; lastError: string | null; lastSwap: SwapTimings | null } {
    const projects: Record<string, number> = {};
    for (const [id, v] of this.views) projects[id] = v.manifest.generation;
    return {
      ready: this.ready,
      source: this.source.location,
      projects,
      lastPollAt: this.lastPollAt === null ? null : new Date(this.lastPollAt).toISOString(),
      lastError: this.lastError,
      lastSwap: this.lastSwap,
    };
  }

  /** Clears leftovers of an earlier run, polls now and then every `pollMs`. */
  start(): void {
    fs.mkdirSync(path.join(this.opts.cacheDir, 'blobs'), { recursive: true });
    const tick = () => {
      if (this.closed) return;
      void this.poll().finally(() => {
        if (!this.closed) this.timer = setTimeout(tick, this.opts.pollMs);
      });
    };
    tick();
  }

  /** One poll (a poll already running is joined). Never rejects: failures are logged and returned. */
  poll(): Promise<PollResult> {
    this.polling ??= this.pollNow().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private now(): number {
    return (this.opts.clock ?? Date.now)();
  }

  private async pollNow(): Promise<PollResult> {
    const result: PollResult = { swapped: [], rejected: [], dropped: [] };
    this.lastPollAt = this.now();
    const t0 = performance.now();
    const startedAt = new Date().toISOString();
    let indexText: Buffer | null;
    try {
      indexText = await this.source.read(INDEX_FILE);
    } catch (err) {
      this.lastError = `cannot read ${INDEX_FILE}: ${(err as Error).message}`;
      this.opts.log?.warn({ source: this.source.location, err: (err as Error).message }, 'snapshot poll failed');
      return result;
    }
    if (indexText === null) {
      if (!this.ready) this.lastError = `no ${INDEX_FILE} at ${this.source.location} yet`;
      return result;
    }
    let pointers: ManifestPointer[];
    try {
      pointers = Object.values(parseIndex(indexText.toString('utf8'), INDEX_FILE).projects);
    } catch (err) {
      this.lastError = (err as Error).message;
      this.opts.log?.warn({ reason: this.lastError }, 'snapshot index rejected; keeping the current generation');
      return result;
    }
    const indexMs = performance.now() - t0;
    const timings: SwapTimings[] = [];
    const next = new Map<string, ProjectView>();
    for (const ptr of pointers) {
      const cur = this.views.get(ptr.siteId);
      if (cur && cur.pointer.sha256 === ptr.sha256) {
        next.set(ptr.siteId, cur);
        continue;
      }
      try {
        const t: SwapTimings = { siteId: ptr.siteId, generation: ptr.generation, pollStartedAt: startedAt, servingAt: '', index: round(indexMs), manifest: 0, fetch: 0, fetchedBlobs: 0, fetchedBytes: 0, open: 0, suggestions: 0, openedSegments: 0, derivation: '', total: 0 };
        next.set(ptr.siteId, await this.open(ptr, t));
        timings.push(t);
        result.swapped.push(ptr.siteId);
      } catch (err) {
        const reason = (err as Error).message;
        result.rejected.push({ siteId: ptr.siteId, reason });
        this.opts.log?.warn({ siteId: ptr.siteId, generation: ptr.generation, reason }, 'snapshot generation rejected; keeping the current one');
        if (cur) next.set(ptr.siteId, cur);
      }
    }
    if (this.closed) {
      for (const v of next.values()) if (this.views.get(v.siteId) !== v) v.gen.retire();
      return result;
    }
    for (const [id, v] of this.views) {
      if (next.get(id) !== v) {
        v.retiredAt = this.now();
        this.retired.push(v);
        if (!next.has(id)) result.dropped.push(id);
      }
    }
    // The swap: one assignment, between two requests' synchronous view lookups.
    this.views = next;
    this.ready = true;
    const servingAt = new Date().toISOString();
    for (const t of timings) {
      t.servingAt = servingAt;
      t.total = round(performance.now() - t0);
      this.lastSwap = t;
    }
    this.lastError = result.rejected.length ? result.rejected.map((r) => `${r.siteId}: ${r.reason}`).join('; ') : null;
    if (result.swapped.length) this.opts.log?.info({ swapped: result.swapped.map((id) => `${id}@${next.get(id)!.manifest.generation}`), ms: timings }, 'snapshot generation serving');
    await this.closeRetired();
    return result;
  }

  /**
   * Retires views swapped out at least {@link RETIRE_AFTER_MS} ago (by then every request that
   * took one has pinned it; their files close with the last pin), then drops cached blobs no
   * view lists and no pinned generation still reads.
   */
  private async closeRetired(): Promise<void> {
    const keep: ProjectView[] = [];
    for (const v of this.retired) {
      if (this.now() - v.retiredAt! >= RETIRE_AFTER_MS) v.gen.retire();
      else keep.push(v);
    }
    this.retired = keep;
    const used = this.files.hashes();
    for (const v of [...this.views.values(), ...this.retired]) {
      for (const s of v.manifest.segments) used.add(s.sha256);
      used.add(v.manifest.querySuggestions.sha256);
    }
    const dir = path.join(this.opts.cacheDir, 'blobs');
    for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
      if (!used.has(name) && !this.fetching.has(name)) await fsp.rm(path.join(dir, name), { force: true });
    }
  }

  /** Blobs being fetched now (not collected meanwhile). */
  private readonly fetching = new Set<string>();

  /** The cached blob's path, fetched and verified first when missing. */
  private async blob(hash: string, bytes: number, t?: SwapTimings): Promise<string> {
    const file = path.join(this.opts.cacheDir, 'blobs', hash);
    if (fs.existsSync(file)) return file;
    if (t) {
      t.fetchedBlobs++;
      t.fetchedBytes += bytes;
    }
    this.fetching.add(hash);
    const tmp = path.join(this.opts.cacheDir, 'blobs', `.tmp-${randomBytes(6).toString('hex')}`);
    try {
      const got = await this.source.copyTo(blobPath(hash), tmp);
      if (got.sha256 !== hash) throw new Error(`blob ${hash} failed its hash check (got ${got.sha256}, ${got.bytes} bytes)`);
      if (got.bytes !== bytes) throw new Error(`blob ${hash} has ${got.bytes} bytes, the manifest says ${bytes}`);
      await fsp.rename(tmp, file);
      return file;
    } finally {
      this.fetching.delete(hash);
      await fsp.rm(tmp, { force: true });
    }
  }

  /** Fetches, opens and checks one project generation. */
  private async open(ptr: ManifestPointer, t: SwapTimings): Promise<ProjectView> {
    let mark = performance.now();
    const lap = () => {
      const now = performance.now();
      const ms = round(now - mark);
      mark = now;
      return ms;
    };
    const text = await this.source.read(ptr.manifest);
    if (text === null) throw new Error(`manifest ${ptr.manifest} is missing`);
    if (sha256(text) !== ptr.sha256) throw new Error(`manifest ${ptr.manifest} failed its hash check`);
    const m = parseManifest(text.toString('utf8'), ptr.manifest);
    if (m.siteId !== ptr.siteId || m.generation !== ptr.generation) throw new Error(`manifest ${ptr.manifest} is of ${m.siteId}@${m.generation}, not ${ptr.siteId}@${ptr.generation}`);
    t.manifest = lap();
    const files: string[] = [];
    for (const s of m.segments) files.push(await this.blob(s.sha256, s.bytes, t));
    const qsFile = await this.blob(m.querySuggestions.sha256, m.querySuggestions.bytes, t);
    const rows = JSON.parse(await fsp.readFile(qsFile, 'utf8')) as Array<[string, number, number, number]>;
    t.fetch = lap();
    const opened = this.files.opened;
    const gen = NodeGeneration.open(m, files, this.files, this.views.get(m.siteId)?.gen ?? null);
    t.openedSegments = this.files.opened - opened;
    t.derivation = gen.derivation;
    t.open = lap();
    const suggestions = new SuggestionIndex();
    suggestions.load(rows);
    t.suggestions = lap();
    return new ProjectView(m.siteId, ptr, m, deepFreeze(m.settings), gen, suggestions, this.executor, this.suggestCache, this.opts.wordVectors ?? null, this.queryEmbedder);
  }

  /** Stops polling and closes every view. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    for (const v of [...this.views.values(), ...this.retired]) v.gen.retire();
    this.views = new Map();
    this.retired = [];
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}
