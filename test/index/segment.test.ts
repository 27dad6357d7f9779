import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { NFIELDS, SCAN_CACHE_KB, SEGMENT_FORMAT, infoFrom, scanWith } from '../../src/index/segment-format.js';
import { writeSegment } from '../../src/index/segment-write.js';
import { PostingsPool } from '../../src/index/postings-builder.js';
import { SegmentReader, READER_CACHE_KB, parseLengths, readRowColumns } from '../../src/index/segment-reader.js';
import { makeDoc } from '../helpers/docs.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seg-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

t.test('writes and reads back rows, deletes, postings and phrases', async (t) => {
  const file = path.join(dir, 'a.seg');
  const info = writeSegment(
    file,
    [
      { seq: 3, at: 1000, firstAt: 900, doc: makeDoc('https://x.test/tables', 'Creating Tables', 'A table holds rows. Tables are created with CREATE TABLE.', { keywords: ['ddl'] }) },
      { seq: 4, at: 1001, firstAt: 1001, doc: makeDoc('https://x.test/gone', '', '', { status: 404, message: 'Not Found' }) },
      { seq: 5, at: 1002, firstAt: 1002, doc: makeDoc('https://x.test/café', 'Café Crème', 'Über naïve coffee', { language: 'fr' }) },
    ],
    [{ seq: 6, at: 1003, url: 'https://x.test/old' }],
    { defaultLanguage: 'en' },
  );
  t.match(info, { format: SEGMENT_FORMAT, docCount: 3, searchableCount: 2, deleteCount: 1, minSeq: 3, maxSeq: 6 });
  t.throws(() => writeSegment(file, [], [], { defaultLanguage: 'en' }), /exists/);

  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  t.equal(r.pageCacheKb(), READER_CACHE_KB, 'readers keep a small SQLite page cache (not the 16 MB default)');
  const rows = r.rows();
  t.same(rows.map((x) => [x.id, x.url, x.seq, x.status]), [
    [0, 'https://x.test/tables', 3, 200],
    [1, 'https://x.test/gone', 4, 404],
    [2, 'https://x.test/café', 5, 200],
  ]);
  t.same(rows[0]!.lengths, [2, 1, 0, 1, 10]);
  t.same(rows[1]!.lengths, [0, 0, 0, 0, 0]);
  t.same(r.deletes(), [{ url: 'https://x.test/old', seq: 6, at: 1003 }]);
  t.equal(r.entry(2).doc.title, 'Café Crème');
  t.equal(r.entry(0).firstAt, 900);

  const p = r.postings('table')!;
  t.same([...p.ids], [0]);
  // title 0, keywords 0, headings 0, url 0, content 2 ("table", "TABLE")
  t.same([...p.tfs.subarray(0, NFIELDS)], [0, 0, 0, 0, 2]);
  t.same([...r.postings('tables')!.tfs.subarray(0, NFIELDS)], [1, 0, 0, 1, 1]);
  t.equal(r.postings('nothing'), null);
  // English words carry their stem; French ones do not.
  t.same(r.termsWithStem('tabl').sort(), ['table', 'tables']);
  t.same(r.termsWithStem('naiv'), []);
  t.ok(r.hasTerm('naive'), 'diacritics are folded');
  t.same(r.termsWithPrefix('cr', 10), ['create', 'created', 'creating', 'creme']);
  t.same([...r.phraseRows(['create', 'table'])], [0]);
  t.same([...r.phraseRows(['rows', 'tables'])], [0], 'a phrase runs across punctuation');
  t.same([...r.phraseRows(['tables', 'are', 'created'])], [0]);
  t.same([...r.phraseRows(['tables', 'created'])], []);
  t.same([...r.phraseRows(['creating', 'tables'])], [0], 'in the title');
  t.same([...r.phraseRows(['tables', 'a'])], [], 'never from the title into the content');
  t.same([...r.phraseRows(['cafe', 'creme'])], [2], 'folded words');
  t.same([...r.phraseRows(['ddl', 'creating'])], [], 'keywords have no positions');
  t.same([...r.phraseRows(['table', 'nothing'])], []);
  const dv = r.docValues();
  t.equal(dv.urls[2], 'https://x.test/café');
  t.equal(dv.status[1], 404);
  t.equal(dv.lengths[0 * NFIELDS + 4], 10);
  t.same([...dv.lengths], rows.flatMap((x) => x.lengths), 'doc-value lengths equal the stored ones');
  t.same(dv.group, [0, 1, 2].map((i) => r.entry(i).doc.contentGroup));
  t.same(dv.docType, [0, 1, 2].map((i) => r.entry(i).doc.documentType));
  t.equal(r.titleKey(0), 'creating tables', 'title keys are read per row on demand');
  t.equal(r.titleKey(1), '', 'a non-searchable row has no title key');
  t.equal(r.titleKey(2), 'cafe creme');

  // The store's row loading (own short-lived connection) sees exactly what rows() sees.
  const cols = readRowColumns(file, info.docCount);
  t.same(cols.urls, rows.map((x) => x.url));
  t.same([...cols.seqs], rows.map((x) => x.seq));
  t.same([...cols.ats], rows.map((x) => x.at));
  t.same([...cols.firstAts], rows.map((x) => x.firstAt));
  t.same([...cols.statuses], rows.map((x) => x.status));
  t.same([...cols.lengths], rows.flatMap((x) => x.lengths));
  t.same(cols.deletes, r.deletes());
  t.throws(() => readRowColumns(file, 2), /row id 2 outside 0\.\.1/, 'a row beyond the manifest count is refused');
});

