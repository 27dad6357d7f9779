/**
 * Semantic search on a read-only search node: the node embeds queries with the embedder its
 * snapshot's settings name — the built-in word vectors offline, or the HTTP embedder — so its
 * hybrid and similar-pages answers equal the primary's. Also the HTTP embedder's API key:
 * masked in settings answers, kept when a GET answer is sent back, in snapshots only with keys.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { api, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { writeFixtureWordVectors } from '../helpers/word-vectors.js';

const page = (slug: string, title: string, content: string, extra: Record<string, unknown> = {}) => ({
  url: `https://h.test/${slug}`, title, content, contentGroup: '', imageUrl: '', appendPageContent: false, ...extra,
});
const PAGES = [
  page('rollback', 'ROLLBACK', 'abort the current transaction and revert its changes'),
  page('savepoint', 'SAVEPOINT', 'rollback part of a transaction', { contentGroup: 'Reference' }),
  page('perf', 'Performance tips', 'speed up slow queries'),
  page('create', 'CREATE TABLE', 'define a new table in the database', { contentGroup: 'Reference' }),
  page('cake', 'Chocolate cake', 'a recipe'),
];
/** Hybrid queries whose answering pages share no word with them, and plain ones. */
const QUERIES = ['undo a mistake', 'make it faster', 'rollback transaction', 'chocolate recipe', 'table', 'xyzzy'];

async function answers(s: TestServer): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    for (const extra of ['', '&semanticRatio=0.75&groupResults=false', '&includeContentGroups=["Reference"]']) {
      out.push(await (await fetch(`${s.url}/sites?site=default&log=false&query=${encodeURIComponent(q)}${extra}`)).text());
    }
  }
  for (const slug of ['rollback', 'perf']) out.push(await (await fetch(`${s.url}/sites/similar?site=default&url=https://h.test/${slug}`)).text());
  out.push(await (await fetch(`${s.url}/sites/suggest?site=default&query=${encodeURIComponent('undo a mis')}&semanticRatio=0.5`)).text());
  return out;
}

async function exportTo(t: { teardown(fn: () => unknown): void }, primary: TestServer, keys: boolean): Promise<string> {
  const out = tempDataDir(t);
  const r = await api(primary.url, '/admin/export', { method: 'POST', token: primary.masterKey, json: { siteId: 'default', out, keys } });
  if (r.status !== 200) throw new Error(`export: ${r.status} ${r.text}`);
  return out;
}

async function startNode(t: { teardown(fn: () => unknown): void }, snapshot: string, env: Record<string, string> = {}): Promise<TestServer> {
  const node = await startTestServer({ t, env: { SITESIFT_ROLE: 'search', SITESIFT_SNAPSHOT: snapshot, SITESIFT_SNAPSHOT_POLL_MS: '3600000', ...env } });
  const polled = await node.services.node!.poll();
  if (polled.swapped[0] !== 'default') throw new Error(`node did not load the snapshot: ${JSON.stringify(polled)}`);
  return node;
}

t.test('built-in embedder: a node embeds queries offline and answers hybrid and similar searches like the primary', async (t) => {
  const env = { SITESIFT_WORD_VECTORS: writeFixtureWordVectors(tempDataDir(t)) };
  const primary = await startTestServer({ t, env });
  let r = await api(primary.url, '/admin/projects/default/settings', { method: 'PATCH', token: primary.masterKey, json: { search: { semantic: { semanticRatio: 0.5, threshold: 0.5 } } } });
  t.equal(r.status, 200);
  r = await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, { method: 'POST', json: PAGES });
  t.equal(r.status, 200);
  const undo = (await api(primary.url, '/sites?site=default&log=false&query=undo+a+mistake')).body;
  t.ok(undo.totalResults > 0 && undo.semantic?.error === undefined, 'the primary finds pages for a paraphrase through vectors');

  const node = await startNode(t, await exportTo(t, primary, false), env);
  const onNode = (await api(node.url, '/sites?site=default&log=false&query=undo+a+mistake')).body;
  t.same(onNode, undo, 'the node answers the paraphrase as the primary does');
  t.same(await answers(node), await answers(primary), 'every hybrid, similar and suggest answer is identical');
});

/** A fake /v1/embeddings server that wants `Bearer <key>`: words on four topic axes. */
async function topicEmbedder(t: { teardown(fn: () => unknown): void }, key: string) {
  const AXES = [
    ['rollback', 'undo', 'revert', 'mistake', 'abort', 'changes'],
    ['performance', 'faster', 'speed', 'slow', 'tips'],
    ['cake', 'chocolate', 'recipe'],
    ['table', 'database', 'transaction', 'queries', 'define'],
  ];
  const calls = { ok: 0, refused: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${key}`) {
        calls.refused++;
        return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}');
      }
      calls.ok++;
      const { input } = JSON.parse(Buffer.concat(chunks).toString()) as { input: string[] };
      const data = input.map((text, index) => {
        const words = text.toLowerCase().split(/\W+/);
        return { index, embedding: [...AXES.map((ws) => words.filter((w) => ws.includes(w)).length), 0.1] };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`, calls };
}

