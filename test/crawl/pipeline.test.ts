/**
 * Throughput-relevant behaviour of the crawl dispatcher (src/crawl/dispatch.ts): a host's
 * politeness slot covers the request only, so the next request to the host starts while the
 * previous page still waits for its index commit — and `concurrencyPerHost` still bounds the
 * requests themselves.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WriteOp } from '../../src/index/index.js';
import { CrawlService } from '../../src/crawl/service.js';
import { fetchAndExtract, type FetchExtractTask } from '../../src/fetch/index.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';
import { startSiteServer } from './helpers/site-server.js';

async function until(check: () => boolean, tries = 400): Promise<boolean> {
  for (let i = 0; i < tries && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  return check();
}

/** An in-memory index whose writes wait until the test releases them. */
function heldWrites(): { memory: MemoryIndex; index: MemoryIndex; writes: { readonly pending: number; release(): void } } {
  const memory = new MemoryIndex();
  const held: Array<() => void> = [];
  let pending = 0;
  const index = Object.assign(Object.create(memory) as MemoryIndex, {
    async write(ops: WriteOp[]): Promise<number> {
      pending++;
      await new Promise<void>((r) => held.push(r));
      pending--;
      return memory.write(ops);
    },
  });
  const writes = {
    get pending() {
      return pending;
    },
    release() {
      while (held.length) held.shift()!();
    },
  };
  return { memory, index, writes };
}

t.test('the host slot is freed when the fetch is back, not after the index write', async (t) => {
  const site = await startSiteServer();
  t.teardown(() => site.close());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-pipeline-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const { memory, index, writes } = heldWrites();

  let fetching = 0;
  let maxFetching = 0;
  const started: string[] = [];
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: true,
    settingsOf: () => testSettings({ concurrencyPerHost: 1, respectRobotsTxt: false }),
    indexOf: async () => index.asIndex(),
    runFetch: async (task: FetchExtractTask) => {
      started.push(task.url);
      fetching++;
      maxFetching = Math.max(maxFetching, fetching);
      try {
        return await fetchAndExtract(task);
      } finally {
        fetching--;
      }
    },
    maxInFlight: 8,
  });
  svc.start();
  t.teardown(() => svc.stop(100));

  await svc.pushUrl('s1', `${site.url}/a.html`);
  await svc.pushUrl('s1', `${site.url}/c.html`);
  await svc.pushUrl('s1', `${site.url}/d.html`);
  t.ok(await until(() => writes.pending === 1 && started.length >= 2), 'the second request started while the first page waits for its write');
  t.ok(await until(() => started.length === 3 && writes.pending === 3), 'every page fetched while all writes are still held');
  t.equal(maxFetching, 1, 'concurrencyPerHost 1: never two requests to the host at once');
  writes.release();
  await svc.idle('s1');
  t.same(memory.searchable(), [`${site.url}/a.html`, `${site.url}/c.html`, `${site.url}/d.html`]);
});

t.test('a host held back by its gate does not hide another host queued behind it', async (t) => {
  const site = await startSiteServer();
  t.teardown(() => site.close());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-pipeline-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const index = new MemoryIndex();
  const hold: Array<() => void> = [];
  let holding = true;
  const started: string[] = [];
  const other = site.url.replace('127.0.0.1', 'localhost');
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: true,
    settingsOf: () => testSettings({ concurrencyPerHost: 1, respectRobotsTxt: false }),
    indexOf: async () => index.asIndex(),
    runFetch: async (task: FetchExtractTask) => {
      started.push(task.url);
      // The first host's requests hang until the end of the test.
      if (holding && task.url.startsWith(site.url)) await new Promise<void>((r) => hold.push(r));
      return fetchAndExtract(task);
    },
    maxInFlight: 8,
  });
  svc.start();
  t.teardown(() => svc.stop(100));
  // One quiet pass first (nothing held back yet), then a queue of blocked pages with the other
  // host's page behind more of them than the free slots.
  await svc.pushUrl('s1', `${site.url}/a.html`);
  t.ok(await until(() => started.length === 1));
  for (let i = 0; i < 12; i++) await svc.pushUrl('s1', `${site.url}/a.html?n=${i}`);
  await svc.pushUrl('s1', `${other}/c.html`);
  t.ok(await until(() => started.includes(`${other}/c.html`)), 'the other host is fetched while the first one is busy');
  t.equal(started.filter((u) => u.startsWith(site.url)).length, 1, 'one request at a time to the busy host');
  holding = false;
  while (hold.length) hold.shift()!();
  await svc.idle('s1');
});

t.test('pages waiting for their index commit do not take fetch slots (maxInFlight counts fetches)', async (t) => {
  const site = await startSiteServer();
  t.teardown(() => site.close());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-pipeline-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { memory, index, writes } = heldWrites();
  let fetching = 0;
  let maxFetching = 0;
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: true,
    settingsOf: () => testSettings({ concurrencyPerHost: 4, respectRobotsTxt: false }),
    indexOf: async () => index.asIndex(),
    runFetch: async (task: FetchExtractTask) => {
      fetching++;
      maxFetching = Math.max(maxFetching, fetching);
      try {
        return await fetchAndExtract(task);
      } finally {
        fetching--;
      }
    },
    maxInFlight: 1,
  });
  svc.start();
  t.teardown(() => svc.stop(100));
  for (const p of ['/a.html', '/c.html', '/d.html']) await svc.pushUrl('s1', `${site.url}${p}`);
  t.ok(await until(() => writes.pending === 3), 'all three pages fetched while every write is held');
  t.equal(maxFetching, 1, 'never more than maxInFlight fetches at once');
  writes.release();
  await svc.idle('s1');
  t.equal(memory.searchable().length, 3);
});