t.test('a postings list with large ids and tfs round-trips', async (t) => {
  const file = path.join(dir, 'b.seg');
  const entries = Array.from({ length: 300 }, (_, i) => ({
    seq: i + 1,
    at: i,
    firstAt: i,
    doc: makeDoc(`https://x.test/${i}`, `Doc ${i}`, i % 3 === 0 ? 'common '.repeat(200) + 'rare' : 'other words'),
  }));
  writeSegment(file, entries, [], { defaultLanguage: 'en' });
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  const p = r.postings('common')!;
  t.equal(p.ids.length, 100);
  t.equal(p.ids[99], 297);
  t.equal(p.tfs[99 * NFIELDS + 4], 200);
});

t.test('refuses a file of another format', async (t) => {
  const file = path.join(dir, 'c.seg');
  writeSegment(file, [], [], { defaultLanguage: 'en' });
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(file);
  db.prepare("UPDATE meta SET value='99' WHERE key='format'").run();
  db.close();
  t.throws(() => SegmentReader.open(file), /format 99/);
});

t.test('a merge equals a fresh build of the same live rows', async (t) => {
  const { mergeSegments } = await import('../../src/index/segment-merge.js');
  const mk = (i: number, extra = {}) => ({
    seq: i + 1, at: 1000 + i, firstAt: 500 + i,
    doc: makeDoc(`https://m.test/${i}`, `Page ${i} about tables`, `content ${i % 7} shared words e-mail pg_proc ${'x'.repeat(i % 5)}`, {
      headings: [`Heading ${i}`], keywords: i % 2 ? ['kw'] : [], ...(i % 4 === 0 ? { language: 'de' } : {}), ...extra,
    }),
  });
  const a = Array.from({ length: 40 }, (_, i) => mk(i));
  const b = Array.from({ length: 30 }, (_, i) => mk(40 + i, i === 3 ? { status: 404, message: 'gone' } : {}));
  const fa = path.join(dir, 'ma.seg');
  const fb = path.join(dir, 'mb.seg');
  writeSegment(fa, a, [], { defaultLanguage: 'en' });
  writeSegment(fb, b, [{ seq: 100, at: 1, url: 'https://m.test/old' }], { defaultLanguage: 'en' });
  const liveA = a.map((_, i) => i).filter((i) => i % 3 !== 0);
  const liveB = b.map((_, i) => i).filter((i) => i % 5 !== 1);
  const merged = path.join(dir, 'merged.seg');
  const info = mergeSegments(merged, [{ path: fa, liveIds: liveA }, { path: fb, liveIds: liveB }], [{ seq: 100, at: 1, url: 'https://m.test/old' }]);
  const fresh = path.join(dir, 'fresh.seg');
  writeSegment(fresh, [...liveA.map((i) => a[i]!), ...liveB.map((i) => b[i]!)], [{ seq: 100, at: 1, url: 'https://m.test/old' }], { defaultLanguage: 'en' });
  const rm = SegmentReader.open(merged);
  const rf = SegmentReader.open(fresh);
  t.teardown(() => (rm.close(), rf.close()));
  t.equal(info.docCount, liveA.length + liveB.length);
  t.same(rm.info, { ...rf.info, bytes: rm.info.bytes });
  t.same(rm.rows(), rf.rows());
  t.same(rm.deletes(), rf.deletes());
  t.same(rm.terms(), rf.terms());
  for (const term of rf.terms()) {
    const pm = rm.postings(term)!;
    const pf = rf.postings(term)!;
    t.same([...pm.ids], [...pf.ids], `ids of ${term}`);
    t.same([...pm.tfs], [...pf.tfs], `tfs of ${term}`);
    t.same(rm.termsWithStem(term).sort(), rf.termsWithStem(term).sort(), `stem of ${term}`);
  }
  for (let id = 0; id < info.docCount; id++) t.same(rm.entry(id), rf.entry(id), `entry ${id}`);
  t.same([...rm.phraseRows(['heading', '42'])], [...rf.phraseRows(['heading', '42'])]);
  t.equal(rm.phraseRows(['heading', '42']).size, 1);
  t.equal(rm.phraseRows(['heading', '41']).size, 0, 'a dead row is not merged');
  t.equal(rm.phraseRows(['about', 'tables']).size, info.searchableCount);
  t.same([...rm.phraseRows(['pg', 'proc'])], [...rf.phraseRows(['pg', 'proc'])]);
});

