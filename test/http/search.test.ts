import t from 'tap';
const tap = t;
import { startTestServer, type TestServer } from '../helpers/server.js';

const page = (i: number, extra: Record<string, unknown> = {}) => ({
  url: `https://site.test/p/${String(i).padStart(3, '0')}`,
  title: `Guide ${i}`,
  content: `Installing the widget, step ${i}. The widget needs configuration.`,
  contentGroup: i % 3 === 0 ? 'Blog' : i % 3 === 1 ? 'Docs' : '',
  imageUrl: '',
  appendPageContent: false,
  ...extra,
});

async function setup(t: Parameters<Parameters<typeof tap.test>[0]>[0] & { teardown(fn: () => unknown): void }): Promise<TestServer & { get: (q: string) => Promise<{ status: number; body: any; headers: Headers }> }> {
  const s = await startTestServer({ t });
  const settings = {
    filters: [{ id: 'fid#1', name: 'Color', type: 'multiple' }],
    search: {
      resultMappings: [
        { trigger: { type: 'equals', value: 'pinned widget' }, action: { type: 'pin', urls: ['https://site.test/p/007'] } },
        { trigger: { type: 'contains', value: 'hidden' }, action: { type: 'hide', urls: ['https://site.test/p/001'] } },
        { trigger: { type: 'equals', value: 'custom widget' }, action: { type: 'custom', html: '<b>Promo</b>', position: 1 } },
        { trigger: { type: 'regex', value: '^go\\s+home$' }, action: { type: 'redirect', url: 'https://site.test/' } },
      ],
    },
  };
  let r = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH', headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' }, body: JSON.stringify(settings),
  });
  t.equal(r.status, 200, 'settings stored');
  const pages = Array.from({ length: 30 }, (_, i) => page(i, i === 5 ? { title: '<script>alert(1)</script> widget', filters: [{ key: 'fid#1', value: ['red'] }] } : {}));
  r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
  t.equal(r.status, 200, 'indexed');
  const get = async (q: string) => {
    const res = await fetch(`${s.url}/sites?site=default&log=false&${q}`);
    return { status: res.status, body: await res.json(), headers: res.headers };
  };
  return Object.assign(s, { get });
}

t.test('response shape, paging and grouping', async (t) => {
  const s = await setup(t);
  const r = await s.get('query=widget');
  t.equal(r.status, 200);
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  for (const k of ['suggests', 'query', 'totalResults', 'totalResultsPerContentGroup', 'sortingOptions', 'sorting', 'filterOptions', 'activeFilterOptions']) t.ok(k in r.body, `has ${k}`);
  t.equal(r.body.totalResults, 30);
  t.same(r.body.totalResultsPerContentGroup, { Blog: 10, Docs: 10, _: 10 });
  const first = Object.values(r.body.suggests).flat() as any[];
  t.equal(first.length, 10);
  for (const res of first) {
    t.same(Object.keys(res).sort(), ['dataPoints', 'image', 'link', 'name', 'type']);
    t.equal(res.image, '', 'image is a string, "" when none');
  }
  // Pages concatenate to the full ranked list without gaps or repeats.
  const all = await s.get('query=widget&limit=30&groupResults=false');
  const full = all.body.suggests._.map((x: any) => x.link);
  t.equal(full.length, 30);
  const paged: string[] = [];
  for (let off = 0; off < 30; off += 7) {
    const p = await s.get(`query=widget&offset=${off}&limit=7&groupResults=false`);
    paged.push(...p.body.suggests._.map((x: any) => x.link));
  }
  t.same(paged, full);
  // Grouped pages keep the ranked order inside each group.
  const g = await s.get('query=widget&limit=30');
  for (const [name, list] of Object.entries(g.body.suggests) as Array<[string, any[]]>) {
    const links = list.map((x) => x.link);
    t.same(links, full.filter((l: string) => links.includes(l)), `group ${name} in rank order`);
  }
  const per = await s.get('query=widget&limit=2&limitPerGroup=true');
  t.same(Object.fromEntries(Object.entries(per.body.suggests).map(([k, v]) => [k, (v as any[]).length])), { Blog: 2, Docs: 2, _: 2 });
  const inc = await s.get('query=widget&includeContentGroups=["Blog"]');
  t.same(Object.keys(inc.body.suggests), ['Blog']);
  t.equal(inc.body.totalResults, 10);
  const exc = await s.get('query=widget&excludeContentGroups=["Blog","_"]');
  t.same(Object.keys(exc.body.totalResultsPerContentGroup), ['Docs']);
});

