/**
 * Merge stage of the segment store: runs the merges the pure merge policy (merge-policy.ts)
 * chooses, or a full merge, in the pool (builds.ts, segment-merge.ts), and hands each result to
 * the commit chain (commit.ts), which swaps it for its sources in one generation.
 *
 * Main thread; the merge itself runs on a pool thread. Invariants:
 * - at most one merge runs per project (merges are chained); writes and searches never wait
 *   for one;
 * - a merge pins the generation it reads, so its source files outlive the worker reading them;
 * - a merge copies the rows live when it started, with their seqs: writes that arrive meanwhile
 *   have higher seqs, so the liveness rule makes the merged copies dead without coordination;
 * - only merges remove segments, so a merge's sources are still published when it commits.
 */
import type { SegmentBuilds } from './builds.js';
import type { WriteBuffer } from './buffer.js';
import type { CommitChain } from './commit.js';
import type { StoreContext } from './context.js';
import type { Generations, SegState } from './generations.js';
import { selectMerges, type MergePolicyOptions } from './merge-policy.js';
import { SEGMENT_FORMAT, type SegmentDelete } from './segment-format.js';

/**
 * Segment count up to which policy merges yield to segment builds that are behind (a bulk
 * import is flowing). A merge re-copies every row and every postings list, and during an import it takes a pool thread the builds
 * need; deferred, the same merges run once the import stops. Bounded, because every open
 * segment costs each search thread a reader with its own vocabulary and page cache.
 */
export const MAX_SEGMENTS_DEFERRING_MERGES = 32;

/**
 * A flush that leaves this many segments or more runs the merge policy at once (unless builds
 * are behind) instead of waiting for the merge job's minute tick.
 */
export const MERGE_ON_FLUSH_SEGMENTS = 16;

/** Wait after a failed re-embedding before the next try (the merge job ticks every minute). */
export const REEMBED_RETRY_MS = 60_000;

/** The merge stage's settings (SegmentStoreOptions with their defaults applied). */
export interface MergeOptions {
  policy: Partial<MergePolicyOptions>;
  /** Run the policy after a flush that leaves {@link MERGE_ON_FLUSH_SEGMENTS} or more segments. */
  mergeOnFlush: boolean;
}

/** The stages a merge reads and feeds. */
export interface MergeStages {
  generations: Generations;
  builds: SegmentBuilds;
  commits: CommitChain;
  buffer: WriteBuffer;
}

export class Merges {
  private readonly ctx: StoreContext;
  private readonly opts: MergeOptions;
  private readonly stages: MergeStages;
  private chain: Promise<void> = Promise.resolve();
  /** Whether a run started by {@link afterFlush} is queued or running. */
  private queued = false;
  /** Whether a merge task is between its pin and its commit (the `merges running` gauge). */
  running = false;

  constructor(ctx: StoreContext, opts: MergeOptions, stages: MergeStages) {
    this.ctx = ctx;
    this.opts = opts;
    this.stages = stages;
  }