t.test('a build and a merge return the info the sealed file\'s meta holds', async (t) => {
  const { mergeSegments } = await import('../../src/index/segment-merge.js');
  const read = (file: string) => scanWith(file, (db) => infoFrom(db, file));
  const entries = Array.from({ length: 12 }, (_, i) => ({
    seq: 10 + i, at: i, firstAt: i,
    doc: makeDoc(`https://i.test/${i}`, `Page ${i}`, `words ${i}`, i === 5 ? { status: 404 } : {}),
  }));
  const deletes = [{ seq: 3, at: 1, url: 'https://i.test/old' }, { seq: 40, at: 2, url: 'https://i.test/older' }];
  const unit = new Float32Array([0.6, 0.8]);
  const plain = path.join(dir, 'info-plain.seg');
  const embedded = path.join(dir, 'info-embedded.seg');
  const built = writeSegment(plain, entries, deletes, { defaultLanguage: 'en' });
  const builtEmbedded = writeSegment(embedded, entries, [], { defaultLanguage: 'en', embed: () => unit, embedder: 'fp-test' });
  t.same(built, read(plain), 'a build');
  t.same(built, { format: SEGMENT_FORMAT, docCount: 12, searchableCount: 11, deleteCount: 2, minSeq: 3, maxSeq: 40, bytes: fs.statSync(plain).size, embedder: null });
  t.same(builtEmbedded, read(embedded), 'a build with vectors');
  t.equal(builtEmbedded.embedder, 'fp-test');
  const merged = path.join(dir, 'info-merged.seg');
  const info = mergeSegments(merged, [{ path: plain, liveIds: [0, 1, 2, 5, 7] }], deletes.slice(1));
  t.same(info, read(merged), 'a merge');
  t.equal(info.docCount, 5);
});

t.test('merged postings are byte for byte those of a fresh build (sources with and without dead rows)', async (t) => {
  const { mergeSegments } = await import('../../src/index/segment-merge.js');
  const mk = (i: number) => ({
    seq: i + 1, at: 1000 + i, firstAt: 500 + i,
    // Long content: tfs above 127 and ids far apart need multi-byte varints.
    doc: makeDoc(`https://r.test/${i}`, `Run ${i}`, `${'common '.repeat(130 + i)} word${i % 3} tail`),
  });
  const a = Array.from({ length: 200 }, (_, i) => mk(i));
  const b = Array.from({ length: 150 }, (_, i) => mk(200 + i));
  const fa = path.join(dir, 'ra.seg');
  const fb = path.join(dir, 'rb.seg');
  writeSegment(fa, a, [], { defaultLanguage: 'en' });
  writeSegment(fb, b, [], { defaultLanguage: 'en' });
  const liveA = a.map((_, i) => i); // no dead rows: copied as one run
  const liveB = b.map((_, i) => i).filter((i) => i % 4 !== 0 && (i < 60 || i > 80));
  const merged = path.join(dir, 'rmerged.seg');
  mergeSegments(merged, [{ path: fa, liveIds: liveA }, { path: fb, liveIds: liveB }], []);
  const fresh = path.join(dir, 'rfresh.seg');
  writeSegment(fresh, [...liveA.map((i) => a[i]!), ...liveB.map((i) => b[i]!)], [], { defaultLanguage: 'en' });
  const read = (p: string) => {
    const db = new Database(p, { readonly: true });
    try {
      return [
        db.prepare('SELECT term, stem, df, hex(postings) AS p, pos FROM terms ORDER BY term').all(),
        db.prepare('SELECT t.term, hex(p.data) AS p FROM terms t JOIN positions p ON p.id = t.pos ORDER BY t.term').all(),
      ];
    } finally {
      db.close();
    }
  };
  const m = read(merged);
  t.ok(m[0]!.length > 5 && m[1]!.length > 5);
  t.same(m, read(fresh));
});


