/**
 * Result mappings' results are results like any other (docs/API.md, Settings → result
 * mappings): pinned pages and custom results obey `includeContentGroups`,
 * `excludeContentGroups` and `filters`, count once in `totalResults` and
 * `totalResultsPerContentGroup`, and an empty `includeContentGroups` means every group.
 */
import t from 'tap';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Body = Record<string, any>;

const U = (s: string) => `https://site.test/${s}`;

/**
 * Pages: Blog b1–b3, Docs d1–d3, no group n1–n2, all with "zulu xray whiskey"; d9 (Docs) with
 * other words. Colors: b1 red, d9 blue, the others green.
 */
async function setup(t: Parameters<Parameters<typeof tap.test>[0]>[0]): Promise<TestServer & { get(q: string): Promise<Body> }> {
  const s = await startTestServer({ t });
  const settings = {
    filters: [{ id: 'fid#1', name: 'Color', type: 'multiple' }],
    search: {
      resultMappings: [
        { trigger: { type: 'equals', value: 'zulu' }, action: { type: 'pin', urls: [U('d9'), U('b1')] } },
        { trigger: { type: 'equals', value: 'xray' }, action: { type: 'custom', html: '<b>promo</b>', position: 1, contentGroup: 'Promo' } },
        { trigger: { type: 'equals', value: 'xray' }, action: { type: 'custom', html: '<i>help</i>', position: 2 } },
        { trigger: { type: 'equals', value: 'whiskey' }, action: { type: 'hide', urls: [U('b1')] } },
        { trigger: { type: 'equals', value: 'whiskey' }, action: { type: 'pin', urls: [U('b1'), U('d9')] } },
      ],
    },
  };
  const r = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH', headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' }, body: JSON.stringify(settings),
  });
  t.equal(r.status, 200, 'settings stored');
  const page = (id: string, group: string, color: string, content = 'zulu xray whiskey') => ({
    url: U(id), title: `Page ${id}`, content, contentGroup: group, filters: [{ key: 'fid#1', value: [color] }],
  });
  const pages = [
    page('b1', 'Blog', 'red'), page('b2', 'Blog', 'green'), page('b3', 'Blog', 'green'),
    page('d1', 'Docs', 'green'), page('d2', 'Docs', 'green'), page('d3', 'Docs', 'green'),
    page('n1', '', 'green'), page('n2', '', 'green'),
    page('d9', 'Docs', 'blue', 'yankee'),
  ];
  const w = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pages) });
  t.equal(w.status, 200, 'indexed');
  const get = async (q: string) => (await (await fetch(`${s.url}/sites?site=default&log=false&${q.includes('limit=') ? '' : 'limit=20&'}${q}`)).json()) as Body;
  return Object.assign(s, { get });
}
const tap = t;

const links = (b: Body): string[] => (Object.values(b.suggests).flat() as Body[]).map((x) => x.link || `custom:${x.html}`);
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));

t.test('pinned pages obey content groups and filters and count once', async (t) => {
  const s = await setup(t);
  const all = await s.get('query=zulu&groupResults=false');
  t.same(links(all).slice(0, 2), [U('d9'), U('b1')], 'pins first, in their order');
  t.equal(all.totalResults, 9, '8 matches + d9, which does not match; b1 matches and is not counted twice');
  const grouped = await s.get('query=zulu');
  t.same(grouped.totalResultsPerContentGroup, { Docs: 4, Blog: 3, _: 2 }, 'd9 counted in Docs once');
  t.equal(sum(grouped.totalResultsPerContentGroup), grouped.totalResults);
  t.equal(links(grouped).length, 9, 'every counted result listed');

  const blog = await s.get(`query=zulu&includeContentGroups=${enc(['Blog'])}`);
  t.notOk(links(blog).includes(U('d9')), 'a pin outside includeContentGroups is left out');
  t.same(blog.totalResultsPerContentGroup, { Blog: 3 });
  t.equal(blog.totalResults, 3);
  t.equal(links(blog)[0], U('b1'), 'a pin inside the groups still comes first');

  const noDocs = await s.get(`query=zulu&excludeContentGroups=${enc(['Docs'])}`);
  t.notOk(links(noDocs).includes(U('d9')), 'a pin in an excluded group is left out');
  t.equal(noDocs.totalResults, 5);

  const red = await s.get(`query=zulu&filters=${enc([{ 'fid#1': ['red'] }])}`);
  t.same(links(red), [U('b1')], 'a pin that fails the filters is left out');
  t.equal(red.totalResults, 1);
  const blue = await s.get(`query=zulu&filters=${enc([{ 'fid#1': ['blue'] }])}`);
  t.same(links(blue), [U('d9')], 'a pin that passes them is added');
  t.same(blue.totalResultsPerContentGroup, { Docs: 1 });
});

