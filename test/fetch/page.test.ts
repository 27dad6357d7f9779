/**
 * Fetch-and-extract edge cases against nock (runs the pool task's body in-process so nock
 * intercepts it): redirects, loops, size cap, timeout, gzip/br, charset, private targets,
 * robots directives, canonical, nofollow/base, every document type, YouTube.
 */
import t from 'tap';
import nock from 'nock';
import zlib from 'node:zlib';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fetchAndExtract, type FetchExtractTask } from '../../src/fetch/page.js';
import type { Resolver } from '../../src/fetch/address-guard.js';

const FIX = fileURLToPath(new URL('../fixtures/crawl/docs/', import.meta.url));
const publicDns: Resolver = async (host) =>
  host === 'sneaky.example' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }];
const task = (url: string, over: Partial<FetchExtractTask> = {}): FetchExtractTask => ({
  url,
  userAgent: 'sitesift-test/1.0',
  timeoutMs: 5000,
  maxBytes: 1_000_000,
  allowPrivate: false,
  rules: null,
  ...over,
});
const run = (url: string, over: Partial<FetchExtractTask> = {}) => fetchAndExtract(task(url, over), publicDns);
const HTML = { 'content-type': 'text/html; charset=utf-8' };

t.before(() => nock.disableNetConnect());
t.afterEach(() => nock.cleanAll());
t.teardown(() => nock.enableNetConnect());

t.test('plain page: title, headings, content minus chrome, meta, lang, image, UA header', async (t) => {
  nock('http://site.example', { reqheaders: { 'user-agent': 'sitesift-test/1.0' } })
    .get('/a')
    .reply(200, `<!doctype html><html lang="en-GB"><head><title>Anchors </title><meta name="description" content="All about anchors">
      <meta property="og:image" content="/img/anchor.png"></head><body><header>Site header</header><nav>Menu</nav>
      <main><h1>Anchor types</h1><p>Danforth anchors hold well in sand.</p><h2>Plough</h2><p>Plough anchors set quickly.</p>
      <script>var x = 1;</script></main><footer>Footer text</footer></body></html>`, HTML);
  const r = await run('http://site.example/a');
  t.equal(r.kind, 'page');
  if (r.kind !== 'page') return;
  t.equal(r.status, 200);
  t.equal(r.title, 'Anchors');
  t.same(r.headings, ['Anchor types', 'Plough']);
  t.match(r.content, /Danforth anchors hold well in sand\.\nPlough/);
  t.notMatch(r.content, /Site header|Menu|Footer text|var x/);
  t.equal(r.description, 'All about anchors');
  t.equal(r.language, 'en');
  t.equal(r.imageUrl, 'http://site.example/img/anchor.png');
  t.equal(r.documentType, 'HTML');
});

t.test('redirect chain: each hop recorded, final URL tracked', async (t) => {
  nock('http://site.example').get('/r1').reply(301, '', { location: '/r2' }).get('/r2').reply(302, '', { location: 'http://other.example/final' });
  nock('http://other.example').get('/final').reply(200, '<title>Final</title><p>Arrived safely.</p>', HTML);
  const r = await run('http://site.example/r1');
  t.equal(r.kind, 'page');
  t.equal(r.url, 'http://other.example/final');
  t.same(r.hops.map((h) => [h.url, h.status]), [['http://site.example/r1', 301], ['http://site.example/r2', 302]]);
});

t.test('redirect loop and more than 5 redirects → 810', async (t) => {
  nock('http://site.example').get('/loop1').reply(302, '', { location: '/loop2' }).get('/loop2').reply(302, '', { location: '/loop1' });
  const loop = await run('http://site.example/loop1');
  t.equal(loop.kind, 'failure');
  t.equal(loop.status, 810);
  t.match(loop.kind === 'failure' && loop.message, /loop/i);
  const s = nock('http://site.example');
  for (let i = 0; i < 6; i++) s.get(`/hop${i}`).reply(301, '', { location: `/hop${i + 1}` });
  const long = await run('http://site.example/hop0');
  t.equal(long.status, 810);
  t.match(long.kind === 'failure' && long.message, /More than 5 redirects/);
  t.equal(long.hops.length, 6);
});

t.test('private targets are refused with 807, directly, by name, and after a redirect', async (t) => {
  const direct = await run('http://127.0.0.1:9/x');
  t.equal(direct.status, 807);
  const sneaky = await run('http://sneaky.example/x');
  t.equal(sneaky.status, 807, 'public-looking name resolving to 127.0.0.1');
  t.match(sneaky.kind === 'failure' && sneaky.message, /127\.0\.0\.1/);
  nock('http://site.example').get('/to-private').reply(302, '', { location: 'http://169.254.169.254/latest/meta-data' });
  const redirected = await run('http://site.example/to-private');
  t.equal(redirected.status, 807, 'refused after a redirect');
  t.equal(redirected.hops.length, 1);
  nock('http://sneaky.example').get('/x').reply(200, '<title>Local</title><p>allowed when configured</p>', HTML);
  const allowed = await run('http://sneaky.example/x', { allowPrivate: true });
  t.equal(allowed.status, 200, 'SITESIFT_CRAWLER_ALLOW_PRIVATE lifts the refusal');
});

