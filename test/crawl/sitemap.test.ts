/**
 * Sitemap import (nock): sitemap index + gzipped child sitemap, lastmod change detection (URLs
 * without lastmod every time), removeMissing (sitemap pages only, never JSON pages), errors do
 * not remove anything, private sitemap hosts refused.
 */
import t from 'tap';
import nock from 'nock';
import zlib from 'node:zlib';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CrawlService } from '../../src/crawl/service.js';
import { readSitemapFile, type ExtractedPage, type FetchExtractTask, type Resolver } from '../../src/fetch/index.js';
import { DEFAULT_SITEMAP_LIMITS, readSitemaps } from '../../src/crawl/sitemap.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';

const dns: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
const readOpts = {
  userAgent: 'ua',
  timeoutMs: 2000,
  allowPrivate: false,
  limits: DEFAULT_SITEMAP_LIMITS,
  clock: Date.now,
  readFile: (task: Parameters<typeof readSitemapFile>[0]) => readSitemapFile(task, dns),
};
const H = 'http://maps.example';
t.before(() => nock.disableNetConnect());
t.afterEach(() => nock.cleanAll());
t.teardown(() => nock.enableNetConnect());

const urlset = (entries: Array<[string, string | null]>) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries
    .map(([u, lm]) => `<url><loc>${H}${u}</loc>${lm ? `<lastmod>${lm}</lastmod>` : ''}</url>`)
    .join('')}</urlset>`;
const index = `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>${H}/sitemap-pages.xml</loc></sitemap><sitemap><loc>${H}/sitemap-docs.xml.gz</loc></sitemap></sitemapindex>`;

function serve(pages: Array<[string, string | null]>, docs: Array<[string, string | null]>) {
  nock(H)
    .get('/sitemap_index.xml').reply(200, index, { 'content-type': 'application/xml' })
    .get('/sitemap-pages.xml').reply(200, urlset(pages), { 'content-type': 'application/xml' })
    .get('/sitemap-docs.xml.gz').reply(200, zlib.gzipSync(urlset(docs)), { 'content-type': 'application/x-gzip' });
}

t.test('readSitemaps: index + .gz, lastmod kept or null', async (t) => {
  serve([['/a', '2024-01-01'], ['/b', null]], [['/doc.pdf', '2024-02-02T10:00:00+00:00']]);
  const r = await readSitemaps([`${H}/sitemap_index.xml`], readOpts);
  t.same(r.errors, []);
  t.same(
    r.entries.sort((x, y) => x.url.localeCompare(y.url)),
    [
      { url: `${H}/a`, lastmod: '2024-01-01T00:00:00.000Z' },
      { url: `${H}/b`, lastmod: null },
      { url: `${H}/doc.pdf`, lastmod: '2024-02-02T10:00:00.000Z' },
    ],
  );
  const refused = await readSitemaps(['http://127.0.0.1:1/sitemap.xml'], readOpts);
  t.equal(refused.entries.length, 0);
  t.match(refused.errors[0], /private address/);
});

t.test('import: only changed lastmod (and no-lastmod) URLs are queued; removeMissing', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-sitemap-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const idx = new MemoryIndex();
  const fetched: string[] = [];
  const settings = testSettings({ sitemapUrls: [`${H}/sitemap_index.xml`], respectRobotsTxt: false, removeMissing: true });
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: false,
    resolver: dns,
    settingsOf: () => settings,
    indexOf: async () => idx.asIndex(),
    runFetch: async (task: FetchExtractTask) => {
      fetched.push(task.url);
      const page: ExtractedPage = {
        kind: 'page', url: task.url, hops: [], status: 200, title: `T ${task.url}`, content: 'text', headings: [], documentType: 'HTML',
        imageUrl: null, language: null, keywords: [], contentGroup: '', dataPoints: [], filters: [], links: [], canonical: null, noindex: false, nofollow: false,
      };
      return page;
    },
  });
  svc.start();
  t.teardown(() => svc.stop());

  serve([['/a', '2024-01-01'], ['/b', null], ['/c', '2024-01-03']], [['/doc.pdf', '2024-02-02']]);
  const first = await svc.importSitemaps('s1');
  t.same([first.urls, first.queued, first.removed], [4, 4, 0]);
  t.equal(first.type, 'sitemap');
  await svc.idle('s1');
  t.same(fetched.sort(), [`${H}/a`, `${H}/b`, `${H}/c`, `${H}/doc.pdf`]);
  t.equal(idx.get(`${H}/a`)?.source, 'sitemap');
  t.equal(svc.getTask('s1', first.taskId)!.state, 'done');

  fetched.length = 0;
  serve([['/a', '2024-01-01'], ['/b', null], ['/c', '2024-01-03']], [['/doc.pdf', '2024-02-02']]);
  const second = await svc.importSitemaps('s1');
  t.equal(second.queued, 1, 'nothing changed: only the URL without lastmod');
  await svc.idle('s1');
  t.same(fetched, [`${H}/b`]);

  // /c gets a new lastmod, /doc.pdf leaves the sitemap; /a becomes a JSON page and then leaves too.
  fetched.length = 0;
  const a = idx.get(`${H}/a`)!;
  await idx.write([{ op: 'upsert', doc: { ...a, source: 'api', title: 'JSON a' } }]);
  serve([['/b', null], ['/c', '2024-05-05']], [['/other.pdf', '2024-02-02']]);
  const third = await svc.importSitemaps('s1');
  t.same([third.queued, third.removed], [3, 1]);
  await svc.idle('s1');
  t.same(fetched.sort(), [`${H}/b`, `${H}/c`, `${H}/other.pdf`]);
  t.notOk(idx.has(`${H}/doc.pdf`), 'removed: left the sitemap');
  t.equal(idx.get(`${H}/a`)?.title, 'JSON a', 'JSON page never removed');

  // A failed read removes nothing.
  nock(H).get('/sitemap_index.xml').reply(500);
  const broken = await svc.importSitemaps('s1');
  t.equal(broken.removed, 0);
  t.ok(broken.errors.length > 0);
  t.ok(idx.has(`${H}/c`));
});