t.test('parseLengths reads the stored lengths column without allocating', async (t) => {
  const out = new Uint32Array(2 * NFIELDS).fill(7);
  parseLengths('[2,1,0,13,4096]', out, NFIELDS);
  t.same([...out], [7, 7, 7, 7, 7, 2, 1, 0, 13, 4096]);
  parseLengths('[3]', out, 0);
  t.same([...out.subarray(0, NFIELDS)], [3, 0, 0, 0, 0], 'missing entries are 0');
  parseLengths('[]', out, 0);
  t.same([...out.subarray(0, NFIELDS)], [0, 0, 0, 0, 0]);
});

t.test('postings spanning many blocks and pool chunks equal the documents counted word by word', async (t) => {
  // 2,000 documents: every one has "shared" (a list of thousands of bytes, many doubling
  // blocks), 40 words of its own (≈ 80,000 short lists), ids above 127 (two-byte deltas after
  // gaps) and title/content tfs above the caps.
  const file = path.join(dir, 'pool.seg');
  const n = 2000;
  const own = (i: number) => Array.from({ length: 40 }, (_, k) => `w${i}x${k}`).join(' ');
  const entries = Array.from({ length: n }, (_, i) => ({
    seq: i + 1,
    at: i,
    firstAt: i,
    doc: makeDoc(`https://x.test/p${i}`, i % 97 === 0 ? 'shared '.repeat(130) : 'title', `${'shared '.repeat(1 + (i % 5) * 70)}${i % 3 ? 'gap ' : ''}${own(i)}`),
  }));
  writeSegment(file, entries, [], { defaultLanguage: 'en' });
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  const p = r.postings('shared')!;
  t.equal(p.ids.length, n);
  let bad = 0;
  for (let i = 0; i < n; i++) {
    if (p.ids[i] !== i) bad++;
    if (p.tfs[i * NFIELDS + 4] !== 1 + (i % 5) * 70) bad++;
    if (p.tfs[i * NFIELDS] !== (i % 97 === 0 ? 127 : 0)) bad++; // short fields cap at 127
  }
  t.equal(bad, 0, 'every id and tf of the long list');
  const gap = r.postings('gap')!;
  t.same([...gap.ids.subarray(0, 4)], [1, 2, 4, 5]);
  t.equal(gap.ids.length, n - Math.ceil(n / 3));
  for (const i of [0, 1, 999, 1999]) {
    const q = r.postings(`w${i}x39`)!;
    t.same([...q.ids], [i], `own word of document ${i}`);
    t.equal(q.tfs[4], 1);
  }
});

t.test('per-field counts equal a word-by-word model: thousands of distinct words in one document, words met first in a title then in content, mixed case and letters outside ASCII', async (t) => {
  // Document 1 holds 3,000 distinct words (the build's per-document scratch grows past its
  // initial 1,024 terms); titles and headings are counted through the string path and content
  // through the character scan, and both must find the same term.
  const file = path.join(dir, 'model.seg');
  const many = Array.from({ length: 3000 }, (_, k) => `Term${k}z`).join(' ');
  const docs = [
    makeDoc('https://x.test/a', 'Alpha Beta café', 'alpha ALPHA beta Café naïve zz alpha', { headings: ['Beta Gamma'] }),
    makeDoc('https://x.test/b', 'Gamma', `${many} gamma Alpha term7z TERM7Z`, { keywords: ['Delta'] }),
    makeDoc('https://x.test/c', 'Straße', 'strasse Straße delta café cafe'),
  ];
  writeSegment(file, docs.map((doc, i) => ({ seq: i + 1, at: i, firstAt: i, doc })), [], { defaultLanguage: 'en' });
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  // FIELDS order: title, keywords, headings, url, content.
  const want: Record<string, Array<[number, number[]]>> = {
    alpha: [[0, [1, 0, 0, 0, 3]], [1, [0, 0, 0, 0, 1]]],
    beta: [[0, [1, 0, 1, 0, 1]]],
    gamma: [[0, [0, 0, 1, 0, 0]], [1, [1, 0, 0, 0, 1]]],
    cafe: [[0, [1, 0, 0, 0, 1]], [2, [0, 0, 0, 0, 2]]],
    naive: [[0, [0, 0, 0, 0, 1]]],
    delta: [[1, [0, 1, 0, 0, 0]], [2, [0, 0, 0, 0, 1]]],
    strasse: [[2, [1, 0, 0, 0, 2]]],
    term7z: [[1, [0, 0, 0, 0, 3]]],
    term2999z: [[1, [0, 0, 0, 0, 1]]],
  };
  for (const [word, rows] of Object.entries(want)) {
    const p = r.postings(word);
    t.ok(p, word);
    if (!p) continue;
    t.same([...p.ids], rows.map(([id]) => id), `${word}: documents`);
    t.same(rows.map((_, k) => [...p.tfs.subarray(k * NFIELDS, (k + 1) * NFIELDS)]), rows.map(([, tfs]) => tfs), `${word}: per-field tfs`);
  }
  let missing = 0;
  for (let k = 0; k < 3000; k++) if (r.postings(`term${k}z`)?.ids[0] !== 1) missing++;
  t.equal(missing, 0, 'every distinct word of the long document');
});

