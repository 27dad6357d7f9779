/**
 * Pool task payloads of the segment store and the helpers its workers share
 * (`workers/build-segment.ts`, `workers/merge-segments.ts`). Imported by both the main thread
 * and pool workers, so nothing here touches main-thread state.
 */
import fs from 'node:fs';
import type { EmbedderSpec, PageDoc } from '../core/index.js';
import { docParts, docText, docWordParts, embedHttp, embedParts, embedWords, HTTP_EMBED_MAX_CHARS, loadWordVectors, type DocWords, type EmbeddableDoc } from '../text/index.js';
import { openForScan, type SegmentDelete, type SegmentEntry, type SegmentInfo } from './segment-format.js';
import { mergeSegments, storedEmbeddable, type MergeVectors } from './segment-merge.js';
import { storedText } from './stored-codec.js';
import { writeSegment } from './segment-write.js';
import { readRowColumns, type RowColumns } from './segment-reader.js';
import { decodeLine, peekLineSeq, readLogLines } from './write-log.js';

/** Where a crash test may make the store stall so that a SIGKILL lands there. */
export type PausePoint = 'build' | 'merge' | 'commit' | 'manifest';

/**
 * `pool.run` input of `workers/build-segment.ts`. The documents themselves do not travel: the
 * worker reads the upserts it is given by seq from the write log, where each was fsynced before
 * it was acknowledged (so the main thread keeps no document bodies and nothing is cloned
 * between threads).
 */
export interface BuildSegmentTask {
  task: 'build-segment';
  /** Temp path inside `segments/`; the main thread renames it when it commits. */
  path: string;
  /** Write-log files to read the upserts from, oldest first (WriteLog.filePaths()). */
  logFiles: string[];
  /** Seqs of the upserts to build, ascending (at most one per URL: the newest). */
  seqs: number[];
  /** `firstAt` of each upsert in {@link seqs} (not in the log: it comes from the URL's history). */
  firstAts: number[];
  deletes: SegmentDelete[];
  defaultLanguage: string;
  /** The project's embedder (null: none). The built-in one embeds during the build; an HTTP one later, by a merge. */
  embedder?: EmbedderSpec | null;
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
  /** The project's embedder: rows of sources embedded otherwise are embedded during the merge. */
  embedder?: EmbedderSpec | null;
  /** Fail the merge when the embedder fails (a re-embedding merge) instead of writing the file without vectors. */
  requireVectors?: boolean;
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
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const line = Buffer.from(`PAUSED ${point}\n`);
  for (let off = 0; off < line.length; ) {
    try {
      off += fs.writeSync(1, line, off);
    } catch (err) {
      // stdout is a pipe the parent may be slow to drain.
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(cell, 0, 0, 5);
    }
  }
  for (;;) Atomics.wait(cell, 0, 0);
}

/**
 * The upserts with the given seqs, read from the write log one line at a time, in log (= seq)
 * order. Throws when one of them is not in the log (the build then fails and is retried; the
 * log is deleted only once a commit covers it, so this means the files were tampered with).
 */
