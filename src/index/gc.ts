/**
 * GC stage of the segment store: deletes the files nobody needs, i.e. segment files no open
 * segment or build in flight claims (a build that never committed, a failed unlink, a crash)
 * and write-log files every op of which a commit covers. Segments a retired generation drops
 * are deleted at once (generations.ts); this is the sweep behind it, run at open and by the gc
 * job.
 *
 * Main thread; synchronous file I/O. Invariants: a file a build is writing or has just renamed
 * (SegmentBuilds.inFlight), and SQLite's side files of it (`-journal`, `-wal`, `-shm`), are never
 * deleted; a write-log file is deleted only once `committedSeq` covers all of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { safeReaddir } from './files.js';
import type { WriteLog } from './write-log.js';

/**
 * Deletes every file of `segDir` that is not in `keep` and does not belong to a build in
 * `inFlight`; returns how many it deleted.
 *
 * @example
 * removeUnclaimedSegments(segDir, new Set(manifest.segments.map((s) => s.file))); // at open
 */
export function removeUnclaimedSegments(segDir: string, keep: ReadonlySet<string>, inFlight: ReadonlySet<string> = new Set()): number {
  let removed = 0;
  for (const name of safeReaddir(segDir)) {
    if (keep.has(name) || inFlight.has(name) || inFlight.has(name.replace(/-(journal|wal|shm)$/, ''))) continue;
    fs.rmSync(path.join(segDir, name), { force: true });
    removed++;
  }
  return removed;
}

/**
 * The gc job's sweep over one project: unclaimed segment files, then write-log files covered
 * by `committedSeq`. Returns how many files it removed.
 */
export function sweep(segDir: string, openFiles: ReadonlySet<string>, inFlight: ReadonlySet<string>, wal: WriteLog, committedSeq: number): number {
  return removeUnclaimedSegments(segDir, openFiles, inFlight) + wal.deleteCovered(committedSeq);
}
