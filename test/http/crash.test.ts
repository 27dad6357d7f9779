/**
 * HTTP-level crash safety (issue: foundation): a child server is killed with SIGKILL right
 * after acknowledging writes, while a segment build is stalled, and while a merge is stalled;
 * after a restart every acknowledged write is there, no URL appears twice, and acknowledged
 * deletes stay deleted. The store-level variant lives in test/index/crash.test.ts.
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { api, spawnServer, tempDataDir, type SpawnedServer } from '../helpers/server.js';

/** The assertions verify() needs (keeps it independent of tap's types). */
interface Asserts {
  equal(found: unknown, wanted: unknown, message: string): unknown;
  same(found: unknown, wanted: unknown, message: string): unknown;
}

type Model = Map<string, number | null>; // url → version, null = deleted

const doc = (i: number, version: number) => ({
  url: `https://crash.test/page-${i}`,
  title: `Page ${i} version ${version}`,
  content: `Crash safety page ${i}, version ${version}.`,
  contentGroup: '',
  imageUrl: '',
  appendPageContent: false,
});

async function tokenOf(s: SpawnedServer): Promise<string> {
  await waitFor(s, 'API key');
  const m = /API key\s*:\s*(\S+)/.exec(s.stdout());
  if (!m) throw new Error('no API key in the banner');
  return m[1]!;
}

async function writeBatch(s: SpawnedServer, token: string, model: Model, ids: number[], version: number): Promise<void> {
  const r = await api(s.url, `/sites/pagesJson?token=${token}`, { method: 'POST', json: ids.map((i) => doc(i, version)) });
  if (r.status !== 200) throw new Error(`write failed: ${r.status} ${r.text}`);
  for (const i of ids) model.set(doc(i, 0).url, version);
}

async function deleteUrl(s: SpawnedServer, token: string, model: Model, i: number): Promise<void> {
  const url = doc(i, 0).url;
  const r = await api(s.url, `/index/documents?token=${token}&url=${encodeURIComponent(url)}`, { method: 'DELETE' });
  if (r.status !== 200) throw new Error(`delete failed: ${r.status} ${r.text}`);
  model.set(url, null);
}

async function waitFor(s: SpawnedServer, text: string): Promise<void> {
  const start = Date.now();
  while (!s.stdout().includes(text)) {
    if (Date.now() - start > 60_000) throw new Error(`timed out waiting for "${text}"\n${s.stdout().slice(-2000)}\n${s.stderr().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Restarts on the same data dir and checks the index against the model. */
async function verify(t: Asserts, dataDir: string, token: string, model: Model): Promise<void> {
  const s = await spawnServer(dataDir, { SITESIFT_REFRESH_MS: '50' });
  try {
    const listing = await api(s.url, `/sites/indexedContent?token=${token}&limit=1000`);
    t.equal(listing.status, 200, 'listing answers');
    const urls: string[] = listing.body.pages.map((p: { url: string }) => p.url);
    t.equal(new Set(urls).size, urls.length, 'no URL appears twice');
    const expected = [...model].filter(([, v]) => v !== null).map(([u]) => u).sort();
    t.same([...urls].sort(), expected, 'exactly the acknowledged live URLs');
    for (const p of listing.body.pages as Array<{ url: string; title: string }>) {
      t.equal(p.title, doc(Number(p.url.split('-').pop()), model.get(p.url)!).title, `newest version of ${p.url}`);
    }
    // Searchable too, once refreshed.
    const r = await api(s.url, `/sites?site=default&query=crash&limit=100&log=false&groupResults=false`);
    t.same(r.body.suggests._.map((x: { link: string }) => x.link).sort(), expected, 'search finds exactly them');
    t.equal(r.body.totalResults, expected.length, 'totalResults');
  } finally {
    await s.kill('SIGTERM');
  }
}

t.test('killed right after acknowledgements (writes still in the write log)', async (t) => {
  const dataDir = tempDataDir(t);
  // A long refresh keeps acknowledged documents unpublished: only the write log has them.
  const s = await spawnServer(dataDir, { SITESIFT_REFRESH_MS: '600000' });
  const token = await tokenOf(s);
  const model: Model = new Map();
  await writeBatch(s, token, model, [0, 1, 2, 3, 4], 1);
  await writeBatch(s, token, model, [3, 4, 5, 6], 2);
  await deleteUrl(s, token, model, 1);
  await writeBatch(s, token, model, [7], 1);
  t.equal(await s.kill('SIGKILL'), 'SIGKILL');
  await verify(t, dataDir, token, model);
});

t.test('killed while a segment build is stalled', async (t) => {
  const dataDir = tempDataDir(t);
  const s = await spawnServer(dataDir, { SITESIFT_REFRESH_MS: '50', SITESIFT_TEST_PAUSE_IN: 'build' });
  const token = await tokenOf(s);
  const model: Model = new Map();
  await writeBatch(s, token, model, [0, 1, 2], 1);
  await waitFor(s, 'PAUSED build');
  // Writes keep being acknowledged while the build hangs.
  await writeBatch(s, token, model, [2, 3], 2);
  await deleteUrl(s, token, model, 0);
  t.equal(await s.kill('SIGKILL'), 'SIGKILL');
  await verify(t, dataDir, token, model);
});

t.test('killed while a merge is stalled, with writes and deletes during the merge', async (t) => {
  const dataDir = tempDataDir(t);
  const model: Model = new Map();
  // First publish several segments.
  let s = await spawnServer(dataDir, { SITESIFT_REFRESH_MS: '50' });
  const token = await tokenOf(s);
  for (let b = 0; b < 4; b++) {
    const r = await api(s.url, `/sites/pagesJson?token=${token}&refresh=true`, { method: 'POST', json: [doc(b * 2, 1), doc(b * 2 + 1, 1)] });
    t.equal(r.status, 200);
    model.set(doc(b * 2, 0).url, 1).set(doc(b * 2 + 1, 0).url, 1);
  }
  await s.kill('SIGTERM');
  s = await spawnServer(dataDir, { SITESIFT_REFRESH_MS: '50', SITESIFT_TEST_PAUSE_IN: 'merge' });
  const merge = api(s.url, '/admin/projects/default/merge', { method: 'POST', token: masterKeyOf(dataDir) });
  merge.catch(() => undefined);
  await waitFor(s, 'PAUSED merge');
  await writeBatch(s, token, model, [1, 8], 2);
  await deleteUrl(s, token, model, 2);
  t.equal(await s.kill('SIGKILL'), 'SIGKILL');
  await verify(t, dataDir, token, model);
});

function masterKeyOf(dataDir: string): string {
  // The first start stored it (mode 0600) in the data dir.
  return fs.readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
}
