/**
 * Document operations against an in-memory stand-in of ProjectIndex: backpressure on the
 * unpublished backlog, delete semantics. (The real store is exercised by test/http/*.)
 */
import t from 'tap';
import type { ProjectIndex, WriteOp } from '../../src/index/index.js';
import { deleteByPattern, deleteByUrl, indexPages, MAX_PENDING_DOCS } from '../../src/ingest/documents.js';
import { compileUrlPattern } from '../../src/ingest/url-pattern.js';
import type { PageDoc } from '../../src/core/index.js';
import { makeDoc } from '../helpers/docs.js';

class FakeIndex {
  readonly siteId = 'fake';
  seq = 0;
  committed = 0;
  pending = 0;
  live = new Set<string>();
  writes: WriteOp[][] = [];
  waiters: Array<{ seq: number; resolve: () => void; reject: (err: Error) => void }> = [];
  async write(ops: WriteOp[]): Promise<number> {
    this.writes.push(ops);
    for (const op of ops) {
      this.seq++;
      this.pending++;
      if (op.op === 'upsert') this.live.add(op.doc.url);
      else this.live.delete(op.url);
    }
    return this.seq;
  }
  waitSearchable(seq: number): Promise<void> {
    if (seq <= this.committed) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
  }
  /** Test control: publish up to `seq`, leaving `pending` entries unpublished. */
  publishUpTo(seq: number, pending: number): void {
    this.committed = seq;
    this.pending = pending;
    const done = this.waiters.filter((w) => w.seq <= seq);
    this.waiters = this.waiters.filter((w) => w.seq > seq);
    for (const w of done) w.resolve();
  }
  /** Test control: a segment build failed; its waiters are rejected, nothing published. */
  failBuild(): void {
    for (const w of this.waiters.splice(0)) w.reject(new Error('build failed'));
  }
  /** Test control: publish everything written so far. */
  publish(): void {
    this.committed = this.seq;
    this.pending = 0;
    for (const w of this.waiters.splice(0)) w.resolve();
  }
  has(url: string) {
    return this.live.has(url);
  }
  urls() {
    return this.live.values();
  }
  stats() {
    return { pages: this.live.size, byClass: {}, pending: this.pending, lastUpdated: null };
  }
  async deleteWhere(pred: (url: string) => boolean): Promise<number> {
    const ops: WriteOp[] = [...this.live].filter(pred).map((url) => ({ op: 'delete', url }));
    if (ops.length) await this.write(ops);
    return ops.length;
  }
  async flush() {
    this.publish();
  }
}

const page = (url: string): PageDoc => makeDoc(url, 't', 'c');

const asIndex = (f: FakeIndex) => f as unknown as ProjectIndex;
const tick = () => new Promise((r) => setImmediate(r));

t.test('a write waits while the unpublished backlog is at the bound, then proceeds', async (t) => {
  const f = new FakeIndex();
  await indexPages(asIndex(f), [page('https://e.com/0')], { refresh: false });
  f.pending = MAX_PENDING_DOCS; // a backlog that includes our write
  let done = false;
  const p = indexPages(asIndex(f), [page('https://e.com/1')], { refresh: false }).then(() => (done = true));
  await tick();
  t.equal(done, false, 'held back');
  t.equal(f.writes.length, 1, 'nothing written yet');
  f.publish();
  await p;
  t.equal(f.writes.length, 2);
});

t.test('a held-back write waits for the build in progress, not for the whole backlog', async (t) => {
  const f = new FakeIndex();
  for (let i = 0; i < 3; i++) await indexPages(asIndex(f), [page(`https://e.com/${i}`)], { refresh: false });
  f.pending = MAX_PENDING_DOCS;
  let done = false;
  const p = indexPages(asIndex(f), [page('https://e.com/next')], { refresh: false }).then(() => (done = true));
  await tick();
  t.equal(done, false);
  t.same(
    f.waiters.map((w) => w.seq),
    [1],
    'waits on the oldest unpublished write',
  );
  // The build holding seq 1 commits; seqs 2-3 are still buffered but the backlog is under the bound.
  f.publishUpTo(1, MAX_PENDING_DOCS - 1);
  await p;
  t.equal(f.writes.length, 4);
});

t.test('a failed segment build does not fail a write held back by backpressure', async (t) => {
  const f = new FakeIndex();
  await indexPages(asIndex(f), [page('https://e.com/0')], { refresh: false });
  f.pending = MAX_PENDING_DOCS;
  const p = indexPages(asIndex(f), [page('https://e.com/1')], { refresh: false });
  await tick();
  f.failBuild();
  t.same(await p, { indexed: 1, seq: 2 });
});

t.test('a backlog none of our writes belongs to does not block', async (t) => {
  const f = new FakeIndex();
  f.pending = MAX_PENDING_DOCS * 2;
  await indexPages(asIndex(f), [page('https://e.com/a')], { refresh: false });
  // Our write is published but someone else's backlog remains: still no blocking.
  f.committed = f.seq;
  f.pending = MAX_PENDING_DOCS * 2;
  await indexPages(asIndex(f), [page('https://e.com/b')], { refresh: false });
  t.equal(f.writes.length, 2);
});

t.test('refresh waits for publication', async (t) => {
  const f = new FakeIndex();
  let done = false;
  const p = indexPages(asIndex(f), [page('https://e.com/r')], { refresh: true }).then((r) => ((done = true), r));
  await tick();
  t.equal(done, false);
  f.publish();
  t.same(await p, { indexed: 1, seq: 1 });
});

t.test('deletes: absent URL writes nothing; pattern goes through deleteWhere; crawls cancelled', async (t) => {
  const f = new FakeIndex();
  await indexPages(asIndex(f), [page('https://e.com/x/1'), page('https://e.com/x/2'), page('https://e.com/y')], { refresh: false });
  const cancelled: string[] = [];
  const crawl = { cancel: (_s: string, pred: (u: string) => boolean) => ['https://e.com/x/9', 'https://e.com/z'].filter(pred).forEach((u) => cancelled.push(u)) };
  t.equal(await deleteByUrl(asIndex(f), 'https://e.com/nope', { refresh: false, crawl, siteId: 'fake' }), 0);
  t.equal(f.writes.length, 1);
  t.equal(await deleteByUrl(asIndex(f), 'https://e.com/y', { refresh: false, crawl, siteId: 'fake' }), 1);
  const m = compileUrlPattern('/x/');
  t.equal(await deleteByPattern(asIndex(f), m, { refresh: true, crawl, siteId: 'fake' }), 2);
  m.dispose();
  t.same([...f.live], []);
  t.same(cancelled, ['https://e.com/x/9']);
  t.equal(f.committed, f.seq, 'refresh=true published the removal');
});
