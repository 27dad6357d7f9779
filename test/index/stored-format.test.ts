/**
 * Format 6 packs the stored text (src/index/stored-codec.ts); every reader must see what the
 * TEXT columns of format 5 gave: the same pages written in both formats answer every search
 * (with content, highlighting, snippets, facets) byte for byte alike, and every stored entry and
 * result card is the same. A merge copies packed values as their bytes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import Database from 'better-sqlite3';
import type { PageDoc, Settings } from '../../src/core/index.js';
import { defaultSettings } from '../../src/projects/index.js';
import { search, type SearchParams } from '../../src/search/service.js';
import { writeSegment } from '../../src/index/segment-write.js';
import { mergeSegments } from '../../src/index/segment-merge.js';
import { SegmentReader } from '../../src/index/segment-reader.js';
import { SEGMENT_FORMAT, type SegmentEntry } from '../../src/index/segment-format.js';
import { unpackText } from '../../src/index/stored-codec.js';
import { snapshotOfFiles } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import { toFormat5 } from './fixtures/old-formats.js';

let seed = 3;
const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const vocab = 'vacuum table index tuple storage query planner replication backup restore trigger function schema role grant lock'.split(' ');
const odd = ['😀', '𠀋', 'naïve', 'Straße', '数据库', 'a\ud800b', 'x\u0000y'];
const sentence = (n: number, nul = true): string =>
  Array.from({ length: n }, () => (rnd() < 0.03 ? pick(nul ? odd : odd.slice(0, -1)) : pick(vocab))).join(' ');

const pages: PageDoc[] = Array.from({ length: 90 }, (_, i) => {
  // Some pages longer than a card's prefix (12,000 characters), with non-BMP characters, lone
  // surrogates and NULs before the cut.
  const long = i % 9 === 0;
  return makeDoc(`https://f.test/p${i}`, `${pick(vocab)} ${pick(vocab)} ${i % 5 === 0 ? pick(odd) : ''}`.trim(), sentence(long ? 4_000 : 5 + Math.floor(rnd() * 300), i % 18 === 0), {
    headings: i % 3 ? [sentence(3), sentence(2)] : [],
    description: i % 4 ? `About ${pick(vocab)}` : undefined,
    keywords: i % 6 ? [] : [pick(vocab)],
    contentGroup: pick(['', 'Guide', 'Reference']),
    filters: i % 2 ? [{ key: 'fid#1', value: [pick(['red', 'green', 'blue'])] }, { key: 'fid#2', value: i }] : [],
    dataPoints: i % 5 ? [] : [{ key: 'dp#1', value: `v${i}`, show: true }],
    imageUrl: i % 7 ? null : `https://f.test/img${i}.png`,
    language: i % 10 === 3 ? 'de' : null,
  });
});
// Rows that are not searchable keep their text in the JSON only.
pages.push({ ...makeDoc('https://f.test/gone', 'Gone', 'not found text'), status: 404, message: 'Not Found' });

const settings: Settings = {
  ...defaultSettings(),
  filters: [
    { id: 'fid#1', name: 'Colour', type: 'multiple' },
    { id: 'fid#2', name: 'Number', type: 'range' },
  ],
} as Settings;
const params = (query: string, extra: Partial<SearchParams> = {}): SearchParams => ({
  query, filters: [], filterOptions: true, sort: null, sortOrder: 'ASC', offset: 0, limit: 10, includeContent: true,
  highlightQueryTerms: true, includeContentGroups: null, excludeContentGroups: null, groupResults: true, limitPerGroup: false, ...extra,
});
const queries = [
  ...vocab, 'vacuum table', '"dead tuples"', `"${vocab[0]} ${vocab[1]}"`, 'tabel', 'vac', 'straße', '数据库', 'naive', '😀', 'index -lock', '*',
];

/** A page as any format reads it back: a lone surrogate as three U+FFFD (a TEXT column's bytes). */
const asStored = (d: PageDoc): PageDoc => JSON.parse(JSON.stringify(d).replace(/\\ud800/g, '\\ufffd\\ufffd\\ufffd')) as PageDoc;

/** Writes `pages` as two segments into `dir`, in format 6 or converted to format 5. */
function build(dir: string, format: 5 | 6): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const entries: SegmentEntry[] = pages.map((doc, i) => ({ seq: i + 1, at: 1000 + i, firstAt: 900 + i, doc }));
  const files = [entries.slice(0, 50), entries.slice(50)].map((part, k) => {
    const file = path.join(dir, `s${k}.seg`);
    writeSegment(file, part, [], { defaultLanguage: 'en' });
    if (format === 5) toFormat5(file);
    return file;
  });
  return files;
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stored-format-'));
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));

