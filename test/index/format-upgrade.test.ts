import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { doc, liveRows, openStore, realPool, tempDir } from './helpers.js';
import { toFormat3, toFormat4, toFormat5 } from './fixtures/old-formats.js';
import { writeSegment } from '../../src/index/segment-write.js';
import { mergeSegments } from '../../src/index/segment-merge.js';
import { SegmentReader } from '../../src/index/segment-reader.js';
import { SEGMENT_FORMAT } from '../../src/index/segment-format.js';
import type { WriteOp } from '../../src/index/contract.js';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import type { SearchSettings } from '../../src/core/index.js';
import { makeDoc } from '../helpers/docs.js';

const settings: SearchSettings = {
  language: 'en',
  stopWords: null,
  typoTolerance: 'default',
  fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 },
  synonyms: [],
  resultMappings: [],
};
const req = (query: string): SearchRequest => ({
  query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [],
});

/** Rows of `file` whose headings, content or body are not packed. */
const unpackedRows = (file: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM docs WHERE typeof(headings) != 'blob' OR typeof(content) != 'blob' OR typeof(body) != 'blob'").pluck().get() as number;
  } finally {
    db.close();
  }
};

const tables = (file: string): string[] => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('fts', 'positions')").pluck().all() as string[]).sort();
  } finally {
    db.close();
  }
};

for (const [old, convert] of [[3, toFormat3], [4, toFormat4], [5, toFormat5]] as const) t.test(`format ${old} segments answer phrases after start (format 3: from FTS5; 4: from count-led positions; 5: stored text unpacked), and the merge job converts them to the current format`, async (t) => {
  const dir = tempDir(t);
  const pool = realPool(t);
  let store = await openStore(dir, pool);
  const ops = (docs: Array<[string, string, string[]?]>): WriteOp[] =>
    docs.map(([name, content, headings]) => ({ op: 'upsert', doc: doc(`https://p.test/${name}`, content, headings ? { headings } : {}) }));
  await store.write(ops([
    ['vacuum', 'Vacuum reclaims storage occupied by dead tuples in a table.'],
    ['phrase', 'the dead tuples are removed; tuples dead otherwise'],
  ]));
  await store.flush();
  await store.write(ops([
    ['apart', 'dead rows and tuples, never the two words together'],
    ['heads', 'nothing here', ['Dead', 'Tuples']], // two headings: no phrase across them
    ['café', 'a café crème with dead tuples'],
  ]));
  await store.flush();
  const files = store.segments().map((s) => path.join(dir, 'segments', s.file));
  t.equal(files.length, 2);
  await store.close();
  for (const f of files) convert(f);

  const search = (q: string): string[] => {
    const snap = store.acquire();
    try {
      return runQuery(snap, settings, req(q)).hits.map((h) => h.url.replace('https://p.test/', '')).sort();
    } finally {
      snap.release();
    }
  };
  const expect = (when: string): void => {
    t.same(search('"dead tuples"'), ['café', 'phrase', 'vacuum'], `${when}: phrase`);
    t.same(search('"tuples dead"'), ['phrase'], `${when}: word order`);
    t.same(search('tuples -"dead tuples"'), ['apart', 'heads'], `${when}: excluded phrase`);
    t.same(search('"cafe creme"'), ['café'], `${when}: folded phrase`);
  };

  store = await openStore(dir, pool);
  t.teardown(() => store.close());
  const before = store.acquire();
  t.same(before.segments.map((s) => s.reader.info.format), [old, old], `opened as format ${old}`);
  const rowsBefore = liveRows(before);
  before.release();
  expect(`format ${old} after start`);

  await store.merge();
  const after = store.segments();
  t.equal(after.length, 2, 'each old segment rewritten on its own');
  for (const s of after) {
    const f = path.join(dir, 'segments', s.file);
    t.ok(fs.existsSync(f));
    t.same(tables(f), ['positions'], `${s.file}: positions, no FTS5`);
    t.equal(unpackedRows(f), 0, `${s.file}: stored text packed`);
    const r = SegmentReader.open(f);
    t.equal(r.info.format, SEGMENT_FORMAT);
    r.close();
  }
  const snap = store.acquire();
  t.same(snap.segments.map((s) => s.reader.info.format), [SEGMENT_FORMAT, SEGMENT_FORMAT], 'converted');
  t.same(liveRows(snap), rowsBefore, 'every row reads as before');
  snap.release();
  expect(`format ${SEGMENT_FORMAT} after the merge`);
});

