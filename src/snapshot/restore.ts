/**
 * `sitesift restore`: recreates a project on a primary's data directory from a snapshot. The
 * segment files are fetched and checked against their hashes, laid out as the project's index
 * with the snapshot's generation, then the project, its settings and (optionally) its API keys
 * are recorded. The server must not be running on the data directory (the caller locks it).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_FORMAT, writeManifest } from '../index/index.js';
import { assertSiteId, type CreatedKey, type ProjectRegistry } from '../projects/index.js';
import { INDEX_FILE, blobPath, latestPath, parseIndex, parseManifest, sha256, type ManifestPointer } from './format.js';
import { fsyncPath, openSource } from './location.js';

export interface RestoreOptions {
  dataDir: string;
  siteId: string;
  /** Directory or http(s) URL of the export. */
  from: string;
  /** Recreate the project's API keys from the snapshot (it must carry them: `export --keys`). */
  keys: boolean;
  projects: Pick<ProjectRegistry, 'restoreProject' | 'hasProject'>;
}

export interface RestoreResult {
  siteId: string;
  generation: number;
  segments: number;
  pages: number;
  /** The new key when keys were not restored. */
  key: CreatedKey | null;
}

/**
 * Restores `siteId` from the snapshot at `from` into `dataDir`. Rejects without leaving the
 * project behind when the project exists, the snapshot lacks it, or a file fails its check.
 *
 * @example
 * const r = await restoreProject({ dataDir, siteId: 'docs', from: '/backups/export', keys: true, projects });
 */
export async function restoreProject(opts: RestoreOptions): Promise<RestoreResult> {
  const { siteId } = opts;
  assertSiteId(siteId);
  if (opts.projects.hasProject(siteId)) throw new Error(`project "${siteId}" already exists on this primary; delete it first`);
  const source = openSource(opts.from);
  let ptr: ManifestPointer | undefined;
  const indexText = await source.read(INDEX_FILE);
  if (indexText) ptr = parseIndex(indexText.toString('utf8'), INDEX_FILE).projects[siteId];
  if (!ptr) {
    const latest = await source.read(latestPath(siteId));
    if (latest) ptr = JSON.parse(latest.toString('utf8')) as ManifestPointer;
  }
  if (!ptr) throw new Error(`the snapshot at ${source.location} has no project "${siteId}"`);
  const text = await source.read(ptr.manifest);
  if (!text) throw new Error(`manifest ${ptr.manifest} is missing`);
  if (sha256(text) !== ptr.sha256) throw new Error(`manifest ${ptr.manifest} failed its hash check`);
  const m = parseManifest(text.toString('utf8'), ptr.manifest);
  if (m.siteId !== siteId) throw new Error(`manifest ${ptr.manifest} is of project "${m.siteId}", not "${siteId}"`);
  if (opts.keys && !m.keys) throw new Error(`the snapshot of "${siteId}" carries no keys (export it with --keys), or restore without --keys`);

  const projectsDir = path.join(opts.dataDir, 'projects');
  const projectDir = path.join(projectsDir, siteId);
  if (fs.existsSync(projectDir)) throw new Error(`${projectDir} already exists; remove it first`);
  // Laid out in a hidden folder beside the projects and renamed into place once every file
  // passed its check: a failure (or a crash) never leaves a partial project under its siteId.
  // A restore killed earlier left its staging folder; the caller holds the data directory's
  // lock, so no other restore is using one.
  const stagingPrefix = `.restore-${siteId}-`;
  const leftover = new RegExp(`^\\.restore-${siteId}-[0-9a-f]{12}$`);
  for (const name of await fsp.readdir(projectsDir).catch(() => [] as string[])) {
    if (leftover.test(name)) await fsp.rm(path.join(projectsDir, name), { recursive: true, force: true });
  }
  const staging = path.join(projectsDir, `${stagingPrefix}${randomBytes(6).toString('hex')}`);
  const segDir = path.join(staging, 'segments');
  let placed = false;
  try {
    await fsp.mkdir(segDir, { recursive: true });
    for (const s of m.segments) {
      const tmp = path.join(segDir, `.restore-${randomBytes(6).toString('hex')}`);
      const got = await source.copyTo(blobPath(s.sha256), tmp);
      if (got.sha256 !== s.sha256 || got.bytes !== s.bytes) {
        throw new Error(`segment ${s.file} (${blobPath(s.sha256)} at ${source.location}) failed its hash check: got ${got.bytes} bytes hashing ${got.sha256}, the manifest says ${s.bytes} bytes`);
      }
      await fsyncPath(tmp);
      await fsp.rename(tmp, path.join(segDir, s.file));
    }
    await fsyncPath(segDir);
    await writeManifest(staging, {
      format: MANIFEST_FORMAT,
      generation: m.generation,
      committedSeq: m.committedSeq,
      segments: m.segments.map((s) => ({ id: s.id, file: s.file, docCount: s.docCount, searchableCount: s.searchableCount, deleteCount: s.deleteCount, minSeq: s.minSeq, maxSeq: s.maxSeq, bytes: s.bytes })),
    });
    await fsp.rename(staging, projectDir);
    placed = true;
    await fsyncPath(projectsDir);
    const key = opts.projects.restoreProject(
      { siteId, name: m.name, createdAt: m.createdAt },
      m.settings,
      opts.keys ? m.keys!.map((k) => ({ ...k, lastUsedAt: null, scopes: k.scopes as never })) : null,
    );
    return { siteId, generation: m.generation, segments: m.segments.length, pages: m.totalDocs, key };
  } catch (err) {
    await fsp.rm(placed ? projectDir : staging, { recursive: true, force: true });
    (err as Error).message += '; nothing was restored';
    throw err;
  }
}
