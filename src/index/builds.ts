/**
 * Running a segment build or merge in the worker pool and sealing its file into `segments/`:
 * the step between the buffer's flush (buffer.ts) or a merge (merge.ts) and the commit
 * (commit.ts). The pool task writes `<id>.seg.tmp` (segment-write.ts, segment-merge.ts); here
 * the file is renamed to `<id>.seg`, the directory fsync'd and the segment opened.
 *
 * Main thread; the task runs on a pool thread and the rename and fsync on libuv's threadpool.
 * Invariants: both file names of a build stay in {@link SegmentBuilds.inFlight} until the
 * segment is a known state (opened, or both names removed after a failure), so gc never deletes
 * a file a build is writing or has just renamed; a sealed segment is not published until the
 * commit chain lists it in a manifest.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { StoreContext } from './context.js';
import type { Generations, SegState } from './generations.js';
import { fsyncDirAsync } from './files.js';
import type { SegmentInfo } from './segment-format.js';
import type { RowColumns } from './segment-reader.js';
import type { BuildSegmentTask, MergeSegmentsTask } from './tasks.js';

/** A pool task as a stage hands it over; the file path, language and pause point are added here. */
export type SegmentTask = Omit<BuildSegmentTask, 'path' | 'defaultLanguage' | 'embedder' | 'pauseIn'> | Omit<MergeSegmentsTask, 'path' | 'defaultLanguage' | 'embedder' | 'pauseIn'>;

export class SegmentBuilds {
  private readonly ctx: StoreContext;
  private readonly generations: Generations;
  /** File names (`<id>.seg.tmp`, `<id>.seg`) of builds and merges in flight: gc must not touch them. */
  readonly inFlight = new Set<string>();

  constructor(ctx: StoreContext, generations: Generations) {
    this.ctx = ctx;
    this.generations = generations;
  }

  /**
   * Runs `task` in the pool writing a new segment, renames it into place and opens it. The
   * segment's id sorts by `seq` (the committedSeq it was started at; `prefix` 'm' for merges)
   * and carries a random suffix, so two builds never share a name. On failure both file names
   * are removed (no manifest lists them).
   *
   * @example
   * const state = await builds.run('', upTo, { task: 'build-segment', logFiles, seqs, firstAts, deletes });
   */
  async run(prefix: string, seq: number, task: SegmentTask): Promise<SegState> {
    const ctx = this.ctx;
    const id = `${prefix}${String(seq).padStart(12, '0')}-${randomBytes(4).toString('hex')}`;
    const file = `${id}.seg`;
    const tmp = path.join(ctx.segDir, `${file}.tmp`);
    this.inFlight.add(`${file}.tmp`);
    this.inFlight.add(file);
    try {
      const info = (await ctx.pool.run({
        ...task,
        path: tmp,
        defaultLanguage: ctx.defaultLanguage(),
        embedder: ctx.embedder(),
        ...(ctx.pauseIn ? { pauseIn: ctx.pauseIn } : {}),
      })) as SegmentInfo & { rows?: RowColumns };
      if (ctx.closed) throw ctx.closedError('a segment build');
      await fs.promises.rename(tmp, path.join(ctx.segDir, file));
      await fsyncDirAsync(ctx.segDir);
      if (ctx.closed) throw ctx.closedError('a segment build');
      const { docCount, searchableCount, deleteCount, minSeq, maxSeq, bytes } = info;
      if (task.task === 'merge-segments' && task.requireVectors && !info.embedder) throw new Error('the merged segment holds no vectors');
      return this.generations.load({ id, file, docCount, searchableCount, deleteCount, minSeq, maxSeq, bytes }, info.rows);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      fs.rmSync(path.join(ctx.segDir, file), { force: true });
      throw err;
    } finally {
      this.inFlight.delete(`${file}.tmp`);
      this.inFlight.delete(file);
    }
  }
}
