import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import t from 'tap';
import type { EmbedderSpec, PageDoc } from '../../src/core/index.js';
import { mergeSegments, writeSegment, SegmentReader } from '../../src/index/index.js';
import { docParts, embedderFingerprint, embedParts, loadWordVectors, type EmbeddableDoc } from '../../src/text/index.js';
import { doc, openStore, realPool, tempDir } from './helpers.js';
import { DEFAULT_SEARCH_MEMORY_MB } from '../../src/core/index.js';
import { engineCacheBudget, engineCacheUsed, setSearchMemoryMb } from '../../src/index/budgets.js';
import { FIXTURE_FP, writeFixtureWordVectors } from '../helpers/word-vectors.js';
import { toFormat5 } from './fixtures/old-formats.js';

const entries = (docs: PageDoc[]) => docs.map((d, i) => ({ seq: i + 1, at: i + 1, firstAt: i + 1, doc: d }));
const docs = [
  doc('https://v.test/a', 'abort the transaction and revert changes', { title: 'ROLLBACK', headings: ['Undo'] }),
  doc('https://v.test/b', 'speed up slow queries', { title: 'Performance tips' }),
  doc('https://v.test/c', 'a chocolate cake recipe', { title: 'Cake', description: 'food' }),
  { ...doc('https://v.test/gone', 'not found'), status: 404 },
];

t.test('build, merge and tombstones keep the vectors; a merge embeds rows that have none', async (t) => {
  const dir = tempDir(t);
  const wv = loadWordVectors(writeFixtureWordVectors(dir));
  const embed = (d: EmbeddableDoc) => embedParts(wv, docParts(d));
  const a = path.join(dir, 'a.seg');
  const info = writeSegment(a, entries(docs), [], { defaultLanguage: 'en', embed, embedder: FIXTURE_FP });
  t.equal(info.embedder, FIXTURE_FP, 'the file names its vector space');
  const ra = SegmentReader.open(a);
  t.teardown(() => ra.close());
  for (let id = 0; id < 3; id++) t.same([...ra.vectorOf(id, FIXTURE_FP)!], [...embed(docs[id]!)!], `row ${id} vector stored`);
  t.equal(ra.vectorOf(3, FIXTURE_FP), null, 'a non-200 row has no vector');
  t.equal(ra.vectors('http:other'), null, 'another vector space: none');

  // Merge without row 1 (a tombstone): vectors copied as bytes, the dropped row's vector gone.
  const m = path.join(dir, 'm.seg');
  const mi = mergeSegments(m, [{ path: a, liveIds: [0, 2, 3] }], [], { fp: FIXTURE_FP, embed: null });
  t.equal(mi.embedder, FIXTURE_FP);
  const rm = SegmentReader.open(m);
  t.teardown(() => rm.close());
  t.same([...rm.vectorOf(0, FIXTURE_FP)!], [...ra.vectorOf(0, FIXTURE_FP)!], 'row a carried over');
  t.same([...rm.vectorOf(1, FIXTURE_FP)!], [...ra.vectorOf(2, FIXTURE_FP)!], 'row c renumbered with its vector');
  const db = new Database(m, { readonly: true });
  t.equal(db.prepare('SELECT count(*) FROM vecs').pluck().get(), 2, 'the tombstoned row left no vector');
  db.close();

  // A file built lexically (as by format 1 or a down embedder) gets vectors from a merge, equal to a build's.
  const lex = path.join(dir, 'lex.seg');
  t.equal(writeSegment(lex, entries(docs), [], { defaultLanguage: 'en' }).embedder, null);
  t.equal(mergeSegments(path.join(dir, 'x.seg'), [{ path: lex, liveIds: [0, 1, 2] }], []).embedder, null, 'no vectors asked: none');
  const re = path.join(dir, 're.seg');
  t.equal(mergeSegments(re, [{ path: lex, liveIds: [0, 1, 2, 3] }], [], { fp: FIXTURE_FP, embed }).embedder, FIXTURE_FP);
  const rr = SegmentReader.open(re);
  t.teardown(() => rr.close());
  for (let id = 0; id < 3; id++) t.same([...rr.vectorOf(id, FIXTURE_FP)!], [...ra.vectorOf(id, FIXTURE_FP)!], `re-embedded row ${id} equals the built one`);
  t.equal(mergeSegments(path.join(dir, 'y.seg'), [{ path: lex, liveIds: [0] }, { path: a, liveIds: [1] }], [], { fp: FIXTURE_FP, embed: null }).embedder, null,
    'a source that cannot be embedded leaves the merged file unmarked');
});

