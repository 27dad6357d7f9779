/**
 * Warming new generations (main thread): after a flush or a merge publishes a generation of a
 * project that visitors search, an idle search thread loads what that generation's first search
 * would (doc values, typo lookups, vectors: `warmSnapshot`, src/search/remote.ts) before a
 * visitor's search has to. At ~100k pages a merged segment costs its first search about a
 * second of such loading; warmed, that search runs at the usual speed.
 *
 * Which projects: those searched or suggested within {@link WARM_WINDOW_MS}, checked every
 * {@link WARM_POLL_MS} for a new generation (`ProjectIndex.generation`, one number). Which
 * thread: an idle one (the executor's LIFO choice, the thread that will take the next search);
 * with no idle thread, or searches queued, the warm waits for the next check, so a warm never
 * delays a search. Not on the main thread (`SITESIFT_SEARCH_THREADS=0`): loading there would
 * hold up every request. A project whose index the registry closed is no longer watched (the
 * warmer never reopens one).
 */
import type { ProjectIndex } from '../index/index.js';
import type { EmbedderSpec, Settings } from '../core/index.js';
import type { SearchExecutor } from './executor.js';

/** How long after its last search a project's new generations are still warmed. */
export const WARM_WINDOW_MS = 10 * 60_000;
/** How often watched projects are checked for a new generation. */
export const WARM_POLL_MS = 1000;

/** What the warmer reads (the search services' sources). */
export interface WarmSources {
  projects: { getSettings(siteId: string): Settings };
  /** `peek`: the project's index when it is open now (without opening it); absent: no warming. */
  indexes: { peek?(siteId: string): ProjectIndex | null };
  executor: SearchExecutor;
  embedderOf?: (siteId: string) => EmbedderSpec | null;
}

interface Watched {
  index: ProjectIndex;
  /** The newest generation searched or warmed. */
  generation: number;
  searchedAt: number;
  warming: boolean;
}

/** Watches searched projects and warms their new generations (one per executor). */
export class GenerationWarmer {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sources: WarmSources,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes a search of `siteId` on `generation` of `index` (search and suggest services). */
  searched(siteId: string, index: ProjectIndex, generation: number): void {
    if (this.sources.executor.threads === 0 || !this.sources.indexes.peek) return;
    const w = this.watched.get(siteId);
    if (w && w.index === index) {
      w.searchedAt = this.now();
      if (generation > w.generation) w.generation = generation;
    } else this.watched.set(siteId, { index, generation, searchedAt: this.now(), warming: false });
    this.timer ??= setInterval(() => this.check(), WARM_POLL_MS).unref();
  }

  /** Projects watched now (tests). */
  get size(): number {
    return this.watched.size;
  }

  /**
   * One check: forgets projects not searched for {@link WARM_WINDOW_MS} or no longer open, and
   * starts a warm for each other project whose current generation is newer than the one last
   * searched or warmed. Resolves when the warms it started have settled (tests).
   */
  async check(): Promise<void> {
    const started: Array<Promise<void>> = [];
    for (const [siteId, w] of this.watched) {
      if (this.now() - w.searchedAt > WARM_WINDOW_MS || this.sources.indexes.peek?.(siteId) !== w.index) {
        this.watched.delete(siteId);
        continue;
      }
      if (w.warming || w.index.generation <= w.generation) continue;
      started.push(this.warm(siteId, w));
    }
    if (this.watched.size === 0) this.stop();
    await Promise.all(started);
  }

  /** Stops watching (the server's close). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async warm(siteId: string, w: Watched): Promise<void> {
    let settings: Settings;
    try {
      settings = this.sources.projects.getSettings(siteId);
    } catch {
      // The project was deleted.
      this.watched.delete(siteId);
      return;
    }
    const spec = this.sources.embedderOf?.(siteId) ?? null;
    // Vectors only where searches will read them: an embedder and a default ratio above 0.
    const fp = spec && (settings.search.semantic?.semanticRatio ?? 0) > 0 ? spec.fp : null;
    const snap = w.index.acquire();
    w.warming = true;
    try {
      if (await this.sources.executor.warm(w.index, snap, settings, fp)) w.generation = Math.max(w.generation, snap.generation);
    } catch {
      // A thread lost while warming: the next search loads what it needs itself.
    } finally {
      snap.release();
      w.warming = false;
    }
  }
}

const warmers = new WeakMap<SearchExecutor, GenerationWarmer>();

/**
 * The warmer of `sources.executor`: the search and suggest services of one server share it, so
 * a project's generation is warmed once whichever of them searched it.
 */
export function warmerFor(sources: WarmSources): GenerationWarmer {
  let w = warmers.get(sources.executor);
  if (!w) warmers.set(sources.executor, (w = new GenerationWarmer(sources)));
  return w;
}
