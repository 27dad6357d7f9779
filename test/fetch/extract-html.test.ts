/** Pure helpers of the HTML extractor: section numbers, X-Robots-Tag, Link header, language, data point types. */
import t from 'tap';
import { canonicalFromLinkHeader, extractHtml, languageCode, parseXRobotsTag, stripSectionNumber } from '../../src/fetch/extract/html.js';
import { coerceDataPoint } from '../../src/fetch/extract/rules.js';
import { linesOf } from '../../src/fetch/extract/whitespace.js';

t.test('stripSectionNumber', async (t) => {
  const cases: Array<[string, string]> = [
    ['F.1. adminpack', 'adminpack'],
    ['Chapter 5. Data Definition', 'Data Definition'],
    ['Part III. Server Administration', 'Server Administration'],
    ['5.2.1. Foo', 'Foo'],
    ['U.S. policy', 'U.S. policy'],
    ['Version 15.1 notes', 'Version 15.1 notes'],
  ];
  for (const [a, b] of cases) t.equal(stripSectionNumber(a), b, a);
  const x = extractHtml('<title>T</title><main><h1>1. Intro</h1><h2>1.1. Setup</h2><h3>Setup</h3></main>', 'http://x/', null);
  t.same(x.headings, ['Intro', 'Setup'], 'numbered headings stripped and de-duplicated');
});

t.test('an h1 that repeats the title is not a heading; other h1s and title-like h2s are', async (t) => {
  const part = extractHtml('<title>Part VII. Internals</title><body><h1>Part VII. Internals</h1><h2>52.1. The Path of a Query</h2></body>', 'http://x/', null);
  t.equal(part.title, 'Part VII. Internals');
  t.same(part.headings, ['The Path of a Query'], 'the h1 is the title');
  const other = extractHtml('<title>Anchors | Boats</title><body><h1>Anchor types</h1><h2>Plough</h2></body>', 'http://x/', null);
  t.same(other.headings, ['Anchor types', 'Plough'], 'an h1 with other words is a heading');
  const section = extractHtml('<title>36.17. Internals</title><body><h2>36.17. Internals</h2><h3>Details</h3></body>', 'http://x/', null);
  t.same(section.headings, ['Internals', 'Details'], 'only an h1 counts as the title');
  const untitled = extractHtml('<body><h1>Only heading</h1><p>text</p></body>', 'http://x/', null);
  t.equal(untitled.title, 'Only heading', 'no <title>: the h1 is the title');
  t.same(untitled.headings, [], 'and therefore not a heading');
});

t.test('header and attribute parsers', async (t) => {
  t.same(parseXRobotsTag('noindex'), { noindex: true, nofollow: false });
  t.same(parseXRobotsTag('none'), { noindex: true, nofollow: true });
  t.same(parseXRobotsTag('sitesift: nofollow'), { noindex: false, nofollow: true });
  t.same(parseXRobotsTag('otherbot: noindex, nofollow'), { noindex: false, nofollow: false });
  t.equal(canonicalFromLinkHeader('<https://a.example/x>; rel="canonical"', 'https://a.example/y'), 'https://a.example/x');
  t.equal(canonicalFromLinkHeader('</next>; rel="next"', 'https://a.example/'), null);
  t.equal(languageCode('en-US'), 'en');
  t.equal(languageCode('klingon'), null);
  const base = '<html><head><title>T</title></head><body><p>x</p></body></html>';
  t.equal(extractHtml(base, 'https://x.example/', null, { 'content-language': 'fr-CA, en' }).language, 'fr', 'Content-Language when <html lang> is absent');
  t.equal(extractHtml(base.replace('<html>', '<html lang="de">'), 'https://x.example/', null, { 'content-language': 'fr' }).language, 'de', '<html lang> first');
});

