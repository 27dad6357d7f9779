import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { QueryLogService } from '../../src/analytics/service.js';
import { LogBatch } from '../../src/analytics/batch.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);

t.test('a query log written with query_days keyed (query, day) is migrated to (day, query) with its counts', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ql-mig-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const file = join(dataDir, 'projects', 'docs', 'querylog.db');
  mkdirSync(join(dataDir, 'projects', 'docs'), { recursive: true });
  // The previous layout, as earlier versions created it.
  const old = new Database(file);
  old.exec(`
    CREATE TABLE query_days(query TEXT NOT NULL, day INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(query, day)) WITHOUT ROWID;
    CREATE INDEX query_days_day ON query_days(day);
    CREATE TABLE query_totals(query TEXT PRIMARY KEY, count INTEGER NOT NULL, last_results INTEGER NOT NULL, last_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE state(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;`);
  const today = Math.floor(T0 / DAY);
  old.prepare('INSERT INTO state VALUES (?, ?)').run('window_start_day', today - 89);
  const rows: Array<[string, number, number]> = [
    ['create index', today - 2, 3], ['create index', today, 2], ['vacuum', today - 1, 4], ['old', today - 89, 2],
  ];
  for (const [q, d, n] of rows) old.prepare('INSERT INTO query_days(query, day, count) VALUES (?, ?, ?)').run(q, d, n);
  for (const [q, n] of [['create index', 5], ['vacuum', 4], ['old', 2]] as const) {
    old.prepare('INSERT INTO query_totals VALUES (?, ?, 3, ?)').run(q, n, T0 - DAY);
  }
  old.close();

  let now = T0;
  const svc = new QueryLogService({ dataDir, clock: () => now });
  t.teardown(() => svc.close());
  t.same(svc.querySuggestions('docs', 'c', { max: 10, minSearches: 2 }), [{ query: 'create index' }]);
  const db = svc.site('docs').db;
  const pk = db.prepare("SELECT name FROM pragma_table_info('query_days') WHERE pk > 0 ORDER BY pk").pluck().all();
  t.same(pk, ['day', 'query'], 'clustered by day');
  t.same(
    db.prepare('SELECT query, day, count FROM query_days ORDER BY query, day').raw().all(),
    rows.map(([q, d, n]) => [q, d, n]).sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1])),
    'every (query, day) count kept',
  );
  // The writer and the window move work on the new layout.
  svc.record('docs', { query: 'Create Index', results: 7 });
  svc.record('docs', { query: 'vacuum', results: 1 });
  svc.flush();
  t.equal(db.prepare('SELECT count FROM query_days WHERE day = ? AND query = ?').pluck().get(today, 'create index'), 3);
  now = T0 + DAY; // 'old' (only on the first day of the window) expires
  t.same(svc.querySuggestions('docs', 'o', { max: 10, minSearches: 1 }), []);
  t.same(
    db.prepare('SELECT query, count FROM query_totals ORDER BY query').raw().all(),
    db.prepare('SELECT query, SUM(count) FROM query_days GROUP BY query ORDER BY query').raw().all(),
    'query_totals = Σ query_days after writes and expiry',
  );
  t.same(svc.querySuggestions('docs', 'c', { max: 10, minSearches: 2 }), [{ query: 'create index' }]);

  // Re-opening a migrated file changes nothing.
  svc.close();
  const again = new QueryLogService({ dataDir, clock: () => now });
  t.teardown(() => again.close());
  t.same(again.querySuggestions('docs', 'c', { max: 10, minSearches: 2 }), [{ query: 'create index' }]);
  t.equal(again.site('docs').db.prepare('SELECT SUM(count) FROM query_days').pluck().get(), 3 + 3 + 4 + 1);
});

t.test('background writes defer the suggestion aggregates; flush, index load and the next open catch up', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ql-agg-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const svc = new QueryLogService({ dataDir, clock: () => T0, maxBatch: 5, writeChunk: 5 });
  t.teardown(() => svc.close());
  const turn = () => new Promise((r) => setImmediate(r));
  for (let i = 0; i < 5; i++) svc.record('docs', { query: 'create index', results: 3 });
  await turn(); // background write (drain)
  const db = svc.site('docs').db;
  const raw = () => db.prepare('SELECT COUNT(*) FROM searches').pluck().get();
  const totals = () => db.prepare('SELECT query, count FROM query_totals ORDER BY query').raw().all();
  t.equal(raw(), 5, 'the searches are written at once');
  t.same(totals(), [], 'their aggregates are pending');
  // The first index load writes the pending aggregates, then loads them.
  t.same(svc.querySuggestions('docs', 'cre', { max: 3, minSearches: 2 }), [{ query: 'create index' }]);
  t.same(totals(), [['create index', 5]]);
  // Index loaded: later background writes reach it at once, the tables at the next flush.
  for (let i = 0; i < 5; i++) svc.record('docs', { query: 'vacuum', results: 1 });
  await turn();
  t.same(svc.querySuggestions('docs', 'vac', { max: 3, minSearches: 2 }), [{ query: 'vacuum' }], 'suggested before its aggregates are written');
  t.same(totals(), [['create index', 5]]);
  svc.flush();
  t.same(totals(), [['create index', 5], ['vacuum', 5]], 'flush writes pending aggregates even with an empty queue');
  t.equal(db.prepare("SELECT value FROM state WHERE key = 'aggregated_through'").pluck().get(), 10);
});