  /**
   * Merges segments in the background and commits the result. `full` merges every segment into
   * one (dropping all tombstones and delete markers); otherwise the merge policy chooses,
   * repeatedly, until it selects nothing.
   *
   * @example
   * if (merges.due()) await merges.merge();
   */
  merge(opts: { full?: boolean } = {}): Promise<void> {
    const p = this.chain.then(() => this.mergeNow(opts.full === true));
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Runs `fn` in the merge chain: after the merge in flight, before any merge asked for later.
   * A replace swaps the whole generation this way, so no merge commits sources it removed.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  /** Resolves once the merges asked for so far have settled. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Whether the merge policy would merge something now, or a segment awaits conversion or re-embedding (cheap; the merge job asks every tick). */
  due(): boolean {
    return !this.buildsBehind() && (this.select().length > 0 || this.outdated() !== null || this.unembedded() !== null);
  }

  /**
   * A live segment of an older format than {@link SEGMENT_FORMAT}, or null: rewritten alone by
   * the merge job (the merge packs its stored text, and analyses it again when its terms are
   * older than format 5; see mergeSegments), so an index written by an older version reaches
   * the current format without a reindex.
   */
  private outdated(): string | null {
    for (const v of this.stages.generations.current.views) if (v.state.reader.info.format < SEGMENT_FORMAT) return v.state.id;
    return null;
  }

  /** When the last re-embedding failed (ms, performance clock) and why: retried after {@link REEMBED_RETRY_MS}. */
  private embedFailure: { at: number; message: string } | null = null;

  /**
   * The last embedder failure of this project's background embedding, or null once a
   * re-embedding succeeds (the search answer's metadata and the index status show it).
   */
  lastEmbedError(): string | null {
    return this.embedFailure?.message ?? null;
  }

  /**
   * A live segment with searchable rows whose vectors are not the project's embedder's (built
   * lexically while the embedder was down, by another embedder, or before vectors existed), or
   * null. Not while the last failure is recent.
   */
  private unembedded(): string | null {
    const spec = this.ctx.embedder();
    if (!spec) return null;
    if (this.embedFailure && performance.now() - this.embedFailure.at < REEMBED_RETRY_MS) return null;
    for (const v of this.stages.generations.current.views) {
      if (v.liveCount > 0 && (v.state.reader.info.embedder ?? null) !== spec.fp) return v.state.id;
    }
    return null;
  }

  /**
   * After a flush: once it leaves {@link MERGE_ON_FLUSH_SEGMENTS} or more segments, runs the
   * merge policy right away instead of waiting for the merge job's tick, since every open
   * segment costs each search thread a reader. Below that count merges stay with the job. While
   * builds are behind (an import still flows) nothing starts here: the flush that publishes the
   * import's last documents starts the merges. One queued run at a time.
   */
  afterFlush(): void {
    if (!this.opts.mergeOnFlush || this.queued || this.ctx.closed) return;
    // An HTTP embedder embeds after the build: start at once rather than at the job's next tick.
    const embedNow = this.ctx.embedder()?.kind === 'http' && !this.buildsBehind() && this.unembedded() !== null;
    if (!embedNow && (this.stages.generations.current.views.length < MERGE_ON_FLUSH_SEGMENTS || !this.due())) return;
    this.queued = true;
    this.merge()
      .catch((err: Error) => this.ctx.log?.error(`index ${this.ctx.siteId}: merge after flush failed: ${err.message}`))
      .finally(() => (this.queued = false));
  }

  /**
   * Whether policy merges should wait for segment builds (see WriteBuffer.backlogged): on a
   * small machine a merge takes the CPU and the pool thread the builds need, and the builds are
   * what held-back writers wait for. The flush that catches up, or the next merge job tick,
   * tries again. Bounded by {@link MAX_SEGMENTS_DEFERRING_MERGES}, so a never-ending import
   * cannot grow the segment count without limit.
   */
  private buildsBehind(): boolean {
    if (this.stages.generations.current.views.length >= MAX_SEGMENTS_DEFERRING_MERGES) return false;
    return this.stages.buffer.backlogged();
  }

  private select(): string[][] {
    return selectMerges(
      this.stages.generations.current.views.map((v) => ({
        id: v.state.id,
        bytes: v.state.meta.bytes,
        docCount: v.state.meta.docCount,
        deadCount: v.state.meta.docCount - v.liveRows,
        deleteCount: v.state.meta.deleteCount,
      })),
      this.opts.policy,
    );
  }

  private async mergeNow(full: boolean): Promise<void> {
    if (full) {
      const views = this.stages.generations.current.views;
      const needed = views.length > 1 || views.some((v) => v.liveRows < v.state.urls.length || v.state.deletes.length > 0 || v.state.reader.info.format < SEGMENT_FORMAT);
      if (needed && !this.ctx.closed) await this.mergeSegments(views.map((v) => v.state.id));
      return;
    }
    // Bounded: each round shrinks the segment count or rewrites a tombstone-heavy segment.
    for (let round = 0; round < 100 && !this.ctx.closed; round++) {
      if (this.buildsBehind()) return;
      const selected = this.select()[0];
      if (!selected) break;
      await this.mergeSegments(selected);
    }
    // Conversion: a segment at a time; until then its phrases are answered as its format allows (FTS5 in formats 1-3).
    for (let round = 0; round < 100 && !this.ctx.closed; round++) {
      if (this.buildsBehind()) return;
      const id = this.outdated();
      if (!id) break;
      await this.mergeSegments([id]);
    }
    // Re-embedding: a segment at a time, rewritten alone with the project's vectors. Searches
    // meanwhile use it lexically; a failing embedder leaves it so until the next try.
    for (let round = 0; round < 100 && !this.ctx.closed; round++) {
      if (this.buildsBehind()) return;
      const id = this.unembedded();
      if (!id) return;
      try {
        await this.mergeSegments([id], true);
        this.embedFailure = null;
      } catch (err) {
        const message = (err as Error).message;
        this.embedFailure = { at: performance.now(), message };
        this.ctx.log?.warn(`index ${this.ctx.siteId}: embedding segment ${id} failed, searched lexically until a later try: ${message}`);
        return;
      }
    }
  }

  private async mergeSegments(ids: string[], requireVectors = false): Promise<void> {
    const { generations, builds, commits, buffer } = this.stages;
    const g = generations.pin();
    this.running = true;
    try {
      const idSet = new Set(ids);
      const sources = g.views.filter((v) => idSet.has(v.state.id));
      if (sources.length !== ids.length || sources.length === 0) return;
      const sourceStates = new Set(sources.map((v) => v.state));
      const taskSources = sources.map((v) => {
        const liveIds: number[] = [];
        for (let i = 0; i < v.dead.length; i++) if (!v.dead[i]) liveIds.push(i);
        return { path: v.state.path, liveIds };
      });
      // Keep a winning delete marker only if an older row of its URL lives outside the merge.
      const candidates = new Map<string, SegmentDelete>();
      for (const v of sources) {
        for (const d of v.state.deletes) {
          const w = generations.published.get(d.url);
          if (w && w.state === v.state && w.docId < 0) candidates.set(d.url, d);
        }
      }
      const keep: SegmentDelete[] = [];
      if (candidates.size > 0) {
        const needed = new Set<string>();
        for (const v of g.views) {
          if (sourceStates.has(v.state)) continue;
          const s = v.state;
          for (let i = 0; i < s.urls.length; i++) {
            const d = candidates.get(s.urls[i]!);
            if (d && s.seqs[i]! < d.seq) needed.add(d.url);
          }
        }
        for (const url of needed) keep.push(candidates.get(url)!);
      }
      const liveTotal = taskSources.reduce((a, s) => a + s.liveIds.length, 0);
      let state: SegState | null = null;
      const started = performance.now();
      if (liveTotal > 0 || keep.length > 0) {
        state = await builds.run('m', commits.committedSeq, { task: 'merge-segments', sources: taskSources, deletes: keep, ...(requireVectors ? { requireVectors } : {}) });
      }
      if (this.ctx.closed) return;
      await commits.commit(state ? [state] : [], [...sourceStates], commits.committedSeq);
      // What a merge cost and when it ran (during an import or after) is what tuning the merge
      // scheduling needs to see.
      this.ctx.log?.info(
        `index ${this.ctx.siteId}: merged ${sources.length} segments (${liveTotal} live rows) in ${Math.round(performance.now() - started)} ms; ` +
          `${generations.current.views.length} segments, ${buffer.unpublished} documents unpublished`,
      );
    } finally {
      this.running = false;
      generations.unpin(g);
    }
  }
}
