/**
 * The durable crawl queue's group commit (src/crawl/queue.ts): changes of one event-loop turn
 * share one commit, what a client was told about is committed before the answer, and a restart
 * resumes from what was committed (running tasks queued again, seen-sets reloaded).
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CrawlQueue } from '../../src/crawl/queue.js';
import { CrawlService } from '../../src/crawl/service.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

function tempFile(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sitesift-queue-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'crawl.db');
}

/** What another process would read from the file now (committed rows only). */
function committedTasks(file: string): Array<{ url: string; state: string }> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(`SELECT url, state FROM tasks ORDER BY n`).all() as Array<{ url: string; state: string }>;
  } finally {
    db.close();
  }
}

t.test('changes of one turn are committed together at the end of the turn', async (t) => {
  const file = tempFile(t);
  const q = new CrawlQueue(file, Date.now);
  t.teardown(() => q.close());
  const run = q.add({ type: 'crawl', origin: 'crawl', url: 'http://h.example/', state: 'running' });
  for (const p of ['a', 'b', 'c']) {
    t.ok(q.markSeen(run.id, `http://h.example/${p}`));
    q.add({ type: 'page', origin: 'crawl', url: `http://h.example/${p}`, runId: run.id });
  }
  t.equal(q.pending(), 3, 'this connection reads its own changes at once');
  t.same(committedTasks(file), [], 'nothing committed yet: one open group');
  await nextTurn();
  t.equal(committedTasks(file).length, 4, 'the whole group is committed after the turn');
});

t.test('commit() makes an acknowledged task durable before the answer', async (t) => {
  const file = tempFile(t);
  const q = new CrawlQueue(file, Date.now);
  t.teardown(() => q.close());
  q.add({ type: 'url', origin: 'url', url: 'http://h.example/x' });
  q.commit();
  t.same(committedTasks(file), [{ url: 'http://h.example/x', state: 'queued' }]);
});

t.test('a URL push is committed when pushUrl resolves (no turn in between)', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-queue-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const index = new MemoryIndex();
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: false,
    settingsOf: () => testSettings(),
    indexOf: async () => index.asIndex(),
    // Never runs: the service is not started, so nothing is handed out.
    runFetch: async () => {
      throw new Error('not expected');
    },
  });
  t.teardown(() => svc.stop());
  // Not started: the queue is only written, the scheduler never runs.
  const task = await svc.pushUrl('s1', 'http://h.example/pushed#frag');
  t.equal(task.url, 'http://h.example/pushed');
  t.same(committedTasks(path.join(dataDir, 'projects', 's1', 'crawl.db')), [{ url: 'http://h.example/pushed', state: 'queued' }]);
});

t.test('restart: committed running tasks are queued again and the seen-set comes back', async (t) => {
  const file = tempFile(t);
  const q1 = new CrawlQueue(file, Date.now);
  const run = q1.add({ type: 'crawl', origin: 'crawl', url: 'http://h.example/', state: 'running' });
  q1.markSeen(run.id, 'http://h.example/a');
  const page = q1.add({ type: 'page', origin: 'crawl', url: 'http://h.example/a', runId: run.id });
  q1.setRunning(page.id);
  await nextTurn();
  // A change after the last commit is lost in a crash (the process dies before the turn ends).
  q1.markSeen(run.id, 'http://h.example/lost');
  q1.db.close(); // crash: no commit, the open transaction rolls back
  const q2 = new CrawlQueue(file, Date.now);
  t.teardown(() => q2.close());
  t.equal(q2.get(page.id)?.state, 'queued', 'the running page runs again');
  t.notOk(q2.markSeen(run.id, 'http://h.example/a'), 'seen before the restart');
  t.ok(q2.isSeen(run.id, 'http://h.example/a'));
  t.notOk(q2.isSeen(run.id, 'http://h.example/lost'), 'the uncommitted change is gone, nothing else');
  t.ok(q2.markSeen(run.id, 'http://h.example/lost'));
});
