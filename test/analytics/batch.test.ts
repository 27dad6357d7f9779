import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LogBatch, QueryDictionary, type EventRow, type SearchRow } from '../../src/analytics/batch.js';
import { LogInserter, SiteQueryLog } from '../../src/analytics/site-log.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);
const today = Math.floor(T0 / DAY);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Searches over 7 queries and 3 visitors, 3 days (midnight inside), some with filters or a sort, plus events. */
function sampleRows(n: number, seed: number): Array<SearchRow | EventRow> {
  const r = rng(seed);
  const rows: Array<SearchRow | EventRow> = [];
  for (let i = 0; i < n; i++) {
    const at = T0 - DAY + Math.floor(r() * 2 * DAY);
    if (r() < 0.05) {
      rows.push({ kind: 'event', at, query: `q${i % 7}`, action: 'select', timeToAction: 120, link: 'https://x.test/a', position: 2, visitor: `v${i % 3}` });
      continue;
    }
    rows.push({
      kind: 'search',
      at,
      query: ['create index', 'vacuum', 'pg dump', 'select', 'tablespace', 'wal', 'jsonb'][Math.floor(r() * 7)]!,
      results: Math.floor(r() * 4),
      filters: r() < 0.1 ? '[{"field":"section","value":"sql"}]' : null,
      sort: r() < 0.1 ? 'date' : null,
      visitor: `0123456789abcde${Math.floor(r() * 3)}`,
    });
  }
  return rows;
}

t.test('a batch crosses to the writer thread unchanged (structured clone of its wire form)', async (t) => {
  const rows = sampleRows(300, 1);
  const b = LogBatch.of(rows);
  const c = new LogBatch(structuredClone(b.toWire()));
  const searches = rows.filter((r): r is SearchRow => r.kind === 'search');
  t.equal(c.length, searches.length);
  t.same(c.queries, [...new Set(searches.map((s) => s.query))], 'distinct queries, first-seen order');
  t.same(c.visitors, [...new Set(searches.map((s) => s.visitor))]);
  const back = Array.from({ length: c.length }, (_, i) => ({ at: c.at[i], query: c.queries[c.query[i]!], results: c.results[i], visitor: c.visitors[c.visitor[i]!] }));
  t.same(back, searches.map((s) => ({ at: s.at, query: s.query, results: s.results, visitor: s.visitor })));
  t.same(c.extras, searches.flatMap((s, i) => (s.filters !== null || s.sort !== null ? [[i, s.filters, s.sort]] : [])));
  t.same(c.events, rows.filter((r) => r.kind === 'event'));
  const empty = new LogBatch(structuredClone(new LogBatch().toWire()));
  t.ok(empty.empty, 'an empty batch stays empty (no query "")');
  t.same(empty.queries, []);
});

t.test('forEachCounted: per distinct query (or query and day), window, latest search with ties to the later row', async (t) => {
  const s = (query: string, at: number, results: number): SearchRow => ({ kind: 'search', at, query, results, filters: null, sort: null, visitor: 'v' });
  const midnight = today * DAY;
  const b = LogBatch.of([
    s('a', midnight - 10, 1), s('b', midnight - 5, 2), s('a', midnight + 3, 0), s('a', midnight - 1, 7),
    s('a', midnight + 3, 5), s('old', midnight - 5 * DAY, 4), s('b', midnight - 5, 9),
  ]);
  const calls = (split: boolean, start: number) => {
    const out: unknown[] = [];
    b.forEachCounted(start, split, (...args) => out.push(args));
    return out;
  };
  t.same(calls(false, today - 89), [['a', 4, midnight + 3, 5], ['b', 2, midnight - 5, 9], ['old', 1, midnight - 5 * DAY, 4]]);
  t.same(calls(false, today), [['a', 2, midnight + 3, 5]], 'only days in the window');
  // Split: a group closes whenever its query's day changes (a: yesterday, today, yesterday, today).
  t.same(calls(true, today - 89), [
    ['a', 1, midnight - 10, 1], ['a', 1, midnight + 3, 0], ['a', 1, midnight - 1, 7],
    ['a', 1, midnight + 3, 5], ['b', 2, midnight - 5, 9], ['old', 1, midnight - 5 * DAY, 4],
  ]);
});