t.test('highlighting escapes everything but <mark>', async (t) => {
  const s = await setup(t);
  const r = await s.get('query=widget&includeContent=true&highlightQueryTerms=true&filters=[{"fid%231":["red"]}]');
  const res = (Object.values(r.body.suggests).flat() as any[])[0];
  t.equal(res.name, '&lt;script&gt;alert(1)&lt;/script&gt; <mark>widget</mark>');
  t.match(res.content, /<mark>widget<\/mark>/);
  t.notMatch(res.content, /<(?!\/?mark>)/, 'no other tags');
  const plain = await s.get('query=widget&filters=[{"fid%231":["red"]}]');
  t.equal((Object.values(plain.body.suggests).flat() as any[])[0].name, '<script>alert(1)</script> widget', 'plain text without highlighting');
  t.same(r.body.activeFilterOptions, [{ 'fid#1': ['red'] }]);
});

t.test('result mappings', async (t) => {
  const s = await setup(t);
  const pin = await s.get('query=pinned widget&groupResults=false');
  t.equal(pin.body.suggests._[0].link, 'https://site.test/p/007');
  const hidden = await s.get('query=widget hidden&groupResults=false&limit=30');
  t.notOk(hidden.body.suggests._.some((x: any) => x.link === 'https://site.test/p/001'));
  const custom = await s.get('query=custom widget&groupResults=false');
  t.same(custom.body.suggests._[0], { name: '', image: '', link: '', type: 'custom', dataPoints: [], html: '<b>Promo</b>' });
  const redirect = await s.get('query=Go Home');
  t.equal(redirect.body.redirect, 'https://site.test/');
});

t.test('validation errors', async (t) => {
  const s = await setup(t);
  const cases: Array<[string, number, string, string]> = [
    ['', 400, 'invalid_parameter', 'query'],
    ['query=', 400, 'invalid_parameter', 'query'],
    ['query=a&limit=0', 400, 'invalid_parameter', 'limit'],
    ['query=a&limit=101', 400, 'invalid_parameter', 'limit'],
    ['query=a&limit=x', 400, 'invalid_parameter', 'limit'],
    ['query=a&offset=-1', 400, 'invalid_parameter', 'offset'],
    ['query=a&offset=9995&limit=10', 400, 'invalid_parameter', 'offset'],
    ['query=a&sortOrder=UP', 400, 'invalid_parameter', 'sortOrder'],
    ['query=a&sort=nope', 400, 'invalid_parameter', 'sort'],
    ['query=a&filters=[{"fid%239":["x"]}]', 400, 'invalid_parameter', 'filters'],
    ['query=a&filters=notjson', 400, 'invalid_parameter', 'filters'],
    ['query=a&includeContent=yes', 400, 'invalid_parameter', 'includeContent'],
    ['query=a&includeContentGroups={"a":1}', 400, 'invalid_parameter', 'includeContentGroups'],
    ['query=a&excludeContentGroups=[1]', 400, 'invalid_parameter', 'excludeContentGroups'],
  ];
  for (const [q, status, code, field] of cases) {
    const r = await s.get(q);
    t.equal(r.status, status, q);
    t.match(r.body, { status: 'failure', code, field }, q);
    t.ok(typeof r.body.message === 'string' && r.body.message.length > 10, `message for ${q}`);
  }
  const noSite = await fetch(`${s.url}/sites?query=a`);
  t.equal(noSite.status, 400);
  const unknown = await fetch(`${s.url}/sites?query=a&site=nope`);
  t.equal(unknown.status, 404);
  t.equal((await unknown.json()).code, 'unknown_site');
});

