/**
 * Sitemap imports are bounded: an index that lists itself is read once, a chain of indexes stops
 * at the depth limit, a wide index at the file limit, URLs at the URL limit, the import at its
 * time limit (injected clock), and a gzip bomb at the decompressed-byte limit — in a real pool
 * thread whose heap is capped below what the bomb inflates to, so holding the inflated bytes
 * would kill the thread. Duplicate URLs are counted and queued once. What was cut is in the
 * result, the run's message and a log warning.
 */
import t, { type Test } from 'tap';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Piscina } from 'piscina';
import { workerExecArgv, workerFile } from '../../src/core/index.js';
import { CrawlService, type CrawlLog, type CrawlServiceOptions } from '../../src/crawl/index.js';
import type { ExtractedPage, Resolver, SitemapFileResult, SitemapFileTask } from '../../src/fetch/index.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';

const loopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

/** A local sitemap server: `routes` answers by path (with query), every request is counted by path. */
async function sitemapServer(t: Test, routes: (p: string, base: string) => { body: string | Buffer; type?: string } | null) {
  const requests = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const p = req.url ?? '/';
    requests.set(p, (requests.get(p) ?? 0) + 1);
    const r = routes(p, base);
    if (!r) {
      res.writeHead(404);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': r.type ?? 'application/xml' });
    res.end(r.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { base, requests, total: () => [...requests.values()].reduce((a, b) => a + b, 0) };
}

const urlset = (urls: string[]) => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
const sitemapindex = (urls: string[]) => `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<sitemap><loc>${u}</loc></sitemap>`).join('')}</sitemapindex>`;

function service(t: Test, sitemapUrls: string[], extra: Partial<CrawlServiceOptions> = {}) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-sitemap-limits-'));
  const idx = new MemoryIndex();
  const warnings: Array<{ obj: object; msg: string }> = [];
  const log: CrawlLog = { info() {}, warn: (obj, msg) => warnings.push({ obj, msg }), error() {} };
  const settings = testSettings({ sitemapUrls, respectRobotsTxt: false });
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: true,
    resolver: loopback,
    settingsOf: () => settings,
    indexOf: async () => idx.asIndex(),
    runFetch: async (task) => ({ kind: 'page', url: task.url, hops: [], status: 200, title: 'T', content: 'text', headings: [], documentType: 'HTML', imageUrl: null, language: null, keywords: [], contentGroup: '', dataPoints: [], filters: [], links: [], canonical: null, noindex: false, nofollow: false }) as ExtractedPage,
    log,
    ...extra,
  });
  svc.start();
  t.teardown(async () => {
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { svc, warnings, settings };
}

t.test('an index that lists itself is read once and the import ends, with a cut note', async (t) => {
  const srv = await sitemapServer(t, (p, base) => {
    if (p === '/index.xml') return { body: sitemapindex([`${base}/index.xml`, `${base}/pages.xml`, `${base}/index.xml`]) };
    if (p === '/pages.xml') return { body: urlset([`${base}/a`, `${base}/b`]) };
    return null;
  });
  const { svc, warnings } = service(t, [`${srv.base}/index.xml`]);
  const r = await svc.importSitemaps('s1');
  t.equal(srv.requests.get('/index.xml'), 1, 'the index was fetched once');
  t.equal(srv.total(), 2);
  t.same([r.urls, r.sitemaps, r.queued], [2, 2, 2]);
  t.match(r.cut, [/index\.xml: listed again by .*index\.xml, read once/]);
  t.match(svc.getTask('s1', r.taskId)!.message, /cut: .*listed again/, 'the task view says what was cut');
  t.match(warnings, [{ msg: 'sitemap import cut', obj: { cut: r.cut, sitemaps: 2, complete: true } }], 'and the log');
});

t.test('a chain of generated indexes stops at the depth limit', async (t) => {
  const srv = await sitemapServer(t, (p, base) => {
    const m = /^\/index\.xml\?n=(\d+)$/.exec(p);
    // Each index lists a fresh one: only the depth limit ends this.
    if (m) return { body: sitemapindex([`${base}/index.xml?n=${Number(m[1]) + 1}`, `${base}/pages.xml?n=${m[1]}`]) };
    if (p.startsWith('/pages.xml')) return { body: urlset([`${base}/page${p.slice(12)}`]) };
    return null;
  });
  const { svc } = service(t, [`${srv.base}/index.xml?n=0`], { sitemapLimits: { maxDepth: 3 } });
  const r = await svc.importSitemaps('s1');
  const indexes = [...srv.requests.keys()].filter((p) => p.startsWith('/index.xml')).sort();
  t.same(indexes, ['/index.xml?n=0', '/index.xml?n=1', '/index.xml?n=2', '/index.xml?n=3'], 'the root and 3 levels below it');
  t.equal(r.urls, 3, 'the URLs of the sitemaps within the depth');
  t.match(r.cut, [/index\.xml\?n=3: 2 child sitemaps not read \(index depth limit 3\)/]);
});

t.test('a wide index stops at the file limit; URLs stop at the URL limit', async (t) => {
  const srv = await sitemapServer(t, (p, base) => {
    if (p === '/wide.xml') return { body: sitemapindex(Array.from({ length: 50 }, (_, i) => `${base}/part${i}.xml`)) };
    const m = /^\/part(\d+)\.xml$/.exec(p);
    if (m) return { body: urlset(Array.from({ length: 4 }, (_, j) => `${base}/p${m[1]}-${j}`)) };
    return null;
  });
  const files = service(t, [`${srv.base}/wide.xml`], { sitemapLimits: { maxFiles: 10 } });
  const r = await files.svc.importSitemaps('s1');
  t.equal(srv.total(), 10, 'ten files fetched');
  t.same([r.sitemaps, r.urls], [10, 36]);
  t.match(r.cut, [/wide\.xml: stopped after 9 child sitemaps \(the import's sitemap limit\)/]);

  srv.requests.clear();
  const urls = service(t, [`${srv.base}/wide.xml`], { sitemapLimits: { maxUrls: 10 } });
  const u = await urls.svc.importSitemaps('s1');
  t.equal(u.urls, 10);
  t.equal(u.queued, 10);
  t.match(u.cut, [/part2\.xml: stopped after 2 URLs \(the import's URL limit\)/, /URL limit of 10 reached: 47 sitemaps not read/]);
  t.equal(srv.total(), 4, 'no file is fetched once the URL limit is reached');
});

t.test('the time limit ends an import between files (injected clock)', async (t) => {
  let now = 1_000_000;
  const srv = await sitemapServer(t, (p, base) => {
    now += 40_000; // every file "takes" 40 s
    if (p === '/index.xml') return { body: sitemapindex([1, 2, 3, 4].map((i) => `${base}/s${i}.xml`)) };
    return { body: urlset([`${base}${p}-page`]) };
  });
  const { svc } = service(t, [`${srv.base}/index.xml`], { clock: () => now, sitemapLimits: { timeoutMs: 100_000 } });
  const r = await svc.importSitemaps('s1');
  t.equal(srv.total(), 3, 'the index and two sitemaps within 100 s');
  t.match(r.cut, [/time limit of 100000 ms reached: 2 sitemaps not read/]);
});

t.test('duplicate URLs within and across sitemaps are counted and queued once', async (t) => {
  const srv = await sitemapServer(t, (p, base) => {
    if (p === '/index.xml') return { body: sitemapindex([`${base}/one.xml`, `${base}/two.xml`, `${base}/one.xml`]) };
    // /a twice in one file, /b in both files, /A%7e (= /A~ by URL identity) next to /A~.
    if (p === '/one.xml') return { body: urlset([`${base}/a`, `${base}/b`, `${base}/a`, `${base}/A~`]) };
    if (p === '/two.xml') return { body: urlset([`${base}/b`, `${base}/c`, `${base}/A%7e`]) };
    return null;
  });
  const { svc } = service(t, [`${srv.base}/index.xml`, `${srv.base}/index.xml`]);
  const r = await svc.importSitemaps('s1');
  t.equal(srv.total(), 3, 'each sitemap fetched once');
  t.same([r.urls, r.queued, r.duplicates], [4, 4, 3], '/a, /b, /c, /A~ once each; three repeats counted');
  await svc.idle('s1');
  t.equal(svc.getTask('s1', r.taskId)!.pagesQueued, 4);
  t.match(svc.getTask('s1', r.taskId)!.message, /4 URLs read from 3 sitemaps, 4 queued, 0 removed, 3 duplicates/);
});

t.test('a gzip bomb is cut at the byte limit in a pool thread whose heap is smaller than the bomb', async (t) => {
  // 300 MB of white space inside a urlset, after two URLs, gzipped to well under 1 MB.
  const INFLATED = 300 * 1024 * 1024;
  const gz = zlib.createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gz.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise((r) => gz.on('end', r));
  const head = '<?xml version="1.0"?><urlset><url><loc>http://127.0.0.1/a</loc></url><url><loc>http://127.0.0.1/b</loc></url>';
  gz.write(head);
  const spaces = Buffer.alloc(1024 * 1024, 0x20);
  for (let written = head.length; written < INFLATED; written += spaces.length) {
    if (!gz.write(spaces)) await new Promise((r) => gz.once('drain', r));
  }
  gz.end('<url><loc>http://127.0.0.1/after-the-padding</loc></url></urlset>');
  await done;
  const bomb = Buffer.concat(parts);
  t.ok(bomb.length < 1024 * 1024, `the bomb is ${bomb.length} bytes`);

  const srv = await sitemapServer(t, (p) => (p === '/bomb.xml.gz' ? { body: bomb, type: 'application/x-gzip' } : null));
  const pool = new Piscina({
    filename: workerFile(),
    minThreads: 1,
    maxThreads: 1,
    execArgv: workerExecArgv(process.execArgv, true),
    // The thread dies with ERR_WORKER_OUT_OF_MEMORY if the reader keeps what it inflates.
    resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 },
  });
  t.teardown(() => pool.destroy());
  const runSitemap = (task: SitemapFileTask) => pool.run({ ...task, task: 'read-sitemap' }) as Promise<SitemapFileResult>;
  const { svc, warnings } = service(t, [`${srv.base}/bomb.xml.gz`], { runSitemap, sitemapLimits: { maxBytes: 200 * 1024 * 1024 } });
  const heapBefore = process.memoryUsage().heapUsed;
  const r = await svc.importSitemaps('s1');
  t.same(r.errors, []);
  t.equal(r.urls, 2, 'the URLs before the cut are kept');
  t.match(r.cut, [/bomb\.xml\.gz: stopped after 209715200 decompressed bytes/]);
  t.match(warnings, [{ msg: 'sitemap import cut', obj: { cut: r.cut, complete: false } }]);
  t.ok(process.memoryUsage().heapUsed - heapBefore < 64 * 1024 * 1024, 'the main thread heap did not take the inflated bytes');
  t.equal(srv.requests.get('/bomb.xml.gz'), 1);
});
