/**
 * Result groups apply to crawled documents: a PDF and a TXT under a grouped path get the group
 * of the first matching URL pattern, like HTML pages; a selector group (documents have no
 * markup) never claims a document; a document outside every pattern stays ungrouped (`_`).
 * Real fixture documents from a 127.0.0.1 site, crawled end to end.
 */
import t from 'tap';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrawlService } from '../../src/crawl/index.js';
import { fetchAndExtract, type Resolver } from '../../src/fetch/index.js';
import { MemoryIndex, testSettings } from './helpers/memory-index.js';

const FIX = fileURLToPath(new URL('../fixtures/crawl/docs/', import.meta.url));

t.test('crawled PDF and TXT documents get their result group by URL pattern', async (t) => {
  const files: Record<string, [string, Buffer | string]> = {
    '/': ['text/html', '<html><title>Home</title><main><p>Start here.</p><a href="/manuals/doc.pdf">PDF</a> <a href="/manuals/notes.txt">TXT</a> <a href="/manuals/guide.html">Guide</a> <a href="/misc/notes.txt">Other</a></main></html>'],
    '/manuals/doc.pdf': ['application/pdf', readFileSync(path.join(FIX, 'doc.pdf'))],
    '/manuals/notes.txt': ['text/plain; charset=utf-8', readFileSync(path.join(FIX, 'notes.txt'))],
    '/manuals/guide.html': ['text/html', '<html><title>Guide</title><main class="guide"><p>The guide.</p></main></html>'],
    '/misc/notes.txt': ['text/plain; charset=utf-8', readFileSync(path.join(FIX, 'notes.txt'))],
  };
  const server = http.createServer((req, res) => {
    const f = files[req.url ?? ''];
    if (req.url === '/robots.txt' || !f) {
      res.writeHead(404);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': f[0] });
    res.end(f[1]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const settings = testSettings(
    { rootUrls: [`${base}/`] },
    {
      resultGroups: [
        // A selector group first: it matches the HTML guide, and can never match a document.
        { name: 'Styled', selector: 'main.guide' },
        { name: 'Manuals', urlPattern: '/manuals/' },
      ],
    },
  );
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sitesift-docgroups-'));
  const idx = new MemoryIndex();
  const svc = new CrawlService({
    dataDir,
    clock: Date.now,
    allowPrivate: true,
    resolver,
    settingsOf: () => settings,
    indexOf: async () => idx.asIndex(),
    runFetch: (task) => fetchAndExtract(task, resolver),
  });
  svc.start();
  t.teardown(async () => {
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await svc.startSiteCrawl('s1');
  await svc.idle('s1');

  const doc = (p: string) => idx.get(`${base}${p}`);
  t.match(doc('/manuals/doc.pdf'), { status: 200, documentType: 'PDF', contentGroup: 'Manuals' }, 'PDF under /manuals/');
  t.match(doc('/manuals/notes.txt'), { status: 200, documentType: 'TXT', contentGroup: 'Manuals' }, 'TXT under /manuals/');
  t.match(doc('/manuals/guide.html'), { status: 200, documentType: 'HTML', contentGroup: 'Styled' }, 'HTML: the first matching group, by selector');
  t.match(doc('/misc/notes.txt'), { status: 200, documentType: 'TXT', contentGroup: '' }, 'a document outside every pattern: no group');
  t.match(doc('/'), { status: 200, contentGroup: '' });
});
