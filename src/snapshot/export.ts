/**
 * Exporting snapshots on the primary (main thread; file work on libuv's threadpool).
 *
 * Per project: pin the index's current generation (its segment files then stay on disk, and
 * the store keeps taking writes and searches), store each segment file once under its content
 * hash, store the query-suggestion rows the same way, write the generation's manifest, replace
 * `projects/<siteId>/latest.json`; then replace `index.json` once for the whole export. Blobs
 * before manifests before pointers, each file atomic, so a crash at any point leaves the
 * previous snapshot whole. A later export finds most blobs present and writes only new ones.
 *
 * Exports run one at a time per server (a promise chain), so two never race on `index.json`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger, Settings } from '../core/index.js';
import type { ProjectIndex } from '../index/index.js';
import { withoutSecrets, type Project, type StoredKey } from '../projects/index.js';
import {
  INDEX_FILE, SNAPSHOT_FORMAT, blobPath, latestPath, manifestPath, parseIndex, parseManifest, sha256,
  type ManifestPointer, type ProjectManifest, type SnapshotIndex, type SnapshotSegment,
} from './format.js';
import { openTarget, type SnapshotTarget } from './location.js';

/** What an export reads on the primary. */
export interface ExportSources {
  projects: {
    listProjects(): Project[];
    getProject(siteId: string): Project | null;
    getSettings(siteId: string): Settings;
    exportKeys(siteId: string): StoredKey[];
  };
  indexes: { get(siteId: string): Promise<ProjectIndex> };
  /** The query-suggestion aggregate of a project (`SuggestionIndex.rows()`). */
  suggestionRows(siteId: string): Array<[string, number, number, number]>;
  clock?: () => number;
  log?: Logger;
  /**
   * Crash-test hook: stall (never resolve) at this point, after logging "export paused":
   * `export-blob` with a new blob written but not yet renamed into place, `export-index` with
   * the new `index.json` about to be written (blobs and manifests in place).
   */
  pauseAt?: 'export-blob' | 'export-index' | null;
}

export interface ExportRequest {
  /** Projects to export; null: every project. */
  siteIds: string[] | null;
  /** Directory or http(s) URL. */
  out: string;
  /** Carry the projects' API key hashes (for restore). */
  keys?: boolean;
  /** Prune files no kept manifest references after this long (directories only); default 1 hour. */
  pruneGraceMs?: number;
}

export interface ProjectExport {
  siteId: string;
  generation: number;
  manifest: string;
  segments: number;
  /** Blobs this export wrote (the rest were already there). */
  blobsWritten: number;
  /** Bytes of files this export wrote (blobs, manifest, pointers). */
  bytesWritten: number;
  blobsPresent: number;
}

export interface ExportResult {
  out: string;
  projects: ProjectExport[];
  /** Bytes written in total, `index.json` included. */
  bytesWritten: number;
  pruned: { manifests: number; blobs: number; temps: number };
  ms: number;
}

/** Default {@link ExportRequest.pruneGraceMs}: long enough for a node to finish fetching a generation. */
export const DEFAULT_PRUNE_GRACE_MS = 60 * 60 * 1000;

/**
 * Writes snapshots of projects. One per server; {@link run} calls are serialised.
 *
 * @example
 * const exporter = new SnapshotExporter({ projects, indexes, suggestionRows: (id) => analytics.suggestionStamp(id).rows() });
 * const result = await exporter.run({ siteIds: ['docs'], out: '/srv/sitesift-export' });
 */
export class SnapshotExporter {
  private chain: Promise<unknown> = Promise.resolve();
  /** Segment path → its hash, by size and mtime: segment files never change, so each is read once. */
  private readonly hashes = new Map<string, { size: number; mtimeMs: number; sha256: string }>();

  constructor(private readonly src: ExportSources) {}

