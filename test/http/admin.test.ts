import t, { type Test } from 'tap';
import { api, startTestServer } from '../helpers/server.js';

const s = await startTestServer();
t.teardown(() => s.close());
const M = s.masterKey;

function isFailure(t: Test, res: { status: number; body: any }, status: number, code: string): void {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.status, 'failure');
  t.equal(res.body?.code, code, `code ${code} (${res.body?.message})`);
}

t.test('projects: create, list, conflict, bad siteId, delete', async (t) => {
  const created = await api(s.url, '/admin/projects', { method: 'POST', token: M, json: { siteId: 'shop', name: 'Shop' } });
  t.equal(created.status, 201);
  t.match(created.body, { status: 'success', siteId: 'shop', name: 'Shop', createdAt: String });
  t.match(created.body.apiKey, { id: String, label: String, token: /^ss_/, prefix: String, createdAt: String });
  t.equal(created.body.apiKey.prefix, created.body.apiKey.token.slice(0, 8));

  const list = await api(s.url, '/admin/projects', { token: M });
  t.equal(list.status, 200);
  t.equal(list.body.status, 'success');
  t.same(list.body.projects.map((p: any) => p.siteId), ['default', 'shop']);
  for (const p of list.body.projects) t.same(Object.keys(p).sort(), ['createdAt', 'name', 'pages', 'siteId']);

  const taken = await api(s.url, '/admin/projects', { method: 'POST', token: M, json: { siteId: 'shop' } });
  isFailure(t, taken, 409, 'conflict');
  for (const siteId of ['Shop', '-x', '', 'a'.repeat(64), 5, null]) {
    const bad = await api(s.url, '/admin/projects', { method: 'POST', token: M, json: { siteId } });
    isFailure(t, bad, 400, 'invalid_parameter');
    t.equal(bad.body.field, 'siteId');
  }
  isFailure(t, await api(s.url, '/admin/projects', { method: 'POST', token: M, json: { siteId: 'ok', name: 7 } }), 400, 'invalid_parameter');
  isFailure(t, await api(s.url, '/admin/projects', { method: 'POST', token: M, json: ['x'] }), 400, 'invalid_parameter');
  isFailure(t, await api(s.url, '/admin/projects', { method: 'POST', token: M, body: '{oops', headers: { 'Content-Type': 'application/json' } }), 400, 'invalid_json');

  const token = created.body.apiKey.token;
  t.equal((await api(s.url, `/admin/projects/shop/keys?token=${token}`)).status, 200);
  const del = await api(s.url, '/admin/projects/shop', { method: 'DELETE', token: M });
  t.same(del.body, { status: 'success' });
  isFailure(t, await api(s.url, '/admin/projects/shop/keys', { token }), 401, 'invalid_token');
  isFailure(t, await api(s.url, '/admin/projects/shop', { method: 'DELETE', token: M }), 404, 'not_found');
  t.same((await api(s.url, '/admin/projects', { token: M })).body.projects.map((p: any) => p.siteId), ['default']);
});

t.test('admin auth: missing 401, wrong 401, project key 403 outside its own project', async (t) => {
  isFailure(t, await api(s.url, '/admin/projects'), 401, 'missing_token');
  isFailure(t, await api(s.url, '/admin/projects', { token: 'ssm_wrong-master-key-value' }), 401, 'invalid_token');
  isFailure(t, await api(s.url, '/admin/projects', { token: s.token }), 403, 'forbidden');
  isFailure(t, await api(s.url, '/admin/projects', { method: 'POST', token: s.token, json: { siteId: 'mine' } }), 403, 'forbidden');
  const other = await api(s.url, '/admin/projects', { method: 'POST', token: M, json: { siteId: 'other' } });
  const otherToken = other.body.apiKey.token;
  isFailure(t, await api(s.url, '/admin/projects/default/keys', { token: otherToken }), 403, 'forbidden');
  isFailure(t, await api(s.url, '/admin/projects/default/settings', { token: otherToken }), 403, 'forbidden');
  isFailure(t, await api(s.url, '/admin/projects/default', { method: 'DELETE', token: otherToken }), 403, 'forbidden');
  isFailure(t, await api(s.url, '/admin/projects/other', { method: 'DELETE', token: otherToken }), 403, 'forbidden');
  t.equal((await api(s.url, '/admin/projects/other/settings', { token: otherToken })).status, 200, 'own settings allowed');
  isFailure(t, await api(s.url, '/admin/projects/ghost/keys', { token: M }), 404, 'not_found');
  isFailure(t, await api(s.url, '/admin/projects/ghost/settings', { token: M }), 404, 'not_found');
});

