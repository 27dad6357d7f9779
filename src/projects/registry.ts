/**
 * The project registry: projects, their API keys and their settings, stored in
 * `<dataDir>/system.db` (SQLite, WAL). Main thread only (better-sqlite3 is synchronous; every
 * call is one short indexed statement).
 *
 * Invariants:
 * - Tokens are never stored: only their SHA-256 hash; a token is shown once, at creation.
 * - {@link ProjectRegistry.resolveToken} reads the database every time (one indexed lookup),
 *   so a deleted key or project fails on the very next request — there is no cache to go stale.
 * - Settings are cached parsed and deep-frozen per project; the cache entry is replaced on
 *   every write, so readers never see a half-applied change and never mutate the cache.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError, type Logger, type Settings } from '../core/index.js';
import { mergePatch, validateSettings, withDefaults } from './settings.js';

export const SITE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * What a key may do within its project. A key with scopes may use only the routes of those
 * scopes; a key without scopes (null) has full access to its project. No scope reaches
 * another project or the master key's routes.
 */
export const KEY_SCOPES = ['search', 'index', 'reports', 'settings', 'admin'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/**
 * Checks the `scopes` of a new key: absent/null → null (unscoped); otherwise a non-empty array
 * of {@link KEY_SCOPES}, returned de-duplicated in table order. 400 `invalid_parameter` naming `scopes`.
 */
export function parseScopes(value: unknown): KeyScope[] | null {
  if (value === undefined || value === null) return null;
  const bad = () => new AppError('invalid_parameter', `"scopes" must be a non-empty array of ${KEY_SCOPES.join(', ')} (omit it for full project access).`, 'scopes');
  if (!Array.isArray(value) || value.length === 0) throw bad();
  for (const v of value) if (typeof v !== 'string' || !(KEY_SCOPES as readonly string[]).includes(v)) throw bad();
  return KEY_SCOPES.filter((s) => value.includes(s));
}

export interface Project {
  siteId: string;
  name: string;
  createdAt: string;
}

/** A key as listings show it: never the token. */
export interface ApiKeyInfo {
  id: string;
  label: string;
  /** First 8 characters of the token, to tell keys apart. */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** The key's scopes; null: full access to its project. */
  scopes: KeyScope[] | null;
}

/** A key as returned once at creation: the only time the token is visible. */
export interface CreatedKey {
  id: string;
  label: string;
  token: string;
  prefix: string;
  createdAt: string;
  /** The key's scopes; null: full access to its project. */
  scopes: KeyScope[] | null;
}

export interface ResolvedToken {
  siteId: string;
  keyId: string;
  /** The key's scopes; null: full access to its project. */
  scopes: KeyScope[] | null;
}

/** A key with its stored hash (snapshots with keys, restore). */
export interface StoredKey extends ApiKeyInfo {
  hash: string;
}

/** Projects and settings served instead of system.db ({@link ProjectRegistry.serveFrom}). */
export interface ProjectOverlay {
  hasProject(siteId: string): boolean;
  /** Deep-frozen settings; throws `unknown_site` (or `not_ready`) like the registry. */
  getSettings(siteId: string): Settings;
  listProjects(): Project[];
}

export type ProjectDeleteHook = (siteId: string) => void | Promise<void>;
/** Called after settings of `siteId` were stored (`previous` = settings before the change). */
export type SettingsListener = (siteId: string, settings: Settings, previous: Settings) => void;

export interface RegistryOptions {
  /** Milliseconds since the epoch; injected so tests control `createdAt`/`lastUsedAt`. */
  clock?: () => number;
  log?: Logger;
}

/** `lastUsedAt` is written at most this often per key, to keep searches from writing on every request. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;

const TOKEN_PREFIX = 'ss_';
const NODE_TOKEN_PREFIX = 'ssn_';

/** A search node's key as listings show it (never the token). */
export interface NodeKeyInfo {
  id: string;
  name: string;
  /** First characters of the token, to tell keys apart. */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** SHA-256 hex of a token (the stored form). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new API key token: `ss_` + 24 random bytes in base64url (192 bits). */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(24).toString('base64url');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Checks a siteId from a client; throws 400 `invalid_parameter` naming `siteId`. */
export function assertSiteId(siteId: unknown): asserts siteId is string {
  if (typeof siteId !== 'string' || !SITE_ID_PATTERN.test(siteId)) {
    throw new AppError(
      'invalid_parameter',
      'siteId must be 1–63 characters of lowercase letters, digits and "-", starting with a letter or digit.',
      'siteId',
    );
  }
}

interface KeyRow {
  id: string;
  site_id: string;
  label: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  scopes: string | null;
  hash: string;
}

/** See the module comment. Create with {@link ProjectRegistry.open}; `close()` at shutdown. */
export class ProjectRegistry {
  private readonly db: Database.Database;
  private readonly clock: () => number;
  private readonly log?: Logger;
  private readonly deleteHooks: ProjectDeleteHook[] = [];
  private readonly settingsListeners = new Set<SettingsListener>();
  private readonly settingsCache = new Map<string, Settings>();
  /** keyId → ms of the last `last_used_at` write (or read) this process knows of. */
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly stmt: ReturnType<typeof prepareStatements>;

  private constructor(db: Database.Database, opts: RegistryOptions) {
    this.db = db;
    this.clock = opts.clock ?? Date.now;
    this.log = opts.log;
    db.pragma('journal_mode = WAL');
    // Keys and projects are rare writes that must survive a crash once acknowledged.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.exec(`
      CREATE TABLE IF NOT EXISTS projects (
        site_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL REFERENCES projects(site_id) ON DELETE CASCADE,
        hash TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        prefix TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        scopes TEXT
      );
      CREATE INDEX IF NOT EXISTS api_keys_site ON api_keys(site_id);
      CREATE TABLE IF NOT EXISTS settings (
        site_id TEXT PRIMARY KEY REFERENCES projects(site_id) ON DELETE CASCADE,
        json TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `);
    // Databases made before scopes existed: their keys keep full project access (NULL).
    const columns = db.prepare('PRAGMA table_info(api_keys)').all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'scopes')) db.exec('ALTER TABLE api_keys ADD COLUMN scopes TEXT');
    // Search nodes: their keys (hashed like API keys) and the query-log batches they delivered.
    db.exec(`
      CREATE TABLE IF NOT EXISTS node_keys (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      );
      CREATE TABLE IF NOT EXISTS node_batches (
        batch_id TEXT PRIMARY KEY,
        node_id TEXT NOT NULL,
        entries INTEGER NOT NULL,
        received_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS node_batches_received ON node_batches (received_at);
    `);
    this.stmt = prepareStatements(db);
  }

  /** Opens (creating if needed) `<dataDir>/system.db`. */
  static open(dataDir: string, opts: RegistryOptions = {}): ProjectRegistry {
    mkdirSync(dataDir, { recursive: true });
    return new ProjectRegistry(new Database(path.join(dataDir, 'system.db')), opts);
  }

  /** Site ids of existing projects, loaded on first use (see {@link hasProject}). */
  private siteIds: Set<string> | null = null;

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  // ---------------------------------------------------------------- projects

  /**
   * Creates a project and its first API key. Throws 400 `invalid_parameter` for a bad siteId,
   * 409 `conflict` when it is taken.
   */
  createProject(siteId: string, name?: string, keyLabel = 'default'): { project: Project; key: CreatedKey } {
    assertSiteId(siteId);
    const project: Project = { siteId, name: name ?? siteId, createdAt: this.now() };
    const tx = this.db.transaction(() => {
      if (this.stmt.getProject.get(siteId)) throw new AppError('conflict', `Project "${siteId}" already exists; pick another siteId.`, 'siteId');
      this.stmt.insertProject.run(project.siteId, project.name, project.createdAt);
      return this.insertKey(siteId, keyLabel);
    });
    const key = tx();
    this.siteIds?.add(siteId);
    return { project, key };
  }

  listProjects(): Project[] {
    if (this.overlay) return this.overlay.listProjects();
    return this.stmt.listProjects.all() as Project[];
  }

  getProject(siteId: string): Project | null {
    if (this.overlay) return this.overlay.listProjects().find((p) => p.siteId === siteId) ?? null;
    return (this.stmt.getProject.get(siteId) as Project | undefined) ?? null;
  }

  /**
   * Whether the project exists. Answered from memory (every public search asks): the set of
   * site ids is loaded once and kept in step by create/delete, the only writers of the table
   * (the data dir is locked to this process).
   */
  hasProject(siteId: string): boolean {
    if (this.overlay) return this.overlay.hasProject(siteId);
    this.siteIds ??= new Set(this.listProjects().map((p) => p.siteId));
    return this.siteIds.has(siteId);
  }

  /**
   * Registers a hook run (and awaited, in order) by {@link deleteProject} after the project's
   * rows are gone, so other stores can drop the project's data (index, query log, crawl queue).
   */
  onDelete(hook: ProjectDeleteHook): void {
    this.deleteHooks.push(hook);
  }

  /**
   * Deletes the project, its keys (they fail at once) and settings, then awaits every
   * {@link onDelete} hook. Resolves false when there was no such project.
   */
  async deleteProject(siteId: string): Promise<boolean> {
    const changes = this.stmt.deleteProject.run(siteId).changes;
    this.siteIds?.delete(siteId);
    this.settingsCache.delete(siteId);
    if (changes === 0) return false;
    for (const hook of this.deleteHooks) await hook(siteId);
    return true;
  }

  // ---------------------------------------------------------------- keys

  private insertKey(siteId: string, label: string, scopes: KeyScope[] | null = null): CreatedKey {
    const token = generateToken();
    const key: CreatedKey = {
      id: randomBytes(8).toString('hex'),
      label,
      token,
      prefix: token.slice(0, 8),
      createdAt: this.now(),
      scopes,
    };
    this.stmt.insertKey.run(key.id, siteId, hashToken(token), key.label, key.prefix, key.createdAt, scopes === null ? null : scopes.join(','));
    return key;
  }

  private requireExisting(siteId: string): void {
    if (!this.hasProject(siteId)) throw new AppError('not_found', `No project "${siteId}".`, 'siteId');
  }

  /**
   * Creates an API key; its token is in the result and nowhere else. `scopes` null (default):
   * full project access; otherwise checked by {@link parseScopes}. 404 `not_found` for an unknown project.
   *
   * @example registry.createKey('docs', 'search box', ['search'])
   */
  createKey(siteId: string, label = '', scopes: unknown = null): CreatedKey {
    this.requireExisting(siteId);
    return this.insertKey(siteId, label, parseScopes(scopes));
  }

  /**
   * The project's keys with their stored hashes (never tokens), for snapshots that carry keys
   * (`sitesift export --keys`) and {@link restoreProject}.
   */
  exportKeys(siteId: string): StoredKey[] {
    this.requireExisting(siteId);
    return (this.stmt.listKeys.all(siteId) as KeyRow[]).map((r) => ({ ...keyInfo(r), hash: r.hash }));
  }

  /**
   * Recreates a project from a snapshot (`sitesift restore`): the project row, its settings as
   * stored (their `updatedAt` included) and, when given, its keys by hash (their tokens work
   * again); without keys one new key is created and returned. 409 `conflict` when the siteId is taken.
   */
  restoreProject(project: Project, settings: Settings, keys: StoredKey[] | null): CreatedKey | null {
    assertSiteId(project.siteId);
    const tx = this.db.transaction(() => {
      if (this.stmt.getProject.get(project.siteId)) throw new AppError('conflict', `Project "${project.siteId}" already exists; delete it first or restore under another siteId.`, 'siteId');
      this.stmt.insertProject.run(project.siteId, project.name, project.createdAt);
      const full = withDefaults(settings);
      this.stmt.putSettings.run(project.siteId, JSON.stringify(full), full.updatedAt);
      if (keys === null) return this.insertKey(project.siteId, 'default');
      for (const k of keys) {
        const scopes = parseScopes(k.scopes);
        this.stmt.insertKey.run(k.id, project.siteId, k.hash, k.label, k.prefix, k.createdAt, scopes === null ? null : scopes.join(','));
      }
      return null;
    });
    const created = tx();
    this.siteIds?.add(project.siteId);
    this.settingsCache.delete(project.siteId);
    return created;
  }

  /**
   * Serves projects and settings from `overlay` instead of system.db (a read-only search node
   * serves its snapshot's projects); null goes back to the database.
   */
  serveFrom(overlay: ProjectOverlay | null): void {
    this.overlay = overlay;
  }

  private overlay: ProjectOverlay | null = null;

  listKeys(siteId: string): ApiKeyInfo[] {
    this.requireExisting(siteId);
    return (this.stmt.listKeys.all(siteId) as KeyRow[]).map(keyInfo);
  }

  /** Renames a key; 404 `not_found` when the project or key does not exist. */
  renameKey(siteId: string, keyId: string, label: string): ApiKeyInfo {
    this.requireExisting(siteId);
    if (this.stmt.renameKey.run(label, siteId, keyId).changes === 0) throw new AppError('not_found', `No key "${keyId}" in project "${siteId}".`, 'id');
    return keyInfo(this.stmt.getKey.get(siteId, keyId) as KeyRow);
  }

  /** Deletes a key: it fails on the next request. 404 `not_found` when it does not exist. */
  deleteKey(siteId: string, keyId: string): void {
    this.requireExisting(siteId);
    if (this.stmt.deleteKey.run(siteId, keyId).changes === 0) throw new AppError('not_found', `No key "${keyId}" in project "${siteId}".`, 'id');
    this.lastUsedWritten.delete(keyId);
  }

  /**
   * The project and key a token belongs to, or null. Records `lastUsedAt` at most once per
   * {@link LAST_USED_WRITE_INTERVAL_MS} per key.
   */
  resolveToken(token: string): ResolvedToken | null {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
    const row = this.stmt.keyByHash.get(hashToken(token)) as { id: string; site_id: string; last_used_at: string | null; scopes: string | null } | undefined;
    if (!row) return null;
    const now = this.clock();
    let last = this.lastUsedWritten.get(row.id);
    if (last === undefined) last = row.last_used_at ? Date.parse(row.last_used_at) : -Infinity;
    if (now - last >= LAST_USED_WRITE_INTERVAL_MS) {
      try {
        this.stmt.touchKey.run(new Date(now).toISOString(), row.id);
        last = now;
      } catch (err) {
        // Bookkeeping only: a busy database must not fail the request it belongs to.
        this.log?.warn({ err, keyId: row.id }, 'could not record key lastUsedAt');
      }
    }
    this.lastUsedWritten.set(row.id, last);
    return { siteId: row.site_id, keyId: row.id, scopes: storedScopes(row.scopes) };
  }

  // ---------------------------------------------------------------- search-node keys

  /**
   * Creates a key a search node uses to push its query log to this primary (`ssn_` + 192
   * random bits; only its SHA-256 is stored, like API keys). The token is in the result only.
   *
   * @example const { token } = registry.createNodeKey('eu-1'); // SITESIFT_NODE_KEY on the node
   */
  createNodeKey(name = ''): NodeKeyInfo & { token: string } {
    const token = NODE_TOKEN_PREFIX + randomBytes(24).toString('base64url');
    const key = { id: randomBytes(8).toString('hex'), name, prefix: token.slice(0, 9), createdAt: this.now(), lastUsedAt: null, token };
    this.db.prepare('INSERT INTO node_keys (id, hash, name, prefix, created_at) VALUES (?, ?, ?, ?, ?)').run(key.id, hashToken(token), name, key.prefix, key.createdAt);
    return key;
  }

  listNodeKeys(): NodeKeyInfo[] {
    const rows = this.db.prepare('SELECT id, name, prefix, created_at, last_used_at FROM node_keys ORDER BY created_at, id').all() as Array<Record<string, string | null>>;
    return rows.map((r) => ({ id: r.id!, name: r.name!, prefix: r.prefix!, createdAt: r.created_at!, lastUsedAt: r.last_used_at ?? null }));
  }

  /** Deletes a node key: the node's next push fails. 404 `not_found` when it does not exist. */
  deleteNodeKey(id: string): void {
    if (this.db.prepare('DELETE FROM node_keys WHERE id = ?').run(id).changes === 0) throw new AppError('not_found', `No node key "${id}".`, 'id');
  }

  /** The node key a token belongs to, or null (one indexed lookup; records lastUsedAt). */
  resolveNodeKey(token: string): { id: string; name: string } | null {
    if (!token.startsWith(NODE_TOKEN_PREFIX) || token.length > 200) return null;
    const row = this.db.prepare('SELECT id, name FROM node_keys WHERE hash = ?').get(hashToken(token)) as { id: string; name: string } | undefined;
    if (!row) return null;
    try {
      this.db.prepare('UPDATE node_keys SET last_used_at = ? WHERE id = ?').run(this.now(), row.id);
    } catch (err) {
      this.log?.warn({ err, nodeKeyId: row.id }, 'could not record node key lastUsedAt');
    }
    return row;
  }

  /**
   * Whether a query-log batch id was already delivered (and counted): the fast path of
   * `POST /cluster/querylog`. Each project's query log holds the ids it wrote too, in the same
   * transaction as the entries, and that is what keeps a batch from counting twice.
   */
  batchDelivered(batchId: string): boolean {
    return this.db.prepare('SELECT 1 FROM node_batches WHERE batch_id = ?').get(batchId) !== undefined;
  }

  /**
   * Records a delivered batch id (durable: system.db is synchronous=FULL). Ids older than
   * `keepMs` (default 30 days) are forgotten; a node retries a batch for far less than that.
   */
  recordBatch(batchId: string, nodeId: string, entries: number, keepMs = 30 * 86_400_000): void {
    const now = this.clock();
    this.db.prepare('INSERT OR IGNORE INTO node_batches (batch_id, node_id, entries, received_at) VALUES (?, ?, ?, ?)').run(batchId, nodeId, entries, now);
    this.db.prepare('DELETE FROM node_batches WHERE received_at < ?').run(now - keepMs);
  }

  // ---------------------------------------------------------------- settings

  /**
   * The project's settings with every default filled, deep-frozen (do not mutate; copy).
   * 404 `unknown_site` when the project does not exist.
   */
  getSettings(siteId: string): Settings {
    if (this.overlay) return this.overlay.getSettings(siteId);
    const cached = this.settingsCache.get(siteId);
    if (cached) return cached;
    if (!this.hasProject(siteId)) throw new AppError('unknown_site', `No project "${siteId}".`, 'site');
    const row = this.stmt.getSettings.get(siteId) as { json: string } | undefined;
    const settings = deepFreeze(withDefaults(row ? JSON.parse(row.json) : undefined));
    this.settingsCache.set(siteId, settings);
    return settings;
  }

  /** Replaces the whole settings object (validated; missing sections take defaults). Returns the stored settings. */
  putSettings(siteId: string, input: unknown): Settings {
    const previous = this.getSettings(siteId);
    const validated = validateSettings(input, { partial: false });
    return this.store(siteId, { ...validated } as Omit<Settings, 'updatedAt'>, previous);
  }

  /**
   * Applies `patch` as a JSON Merge Patch (RFC 7396) to the current settings: objects merge,
   * arrays and scalars replace, `null` puts a field or section back to its default. The merged
   * object is validated whole; an invalid result throws and stores nothing. Returns the stored
   * settings.
   *
   * @example
   * registry.patchSettings('shop', { crawler: { requestDelayMs: 100 } }); // rootUrls, blacklist… kept
   */
  patchSettings(siteId: string, patch: unknown): Settings {
    const previous = this.getSettings(siteId);
    const { updatedAt: _ignored, ...current } = previous;
    const validated = validateSettings(mergePatch(current, patch), { partial: false });
    return this.store(siteId, validated as Omit<Settings, 'updatedAt'>, previous);
  }

  private store(siteId: string, sections: Omit<Settings, 'updatedAt'>, previous: Settings): Settings {
    // updatedAt is the version: keep it strictly increasing even if the clock stalls or steps back.
    const prevMs = Date.parse(previous.updatedAt);
    const nowMs = Math.max(this.clock(), prevMs + 1);
    const settings: Settings = { ...sections, updatedAt: new Date(nowMs).toISOString() };
    const res = this.stmt.putSettings.run(siteId, JSON.stringify(settings), settings.updatedAt);
    if (res.changes === 0) throw new AppError('unknown_site', `No project "${siteId}".`, 'site');
    const frozen = deepFreeze(settings);
    this.settingsCache.set(siteId, frozen);
    for (const listener of this.settingsListeners) {
      try {
        listener(siteId, frozen, previous);
      } catch (err) {
        this.log?.error({ err, siteId }, 'settings listener failed');
      }
    }
    return frozen;
  }

  /** Subscribes to settings changes (e.g. crawl schedules). Returns the unsubscribe function. */
  onSettingsChange(listener: SettingsListener): () => void {
    this.settingsListeners.add(listener);
    return () => this.settingsListeners.delete(listener);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function prepareStatements(db: Database.Database) {
  return {
    insertProject: db.prepare('INSERT INTO projects (site_id, name, created_at) VALUES (?, ?, ?)'),
    getProject: db.prepare('SELECT site_id AS siteId, name, created_at AS createdAt FROM projects WHERE site_id = ?'),
    listProjects: db.prepare('SELECT site_id AS siteId, name, created_at AS createdAt FROM projects ORDER BY site_id'),
    deleteProject: db.prepare('DELETE FROM projects WHERE site_id = ?'),
    insertKey: db.prepare('INSERT INTO api_keys (id, site_id, hash, label, prefix, created_at, scopes) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    listKeys: db.prepare('SELECT * FROM api_keys WHERE site_id = ? ORDER BY created_at, id'),
    getKey: db.prepare('SELECT * FROM api_keys WHERE site_id = ? AND id = ?'),
    renameKey: db.prepare('UPDATE api_keys SET label = ? WHERE site_id = ? AND id = ?'),
    deleteKey: db.prepare('DELETE FROM api_keys WHERE site_id = ? AND id = ?'),
    keyByHash: db.prepare('SELECT id, site_id, last_used_at, scopes FROM api_keys WHERE hash = ?'),
    touchKey: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    getSettings: db.prepare('SELECT json FROM settings WHERE site_id = ?'),
    putSettings: db.prepare(
      'INSERT INTO settings (site_id, json, updated_at) VALUES (?, ?, ?) ON CONFLICT(site_id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at',
    ),
  };
}

/** The stored comma list as scopes (unknown names dropped); NULL: unscoped. */
function storedScopes(stored: string | null): KeyScope[] | null {
  if (stored === null) return null;
  return KEY_SCOPES.filter((s) => stored.split(',').includes(s));
}

function keyInfo(row: KeyRow): ApiKeyInfo {
  return { id: row.id, label: row.label, prefix: row.prefix, createdAt: row.created_at, lastUsedAt: row.last_used_at, scopes: storedScopes(row.scopes) };
}
