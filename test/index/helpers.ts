/** Shared helpers of the segment-store tests: temp dirs, a real worker pool, documents, models. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Piscina } from 'piscina';
import { createPool, type PageDoc } from '../../src/core/index.js';
import { makeDoc } from '../helpers/docs.js';
import type { IndexSnapshot } from '../../src/index/contract.js';
import { SegmentStore, type SegmentStoreOptions } from '../../src/index/store.js';
import type { TaskPool } from '../../src/index/tasks.js';

export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'sitesift-index-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A real Piscina pool over workers/index.ts; destroyed at teardown. */
export function realPool(t: { teardown(fn: () => Promise<void> | void): void }, workers = 2): Piscina {
  const pool = createPool({ workers, idleTimeoutMs: 1000 });
  t.teardown(() => pool.destroy());
  return pool;
}

export function doc(url: string, content: string, extra: Partial<PageDoc> = {}): PageDoc {
  return makeDoc(url, `Title of ${url.split('/').pop()}`, content, { language: 'en', ...extra });
}

/** A manual clock: starts at a fixed instant, advances 1 ms per read so `at` is distinct. */
export function fakeClock(start = Date.UTC(2026, 0, 1)): () => number {
  let now = start;
  return () => now++;
}

export async function openStore(dir: string, pool: TaskPool, extra: Partial<SegmentStoreOptions> = {}): Promise<SegmentStore> {
  // A long refresh interval: tests flush explicitly instead of waiting for the timer. Merges
  // only when a test calls merge() (mergeOnFlush has its own test in merge.test.ts).
  return SegmentStore.open({ siteId: 'test', dir, pool, refreshMs: 60_000, clock: fakeClock(), mergeOnFlush: false, ...extra });
}

/** Live rows of a snapshot: url → {seq, content} read through the segment readers. */
export function liveRows(snap: IndexSnapshot): Map<string, { seq: number; content: string; status: number }> {
  const out = new Map<string, { seq: number; content: string; status: number }>();
  for (const seg of snap.segments) {
    for (let i = 0; i < seg.dead.length; i++) {
      if (seg.dead[i]) continue;
      const e = seg.reader.entry(i);
      if (out.has(e.doc.url)) throw new Error(`URL live twice: ${e.doc.url}`);
      out.set(e.doc.url, { seq: e.seq, content: e.doc.content, status: e.doc.status });
    }
  }
  return out;
}
