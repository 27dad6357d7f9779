/**
 * The pool task `fetch-extract` in a real Piscina worker thread (through the dispatcher), on a
 * 127.0.0.1 server: an HTML page and a PDF (document libraries load inside the worker), and the
 * private-address refusal when SITESIFT_CRAWLER_ALLOW_PRIVATE is off; a batch of pages fetched
 * concurrently in one thread with results streamed back (src/fetch/pool-fetch.ts).
 */
import t from 'tap';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { createPool, runTask } from '../../src/core/index.js';
import { type FetchExtractResult, type FetchExtractTask, batchedPoolFetch } from '../../src/fetch/index.js';

const pdf = readFileSync(fileURLToPath(new URL('../fixtures/crawl/docs/doc.pdf', import.meta.url)));

t.test('fetch-extract runs in a worker thread', async (t) => {
  const server = http.createServer((req, res) => {
    if (req.url === '/doc.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      return res.end(pdf);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html lang="de"><title>Hafen</title><main><h1>Liegeplätze</h1><p>Gäste willkommen.</p><a href="/doc.pdf">PDF</a></main></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = createPool({ workers: 1 });
  t.teardown(async () => {
    await pool.destroy();
    await new Promise((r) => server.close(r));
  });
  const task = (url: string, allowPrivate = true): FetchExtractTask => ({ url, userAgent: 'sitesift-test', timeoutMs: 10_000, maxBytes: 1_000_000, allowPrivate, rules: null });
  const html = await runTask<FetchExtractResult>(pool, 'fetch-extract', { ...task(`${base}/`) });
  t.equal(html.kind, 'page');
  if (html.kind === 'page') {
    t.equal(html.title, 'Hafen');
    t.equal(html.language, 'de');
    t.same(html.headings, ['Liegeplätze']);
    t.same(html.links, [`${base}/doc.pdf`]);
  }
  const doc = await runTask<FetchExtractResult>(pool, 'fetch-extract', { ...task(`${base}/doc.pdf`) });
  t.equal(doc.kind === 'page' && doc.documentType, 'PDF');
  t.match(doc.kind === 'page' && doc.content, /pilot boards the vessel/);
  const refused = await runTask<FetchExtractResult>(pool, 'fetch-extract', { ...task(`${base}/`, false) });
  t.equal(refused.status, 807);
});

t.test('a batch in one worker thread: pages fetched concurrently, each result posted when ready', async (t) => {
  // /slow answers only after both fast pages' results reached the main thread: with one page
  // at a time per thread (the slow page is first), the batch could never finish.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer(async (req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    if (req.url === '/slow') await released;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<title>${req.url}</title><main><p>Text of ${req.url}</p></main>`);
    open--;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = createPool({ workers: 1 });
  t.teardown(async () => {
    release();
    await pool.destroy();
    await new Promise((r) => server.close(r));
  });
  const runFetch = batchedPoolFetch(pool, { threads: 1 });
  const task = (url: string): FetchExtractTask => ({ url, userAgent: 'sitesift-test', timeoutMs: 10_000, maxBytes: 1_000_000, allowPrivate: true, rules: null });
  const slow = runFetch(task(`${base}/slow`));
  const fast = await Promise.all([runFetch(task(`${base}/a`)), runFetch(task(`${base}/b`))]);
  t.same(fast.map((r) => r.kind === 'page' && r.title), ['/a', '/b'], 'the fast pages are back while the slow one still waits');
  t.ok(maxOpen >= 2, 'requests overlapped in one thread');
  release();
  const s = await slow;
  t.equal(s.kind === 'page' && s.title, '/slow');
});