t.test('words of non-ASCII runs keep their terms when the per-thread run cache is cleared part way through a build', async (t) => {
  // A build looks the words of a cached run up by per-thread word ids; 60,000 distinct runs
  // overflow the cache (50,000 runs), which clears it and hands out the ids again from 0.
  const file = path.join(dir, 'runs.seg');
  const fresh = (i: number) => Array.from({ length: 1000 }, (_, k) => `ü${i * 1000 + k}`).join(' ');
  const docs = [
    makeDoc('https://x.test/first', 'Runs', 'für über größe 東京の大学 für'),
    ...Array.from({ length: 60 }, (_, i) => makeDoc(`https://x.test/r${i}`, 'Runs', fresh(i))),
    makeDoc('https://x.test/last', 'Runs', 'über größe 東京の大学 für ü0 ü59999'),
  ];
  writeSegment(file, docs.map((doc, i) => ({ seq: i + 1, at: i, firstAt: i, doc })), [], { defaultLanguage: 'en' });
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  const last = docs.length - 1;
  for (const [word, ids, tf] of [['fur', [0, last], 2], ['uber', [0, last], 1], ['grosse', [0, last], 1], ['東京', [0, last], 1], ['大学', [0, last], 1], ['u0', [1, last], 1], ['u59999', [60, last], 1]] as const) {
    const p = r.postings(word);
    t.same(p ? [...p.ids] : null, ids, `${word}: documents`);
    t.equal(p?.tfs[NFIELDS - 1], tf, `${word}: content tf of the first document`);
  }
  let wrong = 0;
  for (let i = 0; i < 60; i++) for (const k of [0, 499, 999]) {
    const w = `u${i * 1000 + k}`;
    const ids = [...(r.postings(w)?.ids ?? [])];
    if (ids[0] !== i + 1) wrong++;
  }
  t.equal(wrong, 0, 'each generated word in its own document');
});

for (const [chunkBits, firstBits, growBits, what] of [
  [13, 13, 13, '8 KiB chunks'],
  [14, 12, 14, 'a first chunk of 4 KiB doubling to 16 KiB, then 16 KiB chunks'],
  [14, 12, 13, 'a first chunk of 4 KiB doubling to 8 KiB, then grown to 16 KiB, then 16 KiB chunks'],
] as const) {
  t.test(`a postings pool with small chunks keeps every list intact across blocks and chunks: ${what}`, async (t) => {
    // Small chunks: the 4 KiB blocks of long lists fill them fast.
    const pool = new PostingsPool(chunkBits, firstBits, growBits);
    const want: number[][] = [];
    let x = 12345;
    const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8);
    for (let i = 0; i < 300; i++) {
      pool.addList();
      want.push([]);
    }
    const src = new Uint8Array(32);
    // Read back part way too: lists read while the first chunk is still growing stay intact.
    let badEarly = 0;
    for (let k = 0; k < 20_000; k++) {
      // Skewed: a few lists get most appends (long chains), most stay short.
      const i = rnd() % 7 === 0 ? rnd() % 300 : rnd() % 5;
      const n = 1 + (rnd() % 31);
      for (let j = 0; j < n; j++) src[j] = rnd() & 0xff;
      pool.append(i, src, n);
      want[i]!.push(...src.subarray(0, n));
      if (k % 997 === 0 && Buffer.compare(pool.bytes(i), Buffer.from(want[i]!)) !== 0) badEarly++;
    }
    t.equal(badEarly, 0, 'lists read back as appended so far');
    let bad = 0;
    for (let i = 0; i < 300; i++) if (Buffer.compare(pool.bytes(i), Buffer.from(want[i]!)) !== 0) bad++;
    t.equal(bad, 0, 'every list reads back as appended');
    t.ok(want[0]!.length > 3 * (1 << chunkBits), 'the longest lists span several chunks');
    pool.addList();
    t.equal(pool.bytes(300).length, 0, 'a list without appends is empty');
  });
}

