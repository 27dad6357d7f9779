/**
 * The snapshot format: what `sitesift export` writes and search nodes and `sitesift restore`
 * read. A snapshot location (a directory, or the same files over HTTP) holds:
 *
 * ```
 * index.json                                   top-level index: every project's current manifest
 * projects/<siteId>/latest.json                the project's current manifest (pointer)
 * projects/<siteId>/manifests/<gen>-<sha16>.json   one manifest per project and generation
 * blobs/sha256/<2 hex>/<64 hex>                segment files and suggestion data, by content hash
 * ```
 *
 * Blobs are written before the manifests that name them, manifests before the pointers, and
 * each file is replaced atomically, so a reader that starts from `index.json` never finds a
 * missing file (only pruning after a grace period removes files, see export.ts).
 */
import { createHash } from 'node:crypto';
import type { Settings } from '../core/index.js';

/** Version of `index.json`, `latest.json` and project manifests. */
export const SNAPSHOT_FORMAT = 1;
export const INDEX_FILE = 'index.json';

/** One segment file of a project's generation. */
export interface SnapshotSegment {
  /** Segment id in the primary's manifest. */
  id: string;
  /** File name inside the project's `segments/`. */
  file: string;
  /** Content hash of the file: its blob. */
  sha256: string;
  bytes: number;
  docCount: number;
  searchableCount: number;
  deleteCount: number;
  minSeq: number;
  maxSeq: number;
  /**
   * Tombstones of this generation in this segment (rows made dead by newer ops). They are
   * derived from the segments (the liveness rule of src/index), so the snapshot carries their
   * count and the hash of the bitmap, and a reader checks its own derivation against them.
   */
  deadCount: number;
  deadSha256: string;
}

/** An API key as a snapshot may carry it (`--keys`): its hash, never the token. */
export interface SnapshotKey {
  id: string;
  label: string;
  prefix: string;
  hash: string;
  createdAt: string;
  scopes: string[] | null;
}

/** One project at one generation. */
export interface ProjectManifest {
  format: number;
  siteId: string;
  name: string;
  createdAt: string;
  /** The primary's manifest generation the segments are from. */
  generation: number;
  /** Highest op seq in the segments. */
  committedSeq: number;
  exportedAt: string;
  segments: SnapshotSegment[];
  /** Live searchable documents of this generation (checked by readers). */
  totalDocs: number;
  /** The project's settings as the primary served them (all defaults filled). */
  settings: Settings;
  /**
   * The query-suggestion aggregate (`querySuggestions` of suggest): a blob holding a JSON
   * array of `[query, count, lastResults, lastAt]` rows.
   */
  querySuggestions: { sha256: string; bytes: number; rows: number };
  /** Present when exported with keys (restore may recreate them). */
  keys?: SnapshotKey[];
}

/** `projects/<siteId>/latest.json` and each entry of `index.json`. */
export interface ManifestPointer {
  siteId: string;
  generation: number;
  /** Path of the manifest from the snapshot root. */
  manifest: string;
  sha256: string;
  exportedAt: string;
}

/** `index.json`. */
export interface SnapshotIndex {
  format: number;
  updatedAt: string;
  projects: Record<string, ManifestPointer>;
  /** Manifests no longer current, kept until `retiredAt` + the prune grace period. */
  retired: Array<{ manifest: string; retiredAt: string }>;
}

/** Hex SHA-256 of a buffer or string. */
export function sha256(data: Buffer | string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Path of a blob from the snapshot root. */
export function blobPath(hash: string): string {
  return `blobs/sha256/${hash.slice(0, 2)}/${hash}`;
}

/** Path of a project's manifest from the snapshot root. */
export function manifestPath(siteId: string, generation: number, hash: string): string {
  return `projects/${siteId}/manifests/${String(generation).padStart(10, '0')}-${hash.slice(0, 16)}.json`;
}

export function latestPath(siteId: string): string {
  return `projects/${siteId}/latest.json`;
}

const HEX64 = /^[0-9a-f]{64}$/;
const SAFE_NAME = /^[A-Za-z0-9._-]+$/;

/** Throws when `text` is not a manifest this version reads (format, shape, safe names). */
export function parseManifest(text: string, where: string): ProjectManifest {
  let m: ProjectManifest;
  try {
    m = JSON.parse(text) as ProjectManifest;
  } catch {
    throw new Error(`${where} is not valid JSON`);
  }
  if (m.format !== SNAPSHOT_FORMAT) throw new Error(`${where} has format ${String(m.format)}; this version reads ${SNAPSHOT_FORMAT}`);
  if (typeof m.siteId !== 'string' || !Array.isArray(m.segments) || typeof m.settings !== 'object' || !m.querySuggestions) {
    throw new Error(`${where} is not a project manifest`);
  }
  for (const s of m.segments) {
    if (!HEX64.test(s.sha256) || !SAFE_NAME.test(s.file) || s.file.startsWith('.')) throw new Error(`${where} lists a bad segment entry`);
  }
  if (!HEX64.test(m.querySuggestions.sha256)) throw new Error(`${where} has a bad querySuggestions hash`);
  return m;
}

/** Throws when `text` is not a snapshot index this version reads. */
export function parseIndex(text: string, where: string): SnapshotIndex {
  let idx: SnapshotIndex;
  try {
    idx = JSON.parse(text) as SnapshotIndex;
  } catch {
    throw new Error(`${where} is not valid JSON`);
  }
  if (idx.format !== SNAPSHOT_FORMAT || typeof idx.projects !== 'object' || idx.projects === null) {
    throw new Error(`${where} is not a snapshot index of format ${SNAPSHOT_FORMAT}`);
  }
  for (const p of Object.values(idx.projects)) {
    if (!HEX64.test(p.sha256) || typeof p.manifest !== 'string' || p.manifest.includes('..')) throw new Error(`${where} has a bad entry for ${p.siteId}`);
  }
  idx.retired ??= [];
  return idx;
}
