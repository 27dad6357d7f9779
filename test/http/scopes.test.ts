/**
 * API key scopes against a real server on 127.0.0.1: each route admits a scoped key only with
 * the scope the route table names; an unscoped key keeps full access to its project; no key
 * reaches another project.
 */
import t, { type Test } from 'tap';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { ROUTE_SCOPES } from '../../src/http/scopes.js';

let s: TestServer;
const keys: Record<string, string> = {};

t.before(async () => {
  s = await startTestServer();
  await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'b' } });
  for (const [name, scopes] of Object.entries({ search: ['search'], index: ['index'], reports: ['reports'], settings: ['settings'], admin: ['admin'], all: undefined })) {
    const r = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: s.masterKey, json: { label: name, ...(scopes ? { scopes } : {}) } });
    if (r.status !== 201) throw new Error(r.text);
    keys[name] = r.body.token;
  }
});
t.teardown(() => s.close());

const page = { url: 'https://shop.example.com/a', title: 'Alpha', content: 'alpha words' };
const push = (token: string) => api(s.url, '/sites/pageJson?refresh=true', { method: 'POST', token, json: page });
const report = (token: string) => api(s.url, '/sites/indexStatus', { token });
const top = (token: string) => api(s.url, '/sites/queries/top', { token });
const settings = (token: string, site = 'default') => api(s.url, `/admin/projects/${site}/settings`, { token });
const keyList = (token: string, site = 'default') => api(s.url, `/admin/projects/${site}/keys`, { token });

function forbidden(t: Test, res: { status: number; body: any }, scope: string): void {
  t.equal(res.status, 403, `403 (${res.body?.message})`);
  t.equal(res.body?.status, 'failure');
  t.equal(res.body?.code, 'forbidden');
  t.match(res.body?.message, new RegExp(`"${scope}" scope`), `names the missing scope "${scope}"`);
}

t.test('creation and listing show scopes; bad scopes are a 400 naming "scopes"', async (t) => {
  const list = await keyList(s.masterKey);
  const byLabel = Object.fromEntries(list.body.keys.map((k: any) => [k.label, k.scopes]));
  t.same(byLabel.search, ['search']);
  t.same(byLabel.all, null, 'a key created without scopes lists null (full project access)');
  t.same(byLabel.default, null, 'the bootstrap key is unscoped');
  const two = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: s.masterKey, json: { scopes: ['index', 'search', 'index'] } });
  t.same(two.body.scopes, ['search', 'index'], 'de-duplicated, in table order');
  for (const bad of [[], ['everything'], 'search', [1]]) {
    const r = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: s.masterKey, json: { scopes: bad } });
    t.equal(r.status, 400, `scopes ${JSON.stringify(bad)} refused`);
    t.equal(r.body.field, 'scopes');
  }
});

t.test('a search-only key may not push, read reports, settings or keys', async (t) => {
  forbidden(t, await push(keys.search!), 'index');
  forbidden(t, await report(keys.search!), 'reports');
  forbidden(t, await settings(keys.search!), 'settings');
  forbidden(t, await keyList(keys.search!), 'admin');
  t.equal((await api(s.url, '/sites?site=default&query=alpha')).status, 200, 'public search needs no key');
});

t.test('an index key pushes and deletes but may not read reports', async (t) => {
  t.equal((await push(keys.index!)).status, 200);
  t.equal((await api(s.url, `/index/documents?url=${encodeURIComponent('https://shop.example.com/zzz')}`, { method: 'DELETE', token: keys.index! })).status, 200);
  forbidden(t, await report(keys.index!), 'reports');
  forbidden(t, await top(keys.index!), 'reports');
  forbidden(t, await settings(keys.index!), 'settings');
});

t.test('reports, settings and admin keys reach only their routes', async (t) => {
  t.equal((await report(keys.reports!)).status, 200);
  t.equal((await top(keys.reports!)).status, 200);
  forbidden(t, await push(keys.reports!), 'index');
  t.equal((await settings(keys.settings!)).status, 200);
  const patched = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: keys.settings!, json: { search: { typoTolerance: 'default' } } });
  t.equal(patched.status, 200, 'settings key may patch settings');
  forbidden(t, await keyList(keys.settings!), 'admin');
  t.equal((await keyList(keys.admin!)).status, 200);
  forbidden(t, await settings(keys.admin!), 'settings');
  forbidden(t, await push(keys.admin!), 'index');
});

t.test('an unscoped key still does everything in its project', async (t) => {
  for (const token of [keys.all!, s.token]) {
    t.equal((await push(token)).status, 200);
    t.equal((await report(token)).status, 200);
    t.equal((await top(token)).status, 200);
    t.equal((await settings(token)).status, 200);
    t.equal((await keyList(token)).status, 200);
  }
});

t.test('a key of project A cannot touch project B', async (t) => {
  for (const token of [keys.all!, keys.admin!, keys.settings!]) {
    t.equal((await settings(token, 'b')).status, 403);
    t.equal((await keyList(token, 'b')).status, 403);
    t.equal((await api(s.url, '/admin/projects/b/keys', { method: 'POST', token, json: {} })).status, 403);
  }
  t.equal((await api(s.url, '/admin/projects/b', { method: 'DELETE', token: keys.all! })).status, 403, 'nor delete it');
  // The key names the project: a `site` parameter does not redirect a push elsewhere.
  const r = await api(s.url, '/sites/pageJson?site=b&refresh=true', { method: 'POST', token: keys.all!, json: { ...page, url: 'https://b.example.com/x' } });
  t.equal(r.status, 200);
  const inB = await api(s.url, '/sites/indexedContent?site=b', { token: s.masterKey });
  t.equal(inB.body.pages.length, 0, 'nothing reached project B');
});

t.test('every scope of the route table is a known scope, every route starts with a method', async (t) => {
  for (const [route, scope] of Object.entries(ROUTE_SCOPES)) {
    t.match(route, /^(GET|POST|PUT|PATCH|DELETE) \//);
    t.ok(['search', 'index', 'reports', 'settings', 'admin'].includes(scope), route);
  }
});
