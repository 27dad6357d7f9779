/**
 * The open per-project segment stores of this process (main thread). One {@link SegmentStore}
 * per project folder `<dataDir>/projects/<siteId>/`, opened lazily on first use.
 *
 * Bounded: at most {@link IndexRegistryOptions.maxOpen} stores stay open (each holds its write
 * log and every segment file open). Past that, the least recently used stores that are idle
 * (no pinned search, no write, wait, flush or merge in flight, nothing unpublished, not in use
 * by the crawler, and not handed out during the current event-loop turn) are flushed and
 * closed; the next use opens them again. So a caller must pin, write or read the store in the
 * turn it gets it (as `await get()` followed by `acquire()`/`write()` does), or hold it
 * through something {@link IndexRegistryOptions.inUse} reports. A closing store is never opened twice: a use during the close waits for it.
 * When a store closes, its page count and manifest generation go to `stats.json` beside the
 * manifest, so listings ({@link pages}) read two small files instead of opening the index.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_OPEN_PROJECTS, type EmbedderSpec } from '../core/index.js';
import type { ProjectIndex } from './contract.js';
import { MANIFEST_FILE } from './manifest.js';
import type { MergePolicyOptions } from './merge-policy.js';
import { SegmentStore, type IndexLogger, type SegmentStoreOptions } from './store.js';
import type { PausePoint, TaskPool } from './tasks.js';

export interface IndexRegistryOptions {
  dataDir: string;
  /** The worker pool (Piscina over `workers/index.ts`). */
  pool: TaskPool;
  /** Max ms between acknowledgement and visibility (default 1000). */
  refreshMs?: number;
  /** ms since the epoch (default Date.now). */
  clock?: () => number;
  log?: IndexLogger;
  /** The project's default language (settings), read at every segment build. */
  defaultLanguage?: (siteId: string) => string;
  /** The project's embedder (settings `search.semantic`), read at every segment build and merge. */
  embedder?: (siteId: string) => EmbedderSpec | null;
  mergePolicy?: Partial<MergePolicyOptions>;
  /** See {@link SegmentStoreOptions.maxBufferedDocs} (default 20 000). */
  maxBufferedDocs?: number;
  /** Crash-test hook passed to every store. */
  pauseIn?: PausePoint;
  /** Most stores kept open (SITESIFT_OPEN_PROJECTS; default {@link DEFAULT_OPEN_PROJECTS}). */
  maxOpen?: number;
  /** Whether something outside the store still uses the project's index (the crawler's tasks). */
  inUse?: (siteId: string) => boolean;
}

const STATS_FILE = 'stats.json';

interface OpenEntry {
  store: Promise<SegmentStore>;
  /** Set once the store is open. */
  ready: SegmentStore | null;
  /** Event-loop turn of the last hand-out ({@link IndexRegistry.turn}). */
  turn: number;
}

/**
 * @example
 * const indexes = new IndexRegistry({ dataDir, pool, refreshMs: 1000, clock: Date.now, defaultLanguage: () => 'en' });
 * const index = await indexes.get('docs');
 * await index.write([{ op: 'delete', url }]);
 * await indexes.closeAll(); // at shutdown
 */
export class IndexRegistry {
  private readonly opts: IndexRegistryOptions;
  /** Open (or opening) stores, least recently used first. */
  private readonly open = new Map<string, OpenEntry>();
  /** Stores being closed by eviction; a use waits for the close before opening again. */
  private readonly closing = new Map<string, Promise<void>>();
  private readonly maxOpen: number;
  /**
   * Counts event-loop turns (a setImmediate after each hand-out): a store handed out in the
   * current turn is never closed, since its caller's continuation (the pin, the write) runs in
   * this turn's microtasks.
   */
  private turn = 0;
  private turnScheduled = false;

  constructor(opts: IndexRegistryOptions) {
    this.opts = opts;
    this.maxOpen = Math.max(1, opts.maxOpen ?? DEFAULT_OPEN_PROJECTS);
  }

  /** The project's folder (it may not exist yet). */
  projectDir(siteId: string): string {
    return path.join(this.opts.dataDir, 'projects', siteId);
  }

  /** Opens the project's store on first use (recovering from a crash if needed); shared afterwards. */
  get(siteId: string): Promise<ProjectIndex> {
    return this.getStore(siteId);
  }

  /** The project's store when it is open now, without opening it or marking it used (null otherwise). */
  peek(siteId: string): ProjectIndex | null {
    return this.open.get(siteId)?.ready ?? null;
  }

  /** Same as {@link get}, typed as the concrete store (jobs, admin). */
  getStore(siteId: string): Promise<SegmentStore> {
    let e = this.open.get(siteId);
    if (e) {
      this.open.delete(siteId);
    } else {
      const closing = this.closing.get(siteId);
      const store = closing ? closing.then(() => this.openStore(siteId)) : this.openStore(siteId);
      const entry: OpenEntry = { store, ready: null, turn: 0 };
      e = entry;
      store.then(
        (s) => {
          entry.ready = s;
          this.mark(entry);
          this.evict();
        },
        () => {
          if (this.open.get(siteId) === entry) this.open.delete(siteId);
        },
      );
    }
    this.mark(e);
    this.open.set(siteId, e);
    this.evict();
    return e.store;
  }