t.test('the columnar insert stores what row-by-row inserts store: rows, ids, dirty hours, aggregates', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sitesift-ql-batch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const rows = sampleRows(437, 7); // several full groups of the multi-row INSERT and a remainder
  const log = new SiteQueryLog('docs', join(dir, 'a.db'), T0);
  t.teardown(() => log.close());
  const closedThrough = T0 - DAY / 2;
  log.closedThrough = closedThrough;
  log.write(LogBatch.of(rows.slice(0, 200)), false);
  log.write(LogBatch.of(rows.slice(200)), true);

  // Reference: plain statements, one per row, aggregates counted per row.
  const ref = new Database(join(dir, 'ref.db'));
  t.teardown(() => ref.close());
  new SiteQueryLog('ref', join(dir, 'ref.db'), T0).close();
  const start = log.windowStartDay;
  const days = new Map<string, number>();
  const totals = new Map<string, { n: number; results: number; at: number }>();
  const dirty = new Set<number>();
  for (const r of rows) {
    if (r.kind === 'event') {
      ref.prepare('INSERT INTO events(at, query, action, time_to_action, link, position, visitor) VALUES (?, ?, ?, ?, ?, ?, ?)').run(r.at, r.query, r.action, r.timeToAction, r.link, r.position, r.visitor);
      continue;
    }
    ref.prepare('INSERT INTO searches(at, query, results, filters, sort, visitor) VALUES (?, ?, ?, ?, ?, ?)').run(r.at, r.query, r.results, r.filters, r.sort, r.visitor);
    if (r.at < closedThrough) dirty.add(Math.floor(r.at / 3_600_000) * 3_600_000);
    const day = Math.floor(r.at / DAY);
    if (day < start) continue;
    days.set(`${day}|${r.query}`, (days.get(`${day}|${r.query}`) ?? 0) + 1);
    const q = totals.get(r.query) ?? { n: 0, results: r.results, at: r.at };
    q.n++;
    if (r.at >= q.at) Object.assign(q, { at: r.at, results: r.results });
    totals.set(r.query, q);
  }
  const all = (db: Database.Database, sql: string) => db.prepare(sql).raw().all();
  t.same(all(log.db, 'SELECT * FROM searches ORDER BY id'), all(ref, 'SELECT * FROM searches ORDER BY id'), 'searches: same ids, same columns');
  t.same(all(log.db, 'SELECT * FROM events ORDER BY id'), all(ref, 'SELECT * FROM events ORDER BY id'), 'events');
  t.same(all(log.db, 'SELECT hour FROM dirty_hours ORDER BY hour').flat(), [...dirty].sort((a, b) => a - b), 'late searches re-open their hours');
  t.same(
    all(log.db, 'SELECT day, query, count FROM query_days ORDER BY day, query'),
    [...days].map(([k, n]) => [Number(k.split('|')[0]), k.split('|')[1], n]).sort((a, b) => Number(a[0]) - Number(b[0]) || String(a[1]).localeCompare(String(b[1]))),
    'query_days: one count per (day, query)',
  );
  t.same(
    all(log.db, 'SELECT query, count, last_results, last_at FROM query_totals ORDER BY query'),
    [...totals].map(([q, v]) => [q, v.n, v.results, v.at]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    'query_totals: count and the latest search',
  );
  t.equal(log.getState('aggregated_through'), rows.filter((r) => r.kind === 'search').length);
});

t.test('LogInserter binds one reused parameter array: a second batch does not see the first one\'s values', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec('CREATE TABLE searches(id INTEGER PRIMARY KEY, at INTEGER NOT NULL, query TEXT NOT NULL, results INTEGER NOT NULL, filters TEXT, sort TEXT, visitor TEXT NOT NULL); CREATE TABLE events(id INTEGER PRIMARY KEY, at INTEGER, query TEXT, action TEXT, time_to_action INTEGER, link TEXT, position INTEGER, visitor TEXT); CREATE TABLE dirty_hours(hour INTEGER PRIMARY KEY); CREATE TABLE query_days(day INTEGER, query TEXT, count INTEGER, PRIMARY KEY(day, query)); CREATE TABLE query_totals(query TEXT PRIMARY KEY, count INTEGER, last_results INTEGER, last_at INTEGER); CREATE TABLE state(key TEXT PRIMARY KEY, value INTEGER)');
  const ins = new LogInserter(db);
  const s = (i: number, filters: string | null): SearchRow => ({ kind: 'search', at: T0 + i, query: `q${i}`, results: 1, filters, sort: null, visitor: 'v' });
  ins.insert(LogBatch.of(Array.from({ length: 53 }, (_, i) => s(i, '["f"]'))), null, today - 89);
  ins.insert(LogBatch.of(Array.from({ length: 53 }, (_, i) => s(100 + i, null))), null, today - 89);
  t.same(db.prepare('SELECT COUNT(*) FROM searches WHERE filters IS NOT NULL').pluck().get(), 53, 'only the first batch has filters');
  t.same(db.prepare('SELECT query FROM searches ORDER BY id').pluck().all(), [...Array.from({ length: 53 }, (_, i) => `q${i}`), ...Array.from({ length: 53 }, (_, i) => `q${100 + i}`)]);
});

