/**
 * The durable crawl queue (src/crawl/queue.ts): changes share one group commit (scheduled, and
 * tests hold the schedule in their hand), what a client was told about is committed before the
 * answer, a restart resumes from what was committed (running tasks queued again, seen-sets
 * reloaded), and the in-memory ready view answers exactly what the SQL query over the table
 * answers.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CrawlQueue, GROUP_COMMIT_MS, type CrawlTask } from '../../src/crawl/queue.js';
import { CrawlService } from '../../src/crawl/service.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';

/** A commit scheduler the test runs by hand: `run()` fires every commit scheduled so far. */
function manualCommits(): { scheduleCommit: (fn: () => void) => void; scheduled(): number; run(): void } {
  let due: Array<() => void> = [];
  return {
    scheduleCommit: (fn) => void due.push(fn),
    scheduled: () => due.length,
    run() {
      const now = due;
      due = [];
      for (const fn of now) fn();
    },
  };
}

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

t.test('changes share one group, committed when the scheduled commit runs', async (t) => {
  const file = tempFile(t);
  const commits = manualCommits();
  const q = new CrawlQueue(file, Date.now, { scheduleCommit: commits.scheduleCommit });
  t.teardown(() => q.close());
  const run = q.add({ type: 'crawl', origin: 'crawl', url: 'http://h.example/', state: 'running' });
  for (const p of ['a', 'b', 'c']) {
    t.ok(q.markSeen(run.id, `http://h.example/${p}`));
    q.add({ type: 'page', origin: 'crawl', url: `http://h.example/${p}`, runId: run.id });
  }
  await new Promise<void>((r) => setImmediate(r));
  t.equal(q.pending(), 3, 'this connection reads its own changes at once');
  t.equal(commits.scheduled(), 1, 'one commit scheduled for the whole group');
  t.same(committedTasks(file), [], 'nothing committed yet, even after the turn: one open group');
  commits.run();
  t.equal(committedTasks(file).length, 4, 'the whole group is committed together');
  q.setRunning(q.ready(Date.now(), 1)[0]!.id);
  t.equal(commits.scheduled(), 1, 'the next change opens the next group');
  q.commit();
  commits.run(); // the early commit already closed that group: its scheduled commit does nothing
  t.equal(committedTasks(file).filter((r) => r.state === 'running').length, 2, 'run + page running');
});

t.test('the default schedule commits a group GROUP_COMMIT_MS after it opened', async (t) => {
  const file = tempFile(t);
  const q = new CrawlQueue(file, Date.now);
  t.teardown(() => q.close());
  q.add({ type: 'page', origin: 'crawl', url: 'http://h.example/a' });
  t.same(committedTasks(file), []);
  // Waits for the group timer itself (no assertion on how long that took).
  await new Promise<void>((r) => setTimeout(r, GROUP_COMMIT_MS + 5));
  t.same(committedTasks(file), [{ url: 'http://h.example/a', state: 'queued' }]);
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
  const commits = manualCommits();
  const q1 = new CrawlQueue(file, Date.now, { scheduleCommit: commits.scheduleCommit });
  const run = q1.add({ type: 'crawl', origin: 'crawl', url: 'http://h.example/', state: 'running' });
  q1.markSeen(run.id, 'http://h.example/a');
  const page = q1.add({ type: 'page', origin: 'crawl', url: 'http://h.example/a', runId: run.id });
  q1.setRunning(page.id);
  commits.run();
  // A change after the last commit is lost in a crash (the process dies before its group commits).
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

/** ready() as one SQL query over the table: what the in-memory view must answer. */
function readyBySql(q: CrawlQueue, now: number, limit: number): string[] {
  const sql = (types: string) => `SELECT id FROM tasks WHERE state = 'queued' AND type IN (${types}) AND next_at <= ? ORDER BY n LIMIT ?`;
  const pushes = (q.db.prepare(sql(`'url','append'`)).all(now, limit) as Array<{ id: string }>).map((r) => r.id);
  const pages = (q.db.prepare(sql(`'page'`)).all(now, limit - pushes.length) as Array<{ id: string }>).map((r) => r.id);
  return [...pushes, ...pages];
}

t.test('the in-memory ready view answers what the table answers, through every kind of change', async (t) => {
  const file = tempFile(t);
  let now = 1_000;
  let q = new CrawlQueue(file, () => now, { scheduleCommit: () => {} });
  t.teardown(() => q.close());
  // A seeded generator: the same sequence on every run.
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const run = q.add({ type: 'crawl', origin: 'crawl', url: 'http://h.example/', state: 'running' });
  let urls = 0;
  const running: CrawlTask[] = [];
  let mismatches = 0;
  const check = (step: string) => {
    for (const limit of [1, 7, 600, 5000]) {
      const got = q.ready(now, limit).map((x) => x.id);
      const want = readyBySql(q, now, limit);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        mismatches++;
        if (mismatches <= 3) t.same(got, want, `${step}: ready(now, ${limit})`);
      }
    }
  };
  let maxQueued = 0;
  for (let step = 0; step < 600; step++) {
    const op = rnd(100);
    if (op < 40) {
      // A page's links: a burst of new pages (the window fills past one chunk).
      for (let i = rnd(30); i >= 0; i--) q.add({ type: 'page', origin: 'crawl', url: `http://h.example/p${urls++}`, runId: run.id, depth: 1 });
    } else if (op < 45) {
      q.add({ type: rnd(2) ? 'url' : 'append', origin: 'url', url: `http://h.example/push${urls++}` });
    } else if (op < 70) {
      // The scheduler starts some of what is ready and skips others (a busy host).
      for (const task of q.ready(now, 1 + rnd(20))) {
        if (rnd(3)) {
          q.setRunning(task.id);
          running.push(task);
        }
      }
    } else if (op < 85 && running.length) {
      const [task] = running.splice(rnd(running.length), 1);
      q.finish(task!.id, rnd(5) ? 'done' : 'failed', 200, null);
    } else if (op < 92 && running.length) {
      // A retry goes back into the queue at its old place with a later next_at.
      const [task] = running.splice(rnd(running.length), 1);
      q.retryAt(task!.id, now + rnd(40), 'retry');
    } else if (op < 95) {
      const mod = 2 + rnd(9);
      q.cancelQueued((u) => Number(u.replace(/\D/g, '')) % mod === 0, 'cancelled');
    } else if (op < 97) {
      // Restart: the view is rebuilt from the file (running tasks queued again).
      q.commit();
      q.close();
      q = new CrawlQueue(file, () => now, { scheduleCommit: () => {} });
      running.length = 0;
    } else {
      now += rnd(30);
    }
    check(`step ${step} (op ${op})`);
    maxQueued = Math.max(maxQueued, q.pending());
  }
  t.equal(mismatches, 0, 'no step answered differently');
  t.ok(maxQueued > 1_100, `enough queued pages to refill the window more than once (${maxQueued})`);
});