for (const [old, convert] of [[3, toFormat3], [4, toFormat4], [5, toFormat5]] as const) t.test(`merging a format ${old} source gives the stored rows, postings, positions and stems of a fresh build`, async (t) => {
  const dir = tempDir(t);
  const mk = (i: number) => ({
    seq: i + 1, at: 1000 + i, firstAt: 500 + i,
    doc: makeDoc(`https://c.test/${i}`, `Page ${i} about tables`, `content ${i % 7} shared words e-mail pg_proc utf8 ${'x'.repeat(i % 5)}`, {
      headings: [`Heading ${i}`, 'Second part'], keywords: i % 2 ? ['kw'] : [], description: i % 3 ? `described ${i}` : '', ...(i % 4 === 0 ? { language: 'de' } : { language: null }),
    }),
  });
  const a = Array.from({ length: 30 }, (_, i) => mk(i));
  const b = Array.from({ length: 20 }, (_, i) => mk(30 + i));
  const fa = path.join(dir, 'a.seg');
  const fb = path.join(dir, 'b.seg');
  writeSegment(fa, a, [], { defaultLanguage: 'fr' });
  writeSegment(fb, b, [], { defaultLanguage: 'fr' });
  convert(fa);
  const liveA = a.map((_, i) => i).filter((i) => i % 3 !== 0);
  const liveB = b.map((_, i) => i);
  const merged = path.join(dir, 'm.seg');
  const info = mergeSegments(merged, [{ path: fa, liveIds: liveA }, { path: fb, liveIds: liveB }], [], undefined, 'fr');
  t.equal(info.format, SEGMENT_FORMAT);
  const fresh = path.join(dir, 'f.seg');
  writeSegment(fresh, [...liveA.map((i) => a[i]!), ...liveB.map((i) => b[i]!)], [], { defaultLanguage: 'fr' });
  const read = (p: string) => {
    const db = new Database(p, { readonly: true });
    try {
      return {
        terms: db.prepare('SELECT term, stem, df, hex(postings) AS p, pos FROM terms ORDER BY term').all(),
        positions: db.prepare('SELECT t.term, hex(p.data) AS p FROM terms t JOIN positions p ON p.id = t.pos ORDER BY t.term').all(),
        stems: db.prepare('SELECT stem, term FROM stems ORDER BY stem, term').all(),
        docs: db.prepare('SELECT * FROM docs ORDER BY id').all(),
        languages: db.prepare("SELECT value FROM meta WHERE key = 'languages'").pluck().get(),
      };
    } finally {
      db.close();
    }
  };
  const m = read(merged);
  const f = read(fresh);
  t.ok(m.positions.length > 10 && m.stems.length > 0);
  if (old < 5) t.same(m, f);
  else {
    // Format 5 terms are copied, not analysed again: a copied term keeps the stem rows of its
    // source, also those of languages only its dropped rows had (a superset the lookups allow).
    const key = (r: unknown) => JSON.stringify(r);
    const fresh = new Set(f.stems.map(key));
    t.ok(f.stems.every((r) => new Set(m.stems.map(key)).has(key(r))), 'every stem row of a fresh build');
    t.ok(m.stems.length >= fresh.size);
    t.same({ ...m, stems: [] }, { ...f, stems: [] });
  }
  const r = SegmentReader.open(merged);
  t.teardown(() => r.close());
  t.equal(r.phraseRows(['heading', '31']).size, 1);
  t.equal(r.phraseRows(['31', 'second']).size, 0, 'headings stay apart');
  t.equal(r.phraseRows(['described', '4']).size, 0, 'the description has no positions');
});