t.test('keys: create, list without token, rename, delete fails at once', async (t) => {
  const created = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: M, json: { label: 'ci' } });
  t.equal(created.status, 201);
  t.match(created.body, { status: 'success', id: String, label: 'ci', token: /^ss_/, prefix: String, createdAt: String });
  const noBody = await api(s.url, '/admin/projects/default/keys', { method: 'POST', token: M });
  t.equal(noBody.status, 201, 'body optional');
  t.equal(noBody.body.label, '');

  const list = await api(s.url, '/admin/projects/default/keys', { token: s.token });
  t.equal(list.body.status, 'success');
  t.equal(list.body.keys.length, 3);
  for (const k of list.body.keys) t.same(Object.keys(k).sort(), ['createdAt', 'id', 'label', 'lastUsedAt', 'prefix', 'scopes']);
  t.notOk(list.text.includes(created.body.token), 'no token in listings');
  const me = list.body.keys.find((k: any) => s.token.startsWith(k.prefix));
  t.type(me.lastUsedAt, 'string', 'lastUsedAt recorded for the key in use');

  const renamed = await api(s.url, `/admin/projects/default/keys/${created.body.id}`, { method: 'PATCH', token: M, json: { label: 'deploy' } });
  t.equal(renamed.status, 200);
  t.match(renamed.body, { status: 'success', id: created.body.id, label: 'deploy' });
  t.notOk('token' in renamed.body);
  isFailure(t, await api(s.url, `/admin/projects/default/keys/${created.body.id}`, { method: 'PATCH', token: M, json: {} }), 400, 'invalid_parameter');
  isFailure(t, await api(s.url, `/admin/projects/default/keys/${created.body.id}`, { method: 'PATCH', token: M, json: { label: 'x', token: 'y' } }), 400, 'invalid_parameter');
  isFailure(t, await api(s.url, '/admin/projects/default/keys/nope', { method: 'PATCH', token: M, json: { label: 'x' } }), 404, 'not_found');

  t.equal((await api(s.url, `/test?token=${created.body.token}`)).status, 404);
  t.equal((await api(s.url, '/admin/projects/default/keys', { token: created.body.token })).status, 200, 'new key works');
  const del = await api(s.url, `/admin/projects/default/keys/${created.body.id}`, { method: 'DELETE', token: M });
  t.same(del.body, { status: 'success' });
  isFailure(t, await api(s.url, '/admin/projects/default/keys', { token: created.body.token }), 401, 'invalid_token');
  isFailure(t, await api(s.url, `/admin/projects/default/keys/${created.body.id}`, { method: 'DELETE', token: M }), 404, 'not_found');
});

t.test('settings: get defaults, put, patch, invalid names the path', async (t) => {
  const got = await api(s.url, '/admin/projects/default/settings', { token: M });
  t.equal(got.status, 200);
  t.equal(got.body.status, 'success');
  t.equal(got.body.search.language, 'en');
  t.type(got.body.updatedAt, 'string');

  const put = await api(s.url, '/admin/projects/default/settings', { method: 'PUT', token: s.token, json: { search: { language: 'German', typoTolerance: 'strict' } } });
  t.equal(put.status, 200);
  t.equal(put.body.search.language, 'de');
  t.equal(put.body.suggest.minSearches, 2, 'PUT fills defaults');
  const patch = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: M, json: { filters: [{ id: 'fid#1', name: 'Price', type: 'range' }] } });
  t.equal(patch.body.search.language, 'de', 'PATCH keeps other sections');
  t.equal(patch.body.filters.length, 1);
  t.ok(patch.body.updatedAt > put.body.updatedAt, 'updatedAt advances');

  const roundTrip = await api(s.url, '/admin/projects/default/settings', { method: 'PUT', token: M, json: patch.body });
  t.equal(roundTrip.status, 200, 'a GET/PATCH body can be PUT back');

  const unknown = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: M, json: { search: { typoTolerence: 'off' } } });
  isFailure(t, unknown, 400, 'invalid_parameter');
  t.equal(unknown.body.field, 'search.typoTolerence');
  const top = await api(s.url, '/admin/projects/default/settings', { method: 'PUT', token: M, json: { colour: 'red' } });
  isFailure(t, top, 400, 'invalid_parameter');
  t.equal(top.body.field, 'colour');
  const range = await api(s.url, '/admin/projects/default/settings', { method: 'PATCH', token: M, json: { crawler: { maxDepth: -1 } } });
  t.equal(range.body.field, 'crawler.maxDepth');
  t.match(range.body.message, /between 0 and 1000/);
  t.equal((await api(s.url, '/admin/projects/default/settings', { token: M })).body.search.language, 'de', 'failed writes changed nothing');
});

t.test('merge route: authorised and reaches the index', async (t) => {
  isFailure(t, await api(s.url, '/admin/projects/default/merge', { method: 'POST', token: s.token }), 403, 'forbidden');
  isFailure(t, await api(s.url, '/admin/projects/ghost/merge', { method: 'POST', token: M }), 404, 'not_found');
  const res = await api(s.url, '/admin/projects/default/merge', { method: 'POST', token: M });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body, { status: 'success', siteId: 'default', pages: Number });
});
