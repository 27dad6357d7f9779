/**
 * The durable write log (WAL) of one project: `<projectDir>/wal/*.log`.
 *
 * One line per acknowledged batch: `<crc32 hex>\t<json {seq, at, ops}>\n`, where op i has
 * seq `seq + i`. One line per batch (rather than per op) makes a batch all-or-nothing even
 * when the append itself is torn by a crash; the checksum rejects a tail that the file system
 * padded with zeros or garbage. Lines are appended in seq order.
 *
 * Group commit: appends queue while an fsync is in flight and the next round writes all of
 * them with one `write` + one `fdatasync`, so concurrent writers share the cost of a sync.
 *
 * Files rotate when the segment store asks ({@link WriteLog.rotate}, at each flush) so that a
 * file becomes fully covered by a committed segment and can be deleted. A file is never
 * appended to again after a failed write or after start-up (a torn tail stays a tail).
 *
 * Main thread only, except the pure readers ({@link decodeLine}, {@link readLogLines},
 * {@link peekLineSeq}) that segment builds use in pool workers.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { IndexOp } from '../core/index.js';
import type { WriteOp } from './contract.js';
import { fsyncPath, safeReaddir } from './files.js';

/** One batch as it is stored in the log. */
export interface WalBatch {
  /** Seq of the first op; op i has seq `seq + i`. */
  seq: number;
  at: number;
  ops: WriteOp[];
}

interface LogFile {
  path: string;
  /** Highest seq durably written to the file; -1 when none. */
  maxSeq: number;
}

interface Append {
  line: Buffer;
  lastSeq: number;
  onDurable: () => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * One log line for `batch`: the same bytes as `JSON.stringify(batch)` framed by its CRC, built op
 * by op into Buffers. The whole batch as one string (about 0.6 MB for 100 pages) would be larger
 * than V8's large-object size, so every write request would allocate it straight into the main
 * thread's old generation, where it stays until a full GC and grows the heap during a bulk
 * import. One op's JSON (a page, a few KB) dies young.
 */
export function encodeBatch(batch: WalBatch): Buffer {
  // The CRC's 8 hex digits are written over the placeholder once the JSON is complete.
  const parts: Buffer[] = [Buffer.from(`00000000\t{"seq":${JSON.stringify(batch.seq)},"at":${JSON.stringify(batch.at)},"ops":[`, 'latin1')];
  batch.ops.forEach((op, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(Buffer.from(JSON.stringify(op), 'utf8'));
  });
  parts.push(CLOSE);
  const line = Buffer.concat(parts);
  line.write(crc32(line.subarray(9, line.length - 1)).toString(16).padStart(8, '0'), 0, 'latin1');
  return line;
}

const COMMA = Buffer.from(',', 'latin1');
const CLOSE = Buffer.from(']}\n', 'latin1');

/** Parses one log file; skips a torn or corrupt line instead of failing (it was never acknowledged). */
export function decodeLogFile(text: Buffer): { batches: WalBatch[]; skipped: number } {
  const batches: WalBatch[] = [];
  let skipped = 0;
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf(10, start);
    // No newline: a torn last line (the append was cut); ignore it.
    if (nl < 0) {
      skipped++;
      break;
    }
    const line = text.subarray(start, nl);
    start = nl + 1;
    if (line.length === 0) continue;
    const batch = decodeLine(line);
    if (batch) batches.push(batch);
    else skipped++;
  }
  return { batches, skipped };
}

/** Decodes one line (without its newline); null when torn or corrupt (bad CRC or JSON). */
export function decodeLine(line: Buffer): WalBatch | null {
  if (line.indexOf(9) !== 8) return null;
  const json = line.subarray(9);
  if (crc32(json).toString(16).padStart(8, '0') !== line.subarray(0, 8).toString('latin1')) return null;
  try {
    return JSON.parse(json.toString('utf8')) as WalBatch;
  } catch {
    return null;
  }
}

/**
 * The seq of a line's first op, read from the JSON prefix without checking or parsing the
 * line (`encodeBatch` writes `{"seq":N,...`), or null when the prefix has another shape.
 * Lets a reader skip batches it does not need cheaply; what it keeps is still fully checked.
 */
export function peekLineSeq(line: Buffer): number | null {
  const m = /^[0-9a-f]{8}\t\{"seq":(\d+)[,}]/.exec(line.subarray(0, 40).toString('latin1'));
  return m ? Number(m[1]) : null;
}

/**
 * Reads a log file line by line in fixed-size chunks, so that a reader (a pool worker building
 * a segment from the log) never holds the whole file. Yields each complete line without its
 * newline (a view valid until the next line is requested); a torn last line (no newline) is
 * not yielded. Safe on the file the main thread is
 * appending to: bytes appended during the read are either read whole or not at all as lines.
 */
export function readLogLines(file: string, chunkBytes = 1 << 20): Generator<Buffer> {
  // Opened now, so that a missing file throws here rather than at the first line.
  return linesOf(fs.openSync(file, 'r'), chunkBytes);
}

