/**
 * Pool task payloads of the segment store and the helpers its workers share
 * (`workers/build-segment.ts`, `workers/merge-segments.ts`). Imported by both the main thread
 * and pool workers, so nothing here touches main-thread state.
 */
import fs from 'node:fs';
import { mergeSegments, writeSegment, type SegmentDelete, type SegmentEntry, type SegmentInfo } from './segment.js';

/** Where a crash test may make the store stall so that a SIGKILL lands there. */
export type PausePoint = 'build' | 'merge' | 'commit' | 'manifest';

/** `pool.run` input of `workers/build-segment.ts`. */
export interface BuildSegmentTask {
  task: 'build-segment';
  /** Temp path inside `segments/`; the main thread renames it when it commits. */
  path: string;
  entries: SegmentEntry[];
  deletes: SegmentDelete[];
  defaultLanguage: string;
  /** Test hook: stall after writing (crash tests). */
  pauseIn?: PausePoint;
}

/** `pool.run` input of `workers/merge-segments.ts`. */
export interface MergeSegmentsTask {
  task: 'merge-segments';
  path: string;
  /** Per source segment: its file and the docIds live when the merge started. */
  sources: Array<{ path: string; liveIds: number[] }>;
  /** Delete markers still needed (an older row of the URL lives outside the merge). */
  deletes: SegmentDelete[];
  defaultLanguage: string;
  pauseIn?: PausePoint;
}

/** What the store needs of a pool: Piscina satisfies it; tests may pass anything similar. */
export interface TaskPool {
  run(task: BuildSegmentTask | MergeSegmentsTask | Record<string, unknown>): Promise<unknown>;
}

/**
 * Crash-test hook: announces `PAUSED <point>` on stdout (fd 1, synchronously, so the parent
 * sees it even from a worker) and blocks this thread forever. Never called in production
 * (only when a caller sets `pauseIn`).
 */
export function stallForever(point: PausePoint): never {
  fs.writeSync(1, `PAUSED ${point}\n`);
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (;;) Atomics.wait(cell, 0, 0);
}

/** Runs a build task (the body of `workers/build-segment.ts`). */
export function runBuildSegment(t: BuildSegmentTask): SegmentInfo {
  const info = writeSegment(t.path, t.entries, t.deletes, { defaultLanguage: t.defaultLanguage });
  if (t.pauseIn === 'build') stallForever('build');
  return info;
}

/**
 * Runs a merge task (the body of `workers/merge-segments.ts`): copies the given live rows of
 * the source segments, unchanged (same seq, at, firstAt), into one new segment.
 */
export function runMergeSegments(t: MergeSegmentsTask): SegmentInfo {
  const info = mergeSegments(t.path, t.sources, t.deletes);
  if (t.pauseIn === 'merge') stallForever('merge');
  return info;
}
