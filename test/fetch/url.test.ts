import t from 'tap';
import { normalizeUrl, resolveLink, hostOf } from '../../src/fetch/url.js';

t.test('normalizeUrl', async (t) => {
  t.equal(normalizeUrl('HTTP://Example.COM:80/a/./b/../c#frag'), 'http://example.com/a/c');
  t.equal(normalizeUrl('https://example.com:443'), 'https://example.com/');
  t.equal(normalizeUrl('https://example.com:8443/x'), 'https://example.com:8443/x');
  t.equal(normalizeUrl('http://example.com/%7euser/%2fa%2F?q=%7e%3d'), 'http://example.com/~user/%2Fa%2F?q=~%3D');
  t.equal(normalizeUrl('http://example.com/a?'), 'http://example.com/a');
  t.equal(normalizeUrl('http://example.com/p?b=2&a=1&a=0'), 'http://example.com/p?b=2&a=1&a=0', 'query order kept by default');
  t.equal(normalizeUrl('http://example.com/p?b=2&a=1&a=0', { sortQuery: true }), 'http://example.com/p?a=1&a=0&b=2', 'sorted, stable for equal names');
  t.equal(normalizeUrl('http://user:pw@example.com/'), 'http://example.com/');
  t.equal(normalizeUrl('mailto:a@b.c'), null);
  t.equal(normalizeUrl('not a url'), null);
  const once = normalizeUrl('http://EXAMPLE.com/%7e/ä?x=%41')!;
  t.equal(normalizeUrl(once), once, 'idempotent');
});

t.test('resolveLink', async (t) => {
  t.equal(resolveLink('../b.html#x', 'http://h.example/docs/a/index.html'), 'http://h.example/docs/b.html');
  t.equal(resolveLink('#top', 'http://h.example/'), null);
  t.equal(resolveLink('javascript:void(0)', 'http://h.example/'), null);
  t.equal(hostOf('http://H.example:81/x'), 'h.example:81');
});
