/**
 * A read-only search node's view of a snapshot (main thread).
 *
 * The node polls the snapshot's `index.json`. For every project whose manifest changed it
 * fetches the manifest (checked against the hash in the index), fetches the blobs it lacks
 * into its cache (each checked against its hash; a temp file until it is), lays the generation
 * out as an ordinary project folder (segment files hard-linked from the cache, a manifest.json)
 * and opens it with the same segment store and search code as the primary, then checks the
 * tombstones it derived and the document total against the manifest. Only a generation that
 * passed every check is swapped in, in one assignment: a request takes the project's view
 * once, synchronously, and uses its settings, index and query suggestions to the end, so it
 * sees one generation or the other, never a mix. A failed fetch or check keeps the previous
 * generation and logs why. Swapped-out views close once idle.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AppError, type Logger, type Settings } from '../core/index.js';
import { IndexRegistry, MANIFEST_FORMAT, writeManifest, type ProjectIndex, type TaskPool } from '../index/index.js';
import { embedderSpec, type Project, type ProjectOverlay } from '../projects/index.js';
import { QueryEmbedder, SearchService, SuggestCache, SuggestService, type SearchExecutor, type SuggestRequest } from '../search/index.js';
import { SuggestionIndex, normaliseQuery } from '../analytics/index.js';
import { INDEX_FILE, blobPath, parseIndex, parseManifest, sha256, type ManifestPointer, type ProjectManifest } from './format.js';
import { openSource, type SnapshotSource } from './location.js';

export interface SnapshotNodeOptions {
  /** Directory or http(s) URL of the export. */
  source: string;
  /** The node's own folder for fetched blobs and opened generations (`<dataDir>/snapshot`). */
  cacheDir: string;
  pool: TaskPool;
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
    readonly dir: string,
    readonly registry: IndexRegistry,
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
    return this.registry.get(this.siteId);
  }

  async idle(): Promise<boolean> {
    return (await this.registry.getStore(this.siteId)).idle();
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
 * const node = new SnapshotNode({ source: 'http://10.0.0.1/export', cacheDir, pool, executor, pollMs: 5000, searchCacheBytes });
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
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<PollResult> | null = null;
  private closed = false;
  /** Whether a snapshot has been served yet. */
  ready = false;
  lastPollAt: number | null = null;
  lastError: string | null = null;

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
  health(): { ready: boolean; source: string; projects: Record<string, number>; lastPollAt: string | null; lastError: string | null } {
    const projects: Record<string, number> = {};
    for (const [id, v] of this.views) projects[id] = v.manifest.generation;
    return {
      ready: this.ready,
      source: this.source.location,
      projects,
      lastPollAt: this.lastPollAt === null ? null : new Date(this.lastPollAt).toISOString(),
      lastError: this.lastError,
    };
  }

  /** Clears leftovers of an earlier run, polls now and then every `pollMs`. */
  start(): void {
    fs.rmSync(path.join(this.opts.cacheDir, 'views'), { recursive: true, force: true });
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
    const next = new Map<string, ProjectView>();
    for (const ptr of pointers) {
      const cur = this.views.get(ptr.siteId);
      if (cur && cur.pointer.sha256 === ptr.sha256) {
        next.set(ptr.siteId, cur);
        continue;
      }
      try {
        next.set(ptr.siteId, await this.open(ptr));
        result.swapped.push(ptr.siteId);
      } catch (err) {
        const reason = (err as Error).message;
        result.rejected.push({ siteId: ptr.siteId, reason });
        this.opts.log?.warn({ siteId: ptr.siteId, generation: ptr.generation, reason }, 'snapshot generation rejected; keeping the current one');
        if (cur) next.set(ptr.siteId, cur);
      }
    }
    if (this.closed) {
      for (const v of next.values()) if (!this.views.has(v.siteId) || this.views.get(v.siteId) !== v) await v.registry.closeAll();
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
    this.lastError = result.rejected.length ? result.rejected.map((r) => `${r.siteId}: ${r.reason}`).join('; ') : null;
    if (result.swapped.length) this.opts.log?.info({ swapped: result.swapped.map((id) => `${id}@${next.get(id)!.manifest.generation}`) }, 'snapshot generation serving');
    await this.closeRetired();
    return result;
  }

  /** Closes swapped-out views nobody uses any more, then drops cached blobs no open view lists. */
  private async closeRetired(): Promise<void> {
    const keep: ProjectView[] = [];
    for (const v of this.retired) {
      if (this.now() - v.retiredAt! >= RETIRE_AFTER_MS && (await v.idle())) {
        await v.registry.closeAll();
        await fsp.rm(v.dir, { recursive: true, force: true });
      } else keep.push(v);
    }
    this.retired = keep;
    const used = new Set<string>();
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
  private async blob(hash: string, bytes: number): Promise<string> {
    const file = path.join(this.opts.cacheDir, 'blobs', hash);
    if (fs.existsSync(file)) return file;
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

  /** Fetches, lays out, opens and checks one project generation. */
  private async open(ptr: ManifestPointer): Promise<ProjectView> {
    const text = await this.source.read(ptr.manifest);
    if (text === null) throw new Error(`manifest ${ptr.manifest} is missing`);
    if (sha256(text) !== ptr.sha256) throw new Error(`manifest ${ptr.manifest} failed its hash check`);
    const m = parseManifest(text.toString('utf8'), ptr.manifest);
    if (m.siteId !== ptr.siteId || m.generation !== ptr.generation) throw new Error(`manifest ${ptr.manifest} is of ${m.siteId}@${m.generation}, not ${ptr.siteId}@${ptr.generation}`);
    const files: string[] = [];
    for (const s of m.segments) files.push(await this.blob(s.sha256, s.bytes));
    const qsFile = await this.blob(m.querySuggestions.sha256, m.querySuggestions.bytes);
    const rows = JSON.parse(await fsp.readFile(qsFile, 'utf8')) as Array<[string, number, number, number]>;

    const dir = path.join(this.opts.cacheDir, 'views', `${m.siteId}-${m.generation}-${randomBytes(4).toString('hex')}`);
    const projectDir = path.join(dir, 'projects', m.siteId);
    const segDir = path.join(projectDir, 'segments');
    await fsp.mkdir(segDir, { recursive: true });
    let registry: IndexRegistry | null = null;
    try {
      for (let i = 0; i < m.segments.length; i++) await linkOrCopy(files[i]!, path.join(segDir, m.segments[i]!.file));
      await writeManifest(projectDir, {
        format: MANIFEST_FORMAT,
        generation: m.generation,
        committedSeq: m.committedSeq,
        segments: m.segments.map((s) => ({ id: s.id, file: s.file, docCount: s.docCount, searchableCount: s.searchableCount, deleteCount: s.deleteCount, minSeq: s.minSeq, maxSeq: s.maxSeq, bytes: s.bytes })),
      });
      registry = new IndexRegistry({ dataDir: dir, pool: this.opts.pool, maxOpen: 1 });
      const index = await registry.get(m.siteId);
      checkGeneration(index, m);
      const suggestions = new SuggestionIndex();
      suggestions.load(rows);
      return new ProjectView(m.siteId, ptr, m, deepFreeze(m.settings), dir, registry, suggestions, this.executor, this.suggestCache, this.opts.wordVectors ?? null, this.queryEmbedder);
    } catch (err) {
      await registry?.closeAll();
      await fsp.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Stops polling and closes every view. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    for (const v of [...this.views.values(), ...this.retired]) await v.registry.closeAll();
    this.views = new Map();
    this.retired = [];
  }
}

/** The opened generation must be the manifest's: same segments, same tombstones, same total. */
function checkGeneration(index: ProjectIndex, m: ProjectManifest): void {
  const snap = index.acquire();
  try {
    if (snap.generation !== m.generation) throw new Error(`opened generation ${snap.generation}, expected ${m.generation}`);
    if (snap.segments.length !== m.segments.length) throw new Error(`opened ${snap.segments.length} segments, expected ${m.segments.length}`);
    snap.segments.forEach((seg, i) => {
      const want = m.segments[i]!;
      if (seg.id !== want.id || sha256(seg.dead) !== want.deadSha256) throw new Error(`segment ${want.id}: tombstones differ from the primary's`);
    });
    if (snap.totalDocs !== m.totalDocs) throw new Error(`${snap.totalDocs} live documents, the manifest says ${m.totalDocs}`);
  } finally {
    snap.release();
  }
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fsp.link(from, to);
  } catch {
    await fsp.copyFile(from, to);
  }
}

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}
