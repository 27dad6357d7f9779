/**
 * CrawlService end to end against a real HTTP server on 127.0.0.1 serving a small fixture site:
 * a full site crawl with every status, a restart in the middle, retries with backoff under an
 * injected clock, URL push and newest-write-wins, cancellation, removal after a full crawl,
 * Control Panel rules on crawled pages and not on JSON (appended) pages.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CrawlService, RUN_FLUSH_MIN_PART_DOCS, type CrawlServiceOptions } from '../../src/crawl/service.js';
import { fetchAndExtract, type FetchExtractTask } from '../../src/fetch/index.js';
import type { Settings, PageDoc } from '../../src/core/index.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';
import { startSiteServer, type SiteServer } from './helpers/site-server.js';
import { until } from './helpers/until.js';

let site: SiteServer;
t.before(async () => {
  site = await startSiteServer();
});
t.teardown(() => site.close());

function setup(t: { teardown(fn: () => unknown): void }, settings: () => Settings, over: Partial<CrawlServiceOptions> = {}) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-crawl-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const index = new MemoryIndex();
  const make = (extra: Partial<CrawlServiceOptions> = {}) => {
    const svc = new CrawlService({
      dataDir,
      clock: Date.now,
      allowPrivate: true, // the fixture site is on 127.0.0.1
      settingsOf: () => settings(),
      indexOf: async () => index.asIndex(),
      runFetch: (task: FetchExtractTask) => fetchAndExtract(task),
      maxInFlight: 4,
      ...over,
      ...extra,
    });
    return svc;
  };
  return { dataDir, index, make };
}

t.test('site crawl: BFS within hosts, every status recorded, dedupe, robots, canonical, noindex, nofollow', async (t) => {
  const settings = testSettings({ rootUrls: [`${site.url}/`], blacklist: ['/private/'] });
  const { index, make } = setup(t, () => settings);
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  const run = await svc.startSiteCrawl('s1');
  t.equal(run.type, 'crawl');
  await svc.idle('s1');
  const u = (p: string) => `${site.url}${p}`;
  const status = (p: string) => index.get(u(p))?.status;
  t.equal(status('/'), 200);
  t.equal(status('/a.html'), 200);
  t.equal(status('/c.html'), 200);
  t.equal(status('/d.html'), 200);
  t.equal(status('/docs/guide.html'), 200);
  t.equal(status('/files/notes.txt'), 200);
  t.equal(index.get(u('/files/notes.txt'))?.documentType, 'TXT');
  t.equal(status('/private/secret.html'), 801, 'blacklisted');
  t.equal(site.hits.get('/private/secret.html'), undefined, 'blacklisted URLs are not fetched');
  t.equal(status('/noindex.html'), 803, 'meta noindex');
  t.equal(status('/e.html'), 200, 'links of a noindex page are followed');
  t.equal(status('/dup.html'), 805, 'non-canonical copy');
  t.match(index.get(u('/dup.html'))?.message, /Canonical URL is/);
  t.equal(status('/old'), 301, 'redirect source tracked with its 3xx');
  t.equal(status('/blocked/x.html'), 804, 'robots.txt');
  t.equal(site.hits.get('/blocked/x.html'), undefined);
  t.equal(status('/missing.html'), 404);
  t.notOk(index.has(u('/hidden.html')), 'rel=nofollow not followed');
  t.notOk(index.has('http://elsewhere.example/'), 'other hosts not followed');
  // Once as a page; once more only as the end of the /old redirect chain (the redirect target
  // is then recognised as already crawled). The #fragment link and dup.html's canonical add none.
  t.equal(site.hits.get('/a.html'), 2, 'a.html fetched once as a page (fragment and canonical dedupe)');
  t.equal(index.get(u('/'))?.source, 'crawler');
  // The last pages are published when the run ends, not when the refresh timer fires.
  await until(async () => index.flushes > 0, 'the finished crawl to be flushed');
  t.equal(index.flushes, 1, 'the finished crawl flushed its index once');
  t.same(index.lastFlushOptions, { minPartDocs: RUN_FLUSH_MIN_PART_DOCS }, 'as parallel parts from 50 pages per part (the pool threads are free)');
  const done = svc.getTask('s1', run.taskId)!;
  t.equal(done.state, 'done');
  t.ok(done.finishedAt);
  t.equal(svc.pending('s1'), 0);
});

t.test('a run flushes its index every runFlushPages pages, in parallel parts, one flush at a time', async (t) => {
  const settings = testSettings({ rootUrls: [`${site.url}/`], blacklist: ['/private/'] });
  const { index, make } = setup(t, () => settings);
  // Flushes are held until released: while one runs, no other run flush is asked for.
  const calls: Array<{ minPartDocs?: number } | undefined> = [];
  let releaseFlushes: (() => void) | null = null;
  const held = new Promise<void>((r) => (releaseFlushes = r));
  index.flush = async (opts?: { minPartDocs?: number }) => {
    calls.push(opts);
    await held;
  };
  const svc = make({ runFlushPages: 2 });
  svc.start();
  t.teardown(() => svc.stop());
  const run = await svc.startSiteCrawl('s1');
  await svc.idle('s1');
  await until(async () => svc.getTask('s1', run.taskId)!.state === 'done', 'the run to finish');
  await until(async () => calls.length === 2, 'the finished run to ask for its flush');
  const pages = index.docs.size;
  t.ok(pages > 4, `the run wrote ${pages} pages, enough for several run flushes`);
  t.equal(calls.length, 2, 'one run flush while it was held, then the finished run\'s flush');
  t.same(calls, [{ minPartDocs: RUN_FLUSH_MIN_PART_DOCS }, { minPartDocs: RUN_FLUSH_MIN_PART_DOCS }], 'both as parallel parts');
  releaseFlushes!();

  // Released flushes: a second crawl asks again every 2 pages.
  const { index: index2, make: make2 } = setup(t, () => settings);
  let flushed = 0;
  index2.flush = async () => {
    flushed++;
  };
  const svc2 = make2({ runFlushPages: 2 });
  svc2.start();
  t.teardown(() => svc2.stop());
  await svc2.startSiteCrawl('s1');
  await svc2.idle('s1');
  await until(async () => flushed > 2, 'run flushes during the crawl');
  t.ok(flushed > 2, `${flushed} flushes for ${index2.docs.size} pages`);
});

t.test('maxDepth and maxPages', async (t) => {
  const settings = testSettings({ rootUrls: [`${site.url}/a.html`], maxDepth: 1 });
  const { index, make } = setup(t, () => settings);
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  await svc.startSiteCrawl('s1');
  await svc.idle('s1');
  t.ok(index.has(`${site.url}/c.html`), 'depth 1 reached');
  t.notOk(index.has(`${site.url}/d.html`), 'depth 2 not reached');
  const settings2 = testSettings({ rootUrls: [`${site.url}/`], maxPages: 2 });
  const { index: index2, make: make2 } = setup(t, () => settings2);
  const svc2 = make2();
  svc2.start();
  t.teardown(() => svc2.stop());
  const run = await svc2.startSiteCrawl('s2');
  await svc2.idle('s2');
  t.equal(index2.docs.size <= 3, true, 'at most maxPages pages (+ redirect hops)');
  t.match(svc2.getTask('s2', run.taskId)!.message, /maxPages reached/);
});

t.test('restart in the middle of a crawl resumes where it stopped', async (t) => {
  const settings = testSettings({ rootUrls: [`${site.url}/`], concurrencyPerHost: 1 });
  let fetches = 0;
  let stopFirst: (() => void) | null = null;
  const { index, make } = setup(t, () => settings);
  const first = make({
    maxInFlight: 1,
    runFetch: async (task) => {
      fetches++;
      if (fetches === 4) stopFirst?.();
      return fetchAndExtract(task);
    },
  });
  const stopped = new Promise<void>((resolve) => {
    stopFirst = () => void first.stop(10_000).then(resolve);
  });
  first.start();
  const run = await first.startSiteCrawl('s1');
  await stopped;
  const midway = index.searchable().length;
  t.ok(midway >= 1 && midway < 8, `stopped midway (${midway} pages)`);
  const second = make();
  second.start();
  t.teardown(() => second.stop());
  t.ok(second.pending('s1') > 0, 'queue survived the restart');
  await second.idle('s1');
  t.equal(second.getTask('s1', run.taskId)!.state, 'done');
  for (const p of ['/', '/a.html', '/c.html', '/d.html', '/e.html', '/docs/guide.html']) t.equal(index.get(`${site.url}${p}`)?.status, 200, p);
});

t.test('5xx and network errors are retried with exponential backoff (injected clock)', async (t) => {
  let now = 1_000_000;
  let calls = 0;
  site.routes.set('/flaky', (_req, res) => {
    calls++;
    if (calls < 3) {
      res.writeHead(503);
      return res.end('busy');
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<title>Flaky</title><p>Finally up.</p>');
  });
  site.routes.set('/down', (_req, res) => {
    res.writeHead(500);
    res.end('always broken');
  });
  const settings = testSettings({ respectRobotsTxt: false });
  const { index, make } = setup(t, () => settings, { clock: () => now, retryBaseMs: 1000, maxAttempts: 3 });
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  const flaky = await svc.pushUrl('s1', `${site.url}/flaky`);
  const down = await svc.pushUrl('s1', `${site.url}/down`);
  await svc.idle('s1');
  t.equal(calls, 1);
  t.equal(svc.getTask('s1', flaky.taskId)!.state, 'queued', 'waiting for its retry');
  t.match(svc.getTask('s1', flaky.taskId)!.message, /retry 1 of 2/);
  t.equal(svc.pending('s1'), 2);
  now += 999;
  await svc.idle('s1');
  t.equal(calls, 1, 'not before the backoff');
  now += 1;
  await svc.idle('s1');
  t.equal(calls, 2);
  now += 2000; // second backoff doubles
  await svc.idle('s1');
  t.equal(calls, 3);
  t.equal(svc.getTask('s1', flaky.taskId)!.state, 'done');
  t.equal(index.get(`${site.url}/flaky`)?.status, 200);
  const d = svc.getTask('s1', down.taskId)!;
  t.equal(d.state, 'failed');
  t.equal(d.indexStatus, 500);
  t.equal(index.get(`${site.url}/down`)?.status, 500, 'outcome recorded after the last attempt');
  t.equal(svc.pending('s1'), 0);
});

t.test('URL push: task lifecycle, newest write wins, cancellation', async (t) => {
  let release: (() => void) | null = null;
  const gate = new Promise<void>((r) => (release = r));
  const settings = testSettings({ respectRobotsTxt: false });
  const { index, make } = setup(t, () => settings, {
    runFetch: async (task) => {
      if (task.url.endsWith('/c.html')) await gate;
      return fetchAndExtract(task);
    },
  });
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  const push = await svc.pushUrl('s1', `${site.url}/a.html#frag`);
  t.equal(push.url, `${site.url}/a.html`);
  t.equal(push.state, 'queued');
  t.match(push.createdAt, /^\d{4}-\d\d-\d\dT/);
  // A JSON push of c.html lands while its crawl runs: the crawl must not overwrite it.
  const c = await svc.pushUrl('s1', `${site.url}/c.html`);
  await new Promise((r) => setImmediate(r));
  const json: PageDoc = { ...index.get(`${site.url}/a.html`)!, url: `${site.url}/c.html`, title: 'From JSON', content: 'json body', source: 'api', status: 200, headings: [], dataPoints: [], filters: [], keywords: [], boost: 1, contentGroup: '', imageUrl: null, language: null, documentType: 'HTML' } as PageDoc;
  await index.write([{ op: 'upsert', doc: json }]);
  release!();
  await svc.idle('s1');
  t.equal(svc.getTask('s1', push.taskId)!.state, 'done');
  t.equal(svc.getTask('s1', push.taskId)!.indexStatus, 200);
  t.equal(index.get(`${site.url}/a.html`)?.source, 'crawler');
  t.equal(index.get(`${site.url}/c.html`)?.title, 'From JSON', 'newest write (JSON) wins');
  t.match(svc.getTask('s1', c.taskId)!.message, /newer JSON push/);
  t.equal(index.flushes, 0, 'URL pushes leave publishing to the refresh timer (no run ended)');
});

t.test('cancel(predicate) cancels queued crawls of deleted URLs', async (t) => {
  const settings = testSettings({ respectRobotsTxt: false });
  const { index, make } = setup(t, () => settings);
  const svc = make();
  // Not started yet: tasks stay queued.
  const a = await svc.pushUrl('s1', `${site.url}/a.html`);
  const b = await svc.pushUrl('s1', `${site.url}/b.html`);
  t.equal(svc.pending('s1'), 2);
  t.equal(svc.cancel('s1', (u) => u.endsWith('/a.html')), 1);
  t.equal(svc.getTask('s1', a.taskId)!.state, 'failed');
  t.match(svc.getTask('s1', a.taskId)!.message, /Cancelled/);
  t.equal(svc.pending('s1'), 1);
  svc.start();
  t.teardown(() => svc.stop());
  await svc.idle('s1');
  t.notOk(index.has(`${site.url}/a.html`));
  t.equal(svc.getTask('s1', b.taskId)!.state, 'done');
});

t.test('a finished full crawl removes crawler pages it no longer reaches, never JSON pages', async (t) => {
  const settings = testSettings({ rootUrls: [`${site.url}/a.html`] });
  const { index, make } = setup(t, () => settings);
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  await svc.startSiteCrawl('s1');
  await svc.idle('s1');
  t.equal(index.get(`${site.url}/d.html`)?.status, 200);
  const json = { ...index.get(`${site.url}/d.html`)!, url: `${site.url}/json-only.html`, source: 'api' as const };
  await index.write([{ op: 'upsert', doc: json }]);
  settings.crawler.maxDepth = 1; // d.html is now out of reach
  const second = await svc.startSiteCrawl('s1');
  await svc.idle('s1');
  await new Promise((r) => setTimeout(r, 20)); // removal runs right after the run settles
  t.notOk(index.has(`${site.url}/d.html`), 'unreached crawler page removed');
  t.ok(index.has(`${site.url}/c.html`));
  t.ok(index.has(`${site.url}/json-only.html`), 'JSON page kept');
  t.match(svc.getTask('s1', second.taskId)!.message, /1 pages no longer reached were removed/);
});

t.test('Control Panel rules apply to crawled pages and not to JSON (appended) pages', async (t) => {
  const settings = testSettings(
    { respectRobotsTxt: false, blacklist: ['/private/'], noIndex: ['/c\\.html$'] },
    {
      contentExtraction: [{ contentGroup: 'Shop', title: 'main h1', contentExclude: ['.colour'] }],
      dataPoints: [
        { key: 'price', meta: 'product:price', type: 'number', show: true, sortable: true, searchable: false },
        { key: 'brand', jsonLd: 'brand.name', type: 'text', show: true, sortable: false, searchable: true },
        { key: 'availability', jsonLd: 'offers.availability', type: 'text', show: false, sortable: false, searchable: false },
        { key: 'colour', selector: '.colour', type: 'text', show: true, sortable: false, searchable: false },
        { key: 'released', selector: 'time.released', type: 'date', show: false, sortable: true, searchable: false },
      ],
      resultGroups: [
        { name: 'Docs', urlPattern: '/docs/' },
        { name: 'Shop', selector: 'main.product' },
      ],
      filters: [
        { id: 'fid#1', name: 'Price', type: 'range', dataPoint: 'price' },
        { id: 'fid#2', name: 'Colour', type: 'multiple', dataPoint: 'colour' },
      ],
    },
  );
  const { index, make } = setup(t, () => settings);
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  for (const p of ['/b.html', '/docs/guide.html', '/c.html', '/private/secret.html']) await svc.pushUrl('s1', `${site.url}${p}`);
  await svc.idle('s1');
  const b = index.get(`${site.url}/b.html`)!;
  t.equal(b.contentGroup, 'Shop', 'group by selector');
  t.equal(b.title, 'Brass lantern', 'title selector of the group rule');
  t.notMatch(b.content, /amber/, 'contentExclude of the group rule');
  t.same(
    b.dataPoints,
    [
      { key: 'price', value: '129.5', show: true },
      { key: 'brand', value: 'Beacon', show: true },
      { key: 'availability', value: 'InStock', show: false },
      { key: 'colour', value: 'amber', show: true },
      { key: 'released', value: '2024-03-01T00:00:00.000Z', show: false },
    ],
  );
  t.same(b.filters, [{ key: 'fid#1', value: 129.5 }, { key: 'fid#2', value: ['amber', 'green'] }]);
  t.equal(index.get(`${site.url}/docs/guide.html`)!.contentGroup, 'Docs', 'group by urlPattern');
  t.equal(index.get(`${site.url}/c.html`)!.status, 803, 'no-index rule');
  t.equal(index.get(`${site.url}/private/secret.html`)!.status, 801, 'blacklist');

  // JSON pages with appendPageContent: no rule applies, supplied fields win.
  const base = { title: '', content: '', documentType: 'HTML' as const, contentGroup: '', imageUrl: null, dataPoints: [], filters: [], boost: 1, keywords: [], language: null, headings: [], source: 'api' as const, status: 200 };
  const jsonDocs: PageDoc[] = [
    { ...base, url: `${site.url}/private/secret.html`, title: 'Pushed secret', content: 'Supplied text.' },
    { ...base, url: `${site.url}/b.html`, title: 'My lantern', content: 'Supplied.', contentGroup: 'Custom', dataPoints: [{ key: 'mine', value: '1', show: true }] },
    { ...base, url: `${site.url}/c.html`, title: 'Channel JSON', content: 'Supplied channel.' },
  ];
  await index.write(jsonDocs.map((doc) => ({ op: 'upsert' as const, doc })));
  const tasks = [];
  for (const doc of jsonDocs) tasks.push(await svc.pushUrl('s1', doc.url, { appendTo: doc }));
  await svc.idle('s1');
  for (const task of tasks) t.equal(svc.getTask("s1", task.taskId)!.state, "done", String(task.url));
  const secret = index.get(`${site.url}/private/secret.html`)!;
  t.equal(secret.status, 200, 'blacklist not applied to a JSON page');
  t.equal(secret.title, 'Pushed secret');
  t.equal(secret.content, 'Supplied text.\n\nHarbour master private notes.', 'fetched content appended');
  t.equal(secret.source, 'api');
  const lantern = index.get(`${site.url}/b.html`)!;
  t.equal(lantern.contentGroup, 'Custom', 'result groups not applied');
  t.same(lantern.dataPoints, [{ key: 'mine', value: '1', show: true }], 'data points not extracted');
  t.same(lantern.filters, []);
  t.match(lantern.content, /amber/, 'content extraction rules not applied');
  t.equal(index.get(`${site.url}/c.html`)!.status, 200, 'no-index rule not applied');
});

t.test('Crawl-delay and requestDelayMs space requests to one host (injected clock)', async (t) => {
  site.routes.set('/robots.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('User-agent: *\nCrawl-delay: 5\n');
  });
  t.teardown(() => site.routes.delete('/robots.txt'));
  let now = 5_000_000;
  const fetchedAt: Array<[string, number]> = [];
  let notify: (() => void) | null = null;
  const settings = testSettings({ requestDelayMs: 1000, concurrencyPerHost: 4 });
  const { make } = setup(t, () => settings, {
    clock: () => now,
    runFetch: async (task) => {
      fetchedAt.push([task.url, now]);
      notify?.();
      return fetchAndExtract(task);
    },
  });
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  const next = () => new Promise<void>((r) => (notify = r));
  let p = next();
  await svc.pushUrl('s1', `${site.url}/a.html`);
  await svc.pushUrl('s1', `${site.url}/c.html`);
  await p;
  // The first request taught us Crawl-delay: 5 s, larger than requestDelayMs.
  await new Promise((r) => setTimeout(r, 50));
  t.equal(fetchedAt.length, 1, 'second request waits for the delay');
  p = next();
  now += 4999;
  svc.wake();
  await new Promise((r) => setTimeout(r, 50));
  t.equal(fetchedAt.length, 1, 'still waiting 1 ms before the delay ends');
  now += 1;
  svc.wake();
  await p;
  t.same(fetchedAt.map(([, at]) => at - 5_000_000), [0, 5000]);
});

t.test('whitelist: a crawled URL outside it is 802, a JSON page outside it is appended normally', async (t) => {
  const settings = testSettings({ respectRobotsTxt: false, whitelist: ['/docs/'] });
  const { index, make } = setup(t, () => settings);
  const svc = make();
  svc.start();
  t.teardown(() => svc.stop());
  const inside = await svc.pushUrl('s1', `${site.url}/docs/guide.html`);
  const outside = await svc.pushUrl('s1', `${site.url}/e.html`);
  await svc.idle('s1');
  t.equal(svc.getTask('s1', inside.taskId)!.indexStatus, 200);
  t.equal(svc.getTask('s1', outside.taskId)!.indexStatus, 802);
  t.equal(index.get(`${site.url}/e.html`)!.status, 802);
  t.equal(index.get(`${site.url}/e.html`)!.message, 'Outside the whitelist');
  const json: PageDoc = {
    url: `${site.url}/d.html`, title: 'Dock (JSON)', content: 'Supplied.', documentType: 'HTML', contentGroup: '', imageUrl: null,
    dataPoints: [], filters: [], boost: 1, keywords: [], language: null, headings: [], source: 'api', status: 200,
  };
  await index.write([{ op: 'upsert', doc: json }]);
  const task = await svc.pushUrl('s1', json.url, { appendTo: json });
  t.equal(task.type, 'append');
  await svc.idle('s1');
  t.equal(index.get(json.url)!.status, 200, 'whitelist not applied to a JSON page');
  t.match(index.get(json.url)!.content, /^Supplied\.\n\nDock D handles container traffic\.$/);
});

t.test('cancelling the last queued pages of a crawl completes the run', async (t) => {
  const settings = testSettings({ rootUrls: [`${site.url}/a.html`, `${site.url}/c.html`] });
  const { make } = setup(t, () => settings);
  const svc = make();
  // Not started: the run's pages stay queued.
  (svc as unknown as { started: boolean }).started = false;
  const run = await svc.startSiteCrawl('s1');
  t.equal(svc.getTask('s1', run.taskId)!.state, 'running');
  t.equal(svc.cancel('s1', () => true), 2);
  t.equal(svc.getTask('s1', run.taskId)!.state, 'done');
  t.match(svc.getTask('s1', run.taskId)!.message, /incomplete/, 'a cancelled crawl removes nothing');
  t.equal(svc.pending('s1'), 0);
  await svc.stop();
});
