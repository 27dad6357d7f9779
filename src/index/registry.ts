/**
 * The open per-project segment stores of this process (main thread). One {@link SegmentStore}
 * per project folder `<dataDir>/projects/<siteId>/`, opened lazily on first use.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProjectIndex } from './contract.js';
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
  mergePolicy?: Partial<MergePolicyOptions>;
  /** See {@link SegmentStoreOptions.maxBufferedDocs} (default 20 000). */
  maxBufferedDocs?: number;
  /** Crash-test hook passed to every store. */
  pauseIn?: PausePoint;
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
  private readonly open = new Map<string, Promise<SegmentStore>>();

  constructor(opts: IndexRegistryOptions) {
    this.opts = opts;
  }

  /** The project's folder (it may not exist yet). */
  projectDir(siteId: string): string {
    return path.join(this.opts.dataDir, 'projects', siteId);
  }

  /** Opens the project's store on first use (recovering from a crash if needed); shared afterwards. */
  get(siteId: string): Promise<ProjectIndex> {
    return this.getStore(siteId);
  }

  /** Same as {@link get}, typed as the concrete store (jobs, admin). */
  getStore(siteId: string): Promise<SegmentStore> {
    let p = this.open.get(siteId);
    if (!p) {
      const o = this.opts;
      p = SegmentStore.open({
        siteId,
        dir: this.projectDir(siteId),
        pool: o.pool,
        ...(o.refreshMs !== undefined ? { refreshMs: o.refreshMs } : {}),
        ...(o.clock ? { clock: o.clock } : {}),
        ...(o.log ? { log: o.log } : {}),
        defaultLanguage: () => o.defaultLanguage?.(siteId) ?? 'en',
        ...(o.mergePolicy ? { mergePolicy: o.mergePolicy } : {}),
        ...(o.maxBufferedDocs ? { maxBufferedDocs: o.maxBufferedDocs } : {}),
        ...(o.pauseIn ? { pauseIn: o.pauseIn } : {}),
      });
      this.open.set(siteId, p);
      p.catch(() => this.open.delete(siteId));
    }
    return p;
  }

  /** Closes the project's store (if open) and deletes its folder with every segment and log. */
  async drop(siteId: string): Promise<void> {
    const p = this.open.get(siteId);
    this.open.delete(siteId);
    if (p) {
      const store = await p.catch(() => null);
      await store?.close({ flush: false });
    }
    fs.rmSync(this.projectDir(siteId), { recursive: true, force: true });
  }

  /** Closes one project's store if open (flushes it first). */
  async close(siteId: string): Promise<void> {
    const p = this.open.get(siteId);
    this.open.delete(siteId);
    const store = await p?.catch(() => null);
    await store?.close();
  }

  /** Flushes and closes every open store (shutdown): a restart then has no log to replay. */
  async closeAll(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => null))?.close()));
  }

  /** The stores opened so far (and still open), for the merge and gc jobs. */
  async openProjects(): Promise<SegmentStore[]> {
    const out: SegmentStore[] = [];
    for (const p of this.open.values()) {
      const s = await p.catch(() => null);
      if (s) out.push(s);
    }
    return out;
  }
}
