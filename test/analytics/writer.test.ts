import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { QueryLogService, type QueryLogOptions } from '../../src/analytics/service.js';
import type { SiteQueryLog } from '../../src/analytics/site-log.js';

const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);
const HOUR = 3_600_000;

/** A started service (writer thread on) whose timer never fires during a test: batches go by maxBatch. */
function setup(t: { teardown(fn: () => void): void }, extra: Partial<QueryLogOptions> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-qlw-'));
  let now = T0;
  const errors: unknown[] = [];
  const svc = new QueryLogService({ dataDir, clock: () => now, onError: (e) => errors.push(e), flushIntervalMs: 3_600_000, maxBatch: 5, ...extra });
  svc.start();
  t.teardown(() => {
    svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const read = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(join(dataDir, 'projects', 'docs', 'querylog.db'), { readonly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return { svc, dataDir, errors, read, setNow: (ms: number) => void (now = ms) };
}

const turn = () => new Promise((r) => setImmediate(r));

/** Counts the main connection's own batch writes of a project. */
function spyMainWrites(log: SiteQueryLog): { calls: number } {
  const spy = { calls: 0 };
  const write = log.write.bind(log);
  log.write = (rows, aggregate) => {
    spy.calls++;
    write(rows, aggregate);
  };
  return spy;
}

t.test('background batches are committed by the writer thread, not on the main thread', async (t) => {
  const { svc, read, errors } = setup(t);
  const main = spyMainWrites(svc.site('docs'));
  for (let i = 0; i < 5; i++) svc.record('docs', { query: `q${i}`, results: 1 });
  await turn(); // the early hand-over (maxBatch)
  t.equal(svc.pending, 0, 'the queue was handed over');
  await svc.writerIdle();
  t.same(read((db) => db.prepare('SELECT query FROM searches ORDER BY id').pluck().all()), ['q0', 'q1', 'q2', 'q3', 'q4']);
  t.equal(main.calls, 0, 'the main connection wrote nothing');
  t.match(svc.writerThread, { alive: true, batches: 1, inFlight: 0 });
  t.same(errors, []);
});

t.test('the writer thread runs with the pool threads\' V8 young-generation cap', async (t) => {
  const { WORKER_YOUNG_GENERATION_MB } = await import('../../src/core/index.js');
  const { svc } = setup(t);
  t.equal(svc.writerThread?.youngGenerationMb, WORKER_YOUNG_GENERATION_MB);
});

t.test('flush() waits for batches in flight: ids in order, aggregates counted once', async (t) => {
  const { svc, read } = setup(t);
  for (let i = 0; i < 5; i++) svc.record('docs', { query: 'alpha', results: 1 });
  await turn(); // handed over, maybe not committed yet
  for (let i = 0; i < 3; i++) svc.record('docs', { query: 'beta', results: 2 });
  svc.flush(); // the thread's batch first, then these three on the main connection
  t.same(read((db) => db.prepare('SELECT query FROM searches ORDER BY id').pluck().all()), [...Array(5).fill('alpha'), ...Array(3).fill('beta')]);
  t.same(read((db) => db.prepare('SELECT query, count FROM query_totals ORDER BY query').all()), [
    { query: 'alpha', count: 5 },
    { query: 'beta', count: 3 },
  ]);
  t.equal(
    read((db) => db.prepare("SELECT value FROM state WHERE key = 'aggregated_through'").pluck().get()),
    read((db) => db.prepare('SELECT MAX(id) FROM searches').pluck().get()),
    'aggregated_through covers every search',
  );
  t.same(svc.querySuggestions('docs', 'al', { max: 3, minSearches: 2 }), [{ query: 'alpha' }]);
});

t.test('query suggestions see searches the thread committed after the index was loaded', async (t) => {
  const { svc } = setup(t);
  t.same(svc.querySuggestions('docs', 'gam', { max: 3, minSearches: 2 }), [], 'index loaded, empty');
  for (let i = 0; i < 5; i++) svc.record('docs', { query: 'gamma ray', results: 3 });
  await turn();
  await svc.writerIdle();
  t.same(svc.querySuggestions('docs', 'gam', { max: 3, minSearches: 2 }), [{ query: 'gamma ray' }]);
  t.same(svc.querySuggestions('docs', 'ray', { max: 3, minSearches: 5 }), [{ query: 'gamma ray' }], 'counted exactly once each');
  t.same(svc.querySuggestions('docs', 'ray', { max: 3, minSearches: 6 }), []);
});

t.test('a late entry committed by the thread re-opens its closed hour for the rollup', async (t) => {
  const { svc, read, setNow } = setup(t);
  svc.record('docs', { query: 'early', results: 1, at: T0 - 2 * HOUR });
  svc.flush();
  setNow(T0 + HOUR);
  svc.rollup('docs');
  for (let i = 0; i < 5; i++) svc.record('docs', { query: 'late', results: 0, at: T0 - 2 * HOUR + 1000 });
  await turn();
  await svc.writerIdle();
  t.equal(read((db) => db.prepare('SELECT COUNT(*) FROM dirty_hours').pluck().get()), 1, 'the thread read closed_through');
  svc.rollup('docs');
  const start = Math.floor((T0 - 3 * HOUR) / 1000);
  const chart = svc.timechart('docs', start, start + 3 * 3600, 'hour');
  t.same(chart.buckets.map((b) => [b.count, b.noResults]), [[0, 0], [6, 5], [0, 0]]);
});

t.test('dropSite closes the thread connection; nothing recreates a deleted project', async (t) => {
  const projects = new Set(['gone', 'kept']);
  const { svc, dataDir, errors } = setup(t, { settingsOf: (id) => (projects.has(id) ? { retentionDays: 365 } : undefined) });
  for (let i = 0; i < 5; i++) svc.record(i % 2 ? 'gone' : 'kept', { query: 'x', results: 1 });
  await turn();
  projects.delete('gone');
  svc.dropSite('gone');
  rmSync(join(dataDir, 'projects', 'gone'), { recursive: true });
  for (let i = 0; i < 5; i++) svc.record('gone', { query: 'late', results: 1 });
  await turn();
  await svc.writerIdle();
  svc.flush();
  t.same(svc.sites(), ['kept']);
  t.same(errors, []);
});

t.test('crash: batches the thread committed survive a kill, and the next open counts their aggregates', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitesift-qlw-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = join(dataDir, 'writer-child.mts');
  const serviceUrl = pathToFileURL(join(import.meta.dirname, '../../src/analytics/service.ts')).href;
  writeFileSync(
    child,
    `import { QueryLogService } from ${JSON.stringify(serviceUrl)};
const svc = new QueryLogService({ dataDir: ${JSON.stringify(dataDir)}, clock: () => ${T0}, flushIntervalMs: 3600000, maxBatch: 100 });
svc.start();
for (let i = 0; i < 500; i++) svc.record('docs', { query: 'q' + (i % 7), results: i % 3 });
await new Promise((r) => setImmediate(r));
await svc.writerIdle();
if (svc.writerThread?.batches !== 1) throw new Error('expected one batch by the thread');
for (let i = 0; i < 40; i++) svc.record('docs', { query: 'lost', results: 1 });
process.kill(process.pid, 'SIGKILL');
`,
  );
  const out = spawnSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8', cwd: join(import.meta.dirname, '../..') });
  t.equal(out.signal, 'SIGKILL', out.stderr);
  const file = join(dataDir, 'projects', 'docs', 'querylog.db');
  const db = new Database(file, { readonly: true });
  t.equal(db.prepare('SELECT COUNT(*) FROM searches').pluck().get(), 500, 'the committed batch survived; the queued entries are lost');
  db.close();
  // The thread's aggregates were still pending: the next open counts them from the raw rows.
  const svc = new QueryLogService({ dataDir, clock: () => T0 });
  svc.site('docs');
  svc.close();
  const again = new Database(file, { readonly: true });
  t.equal(again.prepare('SELECT SUM(count) FROM query_totals').pluck().get(), 500);
  t.same(
    again.prepare('SELECT query, SUM(count) AS n FROM query_days GROUP BY query ORDER BY query').all(),
    again.prepare('SELECT query, count AS n FROM query_totals ORDER BY query').all(),
    'query_totals = Σ query_days',
  );
  again.close();
});

t.test('the writer thread names itself in /proc, apart from Node\'s other threads (all "node")', async (t) => {
  const { WRITER_THREAD_NAME } = await import('../../src/analytics/writer.js');
  const names = () =>
    readdirSync('/proc/self/task').map((tid) => {
      try {
        return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      } catch {
        return '';
      }
    });
  const { svc } = setup(t);
  // The thread names itself when it starts: its first answer comes after that.
  for (let i = 0; i < 5; i++) svc.record('docs', { query: `q${i}`, results: 1 });
  await turn();
  await svc.writerIdle();
  t.equal(WRITER_THREAD_NAME.length <= 15, true, 'fits the kernel\'s 15 bytes');
  // (At least one: an earlier test's thread may still be terminating.)
  if (existsSync('/proc/thread-self')) t.ok(names().includes(WRITER_THREAD_NAME), 'a thread of this process has the name');
  else t.pass('no /proc: nothing to name');
});
