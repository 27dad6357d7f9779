import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { AppError } from '../../src/core/index.js';
import { hashToken, LAST_USED_WRITE_INTERVAL_MS, ProjectRegistry } from '../../src/projects/registry.js';
import { tempDataDir } from '../helpers/server.js';

function open(t: { teardown(fn: () => void): void }, clock?: () => number) {
  const dir = tempDataDir(t);
  const reg = ProjectRegistry.open(dir, { clock });
  t.teardown(() => reg.close());
  return { dir, reg };
}

t.test('projects: create, list, get, conflict, bad siteId', async (t) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const { dir, reg } = open(t, () => now);
  t.ok(existsSync(path.join(dir, 'system.db')));
  const { project, key } = reg.createProject('docs', 'Docs');
  t.same(project, { siteId: 'docs', name: 'Docs', createdAt: '2026-01-01T00:00:00.000Z' });
  t.match(key.token, /^ss_[A-Za-z0-9_-]{32}$/, '192-bit base64url token');
  t.equal(key.prefix, key.token.slice(0, 8));
  now += 1000;
  reg.createProject('blog');
  t.same(reg.listProjects().map((p) => p.siteId), ['blog', 'docs']);
  t.equal(reg.getProject('blog')!.name, 'blog', 'name defaults to siteId');
  t.equal(reg.getProject('nope'), null);
  t.throws(() => reg.createProject('docs'), { code: 'conflict' });
  for (const bad of ['', 'Docs', '-docs', 'a_b', 'a'.repeat(64), 'dö']) {
    t.throws(() => reg.createProject(bad), { code: 'invalid_parameter', field: 'siteId' }, JSON.stringify(bad));
  }
  t.ok(reg.createProject('a'.repeat(63)), '63 chars is fine');
});

t.test('keys: stored hashed only, listed without token, rename, delete fails at once', async (t) => {
  const { dir, reg } = open(t);
  const { key } = reg.createProject('docs');
  const second = reg.createKey('docs', 'ci');
  t.same(reg.resolveToken(second.token), { siteId: 'docs', keyId: second.id, scopes: null });
  const listed = reg.listKeys('docs');
  t.equal(listed.length, 2);
  for (const k of listed) t.same(Object.keys(k).sort(), ['createdAt', 'id', 'label', 'lastUsedAt', 'prefix', 'scopes']);
  t.notOk(JSON.stringify(listed).includes(second.token), 'listing never shows a token');

  const db = new Database(path.join(dir, 'system.db'), { readonly: true });
  const dump = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
  db.close();
  t.notOk(dump.includes(key.token) || dump.includes(second.token), 'no token in the database');
  t.ok(dump.includes(hashToken(second.token)), 'sha256 hash stored');

  t.equal(reg.renameKey('docs', second.id, 'renamed').label, 'renamed');
  t.throws(() => reg.renameKey('docs', 'nope', 'x'), { code: 'not_found' });
  reg.deleteKey('docs', second.id);
  t.equal(reg.resolveToken(second.token), null, 'deleted key fails at once');
  t.throws(() => reg.deleteKey('docs', second.id), { code: 'not_found' });
  t.ok(reg.resolveToken(key.token), 'other key still works');
  t.equal(reg.resolveToken('ss_unknown'), null);
  t.equal(reg.resolveToken('garbage'), null);
  t.throws(() => reg.createKey('nope'), { code: 'not_found' });
});

t.test('lastUsedAt is written at most once a minute per key', async (t) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const { reg } = open(t, () => now);
  const { key } = reg.createProject('docs');
  t.equal(reg.listKeys('docs')[0].lastUsedAt, null);
  reg.resolveToken(key.token);
  t.equal(reg.listKeys('docs')[0].lastUsedAt, '2026-01-01T00:00:00.000Z');
  now += LAST_USED_WRITE_INTERVAL_MS - 1;
  reg.resolveToken(key.token);
  t.equal(reg.listKeys('docs')[0].lastUsedAt, '2026-01-01T00:00:00.000Z', 'not rewritten within a minute');
  now += 1;
  reg.resolveToken(key.token);
  t.equal(reg.listKeys('docs')[0].lastUsedAt, '2026-01-01T00:01:00.000Z');
});

t.test('delete project: keys fail, hooks awaited, siteId reusable', async (t) => {
  const { reg } = open(t);
  const { key } = reg.createProject('docs');
  const dropped: string[] = [];
  reg.onDelete(async (siteId) => {
    await new Promise((r) => setImmediate(r));
    dropped.push(siteId);
  });
  t.equal(await reg.deleteProject('docs'), true);
  t.same(dropped, ['docs'], 'hook awaited');
  t.equal(reg.resolveToken(key.token), null);
  t.equal(reg.getProject('docs'), null);
  t.throws(() => reg.getSettings('docs'), { code: 'unknown_site' });
  t.equal(await reg.deleteProject('docs'), false);
  reg.createProject('docs');
  t.equal(reg.getSettings('docs').search.language, 'en', 'fresh defaults after re-creation');
});