  /** Exports the requested projects (after any export already running). */
  run(req: ExportRequest): Promise<ExportResult> {
    const next = this.chain.then(() => this.exportNow(req));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private now(): number {
    return (this.src.clock ?? Date.now)();
  }

  private async pause(point: 'export-blob' | 'export-index'): Promise<void> {
    if (this.src.pauseAt !== point) return;
    this.src.log?.warn({ point }, 'export paused');
    await new Promise(() => {});
  }

  private async exportNow(req: ExportRequest): Promise<ExportResult> {
    const started = this.now();
    const target = openTarget(req.out);
    const siteIds = req.siteIds ?? this.src.projects.listProjects().map((p) => p.siteId);
    const exports: ProjectExport[] = [];
    const pointers: ManifestPointer[] = [];
    for (const siteId of siteIds) {
      const { result, pointer } = await this.exportProject(target, siteId, req.keys === true);
      exports.push(result);
      pointers.push(pointer);
    }
    // index.json: other projects' entries are kept; a replaced manifest is retired, not deleted.
    const prevText = await target.read(INDEX_FILE);
    const index: SnapshotIndex = prevText ? parseIndex(prevText.toString('utf8'), `${req.out}/${INDEX_FILE}`) : { format: SNAPSHOT_FORMAT, updatedAt: '', projects: {}, retired: [] };
    const nowIso = new Date(this.now()).toISOString();
    for (const p of pointers) {
      const old = index.projects[p.siteId];
      if (old && old.manifest !== p.manifest) index.retired.push({ manifest: old.manifest, retiredAt: nowIso });
      index.projects[p.siteId] = p;
    }
    const current = new Set(Object.values(index.projects).map((p) => p.manifest));
    index.retired = index.retired.filter((r) => !current.has(r.manifest));
    index.updatedAt = nowIso;
    const text = JSON.stringify(index, null, 1);
    await this.pause('export-index');
    await target.write(INDEX_FILE, text);
    const pruned = target.dir ? await prune(target, index, req.pruneGraceMs ?? DEFAULT_PRUNE_GRACE_MS, this.now()) : { manifests: 0, blobs: 0, temps: 0 };
    const bytesWritten = exports.reduce((n, e) => n + e.bytesWritten, 0) + Buffer.byteLength(text);
    const result: ExportResult = { out: target.location, projects: exports, bytesWritten, pruned, ms: this.now() - started };
    this.src.log?.info({ out: result.out, projects: exports.map((e) => `${e.siteId}@${e.generation}`), bytesWritten, pruned }, 'export done');
    return result;
  }

  /** The content hash of a sealed segment file (cached by size and mtime). */
  private async hashOf(file: string): Promise<{ sha256: string; size: number }> {
    const st = await fsp.stat(file);
    const hit = this.hashes.get(file);
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return { sha256: hit.sha256, size: st.size };
    const h = createHash('sha256');
    for await (const chunk of fs.createReadStream(file)) h.update(chunk as Buffer);
    const digest = h.digest('hex');
    this.hashes.set(file, { size: st.size, mtimeMs: st.mtimeMs, sha256: digest });
    return { sha256: digest, size: st.size };
  }

  private async exportProject(target: SnapshotTarget, siteId: string, withKeys: boolean): Promise<{ result: ProjectExport; pointer: ManifestPointer }> {
    const project = this.src.projects.getProject(siteId);
    if (!project) throw new Error(`no project "${siteId}"`);
    const index = await this.src.indexes.get(siteId);
    // Pinned: the generation's files stay on disk until release, whatever commits or merges meanwhile.
    const snap = index.acquire();
    // Read in the same turn as the pin, so settings and suggestions are those of this moment.
    // The embedder's API key travels only with the API keys (src/projects/secrets.ts).
    const settings = withKeys ? this.src.projects.getSettings(siteId) : withoutSecrets(this.src.projects.getSettings(siteId));
    const rows = this.src.suggestionRows(siteId);
    const keys = withKeys ? this.src.projects.exportKeys(siteId) : undefined;
    let blobsWritten = 0;
    let blobsPresent = 0;
    let bytesWritten = 0;
    const put = async (rel: string, write: () => Promise<void>, bytes: number) => {
      if (await target.has(rel)) {
        blobsPresent++;
        return;
      }
      await write();
      blobsWritten++;
      bytesWritten += bytes;
    };
    try {
      const segments: SnapshotSegment[] = [];
      let committedSeq = 0;
      for (const seg of snap.segments) {
        const file = seg.reader.path;
        const { sha256: hash, size } = await this.hashOf(file);
        await put(blobPath(hash), () => target.putFile(blobPath(hash), file, hash, () => this.pause('export-blob')), size);
        const info = seg.reader.info;
        let dead = 0;
        for (let i = 0; i < seg.dead.length; i++) dead += seg.dead[i]!;
        segments.push({
          id: seg.id,
          file: path.basename(file),
          sha256: hash,
          bytes: size,
          docCount: info.docCount,
          searchableCount: info.searchableCount,
          deleteCount: info.deleteCount,
          minSeq: info.minSeq,
          maxSeq: info.maxSeq,
          deadCount: dead,
          deadSha256: sha256(seg.dead),
        });
        committedSeq = Math.max(committedSeq, info.maxSeq);
      }
      const rowsText = JSON.stringify(rows);
      const rowsHash = sha256(rowsText);
      await put(blobPath(rowsHash), () => target.write(blobPath(rowsHash), rowsText), Buffer.byteLength(rowsText));
      const manifest: ProjectManifest = {
        format: SNAPSHOT_FORMAT,
        siteId,
        name: project.name,
        createdAt: project.createdAt,
        generation: snap.generation,
        committedSeq,
        exportedAt: new Date(this.now()).toISOString(),
        segments,
        totalDocs: snap.totalDocs,
        settings,
        querySuggestions: { sha256: rowsHash, bytes: Buffer.byteLength(rowsText), rows: rows.length },
        ...(keys ? { keys } : {}),
      };
      // exportedAt is left out of the name's hash input: the same generation and settings map to one manifest.
      const { exportedAt: _at, ...stable } = manifest;
      const mPath = manifestPath(siteId, snap.generation, sha256(JSON.stringify(stable)));
      const mText = JSON.stringify(manifest, null, 1);
      parseManifest(mText, mPath);
      let mHash: string;
      const existing = await target.read(mPath);
      if (existing) {
        mHash = sha256(existing);
      } else {
        await target.write(mPath, mText);
        mHash = sha256(mText);
        bytesWritten += Buffer.byteLength(mText);
      }
      const pointer: ManifestPointer = { siteId, generation: snap.generation, manifest: mPath, sha256: mHash, exportedAt: manifest.exportedAt };
      const pText = JSON.stringify(pointer, null, 1);
      await target.write(latestPath(siteId), pText);
      bytesWritten += Buffer.byteLength(pText);
      return {
        result: { siteId, generation: snap.generation, manifest: mPath, segments: segments.length, blobsWritten, bytesWritten, blobsPresent },
        pointer,
      };
    } finally {
      snap.release();
    }
  }
}

/**
 * Deletes, in a directory target, manifests neither current nor retired within `graceMs`,
 * blobs no kept manifest names (and older than `graceMs`, so a blob of an export in progress
 * is never taken), and temp files older than `graceMs`. `index` is the just-written index;
 * pruned retired entries leave it at the next export.
 */
async function prune(target: SnapshotTarget, index: SnapshotIndex, graceMs: number, now: number): Promise<{ manifests: number; blobs: number; temps: number }> {
  const root = target.dir!;
  const kept = new Set<string>(Object.values(index.projects).map((p) => p.manifest));
  for (const r of index.retired) if (now - Date.parse(r.retiredAt) < graceMs) kept.add(r.manifest);
  const out = { manifests: 0, blobs: 0, temps: 0 };
  const old = async (file: string) => now - (await fsp.stat(file)).mtimeMs >= graceMs;
  const liveBlobs = new Set<string>();
  for (const siteDir of await readdirSafe(path.join(root, 'projects'))) {
    const mdir = path.join(root, 'projects', siteDir, 'manifests');
    for (const name of await readdirSafe(mdir)) {
      const rel = `projects/${siteDir}/manifests/${name}`;
      const abs = path.join(mdir, name);
      if (name.startsWith('.tmp-')) {
        if (await old(abs)) {
          await fsp.rm(abs, { force: true });
          out.temps++;
        }
        continue;
      }
      if (!kept.has(rel)) {
        await fsp.rm(abs, { force: true });
        out.manifests++;
        continue;
      }
      const m = parseManifest(await fsp.readFile(abs, 'utf8'), rel);
      for (const s of m.segments) liveBlobs.add(s.sha256);
      liveBlobs.add(m.querySuggestions.sha256);
    }
  }
  const bdir = path.join(root, 'blobs', 'sha256');
  for (const fan of await readdirSafe(bdir)) {
    for (const name of await readdirSafe(path.join(bdir, fan))) {
      const abs = path.join(bdir, fan, name);
      const temp = name.startsWith('.tmp-');
      if ((temp || !liveBlobs.has(name)) && (await old(abs))) {
        await fsp.rm(abs, { force: true });
        if (temp) out.temps++;
        else out.blobs++;
      }
    }
  }
  index.retired = index.retired.filter((r) => kept.has(r.manifest));
  return out;
}

async function readdirSafe(dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir);
  } catch {
    return [];
  }
}
