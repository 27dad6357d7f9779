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