t.test('killed between a background write and its aggregates: the next open counts the raw rows', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ql-agg-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = join(dataDir, 'writer-child.mts');
  const serviceUrl = pathToFileURL(join(import.meta.dirname, '../../src/analytics/service.ts')).href;
  writeFileSync(
    child,
    `import { QueryLogService } from ${JSON.stringify(serviceUrl)};
const svc = new QueryLogService({ dataDir: ${JSON.stringify(dataDir)}, clock: () => ${T0}, maxBatch: 100, writeChunk: 100 });
svc.record('docs', { query: 'first', results: 1 });
svc.record('docs', { query: 'first', results: 1 });
svc.flush(); // aggregates written: aggregated_through = 2
for (let i = 0; i < 300; i++) svc.record('docs', { query: 'q' + (i % 7), results: i % 3 });
// Killed once the background chunks (100 per event-loop turn) have written every search.
const waitWritten = () => (svc.pending === 0 ? process.kill(process.pid, 'SIGKILL') : setImmediate(waitWritten));
setImmediate(waitWritten);
`,
  );
  const out = spawnSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  t.equal(out.signal, 'SIGKILL', out.stderr);
  const file = join(dataDir, 'projects', 'docs', 'querylog.db');
  const before = new Database(file, { readonly: true });
  t.equal(before.prepare('SELECT COUNT(*) FROM searches').pluck().get(), 302, 'every background chunk was committed');
  t.equal(before.prepare('SELECT SUM(count) FROM query_totals').pluck().get(), 2, 'only the flushed aggregates were');
  before.close();

  const svc = new QueryLogService({ dataDir, clock: () => T0 });
  t.teardown(() => svc.close());
  const db = svc.site('docs').db;
  t.equal(db.prepare('SELECT SUM(count) FROM query_totals').pluck().get(), 302, 'counted again at open');
  t.same(
    db.prepare('SELECT query, SUM(count) FROM query_days GROUP BY query ORDER BY query').raw().all(),
    db.prepare('SELECT query, count FROM query_totals ORDER BY query').raw().all(),
    'query_totals = Σ query_days',
  );
  t.same(
    db.prepare('SELECT query, count FROM query_totals ORDER BY query').raw().all(),
    db.prepare('SELECT query, COUNT(*) FROM searches GROUP BY query ORDER BY query').raw().all(),
    'aggregates = the raw rows',
  );
  // q2 is searched 43 times; its latest search (i = 296, 296 % 3 = 2 results) found something.
  t.same(svc.querySuggestions('docs', 'q2', { max: 3, minSearches: 2 }), [{ query: 'q2' }]);
  // q0's latest search (i = 294) found nothing: not suggested, as before the crash.
  t.same(svc.querySuggestions('docs', 'q0', { max: 3, minSearches: 2 }), []);
});

t.test('a batch updates the suggestion index once per distinct query, to what one update per search gives', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ql-note-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const svc = new QueryLogService({ dataDir, clock: () => T0 });
  t.teardown(() => svc.close());
  const log = svc.site('docs');
  const index = log.suggestionIndex(T0);
  const calls: string[] = [];
  const add = index.add.bind(index);
  index.add = (query, delta, results, at) => {
    calls.push(query);
    add(query, delta, results, at);
  };
  const row = (query: string, at: number, results: number) => ({ kind: 'search' as const, at, query, results, filters: null, sort: null, visitor: 'v' });
  // Out of order in time, ties in time, a latest search that found nothing.
  const batch = [
    row('create index', T0 - 5, 3), row('vacuum', T0 - 9, 2), row('create index', T0 - 7, 0), row('vacuum', T0 - 1, 0),
    row('create index', T0 - 2, 4), row('vacuum', T0 - 1, 6), row('create index', T0 - 2, 5), row('cluster', T0 - 3, 0),
  ];
  log.noteCounted(LogBatch.of(batch), log.windowStartDay);
  t.same(calls, ['create index', 'vacuum', 'cluster'], 'one update per distinct query');
  // The same searches one update each, on a second project.
  const other = svc.site('other').suggestionIndex(T0);
  for (const r of batch) other.add(r.query, 1, r.results, r.at);
  for (const q of ['create index', 'vacuum', 'cluster']) t.same(index.get(q), other.get(q), q);
  for (const typed of ['c', 'cr', 'v', 'va', 'in']) t.same(index.lookup(typed, 10, 1), other.lookup(typed, 10, 1), typed);
});

t.test("a search node's batch is written once per project log, with its suggestions, and its id is forgotten after 30 days", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ql-once-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let now = T0;
  const svc = new QueryLogService({ dataDir, clock: () => now, writerThread: false });
  t.teardown(() => svc.close());
  const search = (query: string, results = 2) => ({ kind: 'search' as const, at: T0 - 1000, query, results, filters: null, sort: null, visitor: 'v' });
  const rows = [search('once only'), search('once only'), search('elsewhere', 0)]; // normalised, as ingestBatch hands them over
  const log = svc.site('docs');
  t.equal(log.writeOnce('batch-a', LogBatch.of(rows), now), true);
  t.equal(log.writeOnce('batch-a', LogBatch.of(rows), now), false, 'the same id writes nothing');
  const count = () => log.db.prepare('SELECT COUNT(*) FROM searches').pluck().get();
  t.equal(count(), 3);
  t.same(svc.querySuggestions('docs', 'once', { max: 10, minSearches: 2 }), [{ query: 'once only' }], 'counted once for suggestions');
  t.equal(log.db.prepare("SELECT COUNT(*) FROM query_totals WHERE query = 'once only'").pluck().get(), 1, 'aggregates written with the batch');
  t.equal(log.db.prepare("SELECT count FROM query_totals WHERE query = 'once only'").pluck().get(), 2);

  now = T0 + 31 * DAY;
  t.equal(log.writeOnce('batch-b', LogBatch.of([search('later')]), now), true);
  t.same(log.db.prepare('SELECT batch_id FROM received_batches').pluck().all(), ['batch-b'], 'ids older than 30 days are pruned');
});