t.test('size cap → 808, also for a declared length and a gzip bomb', async (t) => {
  nock('http://site.example').get('/big').reply(200, 'x'.repeat(5000), { 'content-type': 'text/plain' });
  t.equal((await run('http://site.example/big', { maxBytes: 1000 })).status, 808);
  nock('http://site.example').get('/bomb').reply(200, zlib.gzipSync(Buffer.alloc(200_000, 'a')), { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
  t.equal((await run('http://site.example/bomb', { maxBytes: 100_000 })).status, 808, 'decoded bytes count');
});

t.test('timeout → 810 (retryable)', async (t) => {
  nock('http://site.example').get('/slow').delay(2000).reply(200, 'late', { 'content-type': 'text/plain' });
  const r = await run('http://site.example/slow', { timeoutMs: 50 });
  t.equal(r.status, 810);
  t.equal(r.kind === 'failure' && r.retryable, true);
  t.match(r.kind === 'failure' && r.message, /timed out/);
});

t.test('HTTP errors: 404 answered, 503 retryable', async (t) => {
  nock('http://site.example').get('/gone').reply(404, 'nope').get('/busy').reply(503, 'later');
  const gone = await run('http://site.example/gone');
  t.equal(gone.status, 404);
  t.equal(gone.kind === 'failure' && gone.retryable, false);
  const busy = await run('http://site.example/busy');
  t.equal(busy.status, 503);
  t.equal(busy.kind === 'failure' && busy.retryable, true);
});

t.test('gzip, deflate and br bodies are decoded', async (t) => {
  const page = '<title>Compressed</title><p>Squeezed text survives.</p>';
  nock('http://site.example')
    .get('/gz').reply(200, zlib.gzipSync(page), { ...HTML, 'content-encoding': 'gzip' })
    .get('/df').reply(200, zlib.deflateSync(page), { ...HTML, 'content-encoding': 'deflate' })
    .get('/br').reply(200, zlib.brotliCompressSync(page), { ...HTML, 'content-encoding': 'br' });
  for (const p of ['gz', 'df', 'br']) {
    const r = await run(`http://site.example/${p}`);
    t.equal(r.kind === 'page' && r.content, 'Squeezed text survives.', p);
  }
});

t.test('charset from header, meta and BOM', async (t) => {
  const latin1 = Buffer.from('<title>Caf\xe9</title><p>cr\xe8me br\xfbl\xe9e</p>', 'latin1');
  const meta = Buffer.concat([Buffer.from('<meta charset="windows-1252"><title>x</title><p>'), Buffer.from([0x93, 0x71, 0x94, 0x20, 0x80]), Buffer.from('</p>')]);
  const sjis = Buffer.from([0x3c, 0x70, 0x3e, 0x93, 0xfa, 0x96, 0x7b, 0x3c, 0x2f, 0x70, 0x3e]); // <p>日本</p>
  nock('http://site.example')
    .get('/latin1').reply(200, latin1, { 'content-type': 'text/html; charset=ISO-8859-1' })
    .get('/meta').reply(200, meta, { 'content-type': 'text/html' })
    .get('/bom').reply(200, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<title>Bom</title><p>naïve</p>')]), { 'content-type': 'text/html; charset=iso-8859-1' })
    .get('/sjis').reply(200, sjis, { 'content-type': 'text/html; charset=Shift_JIS' });
  const a = await run('http://site.example/latin1');
  t.equal(a.kind === 'page' && a.title, 'Café');
  t.equal(a.kind === 'page' && a.content, 'crème brûlée');
  const b = await run('http://site.example/meta');
  t.equal(b.kind === 'page' && b.content, '\u201cq\u201d \u20ac');
  const c = await run('http://site.example/bom');
  t.equal(c.kind === 'page' && c.content, 'naïve', 'BOM beats the header');
  const d = await run('http://site.example/sjis');
  t.equal(d.kind === 'page' && d.content, '日本');
});

t.test('noindex / nofollow in meta and in X-Robots-Tag', async (t) => {
  nock('http://site.example')
    .get('/meta-noindex').reply(200, '<meta name="robots" content="noindex, follow"><title>x</title><p>text</p><a href="/next">n</a>', HTML)
    .get('/hdr').reply(200, '<title>x</title><p>text</p><a href="/next">n</a>', { ...HTML, 'x-robots-tag': 'noindex, nofollow' })
    .get('/other-bot').reply(200, '<title>x</title><p>text</p>', { ...HTML, 'x-robots-tag': 'googlebot: noindex' })
    .get('/pdf').reply(200, readFileSync(FIX + 'doc.pdf'), { 'content-type': 'application/pdf', 'x-robots-tag': 'noindex' });
  const m = await run('http://site.example/meta-noindex');
  t.equal(m.kind === 'page' && m.noindex, true);
  t.same(m.kind === 'page' && m.links, ['http://site.example/next'], 'links still followed');
  const h = await run('http://site.example/hdr');
  t.equal(h.kind === 'page' && h.noindex && h.nofollow, true);
  t.same(h.kind === 'page' && h.links, [], 'nofollow: no links');
  const o = await run('http://site.example/other-bot');
  t.equal(o.kind === 'page' && o.noindex, false, 'directives for another bot are ignored');
  const p = await run('http://site.example/pdf');
  t.equal(p.kind === 'page' && p.noindex, true, 'X-Robots-Tag on a document');
});

t.test('links: rel=nofollow skipped, <base> respected, canonical found', async (t) => {
  nock('http://site.example').get('/dir/page').reply(
    200,
    `<head><base href="http://site.example/docs/"><link rel="canonical" href="/dir/page?ref=canon"></head>
     <body><p>text</p><a href="a.html">a</a><a rel="nofollow" href="b.html">b</a><a href="a.html#x">dup</a>
     <a href="mailto:x@y.z">mail</a><a href="http://elsewhere.example/">e</a></body>`,
    HTML,
  );
  const r = await run('http://site.example/dir/page');
  t.same(r.kind === 'page' && r.links, ['http://site.example/docs/a.html', 'http://elsewhere.example/']);
  t.equal(r.kind === 'page' && r.canonical, 'http://site.example/dir/page?ref=canon');
});

t.test('documents: every type from real fixture files', async (t) => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['doc.pdf', 'application/pdf', 'PDF', /pilot boards the vessel/],
    ['doc.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'DOC', /pilot boards the vessel/],
    ['doc.doc', 'application/msword', 'DOC', /pilot boards the vessel/],
    ['doc.odt', 'application/vnd.oasis.opendocument.text', 'ODT', /pilot boards the vessel/],
    ['sheet.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'XLS', /Lighthouse lamp/],
    ['sheet.xls', 'application/vnd.ms-excel', 'XLS', /Fog horn/],
    ['sheet.ods', 'application/vnd.oasis.opendocument.spreadsheet', 'ODS', /Lighthouse lamp/],
    ['slides.pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation', 'PPT', /lantern gaskets/],
    ['slides.ppt', 'application/vnd.ms-powerpoint', 'PPT', /lantern gaskets/],
    ['slides.odp', 'application/vnd.oasis.opendocument.presentation', 'ODP', /lantern gaskets/],
    ['notes.txt', 'text/plain; charset=utf-8', 'TXT', /High water at 06:12/],
  ];
  for (const [file, type, docType, re] of cases) {
    nock('http://files.example').get(`/${file}`).reply(200, readFileSync(FIX + file), { 'content-type': type });
    const r = await run(`http://files.example/${file}`);
    t.equal(r.status, 200, `${file} status`);
    t.equal(r.kind === 'page' && r.documentType, docType, `${file} type`);
    t.match(r.kind === 'page' && r.content, re, `${file} text`);
    t.ok(r.kind === 'page' && r.title, `${file} has a title`);
  }
  nock('http://files.example').get('/doc.pdf').query(true).reply(200, readFileSync(FIX + 'doc.pdf'), { 'content-type': 'application/octet-stream' });
  const sniffed = await run('http://files.example/doc.pdf?download=1');
  t.equal(sniffed.kind === 'page' && sniffed.documentType, 'PDF', 'generic type: extension decides');
  t.equal((sniffed as { title: string }).title, 'Harbour Pilot Handbook', 'PDF metadata title');
});

t.test('unsupported type 806, corrupt document 806, empty text 809', async (t) => {
  nock('http://files.example')
    .get('/pic.png').reply(200, Buffer.from([0x89, 0x50, 0x4e, 0x47]), { 'content-type': 'image/png' })
    .get('/broken.pdf').reply(200, Buffer.from('%PDF-1.4 garbage'), { 'content-type': 'application/pdf' })
    .get('/empty').reply(200, '<html><head><title>Empty</title></head><body><nav>only nav</nav></body></html>', HTML);
  t.equal((await run('http://files.example/pic.png')).status, 806);
  t.equal((await run('http://files.example/broken.pdf')).status, 806);
  t.equal((await run('http://files.example/empty')).status, 809);
});

t.test('YouTube watch pages become YOUTUBE_VIDEO from page metadata', async (t) => {
  nock('https://www.youtube.com')
    .get('/watch')
    .query({ v: 'abc123' })
    .reply(
      200,
      `<html><head><title>Knots for sailors - YouTube</title><meta property="og:title" content="Knots for sailors">
       <meta property="og:description" content="Six knots every sailor should know."><meta name="keywords" content="knots, sailing">
       <meta property="og:image" content="https://i.ytimg.com/vi/abc123/hq.jpg"></head><body><script>var ytInitialData = {}</script></body></html>`,
      HTML,
    );
  const r = await run('https://www.youtube.com/watch?v=abc123');
  t.equal(r.kind === 'page' && r.documentType, 'YOUTUBE_VIDEO');
  t.equal(r.kind === 'page' && r.title, 'Knots for sailors');
  t.match(r.kind === 'page' && r.content, /Six knots/);
  t.same(r.kind === 'page' && r.keywords, ['knots', 'sailing']);
  t.equal(r.kind === 'page' && r.imageUrl, 'https://i.ytimg.com/vi/abc123/hq.jpg');
});