t.test('take(n): the first n entries (searches, then events) move to a new batch; the rest keeps order and extras', async (t) => {
  const rows = sampleRows(60, 3);
  const searches = rows.filter((r): r is SearchRow => r.kind === 'search');
  const events = rows.filter((r): r is EventRow => r.kind === 'event');
  t.ok(events.length > 0 && searches.some((s) => s.filters !== null || s.sort !== null), 'the sample has events and extras');
  const asRows = (b: LogBatch) => {
    const out: SearchRow[] = [];
    const extras = new Map(b.extras.map(([row, f, s]) => [row, [f, s] as const]));
    for (let i = 0; i < b.length; i++) {
      const [filters, sort] = extras.get(i) ?? [null, null];
      out.push({ kind: 'search', at: b.at[i]!, query: b.queries[b.query[i]!]!, results: b.results[i]!, filters, sort, visitor: b.visitors[b.visitor[i]!]! });
    }
    return out;
  };
  const b = LogBatch.of(rows);
  const head = b.take(20);
  t.same(asRows(head), searches.slice(0, 20));
  t.same(head.events, []);
  t.same(asRows(b), searches.slice(20), 'the rest, renumbered');
  const all = b.entries;
  const second = b.take(all - 1);
  t.same(asRows(second), searches.slice(20));
  t.same(second.events, events.slice(0, -1), 'events after the searches');
  t.equal(b.length, 0);
  t.same(b.events, events.slice(-1));
  t.equal(b.entries, 1);
});

t.test('QueryDictionary: batches on one dictionary share ids across hand-overs and map them to their own query indexes', async (t) => {
  const dictionary = new QueryDictionary(100);
  const a = new LogBatch(undefined, dictionary);
  t.equal(a.typedQuery('Create  Index'), undefined, 'nothing typed yet');
  a.addSearchOf(1, a.internQuery('create index', 'Create  Index'), 1, null, null, 'v');
  a.addSearchOf(2, a.internQuery('vacuum', 'VACUUM'), 0, null, null, 'v');
  a.addSearchOf(3, a.typedQuery('Create  Index')!, 2, null, null, 'v');
  t.same(a.queries, ['create index', 'vacuum']);
  t.same(Array.from(a.query.subarray(0, a.length)), [0, 1, 0]);
  const b = new LogBatch(undefined, dictionary);
  t.equal(b.typedQuery('Create index'), undefined, 'only forms that were typed');
  b.addSearchOf(4, b.typedQuery('VACUUM')!, 0, null, null, 'v');
  b.addSearchOf(5, b.internQuery('create index', 'Create index'), 1, null, null, 'v');
  b.addSearchOf(6, b.typedQuery('Create  Index')!, 1, null, null, 'v');
  t.same(b.queries, ['vacuum', 'create index'], 'the second batch holds only its own queries, first-seen order');
  t.same(Array.from(b.query.subarray(0, b.length)), [0, 1, 1]);
  t.same(dictionary.queries, ['create index', 'vacuum'], 'each normalised query once in the dictionary');
  t.same(a.queries, ['create index', 'vacuum'], 'the first batch is unchanged');
  const wire = new LogBatch(structuredClone(b.toWire()));
  t.same(Array.from({ length: wire.length }, (_, i) => wire.queries[wire.query[i]!]), ['vacuum', 'create index', 'create index'], 'the wire form carries the batch’s own queries');
  t.notOk(dictionary.full);
  const small = new QueryDictionary(3);
  small.intern('x', 'X');
  t.notOk(small.full);
  small.intern('y');
  t.ok(small.full, 'queries plus typed forms reach the bound');
  t.equal(new LogBatch().typedQuery('X'), undefined, 'a batch without a dictionary remembers no typed forms');
});

t.test('QueryDictionary: ids past the initial capacity keep their per-batch indexes', async (t) => {
  const dictionary = new QueryDictionary(10_000);
  const a = new LogBatch(undefined, dictionary);
  for (let i = 0; i < 1000; i++) a.addSearchOf(i, a.internQuery(`q${i}`, `Q${i}`), 1, null, null, 'v');
  const b = new LogBatch(undefined, dictionary);
  for (let i = 999; i >= 0; i--) b.addSearchOf(i, b.typedQuery(`Q${i}`)!, 1, null, null, 'v');
  t.equal(a.queries.length, 1000);
  t.same(b.queries, a.queries.slice().reverse());
  t.ok(Array.from({ length: 1000 }, (_, i) => a.queries[a.query[i]!] === `q${i}` && b.queries[b.query[i]!] === `q${999 - i}`).every(Boolean));
});
