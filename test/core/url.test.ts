/**
 * The shared page URL identity (src/core/url.ts): one table of spellings → stored form. The JSON
 * documents route (src/ingest/validate.ts) and the crawler (src/fetch/url.ts) both use it, which
 * the last tests check directly.
 */
import t from 'tap';
import { normalizeUrl, normalizeUrlObject } from '../../src/core/url.js';
import { canonicalPageUrl } from '../../src/ingest/index.js';
import { resolveLink } from '../../src/fetch/index.js';

const TABLE: Array<[string, string | null, string]> = [
  ['HTTP://Example.COM/a', 'http://example.com/a', 'scheme and host lower-cased'],
  ['http://example.com:80/a', 'http://example.com/a', 'default http port dropped'],
  ['https://example.com:443/a', 'https://example.com/a', 'default https port dropped'],
  ['https://example.com:8443/a', 'https://example.com:8443/a', 'other ports kept'],
  ['https://example.com', 'https://example.com/', 'empty path → /'],
  ['http://example.com/a/./b/../c', 'http://example.com/a/c', 'dot segments resolved'],
  ['http://example.com/a#intro', 'http://example.com/a', 'fragment dropped'],
  ['http://example.com/a?x=1#intro', 'http://example.com/a?x=1', 'fragment dropped after a query'],
  ['http://example.com/a#', 'http://example.com/a', 'empty fragment dropped'],
  ['http://example.com/a?', 'http://example.com/a', 'bare ? dropped'],
  ['http://example.com/a?#x', 'http://example.com/a', 'bare ? and fragment dropped'],
  ['http://example.com/%7euser/%41%2f%2F', 'http://example.com/~user/A%2F%2F', 'unreserved escapes decoded, others upper-cased'],
  ['http://example.com/p?q=%7e%3d%3D', 'http://example.com/p?q=~%3D%3D', 'the same in the query'],
  ['http://example.com/p?b=2&a=1&a=0', 'http://example.com/p?b=2&a=1&a=0', 'query order kept'],
  ['http://example.com/docs/', 'http://example.com/docs/', 'trailing slash kept'],
  ['http://example.com/docs', 'http://example.com/docs', 'no slash added'],
  ['http://example.com/Docs/A.html', 'http://example.com/Docs/A.html', 'path case kept'],
  ['http://example.com/ä b', 'http://example.com/%C3%A4%20b', 'non-ASCII and spaces escaped'],
  ['http://BÜCHER.example/', 'http://xn--bcher-kva.example/', 'IDNA host'],
  ['  http://example.com/a  ', 'http://example.com/a', 'surrounding space ignored'],
  ['http://user:pw@example.com/a', 'http://example.com/a', 'credentials dropped'],
  ['mailto:a@example.com', null, 'not http(s)'],
  ['javascript:void(0)', null, 'not http(s)'],
  ['/relative/path', null, 'relative'],
  ['not a url', null, 'garbage'],
];

t.test('normalizeUrl table', async (t) => {
  for (const [input, want, why] of TABLE) t.equal(normalizeUrl(input), want, `${why}: ${input}`);
});

t.test('normalizeUrl is idempotent', async (t) => {
  for (const [input, want] of TABLE) if (want !== null) t.equal(normalizeUrl(want), want, input);
});

t.test('sortQuery is an opt-in (stable for equal names)', async (t) => {
  t.equal(normalizeUrl('http://example.com/p?b=2&a=1&a=0', { sortQuery: true }), 'http://example.com/p?a=1&a=0&b=2');
});

t.test('normalizeUrlObject: a parsed URL, null for other schemes', async (t) => {
  t.equal(normalizeUrlObject(new URL('HTTP://Example.com:80/%7e#x')), 'http://example.com/~');
  t.equal(normalizeUrlObject(new URL('ftp://example.com/')), null);
});

t.test('JSON documents and the crawler store the same form', async (t) => {
  for (const [input, want] of TABLE) {
    if (want === null || input.includes('@')) continue;
    const json = canonicalPageUrl(input.trim());
    t.same(json, { url: want }, `JSON: ${input}`);
    t.equal(resolveLink(input, 'http://base.example/'), want, `crawled link: ${input}`);
  }
  t.match(canonicalPageUrl('http://user:pw@example.com/a'), { problem: /user name or password/ }, 'JSON input with credentials is still refused');
});