export function* loggedEntries(logFiles: string[], seqs: number[], firstAts: number[], stats?: { linesParsed: number }): Generator<SegmentEntry> {
  if (seqs.length === 0) return;
  const firstAt = new Map<number, number>();
  seqs.forEach((seq, i) => firstAt.set(seq, firstAts[i]!));
  const minSeq = seqs[0]!;
  const maxSeq = seqs[seqs.length - 1]!;
  function* entriesOf(line: Buffer): Generator<SegmentEntry> {
    if (stats) stats.linesParsed++;
    const batch = decodeLine(line);
    if (!batch) return; // torn or corrupt: never acknowledged
    for (let i = 0; i < batch.ops.length; i++) {
      const op = batch.ops[i]!;
      const seq = batch.seq + i;
      const fa = firstAt.get(seq);
      if (fa === undefined || op.op !== 'upsert') continue;
      firstAt.delete(seq);
      yield { seq, at: batch.at, firstAt: fa, doc: op.doc };
    }
  }
  for (const file of logFiles) {
    let lines: Generator<Buffer>;
    try {
      lines = readLogLines(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // covered and deleted: nothing wanted in it
      throw err;
    }
    // One line of lookahead: a line whose successor starts at or below the first wanted seq
    // holds only older ops (lines are in seq order), so it is skipped unparsed. The parts of a
    // bulk flush read the same log, and each part would otherwise parse every batch of the
    // parts before it (a JSON.parse of ~1 MB per batch of 100 pages).
    let held: Buffer | null = null;
    for (const line of lines) {
      if (firstAt.size === 0) return;
      const peek = peekLineSeq(line);
      if (held !== null && !(peek !== null && peek <= minSeq)) yield* entriesOf(held);
      held = null;
      // Batches newer than this build (the file being appended to) are skipped unparsed.
      if (peek !== null && peek > maxSeq) continue;
      // Only a batch that starts below the first wanted seq waits for its successor; the reader
      // reuses its buffer for the next line, so that one is copied. Others are parsed now.
      if (peek !== null && peek < minSeq) held = Buffer.from(line);
      else yield* entriesOf(line);
    }
    if (held !== null && firstAt.size > 0) yield* entriesOf(held);
  }
  if (firstAt.size > 0) {
    throw new Error(`write log is missing ${firstAt.size} acknowledged upsert(s) (first seq ${Math.min(...firstAt.keys())})`);
  }
}

/**
 * The built-in embedder as a synchronous function of a page, or null when the spec is not the
 * built-in one or its word-vector file cannot be read (the segment is then written lexically,
 * and a later merge embeds it). Given the page's words as a segment build analysed them
 * ({@link DocWords}), it embeds those instead of analysing the page again (the same vector).
 */
export function builtinEmbed(spec: EmbedderSpec | null | undefined): ((doc: EmbeddableDoc, words?: DocWords | null) => Float32Array | null) | null {
  if (!spec || spec.kind !== 'builtin') return null;
  let wv;
  try {
    wv = loadWordVectors(spec.table);
  } catch {
    return null;
  }
  return (doc, words) => (words ? embedWords(wv, docWordParts(words)) : embedParts(wv, docParts(doc)));
}

/**
 * What a build or merge task returns: the sealed file's info and its rows' liveness columns
 * ({@link readRowColumns}), read here in the pool thread from the file just sealed, so that
 * the main thread's commit does not scan the file itself (at ~100k rows that scan held the
 * event loop for 0.3-0.8 s at every large merge). Structured-cloned to the main thread.
 */
export type SealedSegment = SegmentInfo & { rows: RowColumns };

/** Runs a build task (the body of `workers/build-segment.ts`). */
export function runBuildSegment(t: BuildSegmentTask): SealedSegment {
  const entries = loggedEntries(t.logFiles, t.seqs, t.firstAts);
  const embed = builtinEmbed(t.embedder);
  const info = writeSegment(t.path, entries, t.deletes, {
    defaultLanguage: t.defaultLanguage,
    ...(embed ? { embed, embedder: t.embedder!.fp } : {}),
  });
  if (t.pauseIn === 'build') stallForever('build');
  return { ...info, rows: readRowColumns(t.path, info.docCount) };
}

/**
 * Runs a merge task (the body of `workers/merge-segments.ts`): copies the given live rows of
 * the source segments, unchanged (same seq, at, firstAt), into one new segment.
 */
export async function runMergeSegments(t: MergeSegmentsTask): Promise<SealedSegment> {
  let vectors: MergeVectors | undefined;
  const spec = t.embedder;
  if (spec?.kind === 'builtin') {
    const embed = builtinEmbed(spec);
    if (embed || t.requireVectors) vectors = { fp: spec.fp, embed };
  } else if (spec?.kind === 'http') {
    try {
      vectors = { fp: spec.fp, embed: null, given: await httpVectors(spec, t.sources) };
    } catch (err) {
      if (t.requireVectors) throw err;
      vectors = undefined;
    }
  }
  if (t.requireVectors && vectors && !vectors.embed && !vectors.given) throw new Error('the built-in word vectors cannot be read');
  const info = mergeSegments(t.path, t.sources, t.deletes, vectors, t.defaultLanguage);
  if (t.pauseIn === 'merge') stallForever('merge');
  return { ...info, rows: readRowColumns(t.path, info.docCount) };
}

/**
 * HTTP vectors of the live searchable rows of the sources not already embedded with `spec`
 * (null for a source whose vectors are copied). Throws EmbedderError when the service fails.
 */
async function httpVectors(spec: EmbedderSpec & { kind: 'http' }, sources: MergeSegmentsTask['sources']): Promise<Array<Map<number, Float32Array> | null>> {
  const out: Array<Map<number, Float32Array> | null> = [];
  for (const src of sources) {
    const db = openForScan(src.path);
    try {
      const hasVecs = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vecs'").get() !== undefined;
      const fp = db.prepare("SELECT value FROM meta WHERE key = 'embedder'").pluck().get() as string | undefined;
      if (hasVecs && fp === spec.fp) {
        out.push(null);
        continue;
      }
      const live = new Set(src.liveIds);
      const ids: number[] = [];
      const texts: string[] = [];
      const rows = db.prepare('SELECT id, title, headings, content, description FROM docs WHERE status = 200 ORDER BY id').iterate() as IterableIterator<{
        id: number; title: string; headings: string | Buffer; content: string | Buffer; description: string | null;
      }>;
      for (const r of rows) {
        if (!live.has(r.id)) continue;
        ids.push(r.id);
        texts.push(docText(storedEmbeddable({ ...r, headings: storedText(r.headings), content: storedText(r.content) })).slice(0, HTTP_EMBED_MAX_CHARS));
      }
      const vecs = await embedHttp(spec, texts);
      out.push(new Map(ids.map((id, i) => [id, vecs[i]!])));
    } finally {
      db.close();
    }
  }
  return out;
}