t.test('vocabulary and doc values are scanned through short-lived small-cache connections', async (t) => {
  const file = path.join(dir, 'scan.seg');
  const entries = Array.from({ length: 50 }, (_, i) => ({ seq: i + 1, at: i, firstAt: i, doc: makeDoc(`https://x.test/s${i}`, `Page ${i}`, `word${i} shared text`) }));
  writeSegment(file, entries, [], { defaultLanguage: 'en' });
  // Every connection the reader module opens, with the statements and pragmas it ran.
  interface Conn { pragmas: string[]; sql: string[]; closed: boolean }
  const conns: Conn[] = [];
  class RecordingDatabase extends Database {
    readonly rec: Conn = { pragmas: [], sql: [], closed: false };
    constructor(...args: ConstructorParameters<typeof Database>) {
      super(...args);
      conns.push(this.rec);
    }
    override pragma(source: string, options?: Database.PragmaOptions): unknown {
      this.rec.pragmas.push(source);
      return super.pragma(source, options);
    }
    override prepare<BindParameters extends unknown[] | {} = unknown[], Result = unknown>(source: string): Database.Statement<BindParameters, Result> {
      this.rec.sql.push(source);
      return super.prepare<BindParameters, Result>(source);
    }
    override close(): this {
      this.rec.closed = true;
      return super.close();
    }
  }
  const { SegmentReader: Reader } = await t.mockImport<typeof import('../../src/index/segment-reader.js')>('../../src/index/segment-reader.js', {
    'better-sqlite3': RecordingDatabase,
  });
  const r = Reader.open(file);
  t.teardown(() => r.close());
  t.equal(conns.length, 1, 'the reader connection');
  const own = conns[0]!;
  const vocab = r.terms();
  t.ok(vocab.includes('word7') && vocab.includes('shared'));
  t.same(vocab, [...vocab].sort(), 'sorted');
  t.equal(r.docValues().urls[3], 'https://x.test/s3');
  const scans = conns.slice(1);
  t.equal(scans.length, 2, 'one connection per scan');
  for (const c of scans) {
    t.ok(c.closed, 'closed after the scan');
    t.same(c.pragmas, [`cache_size = -${SCAN_CACHE_KB}`]);
  }
  t.match(scans[0]!.sql.join('\n'), /SELECT term FROM terms/);
  t.notMatch(own.sql.join('\n'), /SELECT term FROM terms ORDER BY term/, 'the reader connection never scans the terms table');
  t.notOk(own.closed);
  const again = r.terms();
  t.not(again, vocab, 'read anew, not kept by the reader (the engine builds its trie from it once)');
  t.same(again, vocab);
  t.equal(conns.length, 4, 'another short-lived scan connection');
  t.ok(conns[3]!.closed);
});

t.test('a vocabulary of hundreds of terms (rows inserted in batches and a remainder) is stored whole: every term, its positions and its stem', async (t) => {
  const { stemSnowball, words } = await import('../../src/text/index.js');
  const file = path.join(dir, 'vocab.seg');
  // 301 distinct German-looking words over three pages (not a multiple of the batch size).
  const vocab = Array.from({ length: 301 }, (_, i) => `wort${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}ungen`);
  const pages = [0, 1, 2].map((p) => makeDoc(`https://x.test/${p}`, `Seite ${p}`, vocab.filter((_, i) => i % 3 === p || i % 7 === 0).join(' '), { language: 'de' }));
  // A word 20,000 times: its positions blob is too long to be batched and goes in alone, between the others.
  pages[1]!.content += ' riesig'.repeat(20_000) + ' zwerg';
  writeSegment(file, pages.map((doc, i) => ({ seq: i + 1, at: i + 1, firstAt: i + 1, doc })), [], { defaultLanguage: 'en' });
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const terms = db.prepare('SELECT term, stem, df, pos FROM terms ORDER BY term').all() as Array<{ term: string; stem: string; df: number; pos: number | null }>;
  const expected = [...new Set(pages.flatMap((d) => words(`${d.title} ${d.content}`)))].sort();
  t.same(terms.map((r) => r.term), expected, 'every word a term');
  for (const w of vocab) t.equal(terms.find((r) => r.term === w)?.df, vocab.indexOf(w) % 7 === 0 ? 3 : 1, `${w}: df`);
  const positions = db.prepare('SELECT id FROM positions ORDER BY id').pluck().all() as number[];
  t.same(positions, terms.map((r) => r.pos).filter((p) => p !== null).sort((a, b) => a! - b!), 'one positions row per term, ids as the terms name them');
  t.same(positions, Array.from({ length: positions.length }, (_, i) => i + 1), 'positions ids 1..n');
  const big = db.prepare("SELECT length(p.data) FROM terms t JOIN positions p ON p.id = t.pos WHERE t.term = 'riesig'").pluck().get() as number;
  t.ok(big > 16 * 1024, `a long positions blob (${big} bytes)`);
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  for (const w of ['riesig', 'zwerg', vocab[0]!, vocab[300]!]) t.ok((r.postings(w)?.ids.length ?? 0) > 0, `${w}: postings read back`);
  t.same([...r.phraseRows(['riesig', 'zwerg'])], [1], 'positions of the long blob read back');
  t.same([...r.phraseRows([vocab[0]!, vocab[3]!])], [0], 'and of a batched one');
  const stems = db.prepare('SELECT stem, term FROM stems ORDER BY term').all() as Array<{ stem: string; term: string }>;
  t.same(stems, expected.map((term) => ({ stem: `de:${stemSnowball(term, 'de')}`, term })), 'one stems row per term');
});