t.test('settings: defaults, put, patch, updatedAt, listeners, persistence', async (t) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const { dir, reg } = open(t, () => now);
  reg.createProject('docs');
  const d = reg.getSettings('docs');
  t.equal(d.search.language, 'en');
  t.ok(Object.isFrozen(d.search), 'returned settings are frozen');
  const seen: Array<[string, string, string]> = [];
  const off = reg.onSettingsChange((siteId, s, prev) => seen.push([siteId, s.search.language, prev.search.language]));

  const put = reg.putSettings('docs', { search: { language: 'de' } });
  t.equal(put.search.language, 'de');
  t.equal(put.updatedAt, '2026-01-01T00:00:00.000Z');
  const patched = reg.patchSettings('docs', { suggest: { minSearches: 9 } });
  t.equal(patched.search.language, 'de', 'patch keeps other sections');
  t.equal(patched.suggest.minSearches, 9);
  t.ok(patched.updatedAt > put.updatedAt, 'updatedAt strictly increases even when the clock stands still');
  const replaced = reg.putSettings('docs', { suggest: { minSearches: 4 } });
  t.equal(replaced.search.language, 'en', 'put replaces the whole object');
  t.same(seen, [
    ['docs', 'de', 'en'],
    ['docs', 'de', 'de'],
    ['docs', 'en', 'de'],
  ]);
  off();
  t.throws(() => reg.patchSettings('docs', { search: { typoTolerance: 'x' } }), { code: 'invalid_parameter', field: 'search.typoTolerance' });
  t.equal(reg.getSettings('docs').suggest.minSearches, 4, 'invalid patch changes nothing');
  t.equal(seen.length, 3, 'unsubscribed');
  reg.close();

  const again = ProjectRegistry.open(dir);
  t.teardown(() => again.close());
  t.equal(again.getSettings('docs').suggest.minSearches, 4, 'persisted');
  t.type(new AppError('not_found', 'x'), Error);
});

t.test('hasProject answers from memory and follows create/delete and reopening', async (t) => {
  const { dir, reg } = open(t);
  t.notOk(reg.hasProject('alpha'), 'unknown before create (loads the set)');
  reg.createProject('alpha');
  t.ok(reg.hasProject('alpha'), 'created after the set was loaded');
  reg.createProject('beta');
  t.ok(reg.hasProject('beta'));
  t.ok(await reg.deleteProject('alpha'));
  t.notOk(reg.hasProject('alpha'), 'deleted');
  t.ok(reg.hasProject('beta'));
  reg.createProject('alpha');
  t.ok(reg.hasProject('alpha'), 're-created');
  // A registry opened later sees what the file holds.
  const again = ProjectRegistry.open(dir);
  t.teardown(() => again.close());
  t.ok(again.hasProject('alpha') && again.hasProject('beta'));
  t.notOk(again.hasProject('gamma'));
});

t.test('key scopes: stored, resolved, listed; a database from before scopes keeps its keys unscoped', async (t) => {
  const dir = tempDataDir(t);
  // The api_keys table as it was before the scopes column existed, with one key in it.
  const old = new Database(path.join(dir, 'system.db'));
  old.exec(`
    CREATE TABLE projects (site_id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE api_keys (id TEXT PRIMARY KEY, site_id TEXT NOT NULL REFERENCES projects(site_id) ON DELETE CASCADE,
      hash TEXT NOT NULL UNIQUE, label TEXT NOT NULL, prefix TEXT NOT NULL, created_at TEXT NOT NULL, last_used_at TEXT);
  `);
  old.prepare('INSERT INTO projects VALUES (?, ?, ?)').run('docs', 'Docs', '2025-01-01T00:00:00.000Z');
  old.prepare('INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, NULL)').run('k1', 'docs', hashToken('ss_oldkey'), 'old', 'ss_oldke', '2025-01-01T00:00:00.000Z');
  old.close();

  const reg = ProjectRegistry.open(dir);
  t.teardown(() => reg.close());
  t.same(reg.resolveToken('ss_oldkey'), { siteId: 'docs', keyId: 'k1', scopes: null }, 'the existing key keeps full access');
  t.same(reg.listKeys('docs')[0]!.scopes, null);

  const scoped = reg.createKey('docs', 'search box', ['search']);
  t.same(scoped.scopes, ['search']);
  t.same(reg.resolveToken(scoped.token)!.scopes, ['search']);
  t.same(reg.createKey('docs', 'all').scopes, null, 'no scopes: full project access');
  t.throws(() => reg.createKey('docs', 'x', ['root']), { code: 'invalid_parameter', field: 'scopes' });
  t.same(reg.listKeys('docs').find((k) => k.id === scoped.id)!.scopes, ['search'], 'listing shows the scopes');
});
