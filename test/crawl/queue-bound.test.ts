/**
 * Crawl queues stay bounded on a server with many projects (src/crawl/context.ts): only queues
 * with work stay open, idle ones beyond MAX_IDLE_QUEUES are closed (least recently used first)
 * and reopen on their next use with their tasks intact.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_IDLE_QUEUES, ProjectQueues } from '../../src/crawl/context.js';

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sitesift-queues-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('touching 300 projects keeps at most MAX_IDLE_QUEUES idle queues open; queues with work stay open', async (t) => {
  const queues = new ProjectQueues(tempDir(t), Date.now);
  t.teardown(() => queues.closeAll());
  // Five projects with a queued task: they must stay open whatever happens to the others.
  for (let i = 0; i < 5; i++) {
    const q = queues.of(`busy-${i}`);
    q.add({ type: 'url', origin: 'url', url: `https://example.com/${i}`, baseSeq: 0, appendTo: null });
    q.commit();
  }
  let peak = 0;
  for (let i = 0; i < 300; i++) {
    const q = queues.of(`idle-${i}`);
    q.pending(); // a use, as indexStatus makes
    peak = Math.max(peak, queues.openCount);
  }
  t.ok(peak <= MAX_IDLE_QUEUES + 5, `open queues peaked at ${peak} (≤ ${MAX_IDLE_QUEUES} idle + 5 with work)`);
  for (let i = 0; i < 5; i++) t.ok(queues.opened(`busy-${i}`), `busy-${i} stays open`);
  t.equal(queues.opened('idle-0'), null, 'the least recently used idle queue was closed');
  t.ok(queues.opened('idle-299'), 'the last one used is open');
  // A closed queue reopens with what it had on disk.
  const again = queues.existing('busy-0')!;
  t.equal(again.pending(), 1);
});

t.test('closeIfIdle closes a queue without work and keeps one with work', async (t) => {
  const queues = new ProjectQueues(tempDir(t), Date.now);
  t.teardown(() => queues.closeAll());
  queues.of('a').pending();
  const b = queues.of('b');
  b.add({ type: 'url', origin: 'url', url: 'https://example.com/b', baseSeq: 0, appendTo: null });
  b.commit();
  queues.closeIfIdle('a');
  queues.closeIfIdle('b');
  t.equal(queues.opened('a'), null);
  t.ok(queues.opened('b'));
  t.equal(queues.existing('a')?.pending(), 0, 'an idle queue reopens on use');
});
