/**
 * What clients written for the hosted original send and expect (docs/API.md, Conventions):
 * `image` is always a string; enumerated values and booleans in any case; list parameters as
 * repeated `name[]` keys (read) or other bracket keys (400, never ignored); unknown document
 * fields ignored with `warnings`; unknown query parameters ignored.
 */
import t from 'tap';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Body = Record<string, any>;

async function setup(t: Parameters<Parameters<typeof tap.test>[0]>[0]): Promise<TestServer & { get(path: string): Promise<{ status: number; body: Body }> }> {
  const s = await startTestServer({ t });
  const r = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      filters: [{ id: 'fid#1', name: 'Color', type: 'multiple' }],
      search: { resultMappings: [{ trigger: { type: 'equals', value: 'promo' }, action: { type: 'custom', html: '<b>x</b>', position: 1 } }] },
    }),
  });
  t.equal(r.status, 200);
  const pages = ['Blog', 'Docs', '', 'Blog', 'Docs', ''].map((g, i) => ({
    url: `https://site.test/${i}`,
    title: `Mike ${i}`,
    content: 'mike promo',
    contentGroup: g,
    imageUrl: i === 0 ? 'https://img.test/0.png' : '',
    dataPoints: [{ key: 'price', value: String(10 * i + 5) }],
    filters: [{ key: 'fid#1', value: [i % 2 ? 'red' : 'blue'] }],
  }));
  const w = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=TRUE`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
  t.equal(w.status, 200, 'refresh=TRUE read');
  const get = async (path: string) => {
    const res = await fetch(`${s.url}${path}`);
    return { status: res.status, body: (await res.json()) as Body };
  };
  return Object.assign(s, { get });
}
const tap = t;

const flat = (b: Body): Body[] => Object.values(b.suggests).flat() as Body[];

t.test('image is always a string', async (t) => {
  const s = await setup(t);
  for (const path of ['/sites?site=default&log=false&query=mike&limit=20', '/sites?site=default&log=false&query=promo', '/sites/suggest?site=default&query=mik&groupResults=false']) {
    const r = await s.get(path);
    t.equal(r.status, 200);
    for (const x of flat(r.body)) t.type(x.image, 'string', `${path}: ${x.link || x.type}`);
  }
  const r = await s.get('/sites?site=default&log=false&query=mike&limit=20&groupResults=false');
  t.same(Object.fromEntries(flat(r.body).map((x) => [x.link, x.image]))['https://site.test/0'], 'https://img.test/0.png');
  t.equal(flat(r.body).filter((x) => x.image === '').length, 5, '"" when none');
});

t.test('enumerated values and booleans in any case', async (t) => {
  const s = await setup(t);
  const order = async (q: string) => flat((await s.get(`/sites?site=default&log=false&query=mike&groupResults=false&sort=price&${q}`)).body).map((x) => x.link);
  const desc = await order('sortOrder=DESC');
  t.same(desc, ['https://site.test/5', 'https://site.test/4', 'https://site.test/3', 'https://site.test/2', 'https://site.test/1', 'https://site.test/0']);
  t.same(await order('sortOrder=desc'), desc, 'desc');
  t.same(await order('sortOrder=Desc'), desc, 'Desc');
  t.same(await order('sortOrder=asc'), [...desc].reverse(), 'asc');
  t.equal((await s.get('/sites?site=default&query=mike&sortOrder=down')).status, 400, 'other values are still a 400');

  const hl = await s.get('/sites?site=default&log=false&query=mike&highlightQueryTerms=TRUE&includeContent=True&groupResults=FALSE');
  t.equal(hl.status, 200);
  t.same(Object.keys(hl.body.suggests), ['_'], 'groupResults=FALSE');
  t.match(flat(hl.body)[0]!.name, /<mark>Mike<\/mark>/, 'highlightQueryTerms=TRUE');
  t.type(flat(hl.body)[0]!.content, 'string', 'includeContent=True');
  t.equal((await s.get('/sites?site=default&query=mike&includeContent=yes')).status, 400);
  const sug = await s.get('/sites/suggest?site=default&query=mik&groupResults=False');
  t.same(Object.keys(sug.body.suggests), ['_'], 'suggest: groupResults=False');

  const chart = await fetch(`${s.url}/sites/queries/timechart?token=${s.token}&interval=DAY`);
  t.equal(chart.status, 200, 'interval=DAY');
  t.equal(((await chart.json()) as Body).interval, 'day', 'answered as listed');
  const event = await fetch(`${s.url}/sites/queries/log`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ site: 'default', query: 'mike', action: 'SELECT', link: 'https://site.test/1', position: 1 }),
  });
  t.equal(event.status, 200, 'action=SELECT');
});

t.test('list parameters as repeated name[] keys', async (t) => {
  const s = await setup(t);
  const groups = async (q: string) => {
    const r = await s.get(`/sites?site=default&log=false&query=mike&${q}`);
    t.equal(r.status, 200, q);
    return Object.keys(r.body.totalResultsPerContentGroup).sort();
  };
  t.same(await groups('includeContentGroups[]=Blog&includeContentGroups[]=Docs'), ['Blog', 'Docs']);
  t.same(await groups('includeContentGroups%5B%5D=Blog'), ['Blog'], 'encoded brackets');
  t.same(await groups('includeContentGroups[0]=Docs&includeContentGroups[1]=_'), ['Docs', '_'], 'indexed keys');
  t.same(await groups('excludeContentGroups[]=Blog'), ['Docs', '_']);
  t.same(await groups('includeContentGroups[]='), ['Blog', 'Docs', '_'], 'an empty value names no group: every group');
  const sug = await s.get('/sites/suggest?site=default&query=mik&includeContentGroups[]=Docs');
  t.same(Object.keys(sug.body.suggests), ['Docs'], 'suggest reads them too');

  const refused: Array<[string, string]> = [
    ['includeContentGroups=["Blog"]&includeContentGroups[]=Docs', 'includeContentGroups'],
    ['includeContentGroups[x]=Blog', 'includeContentGroups'],
    ['excludeContentGroups[][]=Blog', 'excludeContentGroups'],
    ['filters[]=red', 'filters'],
    ['filters[0][fid%231][]=red', 'filters'],
  ];
  for (const [q, field] of refused) {
    for (const route of ['/sites', '/sites/suggest']) {
      const r = await s.get(`${route}?site=default&log=false&query=mike&${q}`);
      t.equal(r.status, 400, `${route} ${q}`);
      t.match(r.body, { status: 'failure', code: 'invalid_parameter', field }, `${route} ${q}`);
    }
  }
});

t.test('unknown query parameters are ignored', async (t) => {
  const s = await setup(t);
  const base = await s.get('/sites?site=default&log=false&query=mike');
  const extra = await s.get('/sites?site=default&log=false&query=mike&_=1700000000&callback=cb&lang=de&foo[bar]=1&ss360Query=x');
  t.equal(extra.status, 200);
  t.same(extra.body, base.body);
  const sug = await s.get('/sites/suggest?site=default&query=mik&_=1&tracking=off');
  t.equal(sug.status, 200);
  const push = await fetch(`${s.url}/sites/pageJson?token=${s.token}&refresh=true&source=cms&v=2`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://site.test/x', title: 'x', content: 'x' }),
  });
  t.equal(push.status, 200);
});

t.test('unknown document fields are ignored with warnings, not a rejected batch', async (t) => {
  const s = await setup(t);
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${s.url}/sites/${path}?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as Body };
  };
  const one = await post('pageJson', { url: 'https://site.test/new', title: 'November', content: 'november', author: 'Ada', dataPoints: [{ key: 'k', value: 'v', unit: 'cm' }] });
  t.equal(one.status, 200);
  t.equal(one.body.indexed, 1);
  t.same(one.body.warnings.map((w: Body) => [w.index, w.field]), [[0, 'author'], [0, 'dataPoints[0].unit']]);
  const batch = await post('pagesJson', [
    { url: 'https://site.test/n1', title: 'November 1', content: 'november' },
    { url: 'https://site.test/n2', title: 'November 2', content: 'november', sections: ['a'], lastModified: '2024-01-01' },
  ]);
  t.equal(batch.status, 200, 'the batch is accepted');
  t.equal(batch.body.indexed, 2);
  t.same(batch.body.warnings.map((w: Body) => [w.index, w.field]), [[1, 'sections'], [1, 'lastModified']]);
  t.match(batch.body.warnings[0].message, /not a page document field; ignored/);
  const found = await s.get('/sites?site=default&log=false&query=november&groupResults=false');
  t.equal(found.body.totalResults, 3, 'every page indexed');
  const bad = await post('pagesJson', [{ url: 'https://site.test/n3', title: 'x', content: 'x', extra: 1 }, { url: 'ftp://x', title: 'x', content: 'x' }]);
  t.equal(bad.status, 400, 'an invalid entry still rejects the batch');
  t.same(bad.body.errors.map((e: Body) => e.field), ['url']);
});