t.test('data point types', async (t) => {
  t.equal(coerceDataPoint('$1,299.00', 'number'), '1299');
  t.equal(coerceDataPoint('1.299,50 €', 'number'), '1299.5');
  t.equal(coerceDataPoint('n/a', 'number'), null);
  t.equal(coerceDataPoint('2024-03-01', 'date'), '2024-03-01T00:00:00.000Z');
  t.equal(coerceDataPoint('someday', 'date'), null);
  t.equal(coerceDataPoint('Yes', 'boolean'), 'true');
  t.equal(coerceDataPoint('off', 'boolean'), 'false');
  t.equal(coerceDataPoint('  a   b ', 'text'), 'a b');
});

t.test('linesOf: new lines end lines, other white space collapses, empty lines go', async (t) => {
  t.equal(linesOf('  a \t b \n\n  c\u00a0 d\r\n \n e  '), 'a b\nc d\ne');
  t.equal(linesOf(' \n \t\n'), '');
  t.equal(linesOf('one'), 'one');
});

t.test('links resolve against each page (the per-thread link cache keys by base directory)', async (t) => {
  const page = '<title>t</title><body><a href="q.html">q</a><a href="?page=2">next</a><a href="/abs">abs</a></body>';
  t.same(extractHtml(page, 'http://x.example/a/p.html', null).links, ['http://x.example/a/q.html', 'http://x.example/a/p.html?page=2', 'http://x.example/abs']);
  t.same(extractHtml(page, 'http://x.example/b/p.html', null).links, ['http://x.example/b/q.html', 'http://x.example/b/p.html?page=2', 'http://x.example/abs']);
  t.same(extractHtml(page, 'http://x.example/a/r.html?x=1', null).links, ['http://x.example/a/q.html', 'http://x.example/a/r.html?page=2', 'http://x.example/abs']);
  t.same(extractHtml(page, 'http://y.example/a/p.html', null).links[0], 'http://y.example/a/q.html', 'another host');
  const based = '<head><base href="http://z.example/base/"></head><body><a href="q.html">q</a></body>';
  t.same(extractHtml(based, 'http://x.example/a/p.html', null).links, ['http://z.example/base/q.html'], '<base> is the base');
});

t.test('the content region: first main, article, role=main or body; chrome and excluded elements left out', async (t) => {
  const x = (html: string) => extractHtml(html, 'http://x.example/p/page.html', null);
  t.equal(x('<title>T</title><h1>Head</h1><p>one</p><div>two<br>three</div>').content, 'Head\none\ntwo\nthree', 'no body: the document without its title');
  t.equal(x('<html><body><nav>menu</nav><p>outside</p><main><h2>In</h2><p>inside <b>bold</b></p></main></body></html>').content, 'In\ninside bold', 'main wins over body');
  t.equal(x('<body><article><p>art</p></article><main><p>main text</p></main></body>').content, 'main text', 'main wins over an earlier article');
  const article = x('<body><header><h1>Site</h1></header><article><h1>Story</h1><p>text</p><footer>f</footer></article></body>');
  t.equal(article.content, 'Story\ntext', 'article without its footer');
  t.equal(article.title, 'Site', 'the first h1 of the page is the fallback title, even outside the region');
  t.same(article.headings, ['Story']);
  t.equal(x('<body><div role="main"><h3>Role</h3><p>r</p></div><p>rest</p></body>').content, 'Role\nr', 'role=main');
  const heading = x('<body><h2>Visible <script>x()</script><span>part</span><nav>hidden</nav></h2></body>');
  t.same([heading.content, heading.headings], ['Visible part', ['Visible part']], 'excluded elements inside a heading');
  const svg = x('<body><svg><title>icon</title><a href="/in-svg">s</a></svg><p>text</p></body>');
  t.same([svg.title, svg.content], ['', 'text'], 'an svg title is not the page title');
  const aside = x('<body><aside role="navigation"><a href="/n">n</a>nav</aside><aside>side note</aside></body>');
  t.same([aside.content, aside.links], ['side note', ['http://x.example/n']], 'navigation asides are not content, their links are followed');
});

