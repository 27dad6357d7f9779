/** Pure helpers of the HTML extractor: section numbers, X-Robots-Tag, Link header, language, data point types. */
import t from 'tap';
import { canonicalFromLinkHeader, coerceDataPoint, extractHtml, languageCode, linesOf, parseXRobotsTag, stripSectionNumber } from '../../src/crawl/extract/html.js';

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

t.test('the streaming extraction (no selectors) equals the tree extraction (selectors)', async (t) => {
  // A result-group selector that never matches forces the tree path without changing anything.
  const treeRules = { contentExtraction: [], dataPoints: [], resultGroups: [{ name: 'never', selector: '.never-matches' }], filters: [] };
  const pages: Array<[string, string]> = [
    ['no body', '<title>T</title><h1>Head</h1><p>one</p><div>two<br>three</div>'],
    ['main wins over body', '<html><body><nav>menu</nav><p>outside</p><main><h2>In</h2><p>inside <b>bold</b></p></main></body></html>'],
    ['main after article', '<body><article><p>art</p></article><main><p>main text</p></main></body>'],
    ['article', '<body><header><h1>Site</h1></header><article><h1>Story</h1><p>text</p><footer>f</footer></article></body>'],
    ['role=main', '<body><div role="main"><h3>Role</h3><p>r</p></div><p>rest</p></body>'],
    ['nested main', '<body><main><p>a</p><main><p>b</p></main></main></body>'],
    ['excluded inside heading', '<body><h2>Visible <script>x()</script><span>part</span><nav>hidden</nav></h2></body>'],
    ['h1 with script is the fallback title', '<body><h1>Tit<script>le</script></h1><p>x</p></body>'],
    ['svg title is not the title', '<body><svg><title>icon</title><a href="/in-svg">s</a></svg><p>text</p></body>'],
    ['aside navigation', '<body><aside role="navigation"><a href="/n">n</a>nav</aside><aside>side note</aside></body>'],
    ['unclosed and void', '<body><p>one<p>two<li>three<li>four<hr>five<img src=x>six</body>'],
    ['nested headings', '<body><h2>outer <h3>inner</h3> tail</h2><p>x</p></body>'],
    ['entities and pre', '<body><p>a &amp; b &lt;c&gt; &nbsp; d</p><pre>line1\n  line2</pre></body>'],
    ['links and base', '<head><base href="/docs/"><link rel="canonical" href="c.html"></head><body><a href="a.html">a</a><a rel="nofollow" href="b.html">b</a><area href="../up.html"></body>'],
    ['metas', '<head><meta name="robots" content="nofollow"><meta property="og:image" content="/i.png"><meta name="description" content=" d "><html lang="de"></head><body>x</body>'],
    ['text after body', '<html><body><p>in</p></body></html><p>after</p>'],
  ];
  for (const [name, html] of pages) {
    const fast = extractHtml(html, 'http://x.example/p/page.html', null);
    const tree = extractHtml(html, 'http://x.example/p/page.html', treeRules);
    t.same(fast, tree, name);
  }
});
