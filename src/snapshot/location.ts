/**
 * Where snapshots are written and read: a directory (the main case; nginx or any static
 * server can serve it) or an http(s) URL (read by search nodes and restore; written with
 * plain PUTs, so any server or object store that accepts PUT of a whole object works).
 *
 * Writes are atomic per file: a directory gets temp file + fsync + rename + directory fsync;
 * an HTTP PUT replaces the object whole (the server's job).
 */
import { randomBytes, createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A place a snapshot is read from. Paths are relative to the snapshot root, `/`-separated. */
export interface SnapshotSource {
  readonly location: string;
  /** The file's bytes, or null when it does not exist. */
  read(rel: string): Promise<Buffer | null>;
  /**
   * Streams the file into the local file `dest` (created), hashing it; resolves its SHA-256 and
   * size. Rejects when it does not exist.
   */
  copyTo(rel: string, dest: string): Promise<{ sha256: string; bytes: number }>;
}

/** A place a snapshot is written to. */
export interface SnapshotTarget extends SnapshotSource {
  has(rel: string): Promise<boolean>;
  /** Replaces the file atomically with `data`. */
  write(rel: string, data: string | Buffer): Promise<void>;
  /**
   * Stores the local file `src` at `rel` atomically, checking on the way that its content hash
   * is `sha256` (segment files are immutable, so a mismatch means something else changed it).
   * `beforeCommit` runs with the bytes written but not yet visible (crash tests).
   */
  putFile(rel: string, src: string, sha256: string, beforeCommit?: () => Promise<void>): Promise<void>;
  /** Local directory of a directory target (pruning lists and deletes there); null for URLs. */
  readonly dir: string | null;
}

/** Opens `location` (an absolute or relative directory, or an http(s) URL) as a target. */
export function openTarget(location: string): SnapshotTarget {
  return isUrl(location) ? new HttpLocation(location) : new DirLocation(path.resolve(location));
}

/** Opens `location` as a source (same forms as {@link openTarget}). */
export function openSource(location: string): SnapshotSource {
  return openTarget(location);
}

export function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/** A stream transform that hashes and counts what passes. */
function hasher(): Transform & { digest(): { sha256: string; bytes: number } } {
  const h = createHash('sha256');
  let bytes = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      bytes += chunk.length;
      cb(null, chunk);
    },
  }) as Transform & { digest(): { sha256: string; bytes: number } };
  t.digest = () => ({ sha256: h.digest('hex'), bytes });
  return t;
}

/** Temp name beside `file` (same directory, so the rename is atomic). */
function tempName(file: string): string {
  return `${path.dirname(file)}/.tmp-${process.pid}-${randomBytes(6).toString('hex')}-${path.basename(file)}`;
}

/** Flushes a file or directory to disk (a rename or a new file then survives a crash). */
export async function fsyncPath(p: string): Promise<void> {
  const h = await fsp.open(p, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

class DirLocation implements SnapshotTarget {
  constructor(readonly dir: string) {}

  get location(): string {
    return this.dir;
  }

  private abs(rel: string): string {
    if (rel.split('/').some((p) => p === '..' || p === '')) throw new Error(`bad snapshot path ${rel}`);
    return path.join(this.dir, ...rel.split('/'));
  }

  async has(rel: string): Promise<boolean> {
    try {
      await fsp.access(this.abs(rel));
      return true;
    } catch {
      return false;
    }
  }

  async read(rel: string): Promise<Buffer | null> {
    try {
      return await fsp.readFile(this.abs(rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async copyTo(rel: string, dest: string): Promise<{ sha256: string; bytes: number }> {
    const h = hasher();
    await pipeline(fs.createReadStream(this.abs(rel)), h, fs.createWriteStream(dest));
    return h.digest();
  }

  async write(rel: string, data: string | Buffer): Promise<void> {
    const file = this.abs(rel);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const tmp = tempName(file);
    const h = await fsp.open(tmp, 'w');
    try {
      await h.writeFile(data);
      await h.sync();
    } finally {
      await h.close();
    }
    await fsp.rename(tmp, file);
    await fsyncPath(path.dirname(file));
  }

  async putFile(rel: string, src: string, sha256: string, beforeCommit?: () => Promise<void>): Promise<void> {
    const file = this.abs(rel);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const tmp = tempName(file);
    try {
      const h = hasher();
      await pipeline(fs.createReadStream(src), h, fs.createWriteStream(tmp));
      const got = h.digest();
      if (got.sha256 !== sha256) throw new Error(`${src} changed while it was exported (hash ${got.sha256}, expected ${sha256})`);
      const fh = await fsp.open(tmp, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await beforeCommit?.();
      await fsp.rename(tmp, file);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    await fsyncPath(path.dirname(file));
  }
}

class HttpLocation implements SnapshotTarget {
  readonly dir = null;
  private readonly base: string;

  constructor(readonly location: string) {
    this.base = location.replace(/\/+$/, '');
  }

  private url(rel: string): string {
    return `${this.base}/${rel}`;
  }

  async has(rel: string): Promise<boolean> {
    const res = await fetch(this.url(rel), { method: 'HEAD' });
    if (res.status === 404) return false;
    if (!res.ok) throw new Error(`HEAD ${this.url(rel)}: HTTP ${res.status}`);
    return true;
  }

  async read(rel: string): Promise<Buffer | null> {
    const res = await fetch(this.url(rel));
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`GET ${this.url(rel)}: HTTP ${res.status}`);
    }
    return Buffer.from(await res.arrayBuffer());
  }

  async copyTo(rel: string, dest: string): Promise<{ sha256: string; bytes: number }> {
    const res = await fetch(this.url(rel));
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw new Error(`GET ${this.url(rel)}: HTTP ${res.status}`);
    }
    const h = hasher();
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), h, fs.createWriteStream(dest));
    return h.digest();
  }

  private async put(rel: string, body: Buffer | Readable, length: number): Promise<void> {
    const res = await fetch(this.url(rel), {
      method: 'PUT',
      headers: { 'Content-Length': String(length) },
      body: Buffer.isBuffer(body) ? new Uint8Array(body) : (Readable.toWeb(body as Readable) as unknown as ReadableStream),
      ...(Buffer.isBuffer(body) ? {} : { duplex: 'half' }),
    } as RequestInit);
    await res.body?.cancel();
    if (!res.ok) throw new Error(`PUT ${this.url(rel)}: HTTP ${res.status}`);
  }

  async write(rel: string, data: string | Buffer): Promise<void> {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    await this.put(rel, buf, buf.length);
  }

  async putFile(rel: string, src: string, sha256: string, beforeCommit?: () => Promise<void>): Promise<void> {
    await beforeCommit?.();
    const { size } = await fsp.stat(src);
    // The hash was computed from the same immutable file just before; the reader verifies it.
    void sha256;
    await this.put(rel, fs.createReadStream(src), size);
  }
}