t.test('an empty includeContentGroups means every group', async (t) => {
  const s = await setup(t);
  const absent = await s.get('query=zulu');
  const empty = await s.get(`query=zulu&includeContentGroups=${enc([])}`);
  t.same(empty.totalResultsPerContentGroup, absent.totalResultsPerContentGroup);
  t.same(links(empty), links(absent));
  const plain = await s.get(`query=yankee&includeContentGroups=${enc([])}`);
  t.same(links(plain), [U('d9')], 'without mappings too');
  const sug = await (await fetch(`${s.url}/sites/suggest?site=default&query=zul&includeContentGroups=${enc([])}`)).json();
  t.equal(sug.totalResults, 8, 'suggest reads it the same way');
});

t.test('custom results obey content groups and filters, count once and show once', async (t) => {
  const s = await setup(t);
  const flat = await s.get('query=xray&groupResults=false');
  t.equal(flat.totalResults, 10, '8 pages + 2 custom results');
  t.same(flat.totalResultsPerContentGroup, { _: 10 });
  t.equal(links(flat)[0], 'custom:<b>promo</b>', 'position 1');
  t.equal(links(flat)[1], 'custom:<i>help</i>', 'position 2 of the one list');
  t.same(flat.suggests._[0], { name: '', image: '', link: '', type: 'custom', dataPoints: [], html: '<b>promo</b>' });

  const grouped = await s.get('query=xray');
  t.same(grouped.totalResultsPerContentGroup, { Blog: 3, Docs: 3, _: 3, Promo: 1 }, 'each custom result counted once in its group');
  t.equal(sum(grouped.totalResultsPerContentGroup), grouped.totalResults);
  const under = grouped.suggests._.map((x: Body) => x.link || `custom:${x.html}`);
  t.equal(under[1], 'custom:<i>help</i>', 'second in its group');
  t.same(grouped.suggests.Promo.map((x: Body) => x.html), ['<b>promo</b>']);

  // Paging: every result, custom ones included, on exactly one page.
  const seen: string[] = [];
  for (let off = 0; off < 12; off += 3) seen.push(...links(await s.get(`query=xray&offset=${off}&limit=3`)));
  t.equal(seen.length, 10, 'pages hold totalResults entries');
  t.equal(new Set(seen).size, 10, 'no repeats');
  t.equal(seen.filter((l) => l.startsWith('custom:')).length, 2, 'each custom result on one page');

  const perGroup = await s.get('query=xray&limitPerGroup=true&limit=1&offset=1');
  t.notOk('Promo' in perGroup.suggests, 'limitPerGroup: the Promo custom result is on the first page of its group only');
  t.equal(perGroup.suggests._[0].type, 'custom', 'and the other at position 2 of its group');

  const blog = await s.get(`query=xray&includeContentGroups=${enc(['Blog'])}`);
  t.equal(blog.totalResults, 3, 'no custom result outside includeContentGroups');
  t.same(Object.keys(blog.suggests), ['Blog']);
  const noPromo = await s.get(`query=xray&excludeContentGroups=${enc(['Promo'])}`);
  t.equal(noPromo.totalResults, 9);
  t.notOk('Promo' in noPromo.suggests);
  t.notOk('Promo' in noPromo.totalResultsPerContentGroup);
  const promo = await s.get(`query=xray&includeContentGroups=${enc(['Promo'])}`);
  t.same(promo.totalResultsPerContentGroup, { Promo: 1 }, 'a custom result alone in its group');
  const filtered = await s.get(`query=xray&filters=${enc([{ 'fid#1': ['green'] }])}`);
  t.notOk(links(filtered).some((l) => l.startsWith('custom:')), 'a custom result has no filter values: filters leave it out');
  t.equal(filtered.totalResults, 7);

  const sug = await (await fetch(`${s.url}/sites/suggest?site=default&query=xray&excludeContentGroups=${enc(['_'])}`)).json();
  t.same(Object.values(sug.suggests).flat().filter((x: any) => x.type === 'custom').map((x: any) => x.suggestionHtml), ['<b>promo</b>'], 'suggest: the same rules');
  t.equal(sug.totalResultsPerContentGroup.Promo, 1);
});

t.test('a hidden page is never pinned back', async (t) => {
  const s = await setup(t);
  const r = await s.get('query=whiskey&groupResults=false');
  t.notOk(links(r).includes(U('b1')), 'hidden before a pin of it');
  t.equal(links(r)[0], U('d9'), 'the other pin stays');
  t.equal(r.totalResults, 8, '8 matches - b1 + d9');
});
