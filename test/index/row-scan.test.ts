import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { writeSegment } from '../../src/index/segment-write.js';
import { SegmentReader, readRowColumns } from '../../src/index/segment-reader.js';
import { NFIELDS } from '../../src/index/segment-format.js';
import { makeDoc } from '../helpers/docs.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rowscan-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

// Rows whose URLs sort in another order than their ids, so a scan in index order is visible.
const entries = ['https://x.test/zeta', 'https://x.test/alpha', 'https://x.test/mid', 'https://x.test/beta', 'https://x.test/gone'].map((url, i) => ({
  seq: 10 + i,
  at: 2000 + i,
  firstAt: 1000 + i,
  doc:
    i === 4
      ? makeDoc(url, '', '', { status: 404, message: 'Not Found' })
      : makeDoc(url, `Page ${i} title`, `content words number ${i} `.repeat(200 * (i + 1)), {
          headings: [`Heading ${i}`],
          contentGroup: i % 2 ? 'docs' : 'blog',
          language: i === 2 ? 'de' : null,
          filters: i === 1 ? [{ key: 'kind', value: ['a'] }] : [],
          boost: 1 + i / 10,
        }),
}));

t.test('liveness columns and doc values are read from the covering index, equal to the table rows', async (t) => {
  const file = path.join(dir, 'a.seg');
  writeSegment(file, entries, [], { defaultLanguage: 'en' });
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const plan = (sql: string, ...args: unknown[]) => (db.prepare('EXPLAIN QUERY PLAN ' + sql).all(...args) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
  t.match(plan('SELECT id, url, seq, at, first_at AS firstAt, status, lengths FROM docs'), /COVERING INDEX docs_url/, 'readRowColumns scans the index');
  t.match(
    plan('SELECT id, url, status, lengths, boost, grp, doc_type AS docType, language, filters, data_points AS dataPoints FROM docs'),
    /COVERING INDEX docs_url/,
    'docValues scans the index',
  );
  t.match(plan('SELECT id FROM docs WHERE url = ?', 'x'), /INDEX docs_url \(url=\?\)/, 'a URL is still looked up by the index');

  // Against the table itself, in id order.
  const rows = db.prepare('SELECT id, url, seq, at, first_at, status, lengths, boost, grp, language, filters FROM docs NOT INDEXED ORDER BY id').all() as Array<{
    id: number; url: string; seq: number; at: number; first_at: number; status: number; lengths: string; boost: number; grp: string; language: string | null; filters: string;
  }>;
  t.equal(rows.length, entries.length);
  const c = readRowColumns(file, rows.length);
  const r = SegmentReader.open(file);
  t.teardown(() => r.close());
  const dv = r.docValues();
  for (const row of rows) {
    t.equal(c.urls[row.id], row.url, `row ${row.id} url`);
    t.equal(c.seqs[row.id], row.seq);
    t.equal(c.ats[row.id], row.at);
    t.equal(c.firstAts[row.id], row.first_at);
    t.equal(c.statuses[row.id], row.status);
    t.same([...c.lengths.subarray(row.id * NFIELDS, (row.id + 1) * NFIELDS)], JSON.parse(row.lengths));
    t.equal(dv.urls[row.id], row.url);
    t.equal(dv.status[row.id], row.status);
    t.equal(dv.boost[row.id], row.boost);
    t.equal(dv.group[row.id], row.grp);
    t.equal(dv.language[row.id], row.language);
    t.same(dv.filters[row.id], row.filters === '[]' ? null : JSON.parse(row.filters));
    t.same([...dv.lengths.subarray(row.id * NFIELDS, (row.id + 1) * NFIELDS)], JSON.parse(row.lengths));
  }
  t.ok(c.lengths.some((x) => x > 0), 'lengths were read');
});
