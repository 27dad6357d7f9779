import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeSegment, NFIELDS, type SegmentEntry, SegmentReader, type IndexSnapshot, type LiveSegment } from '../../src/index/index.js';
import type { WriteOptions } from '../../src/index/segment-write.js';
import type { PageDoc } from '../../src/core/index.js';

/**
 * Builds segments from `batches` (each batch one segment, seqs assigned in order) and a snapshot
 * applying the liveness rule (highest seq per URL wins). For engine tests without the store.
 */
export function snapshotOf(
  batches: Array<Array<PageDoc | { delete: string }>>,
  keepDir?: string,
  write: Partial<WriteOptions> = {},
): IndexSnapshot & { cleanup(): void } {
  const dir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'snap-'));
  if (keepDir) fs.mkdirSync(keepDir, { recursive: true });
  let seq = 0;
  const readers: SegmentReader[] = [];
  batches.forEach((b, bi) => {
    const entries: SegmentEntry[] = [];
    const deletes: Array<{ seq: number; at: number; url: string }> = [];
    const byUrl = new Map<string, number>();
    for (const d of b) {
      seq++;
      if ('delete' in d) deletes.push({ seq, at: seq, url: d.delete });
      else {
        const prev = byUrl.get(d.url);
        const e = { seq, at: seq, firstAt: seq, doc: d };
        if (prev !== undefined) entries[prev] = e;
        else byUrl.set(d.url, entries.push(e) - 1);
      }
    }
    const file = path.join(dir, `s${bi}.seg`);
    writeSegment(file, entries, deletes, { defaultLanguage: 'en', ...write });
    readers.push(SegmentReader.open(file));
  });
  return snapshotOfReaders(readers, keepDir ? null : dir);
}

/**
 * A snapshot over already written segment files (in order of their seqs), for benchmarks that
 * build a large index once and reopen it. Nothing is removed on cleanup.
 */
export function snapshotOfFiles(files: string[]): IndexSnapshot & { cleanup(): void } {
  return snapshotOfReaders(files.map((f) => SegmentReader.open(f)), null);
}

function snapshotOfReaders(readers: SegmentReader[], removeDir: string | null): IndexSnapshot & { cleanup(): void } {
  const latest = new Map<string, number>();
  for (const r of readers) {
    for (const row of r.rows()) latest.set(row.url, Math.max(latest.get(row.url) ?? 0, row.seq));
    for (const d of r.deletes()) latest.set(d.url, Math.max(latest.get(d.url) ?? 0, d.seq));
  }
  let totalDocs = 0;
  const totalLengths = new Array<number>(NFIELDS).fill(0);
  const segments: LiveSegment[] = readers.map((reader, i) => {
    const rows = reader.rows();
    const dead = new Uint8Array(rows.length);
    let liveCount = 0;
    const liveLengths = new Array<number>(NFIELDS).fill(0);
    for (const row of rows) {
      if (latest.get(row.url) !== row.seq) dead[row.id] = 1;
      else if (row.status === 200) {
        liveCount++;
        row.lengths.forEach((l, f) => (liveLengths[f]! += l));
      }
    }
    totalDocs += liveCount;
    liveLengths.forEach((l, f) => (totalLengths[f]! += l));
    return { id: `s${i}`, reader, dead, liveCount, liveLengths };
  });
  return {
    generation: 1,
    segments,
    totalDocs,
    totalLengths,
    release() {},
    cleanup() {
      for (const r of readers) r.close();
      if (removeDir) fs.rmSync(removeDir, { recursive: true, force: true });
    },
  };
}
