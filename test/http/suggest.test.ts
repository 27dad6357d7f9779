/**
 * `GET /sites/suggest` answers from a cache keyed by index generation and settings: these
 * tests prove that writes (index, replace, delete) and settings changes are visible at once,
 * and that `querySuggestions` (from the query log) is never served stale.
 */
import t from 'tap';
import { startTestServer } from '../helpers/server.js';

const page = (slug: string, title: string, content = 'Some text.', extra: Record<string, unknown> = {}) => ({
  url: `https://site.test/${slug}`, title, content, contentGroup: '', imageUrl: '', appendPageContent: false, ...extra,
});

t.test('suggest sees every write and settings change at once (no stale cached answer)', async (t) => {
  const s = await startTestServer({ t });
  const index = async (pages: unknown[]) => {
    const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
    t.equal(r.status, 200, 'indexed');
  };
  const suggest = async (q: string) => {
    const r = await fetch(`${s.url}/sites/suggest?site=default&maxQuerySuggestions=3&query=${encodeURIComponent(q)}`);
    t.equal(r.status, 200);
    t.match(r.headers.get('content-type'), /^application\/json/, 'sent as JSON');
    t.equal(r.headers.get('access-control-allow-origin'), '*', 'public route: CORS');
    return r.json() as Promise<{ suggests: Record<string, Array<{ name: string; link: string }>>; totalResults: number; totalResultsPerContentGroup: Record<string, number>; querySuggestions: Array<{ query: string }> }>;
  };
  const names = (b: Awaited<ReturnType<typeof suggest>>) => Object.values(b.suggests).flat().map((r) => r.name);

  await index([page('install', 'Installing the widget'), page('config', 'Widget configuration', 'Configure it.', { contentGroup: 'Docs' })]);
  let b = await suggest('wid');
  t.equal(b.totalResults, 2);
  t.same(await suggest('wid'), b, 'the same answer twice (the second from the cache)');

  // A new page.
  await index([page('p7', 'Widgetron 3000', 'A widget.', { contentGroup: 'Blog' })]);
  b = await suggest('wid');
  t.equal(b.totalResults, 3, 'the page indexed after the cached answer counts');
  t.same(b.totalResultsPerContentGroup, { _: 1, Docs: 1, Blog: 1 });
  t.ok(names(b).includes('Widgetron 3000'));

  // A replaced page (same URL, new title).
  await index([page('p7', 'Gadgetron 3000', 'A gadget.', { contentGroup: 'Blog' })]);
  b = await suggest('wid');
  t.equal(b.totalResults, 2, 'the replaced page no longer matches');
  t.notOk(names(b).includes('Widgetron 3000'));
  t.same((await suggest('gadg')).totalResults, 1);

  // A deleted page.
  const del = await fetch(`${s.url}/index/documents?token=${s.token}&refresh=true&url=${encodeURIComponent('https://site.test/install')}`, { method: 'DELETE' });
  t.equal(del.status, 200);
  b = await suggest('wid');
  t.equal(b.totalResults, 1, 'the deleted page is gone');
  t.same(names(b), ['Widget configuration']);

  // A settings change (suggest typo tolerance, then a pin).
  t.equal((await suggest('widgte')).totalResults, 1, 'typo match with the default tolerance');
  const patch = async (body: unknown) => {
    const r = await fetch(`${s.url}/admin/projects/default/settings`, { method: 'PATCH', headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.equal(r.status, 200, 'settings stored');
  };
  await patch({ suggest: { minSearches: 2, typoTolerance: 'off' } });
  t.equal((await suggest('widgte')).totalResults, 0, 'typo tolerance off applies at once');
  await patch({ search: { resultMappings: [{ trigger: { type: 'equals', value: 'wid' }, action: { type: 'pin', urls: ['https://site.test/p7'] } }] } });
  b = await suggest('wid');
  t.equal(Object.values(b.suggests).flat()[0]!.link, 'https://site.test/p7', 'the new pin applies at once');
});

t.test('querySuggestions are not cached with the page results', async (t) => {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([page('a', 'Widget guide')]) });
  t.equal(r.status, 200);
  const suggest = async () => (await fetch(`${s.url}/sites/suggest?site=default&query=wid`)).json() as Promise<{ totalResults: number; querySuggestions: Array<{ query: string }> }>;
  t.same((await suggest()).querySuggestions, []);
  for (let i = 0; i < 2; i++) t.equal((await fetch(`${s.url}/sites?site=default&query=widget%20guide`)).status, 200);
  s.services.analytics.flush();
  const b = await suggest();
  t.equal(b.totalResults, 1);
  t.same(b.querySuggestions, [{ query: 'widget guide' }], 'a query logged after the cached page answer is suggested at once');
});

t.test('suggest misses stay out of the search answer cache (the suggest service caches its own pages)', async (t) => {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([page('a', 'Widget guide'), page('b', 'Widgetron')]) });
  t.equal(r.status, 200);
  const searchCache = s.services.search.cache;
  const before = searchCache.stats().entries;
  for (const q of ['w', 'wi', 'wid', 'widg']) t.equal((await fetch(`${s.url}/sites/suggest?site=default&query=${q}`)).status, 200);
  t.equal(searchCache.stats().entries, before, 'no suggest answer in the search cache');
  t.equal(s.services.suggest.cache.stats().size, 4, 'each in the suggest cache');
  t.equal((await fetch(`${s.url}/sites/suggest?site=default&query=wid`)).status, 200);
  t.equal(s.services.suggest.cache.stats().hits, 1, 'a repeat is a hit');
  t.equal((await fetch(`${s.url}/sites?site=default&query=widget`)).status, 200);
  t.equal(searchCache.stats().entries, before + 1, 'a search is cached');
});

t.test('a cached suggest answer: CORS on the GET without preflight headers, and gone with its project', async (t) => {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([page('a', 'Widget guide')]) });
  t.equal(r.status, 200);
  const target = `${s.url}/sites/suggest?site=default&query=wid`;
  t.equal((await fetch(target)).status, 200);
  const again = await fetch(target, { headers: { 'Access-Control-Request-Headers': 'X-Custom' } });
  t.equal(again.status, 200);
  t.equal(s.services.suggest.cache.stats().hits, 1, 'from the cache');
  t.equal(again.headers.get('access-control-allow-origin'), '*');
  t.equal(again.headers.get('access-control-allow-headers'), null, 'a GET answer echoes no preflight headers');
  const del = await fetch(`${s.url}/admin/projects/default`, { method: 'DELETE', headers: { authorization: `Bearer ${s.masterKey}` } });
  t.equal(del.status, 200);
  const gone = await fetch(target);
  t.equal(gone.status, 404, 'a deleted project is not answered from the cache');
  t.match(await gone.json(), { status: 'failure', code: 'unknown_site' });
});