t.test('HTTP embedder: the API key is masked in settings answers, kept on a round trip, and a node embeds with it only from a snapshot with keys', async (t) => {
  const fake = await topicEmbedder(t, 'sk-secret');
  const primary = await startTestServer({ t });
  const semantic = { embedder: 'http', semanticRatio: 0.5, threshold: 0.5, http: { url: fake.url, model: 'topics', dimensions: 5, apiKey: 'sk-secret', retries: 0 } };
  let r = await api(primary.url, '/admin/projects/default/settings', { method: 'PATCH', token: primary.masterKey, json: { search: { semantic } } });
  t.equal(r.status, 200);
  t.equal(r.body.search.semantic.http.apiKey, '********', 'the PATCH answer masks the key');
  t.notMatch(r.text, /sk-secret/, 'the key appears nowhere in the answer');
  const got = await api(primary.url, '/admin/projects/default/settings', { token: primary.masterKey });
  t.equal(got.body.search.semantic.http.apiKey, '********', 'GET masks it');
  t.notMatch(got.text, /sk-secret/);
  // A GET answer sent back whole keeps the stored key (the mask is not stored as the key).
  r = await api(primary.url, '/admin/projects/default/settings', { method: 'PUT', token: primary.masterKey, json: got.body });
  t.equal(r.status, 200);
  t.equal(r.body.search.semantic.http.apiKey, '********');
  t.equal(primary.services.projects.getSettings('default').search.semantic?.http.apiKey, 'sk-secret', 'PUT of the masked answer kept the key');
  r = await api(primary.url, '/admin/projects/default/settings', { method: 'PATCH', token: primary.masterKey, json: { search: { semantic: { http: { apiKey: '********', model: 'topics' } } } } });
  t.equal(primary.services.projects.getSettings('default').search.semantic?.http.apiKey, 'sk-secret', 'PATCH with the mask kept the key');

  r = await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, { method: 'POST', json: PAGES });
  t.equal(r.status, 200);
  // Pages are embedded when their segment is built (in the pool, asynchronously for HTTP): wait for it.
  let undo = (await api(primary.url, '/sites?site=default&log=false&query=undo+a+mistake')).body;
  for (let i = 0; i < 200 && undo.semantic.lexicalOnlyDocuments > 0; i++) {
    await new Promise((res) => setTimeout(res, 50));
    undo = (await api(primary.url, '/sites?site=default&log=false&query=undo+a+mistake')).body;
  }
  t.equal(undo.semantic.lexicalOnlyDocuments, 0, 'every page embedded');
  t.ok(undo.totalResults > 0, 'the primary finds the paraphrase through the HTTP embedder');
  t.equal(undo.semantic.error, undefined);
  t.equal(fake.calls.refused, 0, 'the primary always sent the key');

  // Without keys the snapshot carries no API key: the node's query embedding is refused, it says so.
  const bare = await exportTo(t, primary, false);
  const dir = path.join(bare, 'projects', 'default', 'manifests');
  const manifests = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
  t.ok(manifests.length > 0 && manifests.every((m) => !m.includes('sk-secret')), 'no key in a snapshot exported without keys');
  const lexicalNode = await startNode(t, bare);
  const lexical = (await api(lexicalNode.url, '/sites?site=default&log=false&query=undo+a+mistake')).body;
  t.match(lexical.semantic.error, /401/, 'the node says why it searched lexically');
  t.ok(fake.calls.refused > 0);

  // With keys the node embeds as the primary does: identical answers.
  const node = await startNode(t, await exportTo(t, primary, true));
  t.same(await answers(node), await answers(primary), 'hybrid, similar and suggest answers identical to the primary\'s');

  r = await api(primary.url, '/admin/projects/default/settings', { method: 'PATCH', token: primary.masterKey, json: { search: { semantic: { http: { apiKey: 'sk-new' } } } } });
  t.equal(primary.services.projects.getSettings('default').search.semantic?.http.apiKey, 'sk-new', 'a new key replaces the stored one');
  r = await api(primary.url, '/admin/projects/default/settings', { method: 'PATCH', token: primary.masterKey, json: { search: { semantic: { http: { apiKey: null } } } } });
  t.equal(r.body.search.semantic.http.apiKey, null, 'null removes it; answered as null, not masked');
});