t.test('the same pages in format 5 and format 6 give identical answers, entries and cards', async (t) => {
  const f5 = build(path.join(root, 'f5'), 5);
  const f6 = build(path.join(root, 'f6'), 6);
  const s5 = snapshotOfFiles(f5);
  const s6 = snapshotOfFiles(f6);
  t.teardown(() => (s5.cleanup(), s6.cleanup()));
  t.same(s5.segments.map((s) => s.reader.info.format), [5, 5]);
  t.same(s6.segments.map((s) => s.reader.info.format), [SEGMENT_FORMAT, SEGMENT_FORMAT]);

  // The format-5 files hold the pages' own text (the fixture did not go wrong with the codec).
  const db = new Database(f5[0]!, { readonly: true });
  const stored = db.prepare('SELECT url, content, typeof(content) AS type FROM docs WHERE status = 200').all() as Array<{ url: string; content: string; type: string }>;
  db.close();
  for (const r of stored) if (r.type !== 'text' || r.content !== asStored(pages.find((p) => p.url === r.url)!).content) t.fail(`format 5 content of ${r.url}`);
  t.ok(stored.length > 40);

  let compared = 0;
  for (const [k, seg5] of s5.segments.entries()) {
    const seg6 = s6.segments[k]!;
    for (let id = 0; id < seg5.reader.info.docCount; id++) {
      t.equal(JSON.stringify(seg6.reader.entry(id)), JSON.stringify(seg5.reader.entry(id)), `entry ${k}/${id}`);
      t.equal(JSON.stringify(seg6.reader.card(id, true)), JSON.stringify(seg5.reader.card(id, true)), `card ${k}/${id}`);
      const { title, documentType, contentGroup, source, message } = seg6.reader.entry(id).doc;
      t.same(seg6.reader.meta(id), { title, documentType, contentGroup, source, message }, `report fields ${k}/${id} as the entry has them`);
      t.same(seg5.reader.meta(id), seg6.reader.meta(id));
      t.equal(seg6.reader.titleKey(id), seg5.reader.titleKey(id));
      t.same(seg6.reader.headingKeys(id), seg5.reader.headingKeys(id));
      compared++;
    }
  }
  t.equal(compared, pages.length);
  // Long pages are cut to the card prefix, or at a NUL before it (as SQLite's substr cuts TEXT).
  const cards = s6.segments.flatMap((s) => Array.from({ length: s.reader.info.docCount }, (_, id) => s.reader.card(id, true).content));
  t.ok(cards.some((c) => c.length >= 12_000 && c.length < 12_100), 'a long page is cut to the card prefix');
  t.ok(cards.some((c) => c.length < 12_000 && c.endsWith(' x') && pages.some((p) => p.content.startsWith(c + '\u0000'))), 'a NUL ends a card');

  const variants: Array<Partial<SearchParams>> = [
    {},
    { highlightQueryTerms: false, snippetSize: 80 },
    { includeContent: false },
    { filters: [{ key: 'fid#1', type: 'multiple', values: ['red'] }] as never },
    { groupResults: false, limit: 30 },
    { offset: 10, limit: 5 },
  ];
  let answers = 0;
  for (const q of queries) {
    for (const v of variants) {
      const a5 = JSON.stringify(search(s5, settings, params(q, v), {}));
      const a6 = JSON.stringify(search(s6, settings, params(q, v), {}));
      if (a5 !== a6) t.fail(`answer to ${JSON.stringify(q)} ${JSON.stringify(v)} differs`);
      answers++;
    }
  }
  const sample = search(s6, settings, params('vacuum'), {});
  const results = Object.values(sample.suggests).flat();
  t.ok(results.length > 0 && results.every((r) => typeof r.content === 'string' && r.content.length > 0), 'answers carry content');
  t.ok(sample.filterOptions.length > 0, 'and facets');
  t.ok(answers > 100, `${answers} answers identical`);
});

t.test('a merge copies packed values as their bytes and packs the text of a format-5 source', async (t) => {
  const dir = path.join(root, 'merge');
  const [a, b] = build(dir, 6);
  // Row 1 of `a` stored with the codec's RAW tag (valid, but what packText never writes for
  // compressible text): a merge that copies keeps these very bytes, one that packed again would not.
  const db = new Database(a!);
  const text = unpackText(db.prepare('SELECT content FROM docs WHERE id = 1').pluck().get() as Buffer);
  const raw = Buffer.concat([Buffer.from([0]), Buffer.from(text, 'utf8')]);
  db.prepare('UPDATE docs SET content = ? WHERE id = 1').run(raw);
  db.close();
  const ra = SegmentReader.open(a!);
  t.equal(ra.entry(1).doc.content, text, 'the row reads as before');
  ra.close();

  toFormat5(b!);
  const merged = path.join(dir, 'm.seg');
  const info = mergeSegments(merged, [{ path: a!, liveIds: [0, 1, 2] }, { path: b!, liveIds: [0, 1, 2] }], []);
  t.equal(info.format, SEGMENT_FORMAT);
  const m = new Database(merged, { readonly: true });
  t.teardown(() => m.close());
  t.same(m.prepare('SELECT content FROM docs WHERE id = 1').pluck().get(), raw, 'copied as bytes, not packed again');
  t.same(
    m.prepare("SELECT count(*) FROM docs WHERE typeof(content) != 'blob' OR typeof(headings) != 'blob' OR typeof(body) != 'blob'").pluck().get(),
    0,
    'the format-5 rows are packed',
  );
  const r = SegmentReader.open(merged);
  t.teardown(() => r.close());
  for (let i = 0; i < 6; i++) t.same(r.entry(i).doc, asStored(pages[i < 3 ? i : 50 + i - 3]!), `row ${i}`);
});
