/**
 * The SSRF table: every fetch path of the crawler (page push, appended content, site crawl,
 * robots.txt, sitemap, sitemap child of a public index, redirect hops of a public page, a public
 * robots.txt and a public sitemap) against every form of a loopback target (resolved names,
 * IPv4-mapped and unspecified addresses, URL literals in other spellings, a resolver that
 * fails), with an injected resolver. A local server that counts connections stays at 0.
 *
 * Only forms that land on this machine are used, so even a broken guard sends nothing off it;
 * the positive control shows each of those addresses does reach the counting server. The other
 * ranges (10/8, documentation, NAT64 …) go through the same guard and are tabled in
 * test/crawl/address-guard.test.ts. Public hosts are nock interceptors (no socket).
 */
import t from 'tap';
import nock from 'nock';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PageDoc } from '../../src/core/index.js';
import { fetchAndExtract, fetchGuarded, type Resolver } from '../../src/fetch/index.js';
import { RobotsCache } from '../../src/crawl/robots.js';
import { CrawlService } from '../../src/crawl/service.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';

const PUBLIC_IP = '93.184.216.34';
const PUB = 'http://www.public.test';

let connections = 0;
const servers: http.Server[] = [];
let port = 0;

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const p = req.url ?? '/';
  if (p === '/robots.txt') return void res.end('User-agent: *\nAllow: /\n');
  if (p.startsWith('/sitemap') || p.startsWith('/child')) {
    res.writeHead(200, { 'content-type': 'application/xml' });
    return void res.end(`<urlset><url><loc>http://127.0.0.1:${port}/secret</loc></url></urlset>`);
  }
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<html><title>internal</title><body><main>internal admin page</main></body></html>');
}

t.before(async () => {
  const v4 = http.createServer(handler);
  await new Promise<void>((r) => v4.listen(0, '127.0.0.1', r));
  port = (v4.address() as AddressInfo).port;
  const v6 = http.createServer(handler);
  await new Promise<void>((r, j) => v6.once('error', j).listen(port, '::1', r));
  for (const s of [v4, v6]) {
    s.on('connection', () => connections++);
    servers.push(s);
  }
  nock.disableNetConnect();
  // The counting server is reachable for real (so a broken guard would be seen); public hosts are interceptors.
  nock.enableNetConnect((host) => !host.includes('public.test'));
});
t.teardown(async () => {
  nock.cleanAll();
  nock.enableNetConnect();
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});
t.afterEach(() => nock.cleanAll());

interface Form {
  name: string;
  /** host[:port] part of the target URL (the port is appended). */
  host: string;
  resolver: Resolver;
  allowPrivate: boolean;
  status: 807 | 810;
  /** What an import's error line says. */
  error: RegExp;
}

const answers =
  (...addresses: string[]): Resolver =>
  async (host) => (host.endsWith('public.test') ? [{ address: PUBLIC_IP, family: 4 }] : addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
const failing: Resolver = async (host) => {
  if (host.endsWith('public.test')) return [{ address: PUBLIC_IP, family: 4 }];
  throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
};
const privateAddress = /private address|loopback name/;

const FORMS: Form[] = [
  ...['127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0.0.0.0', '::'].map((a) => ({
    name: `a name resolving to ${a}`,
    host: 'intranet.example',
    resolver: answers(a),
    allowPrivate: false,
    status: 807 as const,
    error: privateAddress,
  })),
  { name: 'a name resolving to a public and a loopback address', host: 'intranet.example', resolver: answers(PUBLIC_IP, '127.0.0.1'), allowPrivate: false, status: 807, error: privateAddress },
  ...['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:7f00:1]', '2130706433', '0x7f.0.0.1', '0177.0.0.1', '127.1', '0.0.0.0', '[::]', 'localhost'].map((host) => ({
    name: `the literal ${host}`,
    host,
    resolver: answers('127.0.0.1'),
    allowPrivate: false,
    status: 807 as const,
    error: privateAddress,
  })),
  // With private targets allowed, a name that does not resolve must still not be fetched: the OS
  // resolver would answer 127.0.0.1 for localhost if the fetch resolved it again.
  { name: 'a resolver that fails (localhost, private allowed)', host: 'localhost', resolver: failing, allowPrivate: true, status: 810, error: /did not resolve/ },
  { name: 'a resolver that fails', host: 'intranet.example', resolver: failing, allowPrivate: false, status: 810, error: /did not resolve/ },
];

t.test('positive control: each loopback address the table uses reaches the counting server', async (t) => {
  const opts = { userAgent: 'sitesift-test/1.0', timeoutMs: 5000, maxBytes: 100_000, allowPrivate: true, resolver: answers('127.0.0.1') };
  for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '2130706433', '0.0.0.0', '[::]']) {
    const before = connections;
    const r = await fetchGuarded(`http://${host}:${port}/page`, opts);
    t.equal(r.kind === 'response' && r.status, 200, `${host} answered`);
    t.ok(connections > before, `${host} counted`);
  }
});

