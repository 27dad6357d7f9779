/**
 * The manifest: the one file that says which segments are live in a project (SPEC §9).
 * Written only by the main thread's serial commit step ({@link writeManifest}); replaced
 * atomically (temp file, fsync, rename, fsync directory), so a reader at start-up sees either
 * the old or the new generation, never a mix.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors.js';

export const MANIFEST_FORMAT = 1;
export const MANIFEST_FILE = 'manifest.json';
const TEMP_PREFIX = 'manifest.json.tmp';

/** One published segment as the manifest records it. */
export interface ManifestSegment {
  id: string;
  /** File name inside `segments/`. */
  file: string;
  docCount: number;
  searchableCount: number;
  deleteCount: number;
  minSeq: number;
  maxSeq: number;
  bytes: number;
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

/** fsyncs a directory so a rename/unlink inside it is durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
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
 * Atomically replaces the manifest: write temp, fsync, rename, fsync directory.
 * Main thread, synchronous on purpose: the commit step must not interleave with another commit.
 * `pauseBeforeRename` is a crash-test hook (stall with the temp file written).
 */
export function writeManifest(projectDir: string, manifest: Manifest, pauseBeforeRename?: () => void): void {
  const tmp = path.join(projectDir, `${TEMP_PREFIX}-${process.pid}`);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, JSON.stringify(manifest));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  pauseBeforeRename?.();
  fs.renameSync(tmp, path.join(projectDir, MANIFEST_FILE));
  fsyncDir(projectDir);
}

export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
