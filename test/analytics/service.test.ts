import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEFAULT_MAX_BATCH, QueryLogService, type QueryLogOptions } from '../../src/analytics/service.js';
import type { LogBatch, QueryDictionary } from '../../src/analytics/batch.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);

function setup(t: { teardown(fn: () => void): void }, extra: Partial<QueryLogOptions> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-ql-'));
  let now = T0;
  const errors: unknown[] = [];
  const svc = new QueryLogService({ dataDir, clock: () => now, onError: (e) => errors.push(e), ...extra });
  t.teardown(() => {
    svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    svc,
    dataDir,
    errors,
    setNow(ms: number) {
      now = ms;
    },
  };
}

const suggest = (svc: QueryLogService, typed: string, max = 10, minSearches = 2) =>
  svc.querySuggestions('docs', typed, { max, minSearches }).map((s) => s.query);

t.test('query suggestion thresholds', async (t) => {
  const { svc } = setup(t);
  svc.record('docs', { query: 'Postgres Replication', results: 12 });
  svc.flush();
  t.same(suggest(svc, 'post'), [], 'searched once: not suggested');
  svc.record('docs', { query: '  postgres   REPLICATION ', results: 9 });
  svc.flush();
  t.same(suggest(svc, 'post'), ['postgres replication'], 'searched twice (normalised the same): suggested');
  t.same(suggest(svc, 'post', 10, 3), [], 'minSearches 3 needs a third search');

  svc.record('docs', { query: 'postgis', results: 0 });
  svc.record('docs', { query: 'postgis', results: 0 });
  svc.record('docs', { query: 'postgis', results: 0 });
  svc.flush();
  t.same(suggest(svc, 'post'), ['postgres replication'], 'a query that found nothing is not suggested');

  // log=false: the search route does not call record at all; nothing is counted.
  const searchRoute = (query: string, log: boolean) => {
    if (log) svc.record('docs', { query, results: 3 });
  };
  searchRoute('vacuum full', false);
  searchRoute('vacuum full', false);
  searchRoute('vacuum full', false);
  svc.flush();
  t.same(suggest(svc, 'vac'), [], 'log=false searches do not count');
  searchRoute('vacuum full', true);
  searchRoute('vacuum full', true);
  svc.flush();
  t.same(suggest(svc, 'vac'), ['vacuum full']);
  t.same(suggest(svc, 'post', 0), [], 'max 0 gives none');
  t.throws(() => svc.querySuggestions('docs', 'p', { max: 11, minSearches: 2 }), { code: 'invalid_parameter', field: 'maxQuerySuggestions' });
});

t.test('ranking, prefix and word-prefix matching, max', async (t) => {
  const { svc } = setup(t);
  const log = (q: string, n: number, results = 5) => {
    for (let i = 0; i < n; i++) svc.record('docs', { query: q, results });
  };
  log('create index', 5);
  log('drop index', 7);
  log('index only scan', 3);
  log('indexes', 3);
  log('reindex', 9); // "index" is inside a word, not at its start: no match
  log('insert', 4);
  svc.flush();
  t.same(suggest(svc, 'ind'), ['drop index', 'create index', 'index only scan', 'indexes'], 'most searched first; ties: starts-with, then alphabetical');
  t.same(suggest(svc, 'ind', 2), ['drop index', 'create index'], 'at most max');
  t.same(suggest(svc, 'IN'), ['drop index', 'create index', 'insert', 'index only scan', 'indexes']);
  t.same(suggest(svc, 'drop in'), ['drop index'], 'several typed words match as a phrase prefix');
  t.same(suggest(svc, 'index o'), ['index only scan']);
  t.same(suggest(svc, 'x'), []);
  t.same(suggest(svc, '   '), [], 'blank input');
  // Results changed: the latest search decides whether a query still "returns results".
  svc.record('docs', { query: 'drop index', results: 0 });
  svc.flush();
  t.same(suggest(svc, 'drop'), [], 'the latest search of a query found nothing');
});

t.test('90-day window and restart', async (t) => {
  const { svc, dataDir, setNow } = setup(t);
  svc.record('docs', { query: 'old query', results: 1, at: T0 - 89 * DAY });
  svc.record('docs', { query: 'old query', results: 1, at: T0 - 89 * DAY });
  svc.record('docs', { query: 'older query', results: 1, at: T0 - 91 * DAY });
  svc.record('docs', { query: 'older query', results: 1, at: T0 - 91 * DAY });
  svc.flush();
  t.same(suggest(svc, 'old'), ['old query'], 'searches older than the window never count');
  setNow(T0 + DAY);
  t.same(suggest(svc, 'old'), [], 'the window moved past the searches');

  // A fresh service over the same files sees the same aggregate.
  setNow(T0);
  svc.record('docs', { query: 'restart me', results: 4 });
  svc.record('docs', { query: 'restart me', results: 4 });
  svc.close();
  const again = new QueryLogService({ dataDir, clock: () => T0 });
  t.teardown(() => again.close());
  t.same(again.querySuggestions('docs', 'rest', { max: 3, minSearches: 2 }), [{ query: 'restart me' }], 'close() flushed; reopen reloads totals');
});

t.test('batching writer: nothing written until flush, early flush when the batch is large', async (t) => {
  const { svc, dataDir } = setup(t, { maxBatch: 5 });
  svc.record('docs', { query: 'a', results: 1 });
  t.equal(svc.pending, 1);
  t.equal(svc.sites().length, 0, 'record never touches disk');
  for (let i = 0; i < 4; i++) svc.record('docs', { query: 'b' + i, results: 1 });
  t.equal(svc.pending, 5);
  await new Promise((r) => setImmediate(r));
  t.equal(svc.pending, 0, 'flushed on the next tick once the batch is full');
  const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
  t.equal((db.prepare('SELECT COUNT(*) AS n FROM searches').get() as { n: number }).n, 5);
  db.close();
  svc.record('bad/../site', { query: 'x', results: 1 });
  t.equal(svc.pending, 0, 'invalid site ids are ignored, never a path');
});

t.test('background writes commit one chunk per event-loop turn, so requests run in between', async (t) => {
  const { svc, dataDir } = setup(t, { maxBatch: 10, writeChunk: 4 });
  for (let i = 0; i < 10; i++) svc.record('docs', { query: `q${i}`, results: 1 });
  t.equal(svc.pending, 10);
  const count = () => {
    const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
    try {
      return db.prepare('SELECT query FROM searches ORDER BY id').pluck().all() as string[];
    } finally {
      db.close();
    }
  };
  const turn = () => new Promise((r) => setImmediate(r));
  await turn();
  t.same(count(), ['q0', 'q1', 'q2', 'q3'], 'first turn: the oldest chunk');
  t.equal(svc.pending, 6);
  svc.record('docs', { query: 'late', results: 1 }); // arrives between chunks
  await turn();
  t.equal(count().length, 8, 'second turn: the next chunk');
  await turn();
  t.same(count(), ['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8', 'q9', 'late'], 'everything written, in order');
  t.equal(svc.pending, 0);
  // flush() (shutdown, rollup, tests) still writes everything at once.
  for (let i = 0; i < 9; i++) svc.record('docs', { query: `f${i}`, results: 1 });
  svc.flush();
  t.equal(svc.pending, 0);
  t.equal(count().length, 20);
});

t.test('queue bound: a stuck disk drops entries instead of growing memory', async (t) => {
  const { svc } = setup(t, { maxQueue: 3, maxBatch: 1000 });
  for (let i = 0; i < 5; i++) svc.record('docs', { query: 'q', results: 1 });
  t.equal(svc.pending, 3);
  t.equal(svc.dropped, 2);
});

t.test('privacy: no stored column of any table holds the IP or user agent', async (t) => {
  const { svc, dataDir } = setup(t);
  const ip = '203.0.113.77';
  const ua = 'Mozilla/5.0 (X11; Linux x86_64) SecretBrowser/9.1';
  for (let i = 0; i < 3; i++) {
    svc.record('docs', { query: 'privacy test', results: 2, filters: [{ key: 'fid#1', value: ['a'] }], sort: 'date', ip, userAgent: ua });
  }
  svc.recordEvent('docs', { query: 'privacy test', action: 'select', link: 'https://example.org/p', position: 1, timeToAction: 1200, ip, userAgent: ua });
  svc.flush();
  svc.rollup('docs', T0 + 3 * 3_600_000);
  const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  t.ok(tables.length >= 7);
  let cells = 0;
  for (const table of tables) {
    for (const row of db.prepare(`SELECT * FROM "${table}"`).raw().all() as unknown[][]) {
      for (const cell of row) {
        cells++;
        const text = String(cell);
        t.notOk(text.includes(ip) || text.includes('203.0.113') || text.includes('SecretBrowser'), `${table}: ${text}`);
      }
    }
  }
  t.ok(cells > 20, 'scanned the stored rows');
  const visitors = db.prepare('SELECT DISTINCT visitor FROM searches').pluck().all() as string[];
  t.equal(visitors.length, 1, 'the same visitor hashes the same within a day');
  t.match(visitors[0], /^[0-9a-f]{16}$/);
  const filters = db.prepare('SELECT filters, sort FROM searches LIMIT 1').get() as { filters: string; sort: string };
  t.same(JSON.parse(filters.filters), [{ key: 'fid#1', value: ['a'] }]);
  t.equal(filters.sort, 'date');
  db.close();
});

t.test('visitor hash salt rotates daily', async (t) => {
  const { svc, dataDir, setNow } = setup(t);
  svc.record('docs', { query: 'a', results: 1, ip: '198.51.100.1', userAgent: 'ua' });
  setNow(T0 + DAY);
  svc.record('docs', { query: 'a', results: 1, ip: '198.51.100.1', userAgent: 'ua' });
  svc.record('docs', { query: 'a', results: 1, ip: '198.51.100.2', userAgent: 'ua' });
  svc.flush();
  const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
  const v = db.prepare('SELECT visitor FROM searches ORDER BY id').pluck().all() as string[];
  t.not(v[0], v[1], 'a new day, a new salt: yesterday cannot be linked to today');
  t.not(v[1], v[2], 'different visitors differ');
  db.close();
});

t.test('reports: top queries with select rate, no-result queries', async (t) => {
  const { svc } = setup(t);
  const s = T0 / 1000;
  for (let i = 0; i < 4; i++) svc.record('docs', { query: 'backup', results: 10 + i, at: T0 + i * 1000 });
  for (let i = 0; i < 2; i++) svc.record('docs', { query: 'restore', results: 5, at: T0 + i * 1000 });
  for (let i = 0; i < 3; i++) svc.record('docs', { query: 'pg_wtf', results: 0, at: T0 + i * 1000 });
  svc.record('docs', { query: 'backup', results: 1, at: T0 - DAY }); // outside the range below
  svc.recordEvent('docs', { query: 'Backup', action: 'select', link: 'https://x.org/b', position: 1, at: T0 + 5000 });
  svc.recordEvent('docs', { query: 'backup', action: 'abandon', at: T0 + 6000 });
  svc.recordEvent('docs', { query: 'restore', action: 'select', at: T0 + 6000 });
  svc.recordEvent('docs', { query: 'restore', action: 'select', at: T0 + 7000 });
  svc.recordEvent('docs', { query: 'restore', action: 'select', at: T0 + 8000 });
  svc.flush();
  const range = { start: s - 60, end: s + 3600 };
  t.same(svc.topQueries('docs', range, 10), [
    { query: 'backup', count: 4, averageResults: 11.5, selectRate: 0.25 },
    { query: 'pg_wtf', count: 3, averageResults: 0, selectRate: 0 },
    { query: 'restore', count: 2, averageResults: 5, selectRate: 1 },
  ]);
  t.same(svc.topQueries('docs', range, 1).map((q) => q.query), ['backup'], 'limit');
  t.same(svc.noResultQueries('docs', range, 10), [{ query: 'pg_wtf', count: 3, lastSearched: s + 2 }]);
  t.same(svc.topQueries('docs', { start: s - 2 * 86400, end: s - 60 }, 10), [
    { query: 'backup', count: 1, averageResults: 1, selectRate: 0 },
  ]);
});

t.test('dropSite forgets queued entries and closes the file', async (t) => {
  const projects = new Set(['gone', 'kept']);
  const { svc, dataDir } = setup(t, { settingsOf: (id) => (projects.has(id) ? { retentionDays: 365 } : undefined) });
  svc.record('gone', { query: 'x', results: 1 });
  svc.record('kept', { query: 'x', results: 1 });
  svc.flush();
  t.same(svc.sites(), ['gone', 'kept']);
  svc.record('gone', { query: 'x', results: 1 });
  projects.delete('gone');
  svc.dropSite('gone');
  rmSync(join(dataDir, 'projects', 'gone'), { recursive: true }); // what project deletion does next
  svc.flush();
  t.same(svc.sites(), ['kept'], 'queued entries dropped, file closed');
  // A search that was in flight while the project was deleted records afterwards.
  svc.record('gone', { query: 'late', results: 1 });
  svc.flush();
  t.same(svc.sites(), ['kept'], 'no folder re-created for a deleted project');
});

t.test('crash: a killed process keeps every flushed batch, and the aggregates stay consistent', async (t) => {
  const { dataDir } = setup(t);
  const child = join(dataDir, 'writer-child.mts');
  const serviceUrl = pathToFileURL(join(import.meta.dirname, '../../src/analytics/service.ts')).href;
  writeFileSync(
    child,
    `import { QueryLogService } from ${JSON.stringify(serviceUrl)};
const svc = new QueryLogService({ dataDir: ${JSON.stringify(dataDir)}, clock: () => ${T0} });
for (let i = 0; i < 500; i++) svc.record('docs', { query: 'q' + (i % 7), results: i % 3 });
svc.flush(); // what the 1-second timer does
for (let i = 0; i < 40; i++) svc.record('docs', { query: 'lost', results: 1 });
process.kill(process.pid, 'SIGKILL');
`,
  );
  const out = spawnSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  t.equal(out.signal, 'SIGKILL', out.stderr);
  const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
  t.equal(db.prepare('SELECT COUNT(*) FROM searches').pluck().get(), 500, 'the flushed batch survived; the queued second is lost');
  t.equal(db.prepare('SELECT SUM(count) FROM query_totals').pluck().get(), 500);
  t.same(
    db.prepare('SELECT query, SUM(count) AS n FROM query_days GROUP BY query ORDER BY query').all(),
    db.prepare('SELECT query, count AS n FROM query_totals ORDER BY query').all(),
    'query_totals = Σ query_days',
  );
  db.close();
});

t.test('the default early hand-over waits for a second of busy traffic (DEFAULT_MAX_BATCH), not 1,000 entries', async (t) => {
  const { svc } = setup(t, { writerThread: false });
  const turn = () => new Promise((r) => setImmediate(r));
  for (let i = 0; i < 1000; i++) svc.record('docs', { query: `q${i % 50}`, results: 1 });
  await turn();
  t.equal(svc.pending, 1000, 'no early hand-over at 1,000 queued entries: the timer hands them over');
  for (let i = 1000; i < DEFAULT_MAX_BATCH; i++) svc.record('docs', { query: `q${i % 50}`, results: 1 });
  await turn();
  t.ok(svc.pending < DEFAULT_MAX_BATCH, 'early hand-over once DEFAULT_MAX_BATCH entries are queued');
  svc.flush();
  t.equal(svc.pending, 0);
});

t.test('record() normalises and hashes at once: the pending batch keeps each distinct query once, no entry objects', async (t) => {
  const { svc } = setup(t, { writerThread: false });
  for (let i = 0; i < 1000; i++) svc.record('docs', { query: i % 2 ? 'Create  Index' : 'create index', results: 1, ip: `198.51.100.${i % 7}`, userAgent: 'ua' });
  svc.recordEvent('docs', { action: 'select', query: 'Create Index', link: 'https://x.test/', position: 1, ip: '198.51.100.1', userAgent: 'ua' });
  const batch = (svc as unknown as { batches: Map<string, LogBatch> }).batches.get('docs')!;
  t.same(batch.queries, ['create index'], 'one normalised query for 1,000 searches');
  t.equal(batch.visitors.length, 7, 'one hash per visitor');
  t.equal(batch.length, 1000);
  t.equal(batch.events.length, 1);
  t.equal(svc.pending, 1001);
  svc.flush();
  t.equal(svc.pending, 0);
  t.same(svc.site('docs').db.prepare('SELECT query, COUNT(*) AS n FROM searches GROUP BY query').all(), [{ query: 'create index', n: 1000 }]);
});

t.test('record(): a query typed the same way again in the pending batch is looked up as typed, not normalised again', async (t) => {
  const { svc } = setup(t, { writerThread: false });
  const long = `${'Abc '.repeat(80)}end`;
  const typed = ['Create  Index', 'create index', 'Create  Index', long, 'VACUUM', long, 'create index'];
  typed.forEach((query, i) => svc.record('docs', { query, results: i, ip: `198.51.100.${i % 2}`, userAgent: 'ua' }));
  const batch = (svc as unknown as { batches: Map<string, LogBatch> }).batches.get('docs')!;
  t.same(batch.queries.slice(0, 1), ['create index'], 'typed forms that normalise alike meet in one query');
  t.equal(batch.queries.length, 3, 'create index, the cut long query, vacuum');
  t.equal(batch.typedQuery('Create  Index'), 0, 'each typed form is remembered with its normalised query');
  t.equal(batch.typedQuery('create index'), 0);
  t.equal(batch.typedQuery('VACUUM'), 2);
  t.equal(batch.typedQuery('vacuum'), undefined, 'only forms that were typed');
  t.equal(batch.typedQuery(long), undefined, 'a query longer than the logged maximum is not remembered (normalised each time)');
  t.same(Array.from(batch.query.subarray(0, batch.length)), [0, 0, 0, 1, 2, 1, 0]);
  t.same(Array.from(batch.visitor.subarray(0, batch.length)), [0, 1, 0, 1, 0, 1, 0], 'visitors alternate: the previous visitor shortcut keeps their indexes');
  svc.flush();
  t.same(
    svc.site('docs').db.prepare('SELECT query, COUNT(*) AS n FROM searches GROUP BY query ORDER BY query').all(),
    [{ query: long.toLowerCase().slice(0, 200).trim(), n: 2 }, { query: 'create index', n: 4 }, { query: 'vacuum', n: 1 }],
  );
  // After the hand-over a new batch starts on the same dictionary: a form typed in the batch
  // before is known there too (its query is appended to the new batch when it is looked up).
  svc.record('docs', { query: 'Vacuum', results: 1 });
  const next = (svc as unknown as { batches: Map<string, LogBatch> }).batches.get('docs')!;
  t.not(next, batch);
  t.same(next.queries, ['vacuum']);
  t.equal(next.typedQuery('Create  Index'), 1, 'remembered from the batch before');
  t.same(next.queries, ['vacuum', 'create index']);
  t.equal(next.typedQuery('Vacuum'), 0);
  t.equal(next.typedQuery('VACUUM'), 0);
  svc.close();
  svc.record('docs', { query: 'Create  Index', results: 1 });
  t.equal(svc.pending, 0, 'a closed service takes nothing, not even a query typed before');
});

t.test('record(): the project query dictionary is bounded, starts over at the next batch and is dropped with the project', async (t) => {
  const { svc } = setup(t, { writerThread: false, maxDictionary: 4 });
  const internals = svc as unknown as { batches: Map<string, LogBatch>; dictionaries: Map<string, QueryDictionary> };
  svc.record('docs', { query: 'Create Index', results: 1 });
  const first = internals.dictionaries.get('docs')!;
  t.notOk(first.full, 'one query and one typed form');
  svc.record('docs', { query: 'VACUUM', results: 0 });
  t.ok(first.full, 'two queries and two typed forms reach the bound of 4');
  svc.record('docs', { query: 'Create Index', results: 2 });
  t.equal(internals.dictionaries.get('docs'), first, 'the pending batch keeps its dictionary');
  svc.flush();
  svc.record('docs', { query: 'create index', results: 3 });
  const second = internals.dictionaries.get('docs')!;
  t.not(second, first, 'the next batch starts a new dictionary');
  t.same(second.queries, ['create index']);
  t.same(first.queries, ['create index', 'vacuum'], 'the old one is left as it was');
  svc.flush();
  t.same(
    svc.site('docs').db.prepare('SELECT query, results FROM searches ORDER BY id').all(),
    [{ query: 'create index', results: 1 }, { query: 'vacuum', results: 0 }, { query: 'create index', results: 2 }, { query: 'create index', results: 3 }],
    'the same rows across dictionaries',
  );
  svc.record('docs', { query: 'wal', results: 1 });
  svc.dropSite('docs');
  t.notOk(internals.dictionaries.has('docs'), 'dropSite forgets the dictionary');
});