function service(form: Form, settings = testSettings({ respectRobotsTxt: true })) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-ssrf-'));
  const idx = new MemoryIndex();
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: form.allowPrivate,
    resolver: form.resolver,
    settingsOf: () => settings,
    indexOf: async () => idx.asIndex(),
    runFetch: (task) => fetchAndExtract(task, form.resolver),
    maxAttempts: 1,
  });
  svc.start();
  return {
    svc,
    idx,
    settings,
    async close() {
      await svc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const jsonPage = (url: string): PageDoc => ({
  url,
  title: 'JSON page',
  content: 'supplied text',
  documentType: 'HTML',
  contentGroup: '',
  imageUrl: null,
  dataPoints: [],
  filters: [],
  boost: 1,
  keywords: [],
  language: null,
  headings: [],
  source: 'api',
  status: 200,
});

for (const form of FORMS) {
  t.test(`every fetch path refuses ${form.name}`, async (t) => {
    const target = `http://${form.host}:${port}`;
    const s = service(form);
    t.teardown(() => s.close());
    const before = connections;

    // Page push, robots.txt asked first: refused robots.txt lets the page's own fetch report
    // 807; a robots.txt that cannot be fetched (DNS) disallows the page (804, nothing fetched).
    const push = await s.svc.pushUrl('s1', `${target}/page`);
    await s.svc.idle('s1');
    t.match(s.svc.getTask('s1', push.taskId), { indexStatus: form.status === 810 ? 804 : 807 }, 'page push after robots.txt');

    // The page's own fetch.
    s.settings.crawler.respectRobotsTxt = false;
    const page = await s.svc.pushUrl('s1', `${target}/page2`);
    await s.svc.idle('s1');
    t.match(s.svc.getTask('s1', page.taskId), { state: form.status === 810 ? 'failed' : 'done', indexStatus: form.status }, 'page push');

    // Appended content of a JSON page.
    const append = await s.svc.pushUrl('s1', `${target}/appended`, { appendTo: jsonPage(`${target}/appended`) });
    await s.svc.idle('s1');
    t.match(s.svc.getTask('s1', append.taskId), { state: 'failed', indexStatus: form.status }, 'appendPageContent');

    // Site crawl from a root URL.
    s.settings.crawler.rootUrls = [`${target}/root`];
    await s.svc.startSiteCrawl('s1');
    await s.svc.idle('s1');
    const root = [...s.idx.docs.values()].find((e) => e.doc.url.endsWith('/root'));
    t.equal(root?.doc.status, form.status, 'site crawl root');

    // robots.txt on its own.
    const robots = new RobotsCache({ clock: Date.now, resolver: form.resolver, allowPrivate: form.allowPrivate });
    await robots.check(`${target}/page`, 'sitesift-test', { timeoutMs: 5000 });

    // Sitemap.
    s.settings.crawler.sitemapUrls = [`${target}/sitemap.xml`];
    const direct = await s.svc.importSitemaps('s1');
    t.equal(direct.urls, 0, 'sitemap: nothing read');
    t.match(direct.errors, [form.error], 'sitemap: refused');

    // A child sitemap listed by a public index.
    nock(PUB).get('/index.xml').reply(200, `<sitemapindex><sitemap><loc>${target}/child.xml</loc></sitemap></sitemapindex>`, { 'content-type': 'application/xml' });
    s.settings.crawler.sitemapUrls = [`${PUB}/index.xml`];
    const child = await s.svc.importSitemaps('s1');
    t.equal(child.urls, 0, 'sitemap child: nothing read');
    t.match(child.errors, [new RegExp(`child\\.xml: .*${form.error.source}`)], 'sitemap child: refused');

    // A public sitemap that redirects to the target.
    nock(PUB).get('/moved.xml').reply(302, '', { location: `${target}/sitemap.xml` });
    s.settings.crawler.sitemapUrls = [`${PUB}/moved.xml`];
    const moved = await s.svc.importSitemaps('s1');
    t.equal(moved.urls, 0, 'sitemap redirect: nothing read');
    t.match(moved.errors, [form.error], 'sitemap redirect: refused');

    // A public page whose redirect hop points at the target.
    nock(PUB).get('/start').reply(302, '', { location: `${target}/page` });
    const hop = await s.svc.pushUrl('s1', `${PUB}/start`);
    await s.svc.idle('s1');
    t.match(s.svc.getTask('s1', hop.taskId), { indexStatus: form.status }, 'redirect hop');
    t.equal(s.idx.get(`${PUB}/start`)?.status, 302, 'the hop itself is recorded');

    // A public robots.txt that redirects to the target.
    nock(PUB).get('/robots.txt').reply(302, '', { location: `${target}/robots.txt` });
    await new RobotsCache({ clock: Date.now, resolver: form.resolver, allowPrivate: form.allowPrivate }).check(`${PUB}/x`, 'sitesift-test', { timeoutMs: 5000 });

    t.equal(connections, before, 'no connection reached the counting server');
  });
}