t.test('the language filter and facet: own language or the project default, in search and suggest', async (t) => {
  const s = await setup(t);
  const mono = await s.get('query=widget&filterOptions=true');
  t.same(mono.body.filterOptions.map((f: any) => f.key), ['fid#1'], 'one language: no language facet');
  const more = [
    { ...page(100), title: 'Widget Anleitung', content: 'Das widget installieren.', language: 'de' },
    { ...page(101), title: 'Guide du widget', content: 'Installer le widget.', language: 'French' },
  ];
  const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(more) });
  t.equal(r.status, 200);
  const links = (b: any) => (Object.values(b.suggests).flat() as any[]).map((x) => x.link).sort();
  const de = await s.get(`query=widget&filters=${encodeURIComponent('[{"language":["German"]}]')}`);
  t.equal(de.status, 200);
  t.same(links(de.body), ['https://site.test/p/100']);
  t.same(de.body.activeFilterOptions, [{ language: ['de'] }], 'echoed as codes');
  const en = await s.get(`query=widget&limit=50&filters=${encodeURIComponent('[{"language":["en"]}]')}`);
  t.equal(en.body.totalResults, 30, 'pages without a language are in the project default');
  const facets = await s.get(`query=widget&filterOptions=true&filters=${encodeURIComponent('[{"language":["fr"]}]')}`);
  t.same(links(facets.body), ['https://site.test/p/101']);
  const lang = facets.body.filterOptions.find((f: any) => f.key === 'language');
  t.same(lang, {
    key: 'language', name: 'Language', type: 'multiple',
    values: [{ name: 'English', value: 'en', count: 30 }, { name: 'German', value: 'de', count: 1 }, { name: 'French', value: 'fr', count: 1 }],
  }, 'its own selection does not narrow its counts');
  const pinned = await s.get(`query=pinned%20widget&filters=${encodeURIComponent('[{"language":["de"]}]')}`);
  t.notOk(links(pinned.body).includes('https://site.test/p/007'), 'a pinned page in another language is not pinned');
  const sug = await (await fetch(`${s.url}/sites/suggest?site=default&query=wid&filters=${encodeURIComponent('[{"language":["de"]}]')}`)).json();
  t.same(links(sug), ['https://site.test/p/100'], 'suggest filters by language');
  const bad = await s.get(`query=widget&filters=${encodeURIComponent('[{"language":["xx-nope"]}]')}`);
  t.equal(bad.status, 400);
  t.equal(bad.body.field, 'filters');
});

t.test('suggest', async (t) => {
  const s = await setup(t);
  const r = await fetch(`${s.url}/sites/suggest?site=default&query=wid`);
  const body = await r.json();
  t.equal(r.status, 200);
  for (const [, list] of Object.entries(body.suggests) as Array<[string, unknown[]]>) t.ok(list.length <= 2, 'at most 2 per group');
  t.same(Object.keys(body.suggests).sort(), ['Blog', 'Docs', '_']);
  t.same(body.querySuggestions, []);
  const flat = await (await fetch(`${s.url}/sites/suggest?site=default&query=wid&groupResults=false&limit=1`)).json();
  t.same(Object.keys(flat.suggests), ['_']);
  t.equal(flat.suggests._.length, 1);
  const bad = await fetch(`${s.url}/sites/suggest?site=default&query=wid&limit=3`);
  t.equal(bad.status, 400);
  const custom = await (await fetch(`${s.url}/sites/suggest?site=default&query=custom%20widget`)).json();
  const c = (Object.values(custom.suggests).flat() as any[]).find((x) => x.type === 'custom');
  t.equal(c.suggestionHtml, '<b>Promo</b>');
});