  private mark(e: OpenEntry): void {
    e.turn = this.turn;
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turn++;
      this.turnScheduled = false;
    }).unref();
  }

  private openStore(siteId: string): Promise<SegmentStore> {
    this.opened++;
    const o = this.opts;
    return SegmentStore.open({
      siteId,
      dir: this.projectDir(siteId),
      pool: o.pool,
      ...(o.refreshMs !== undefined ? { refreshMs: o.refreshMs } : {}),
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.log ? { log: o.log } : {}),
      defaultLanguage: () => o.defaultLanguage?.(siteId) ?? 'en',
      embedder: () => o.embedder?.(siteId) ?? null,
      ...(o.mergePolicy ? { mergePolicy: o.mergePolicy } : {}),
      ...(o.maxBufferedDocs ? { maxBufferedDocs: o.maxBufferedDocs } : {}),
      ...(o.pauseIn ? { pauseIn: o.pauseIn } : {}),
    });
  }

  /** Closes idle stores, least recently used first, until at most `maxOpen` are open. */
  private evict(): void {
    let excess = this.open.size - this.maxOpen;
    if (excess <= 0) return;
    for (const [siteId, e] of this.open) {
      if (excess <= 0) break;
      const store = e.ready;
      if (!store || e.turn >= this.turn || !store.idle() || this.opts.inUse?.(siteId)) continue;
      this.open.delete(siteId);
      excess--;
      const closed = this.closeAndRecord(store).finally(() => {
        if (this.closing.get(siteId) === closed) this.closing.delete(siteId);
      });
      this.closing.set(siteId, closed);
    }
  }

  /** Closes a store and records its page count for listings (see {@link pages}). */
  private async closeAndRecord(store: SegmentStore, flush = true): Promise<void> {
    try {
      await store.close({ flush });
      if (!flush) return;
      const dir = this.projectDir(store.siteId);
      const stats: StoredStats = { generation: store.generation, pages: store.stats().pages, wal: walFingerprint(dir) };
      fs.writeFileSync(path.join(dir, STATS_FILE), JSON.stringify(stats));
    } catch (err) {
      this.opts.log?.warn(`index ${store.siteId}: close failed: ${(err as Error).message}`);
    }
  }

  /**
   * Searchable pages of a project for listings, without opening its index: the open store's
   * count, else the count recorded when it was last closed while the manifest still names that
   * generation, else (never opened by this version, or a crash since) the store is opened
   * through the bounded cache. 0 for a project with no index yet.
   */
  async pages(siteId: string): Promise<number> {
    await this.closing.get(siteId);
    const e = this.open.get(siteId);
    if (e?.ready) return e.ready.stats().pages;
    const dir = this.projectDir(siteId);
    let generation: number;
    try {
      generation = (JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')) as { generation: number }).generation;
    } catch (err) {
      // No manifest: nothing was ever published; only a write log with ops needs the store.
      const unpublished = walFingerprint(dir).split(',').some((f) => f !== '' && !f.endsWith(':0'));
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !e && !unpublished) return 0;
      return (await this.getStore(siteId)).stats().pages;
    }
    try {
      const stats = JSON.parse(fs.readFileSync(path.join(dir, STATS_FILE), 'utf8')) as StoredStats;
      // Same generation and the same write-log files: nothing was written since the close.
      if (stats.generation === generation && stats.wal === walFingerprint(dir) && !e) return stats.pages;
    } catch {
      // Missing or torn: count from the store.
    }
    return (await this.getStore(siteId)).stats().pages;
  }

  /** Closes the project's store (if open) and deletes its folder with every segment and log. */
  async drop(siteId: string): Promise<void> {
    const e = this.open.get(siteId);
    this.open.delete(siteId);
    if (e) {
      const store = await e.store.catch(() => null);
      await store?.close({ flush: false });
    }
    await this.closing.get(siteId);
    fs.rmSync(this.projectDir(siteId), { recursive: true, force: true });
  }

  /** Closes one project's store if open (flushes it first). */
  async close(siteId: string): Promise<void> {
    const e = this.open.get(siteId);
    this.open.delete(siteId);
    const store = await e?.store.catch(() => null);
    if (store) await this.closeAndRecord(store);
    await this.closing.get(siteId);
  }

  /** Flushes and closes every open store (shutdown): a restart then has no log to replay. */
  async closeAll(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(async (e) => {
      const store = await e.store.catch(() => null);
      if (store) await this.closeAndRecord(store);
    }));
    await Promise.all(this.closing.values());
  }

  /** The stores open now, for the merge and gc jobs. */
  async openProjects(): Promise<SegmentStore[]> {
    const out: SegmentStore[] = [];
    for (const e of [...this.open.values()]) {
      const s = await e.store.catch(() => null);
      if (s) out.push(s);
    }
    return out;
  }

  /** Stores opened since start, reopenings included (tests, status). */
  opened = 0;

  /** How many stores are open or opening (tests, status). */
  get openCount(): number {
    return this.open.size;
  }
}

interface StoredStats {
  generation: number;
  pages: number;
  /** {@link walFingerprint} at the close. */
  wal: string;
}

/** Names and sizes of the project's write-log files: any append or rotation changes it. */
function walFingerprint(dir: string): string {
  try {
    const wal = path.join(dir, 'wal');
    return fs
      .readdirSync(wal)
      .sort()
      .map((f) => `${f}:${fs.statSync(path.join(wal, f)).size}`)
      .join(',');
  } catch {
    return '';
  }
}
