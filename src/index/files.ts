/**
 * File helpers of the segment store: fsyncs that make a file's bytes or a directory's entries
 * durable, and a directory listing that treats a missing directory as empty.
 *
 * Any thread for the synchronous helpers; {@link fsyncDirAsync} runs on libuv's threadpool.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';

/**
 * fsyncs a file's contents, or a directory's entries so that a rename or unlink inside it is
 * durable.
 */
export function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * {@link fsyncPath} of a directory on libuv's threadpool: the main thread goes on serving while
 * the disk syncs (a directory fsync takes milliseconds, tens of them on a busy disk).
 */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The names in `dir`, or none when it does not exist. */
export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