function* linesOf(fd: number, chunkBytes: number): Generator<Buffer> {
  try {
    // One buffer per file, reused: the unfinished tail of a read moves to its front and the
    // next read appends to it; it doubles only for a line longer than itself. Concatenating
    // each tail with the next chunk would make two ~1 MB buffers per line of a bulk import, and
    // such sizes, malloc'd and freed in turn, are what glibc keeps in a pool thread's arena.
    let buf = Buffer.allocUnsafe(chunkBytes);
    let held = 0;
    for (;;) {
      if (held === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, held);
        buf = bigger;
      }
      const n = fs.readSync(fd, buf, held, buf.length - held, null);
      if (n === 0) break;
      const data = buf.subarray(0, held + n);
      let start = 0;
      for (;;) {
        const nl = data.indexOf(10, start);
        if (nl < 0) break;
        yield data.subarray(start, nl);
        start = nl + 1;
      }
      buf.copyWithin(0, start, data.length);
      held = data.length - start;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Expands stored batches into ops with their seqs, sorted by seq, duplicates removed. */
export function batchesToOps(batches: WalBatch[]): IndexOp[] {
  const ops: IndexOp[] = [];
  for (const b of batches) {
    b.ops.forEach((op, i) => {
      const seq = b.seq + i;
      ops.push(op.op === 'upsert' ? { op: 'upsert', seq, at: b.at, doc: op.doc } : { op: 'delete', seq, at: b.at, url: op.url });
    });
  }
  ops.sort((a, b) => a.seq - b.seq);
  return ops.filter((op, i) => i === 0 || ops[i - 1]!.seq !== op.seq);
}

export class WriteLog {
  private readonly dir: string;
  private readonly files: LogFile[] = [];
  private current: { file: LogFile; handle: fsp.FileHandle } | null = null;
  private queue: Append[] = [];
  private draining = false;
  private rotateRequested = false;
  private closed = false;
  /** fdatasync calls so far (one per group-commit round; tests check the sharing). */
  syncs = 0;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Opens the log directory and returns every stored op (sorted by seq). New appends always go
   * to a new file, so a torn tail of an old file never gets glued to a new line.
   */
  static open(dir: string): { log: WriteLog; ops: IndexOp[]; skipped: number } {
    fs.mkdirSync(dir, { recursive: true });
    const log = new WriteLog(dir);
    const batches: WalBatch[] = [];
    let skipped = 0;
    for (const name of safeReaddir(dir).sort()) {
      const p = path.join(dir, name);
      if (!name.endsWith('.log')) {
        fs.rmSync(p, { force: true });
        continue;
      }
      const decoded = decodeLogFile(fs.readFileSync(p));
      skipped += decoded.skipped;
      let maxSeq = -1;
      for (const b of decoded.batches) maxSeq = Math.max(maxSeq, b.seq + b.ops.length - 1);
      batches.push(...decoded.batches);
      log.files.push({ path: p, maxSeq });
    }
    return { log, ops: batchesToOps(batches), skipped };
  }

  /**
   * Queues one batch; resolves after it is fsynced. `onDurable` runs synchronously right
   * after the sync, in append (= seq) order, before any later batch's `onDurable`.
   */
  append(batch: WalBatch, onDurable: () => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error('write log is closed'));
    const line = encodeBatch(batch);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ line, lastSeq: batch.seq + batch.ops.length - 1, onDurable, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** The next round starts a new file (called when a flush takes the buffer). */
  rotate(): void {
    this.rotateRequested = true;
  }

  /** Deletes log files whose every op has seq <= committedSeq. */
  deleteCovered(committedSeq: number): number {
    let removed = 0;
    // The current file can go too once no round is writing to it: the next round opens a new one.
    if (this.current && !this.draining && this.current.file.maxSeq <= committedSeq) {
      const { handle } = this.current;
      this.current = null;
      handle.close().catch(() => undefined);
    }
    for (let i = this.files.length - 1; i >= 0; i--) {
      const f = this.files[i]!;
      if (this.current?.file === f || f.maxSeq > committedSeq) continue;
      fs.rmSync(f.path, { force: true });
      this.files.splice(i, 1);
      removed++;
    }
    return removed;
  }

  /**
   * Paths of every log file (oldest first), the one being appended to included: where a build
   * task finds the acknowledged ops it builds (each was fsynced before it was acknowledged).
   */
  filePaths(): string[] {
    return this.files.map((f) => f.path);
  }

  /** Names of the log files (tests, gc). */
  fileNames(): string[] {
    return this.files.map((f) => path.basename(f.path));
  }

  /** Waits for queued appends, then closes the current file. */
  async close(): Promise<void> {
    while (this.draining) await new Promise((r) => setImmediate(r));
    this.closed = true;
    const cur = this.current;
    this.current = null;
    await cur?.handle.close();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.queue.length > 0) {
      const round = this.queue;
      this.queue = [];
      try {
        const cur = await this.fileForRound(round[0]!.lastSeq);
        await cur.handle.write(round.length === 1 ? round[0]!.line : Buffer.concat(round.map((a) => a.line)));
        await cur.handle.datasync();
        this.syncs++;
        cur.file.maxSeq = round[round.length - 1]!.lastSeq;
      } catch (err) {
        // The file may now end in a partial line: never append to it again.
        const cur = this.current;
        this.current = null;
        cur?.handle.close().catch(() => undefined);
        for (const a of round) a.reject(err);
        continue;
      }
      for (const a of round) {
        try {
          a.onDurable();
        } catch (err) {
          a.reject(err);
          continue;
        }
        a.resolve();
      }
    }
    this.draining = false;
  }

  private async fileForRound(firstSeq: number): Promise<{ file: LogFile; handle: fsp.FileHandle }> {
    if (this.current && !this.rotateRequested) return this.current;
    this.rotateRequested = false;
    if (this.current) {
      const old = this.current;
      this.current = null;
      await old.handle.close();
    }
    // Unique name: never reopen an existing (possibly torn) file.
    const name = `${String(firstSeq).padStart(16, '0')}-${randomBytes(3).toString('hex')}.log`;
    const p = path.join(this.dir, name);
    const handle = await fsp.open(p, 'wx');
    // The new directory entry must be durable before anything in the file is acknowledged.
    fsyncPath(this.dir);
    const file: LogFile = { path: p, maxSeq: -1 };
    this.files.push(file);
    this.current = { file, handle };
    return this.current;
  }
}
