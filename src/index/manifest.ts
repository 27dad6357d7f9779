/**
 * The manifest: the one file that says which segments are live in a project. Written only by
 * the main thread's serial commit chain (commit.ts, through {@link writeManifest}); replaced
 * atomically (temp file, fsync, rename, fsync directory), so a reader at start-up sees either
 * the old or the new generation, never a mix.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../core/index.js';
import { fsyncDirAsync, safeReaddir } from './files.js';
import type { SegmentCounts } from './segment-format.js';

export const MANIFEST_FORMAT = 1;
export const MANIFEST_FILE = 'manifest.json';
const TEMP_PREFIX = 'manifest.json.tmp';

/** One published segment as the manifest records it. */
export interface ManifestSegment extends SegmentCounts {
  id: string;
  /** File name inside `segments/`. */
  file: string;
}

export interface Manifest {
  format: number;
  /** +1 on every commit (flush or merge). */
  generation: number;
  /** Every op with seq <= committedSeq is in a listed segment (or was dropped as unneeded). */
  committedSeq: number;
  segments: ManifestSegment[];
}

export function emptyManifest(): Manifest {
  return { format: MANIFEST_FORMAT, generation: 0, committedSeq: 0, segments: [] };
}

/**
 * Reads `<projectDir>/manifest.json`, deleting leftover temp manifests of an interrupted commit.
 * Returns an empty manifest for a new project. A present but unreadable manifest is corruption
 * (the rename is atomic, so it cannot be torn) and throws.
 */
export function readManifest(projectDir: string): Manifest {
  for (const name of safeReaddir(projectDir)) {
    // A temp manifest is either torn or was never renamed: the commit it belonged to did not happen.
    if (name.startsWith(TEMP_PREFIX)) fs.rmSync(path.join(projectDir, name), { force: true });
  }
  const file = path.join(projectDir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyManifest();
    throw err;
  }
  let parsed: Manifest;
  try {
    parsed = JSON.parse(text) as Manifest;
  } catch {
    throw new AppError('internal', `The index manifest ${file} is not valid JSON.`);
  }
  if (parsed.format !== MANIFEST_FORMAT || !Array.isArray(parsed.segments)) {
    throw new AppError('internal', `The index manifest ${file} has unsupported format ${String(parsed.format)}.`);
  }
  return parsed;
}

/**
 * Atomically replaces the manifest: write temp, fsync, rename, fsync directory. Main thread;
 * the file work runs on libuv's threadpool (async), so the caller must serialise calls: two
 * in flight for one project would share the temp file. The commit chain (commit.ts) does (one
 * commit at a time, in order). Resolves once the new manifest is durable; until then a crash
 * leaves the old one or the new one (the rename is atomic), and a rejection means the caller
 * must treat the commit as not done (the old manifest may still be the one on disk).
 * `pauseBeforeRename` is a crash-test hook (stall with the temp file written).
 */
export async function writeManifest(projectDir: string, manifest: Manifest, pauseBeforeRename?: () => void): Promise<void> {
  const tmp = path.join(projectDir, `${TEMP_PREFIX}-${process.pid}`);
  const handle = await fsp.open(tmp, 'w');
  try {
    await handle.writeFile(JSON.stringify(manifest));
    await handle.sync();
  } finally {
    await handle.close();
  }
  pauseBeforeRename?.();
  await fsp.rename(tmp, path.join(projectDir, MANIFEST_FILE));
  await fsyncDirAsync(projectDir);
}