t.test('head elements: base, canonical, nofollow anchors, robots and other metas', async (t) => {
  const x = extractHtml('<head><base href="/docs/"><link rel="canonical" href="c.html"></head><body><a href="a.html">a</a><a rel="nofollow" href="b.html">b</a><area href="../up.html"></body>', 'http://x.example/p/page.html', null);
  t.same(x.links, ['http://x.example/docs/a.html', 'http://x.example/up.html']);
  t.equal(x.canonical, 'http://x.example/docs/c.html');
  const m = extractHtml('<head><meta name="robots" content="nofollow"><meta property="og:image" content="/i.png"><meta name="description" content=" d "><html lang="de"></head><body><a href="/x">x</a></body>', 'http://x.example/p/page.html', null);
  t.same([m.nofollow, m.links, m.imageUrl, m.description, m.language], [true, [], 'http://x.example/i.png', 'd', 'de']);
});

t.test('Control Panel rules: title and image selectors, include and exclude, data points, filters, groups', async (t) => {
  const html =
    '<html><head><title>Page</title><meta name="brand" content="Acme"></head><body><header><span class="price">1.299,50 €</span></header>' +
    '<div class="product"><h2 class="name">Anchor</h2><img class="hero" src="/a.png"><p>Holds fast.</p><p class="ad">Buy more</p>' +
    '<span class="tag">steel, galvanised</span></div><main>ignored</main></body></html>';
  const rules = {
    contentExtraction: [{ title: 'h2.name', image: 'img.hero', contentInclude: ['.missing', '.product'], contentExclude: ['.ad', '.tag', '['] }],
    dataPoints: [
      { key: 'price', selector: '.price', type: 'number' as const, show: true, sortable: true, searchable: false },
      { key: 'brand', meta: 'brand', type: 'text' as const, show: false, sortable: false, searchable: false },
      { key: 'tags', selector: '.tag', type: 'text' as const, show: false, sortable: false, searchable: false },
      { key: 'broken', selector: '[', type: 'text' as const, show: false, sortable: false, searchable: false },
    ],
    resultGroups: [{ name: 'Shop', selector: 'div.product' }],
    filters: [
      { id: 'fid#1', name: 'Price', type: 'range' as const, dataPoint: 'price' },
      { id: 'fid#2', name: 'Tags', type: 'multiple' as const, dataPoint: 'tags' },
    ],
  };
  const x = extractHtml(html, 'http://shop.example/p/anchor.html', rules);
  t.equal(x.title, 'Anchor');
  t.equal(x.imageUrl, 'http://shop.example/a.png');
  t.equal(x.content, 'Anchor\nHolds fast.', 'the first matching include, minus the excludes (an invalid one ignored)');
  t.equal(x.contentGroup, 'Shop');
  t.same(x.dataPoints, [
    { key: 'price', value: '1299.5', show: true },
    { key: 'brand', value: 'Acme', show: false },
    { key: 'tags', value: 'steel, galvanised', show: false },
  ], 'read from the whole page; an invalid selector yields nothing');
  t.same(x.filters, [{ key: 'fid#1', value: 1299.5 }, { key: 'fid#2', value: ['steel', 'galvanised'] }]);
});

t.test('data points from JSON-LD, @graph members included; broken JSON-LD ignored', async (t) => {
  const html =
    '<script type="application/ld+json">{ broken</script>' +
    '<script type="application/ld+json">{"@graph":[{"@type":"Product","offers":{"price":"19.90"}}]}</script><p>x</p>';
  const rules = {
    contentExtraction: [],
    dataPoints: [{ key: 'price', jsonLd: 'offers.price', type: 'number' as const, show: true, sortable: true, searchable: false }],
    resultGroups: [{ name: 'Docs', urlPattern: '/docs/*' }],
    filters: [],
  };
  const x = extractHtml(html, 'http://shop.example/p/1', rules);
  t.same(x.dataPoints, [{ key: 'price', value: '19.9', show: true }]);
  t.equal(x.contentGroup, '', 'no group matched');
});