t.test('a postings list too long to be batched goes in alone, between batched rows of its neighbours', async (t) => {
  const file = path.join(dir, 'bigpostings.seg');
  // "common" in every one of 6,000 pages: a postings blob over 16 KiB. Its neighbours in term
  // order (commo, commons) are in a few pages each and go in batches around it.
  const n = 6000;
  const entries = Array.from({ length: n }, (_, i) => ({
    seq: i + 1, at: i, firstAt: i,
    doc: makeDoc(`https://x.test/c${i}`, `t${i}`, `common${i % 1000 === 0 ? ' commo commons' : ''}`),
  }));
  writeSegment(file, entries, [], { defaultLanguage: 'en' });
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const len = db.prepare("SELECT length(postings) FROM terms WHERE term = 'common'").pluck().get() as number;
  t.ok(len > 16 * 1024, `a long postings blob (${len} bytes)`);
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  const p = r.postings('common')!;
  t.equal(p.ids.length, n);
  let bad = 0;
  for (let i = 0; i < n; i++) if (p.ids[i] !== i || p.tfs[i * NFIELDS + 4] !== 1) bad++;
  t.equal(bad, 0, 'every id and tf of the long list');
  for (const w of ['commo', 'commons']) t.same([...r.postings(w)!.ids], [0, 1000, 2000, 3000, 4000, 5000], `${w}: its batched list`);
  for (const i of [0, 2999, 5999]) t.same([...r.postings(`t${i}`)!.ids], [i], `title word of page ${i}`);
});