t.test('a format 1 segment (no vectors table) is still read, lexically', async (t) => {
  const dir = tempDir(t);
  const f = path.join(dir, 'old.seg');
  writeSegment(f, entries(docs.slice(0, 2)), [], { defaultLanguage: 'en' });
  toFormat5(f); // stored text as TEXT, as formats 1–5 keep it
  const db = new Database(f);
  db.exec("UPDATE meta SET value = '1' WHERE key = 'format'; DROP TABLE vecs;");
  db.close();
  const r = SegmentReader.open(f);
  t.teardown(() => r.close());
  t.equal(r.info.format, 1);
  t.equal(r.info.embedder, null);
  t.equal(r.vectors(FIXTURE_FP), null);
  const wv = loadWordVectors(writeFixtureWordVectors(dir));
  const out = path.join(dir, 'new.seg');
  t.equal(mergeSegments(out, [{ path: f, liveIds: [0, 1] }], [], { fp: FIXTURE_FP, embed: (d) => embedParts(wv, docParts(d)) }).embedder, FIXTURE_FP, 'merged into the new format with vectors');
});

/** A fake /v1/embeddings server: deterministic vectors (text length, vowel count, 1); fails while `down`. */
async function fakeEmbedder(t: { teardown(fn: () => void): void }) {
  const state = { down: false, requests: 0, texts: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.requests++;
      if (state.down) {
        res.writeHead(503).end('down');
        return;
      }
      const { input } = JSON.parse(body) as { input: string[] };
      state.texts += input.length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: input.map((s, index) => ({ index, embedding: [s.length, (s.match(/[aeiou]/g) ?? []).length, 1] })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`, state };
}

t.test('the store embeds at build, re-embeds in the background when the embedder changes, and retries a down HTTP embedder', async (t) => {
  const dir = tempDir(t);
  const table = writeFixtureWordVectors(dir);
  const fake = await fakeEmbedder(t);
  const httpSettings = { url: fake.url, model: 'fake', dimensions: 3, apiKey: null, batchSize: 2, timeoutMs: 30_000, retries: 0 };
  const builtin: EmbedderSpec = { kind: 'builtin', fp: FIXTURE_FP, table };
  const httpSpec: EmbedderSpec = { kind: 'http', fp: embedderFingerprint('http', httpSettings), ...httpSettings };
  let spec: EmbedderSpec | null = builtin;
  const store = await openStore(path.join(dir, 'p'), realPool(t), { embedder: () => spec });
  t.teardown(() => store.close());
  await store.write(docs.map((d) => ({ op: 'upsert' as const, doc: d })));
  await store.flush();
  const embeddedWith = () => {
    const snap = store.acquire();
    try {
      return snap.segments.map((s) => s.reader.info.embedder);
    } finally {
      snap.release();
    }
  };
  t.same(embeddedWith(), [FIXTURE_FP], 'built with the built-in vectors');
  t.notOk(store.mergeDue(), 'nothing to re-embed');

  spec = httpSpec;
  fake.state.down = true;
  t.ok(store.mergeDue(), 'a segment in another vector space is due');
  await store.merge();
  t.same(embeddedWith(), [FIXTURE_FP], 'the embedder is down: the segment stays as it was (searched lexically in the new space)');
  t.match(store.embedError(), /fake|127\.0\.0\.1.*503|HTTP 503/, 'the failure is reported');
  t.notOk(store.mergeDue(), 'no retry before the back-off');

  fake.state.down = false;
  // The back-off is a minute; a new store (as after a restart) tries at once.
  await store.close();
  const again = await openStore(path.join(dir, 'p'), realPool(t), { embedder: () => spec });
  t.teardown(() => again.close());
  await again.merge();
  const snap = again.acquire();
  t.same(snap.segments.map((s) => s.reader.info.embedder), [httpSpec.fp], 're-embedded with the HTTP embedder');
  const v = snap.segments[0]!.reader.vectorOf(0, httpSpec.fp)!;
  t.equal(v.length, 3);
  t.ok(Math.abs(Math.hypot(...v) - 1) < 1e-6, 'unit length');
  snap.release();
  t.equal(fake.state.texts, 3, 'the three searchable pages were sent once');
  t.equal(again.embedError(), null);
});

t.test("a segment's vectors stay while its reader is open, whatever the postings pressure (every hybrid search reads them all)", async (t) => {
  const saved = { ...engineCacheUsed };
  t.teardown(() => setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB));
  const dir = tempDir(t);
  const wv = loadWordVectors(writeFixtureWordVectors(dir));
  const embed = (d: EmbeddableDoc) => embedParts(wv, docParts(d));
  // 400 rows × 6 dims × 4 bytes: 9.6 KB of vectors.
  const many = Array.from({ length: 400 }, (_, i) => doc(`https://v.test/p${i}`, `revert slow cake ${i}`, { title: `Page ${i}` }));
  const file = path.join(dir, 'many.seg');
  writeSegment(file, entries(many), [], { defaultLanguage: 'en', embed, embedder: FIXTURE_FP });
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  const v = r.vectors(FIXTURE_FP)!;
  t.ok(v.data.byteLength >= 400 * 6 * 4);
  t.equal(r.vectors(FIXTURE_FP), v, 'read once');
  // A postings budget smaller than the vectors: decoded postings are evicted, the vectors are not
  // read again (they would be on every search).
  setSearchMemoryMb(0.02);
  t.ok(engineCacheBudget.postings < v.data.byteLength);
  r.postings('revert');
  r.postings('slow');
  t.ok(engineCacheUsed.postings <= engineCacheBudget.postings, `the thread stays within its postings budget (${engineCacheUsed.postings} ≤ ${engineCacheBudget.postings})`);
  t.equal(r.vectors(FIXTURE_FP), v, 'still the same vectors');
  setSearchMemoryMb(DEFAULT_SEARCH_MEMORY_MB);
  r.close();
  t.equal(engineCacheUsed.postings, saved.postings, 'closing the reader releases its postings');
});

t.test("a segment's vectors are sqlite-vec vectors: the extension reads them and finds the same neighbours", async (t) => {
  const dir = tempDir(t);
  const wv = loadWordVectors(writeFixtureWordVectors(dir));
  const embed = (d: EmbeddableDoc) => embedParts(wv, docParts(d));
  const file = path.join(dir, 'a.seg');
  writeSegment(file, entries(docs), [], { defaultLanguage: 'en', embed, embedder: FIXTURE_FP });
  const reader = SegmentReader.open(file);
  t.teardown(() => reader.close());
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  sqliteVec.load(db);
  const dims = reader.vectors(FIXTURE_FP)!.dims;
  t.ok(dims > 0);
  // vec_length() refuses a blob that is not a float32 vector; every stored one has the space's dimensions.
  t.same(db.prepare('SELECT DISTINCT vec_length(v) FROM vecs').pluck().all(), [dims], 'every blob is a float32 vector of the space');
  const query = embed(docs[0]!)!;
  const bySqlite = db.prepare('SELECT id, 1 - vec_distance_cosine(v, ?) AS sim FROM vecs ORDER BY sim DESC, id').raw().all(Buffer.from(query.buffer, query.byteOffset, query.byteLength)) as Array<[number, number]>;
  const ours = [0, 1, 2].map((id) => {
    const v = reader.vectorOf(id, FIXTURE_FP)!;
    let s = 0;
    for (let i = 0; i < dims; i++) s += v[i]! * query[i]!;
    return [id, s] as [number, number];
  }).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  t.same(bySqlite.map((r) => r[0]), ours.map((r) => r[0]), 'the same order of neighbours');
  for (const [i, [, sim]] of bySqlite.entries()) t.ok(Math.abs(sim - ours[i]![1]) < 1e-5, `similarity ${sim} ≈ ${ours[i]![1]}`);
});