t.test('sortedOrder orders terms as string comparison does', async (t) => {
  const { sortedOrder } = await import('../../src/index/segment-write.js');
  const units = ['a', 'b', 'z', '0', '9', 'ä', 'ß', 'é', '管', '理', 'ー', '𠀋', '\uffff', 'ab', 'aa'];
  let seed = 5;
  const rnd = (n: number) => Math.floor(((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296) * n);
  for (let k = 0; k < 40; k++) {
    const set = new Set<string>(k === 0 ? [''] : []);
    const size = rnd(3000);
    for (let tries = 0; set.size < size && tries < 10 * size; tries++) {
      let s = '';
      const len = 1 + rnd(6);
      for (let i = 0; i < len; i++) s += units[rnd(units.length)]!;
      set.add(s);
    }
    const terms = [...set];
    const want = terms.map((_, i) => i).sort((x, y) => (terms[x]! < terms[y]! ? -1 : 1));
    t.same(sortedOrder(terms), want, `${terms.length} terms`);
  }
  // Long shared prefixes (German compounds): groups are refined two units at a time, many levels deep.
  for (let k = 0; k < 10; k++) {
    const set = new Set<string>();
    const stems = ['konfigurationsdatei', 'konfiguration', 'konfig', 'paketverwaltung', 'paket', 'pak', 'k', ''];
    const size = 500 + rnd(3000);
    for (let tries = 0; set.size < size && tries < 10 * size; tries++) {
      let s = stems[rnd(stems.length)]!;
      const len = rnd(5);
      for (let i = 0; i < len; i++) s += units[rnd(units.length)]!;
      set.add(s);
    }
    // And terms that differ only in NUL units (no word holds one, but the order must still be right).
    if (k === 0) for (let i = 0; i < 40; i++) set.add('a' + '\0'.repeat(i));
    const terms = [...set];
    const want = terms.map((_, i) => i).sort((x, y) => (terms[x]! < terms[y]! ? -1 : 1));
    t.same(sortedOrder(terms), want, `${terms.length} terms with long shared prefixes`);
  }
});

/** Random pages from parts that fold in every way the analysis knows (and a few that fold to more or fewer words than they look). */
function trickyPages(seed: number, count: number) {
  const parts = [
    'Straße', 'pg_dump', 'naïve', 'utf8', 'パッケージ管理システムの設定。', 'ソフトウェアを、インストールする', 'Windows™', '™', '℡', '¨', '=\u0338',
    'e\u0301', '\u0301x', 'ΑΣ', "ΟΔΟΣ'Α", 'ﬁle', '½', 'İstanbul', '管理', '—', '\u00a0', '😀', 'x2y', 'table', 'rollback', 'Performance', 'changes', 'the',
    'database', '\u3000', '。', 'queries', 'ÄRGER', 'ёлка',
  ];
  const rnd = (n: number) => Math.floor(((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296) * n);
  const text = (n: number, tricky: boolean) => {
    let s = '';
    for (let i = 0; i < n; i++) s += (tricky ? parts[rnd(parts.length)] : parts[22 + rnd(parts.length - 22)]) + (rnd(10) < 7 ? ' ' : '');
    return s;
  };
  return Array.from({ length: count }, (_, k) => {
    // Half the pages hold only parts that fold word for word, so both outcomes are exercised.
    const tricky = k % 2 === 0;
    const headings = Array.from({ length: rnd(4) }, () => text(1 + rnd(4), tricky));
    return makeDoc(`https://x.test/p${k}`, text(1 + rnd(6), tricky), text(rnd(450), tricky), rnd(3) === 0 ? { headings, description: text(1 + rnd(20), tricky) } : { headings });
  });
}

t.test('a build hands the embedder the words embedParts reads (title, headings, the first words of description and content), or none where they could differ', async (t) => {
  const { SegmentIndexer } = await import('../../src/index/segment-write.js');
  const { words, BUILTIN_CONTENT_WORDS } = await import('../../src/text/index.js');
  const { firstWords } = await import('../../src/text/tokenize.js');
  const ix = new SegmentIndexer(true);
  let given = 0;
  let withheld = 0;
  trickyPages(31, 600).forEach((d, id) => {
    ix.add(id, d, 'en');
    const w = ix.lastDocWords();
    if (!w) {
      withheld++;
      return;
    }
    given++;
    const content = d.description ? `${d.description} ${d.content}` : d.content;
    t.same(w, { title: words(d.title), headings: words(d.headings.join(' \u2029 ')), content: firstWords(content, BUILTIN_CONTENT_WORDS) }, `page ${id}`);
  });
  t.ok(given > 250, `words handed over for ${given} pages`);
  t.ok(withheld > 50, `and withheld for ${withheld}`);
  t.equal(new SegmentIndexer().lastDocWords(), null, 'none without collect');
});

t.test('vectors written with the build\'s words equal embedParts of each page, bit for bit', async (t) => {
  const { writeFixtureWordVectors, FIXTURE_FP } = await import('../helpers/word-vectors.js');
  const { builtinEmbed } = await import('../../src/index/tasks.js');
  const { embedParts, docParts, loadWordVectors } = await import('../../src/text/index.js');
  const table = writeFixtureWordVectors(dir);
  const embed = builtinEmbed({ kind: 'builtin', fp: FIXTURE_FP, table })!;
  const wv = loadWordVectors(table);
  const pages = trickyPages(47, 200);
  const file = path.join(dir, 'embedded-words.seg');
  writeSegment(file, pages.map((doc, i) => ({ seq: i + 1, at: i + 1, firstAt: i + 1, doc })), [], { defaultLanguage: 'en', embed, embedder: FIXTURE_FP });
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const stored = new Map((db.prepare('SELECT id, v FROM vecs').all() as Array<{ id: number; v: Buffer }>).map((r) => [r.id, r.v]));
  let vectors = 0;
  pages.forEach((d, id) => {
    const v = embedParts(wv, docParts(d));
    if (v) vectors++;
    t.same(stored.get(id) ?? null, v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : null, `page ${id}`);
  });
  t.ok(vectors > 100, `${vectors} pages embedded`);
});
