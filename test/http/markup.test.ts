/**
 * Markup in indexed data never reaches an HTML field of an answer unescaped (docs/API.md, "Text
 * and HTML in answers"). A property test: a seeded PRNG writes a few hundred documents with
 * markup (`<script>`, `"><img onerror=…>`, `&amp;`, `javascript:`, stray `<mark>`) in every
 * field, settings with markup in filter names, content groups and custom results, and a query
 * log with markup queries; then searches with and without highlighting, and suggests.
 *
 * - With `highlightQueryTerms=true` every HTML field, once its `<mark>`/`</mark>` tags are
 *   removed, holds no `<`, `>`, `"` or `'` and no `&` outside the five entities escapeHtml
 *   writes; read back (marks removed, entities decoded) it equals the plain-text answer's field.
 * - In both modes `image` is `""` or an http(s)/relative URL without quotes, angle brackets or
 *   white space, and `link` an http(s) URL without them.
 */
import t from 'tap';
import { extractHtml } from '../../src/fetch/index.js';
import { startTestServer } from '../helpers/server.js';

/** mulberry32: a small seeded PRNG (the same documents and queries on every run). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
const MARKUP = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  '&amp;',
  '&lt;b&gt;',
  '&#x3c;',
  '&',
  '<mark>',
  '</mark>',
  '<b>bold</b>',
  'javascript:alert(1)',
  '<!--',
  '"',
  "'",
  '<',
  '>',
  '`',
];
const GROUPS = ['', 'Docs', '<script>g</script>', '"><img src=x onerror=alert(1)>', 'R&amp;D', 'R&D', "O'Brien", 'javascript:alert(1)', '<mark>x</mark>'];
const IMAGES = [
  '',
  'https://img.test/a.png',
  'http://img.test/b.png?x=1&y=2',
  '/rel/"><script>alert(1)</script>.png',
  "img/it's.png",
  '//cdn.test/c.png',
  'javascript:alert(1)',
  ' JaVaScRiPt:alert(1)',
  'java\tscript:alert(1)',
  '\u0001javascript:alert(1)',
  'data:image/svg+xml,<svg onload=alert(1)>',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
];

const ENTITY = /&(?:amp|lt|gt|quot|#39);/g;

/** Whether an HTML field holds nothing unescaped but `<mark>` and `</mark>`. */
function safeHtml(s: string): boolean {
  const bare = s.replace(/<\/?mark>/g, '');
  if (/[<>"']/.test(bare)) return false;
  return !bare.replace(ENTITY, '').includes('&');
}

/** The text an HTML field shows: marks removed, entities decoded. */
function textOf(s: string): string {
  const map: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
  return s.replace(/<\/?mark>/g, '').replace(ENTITY, (e) => map[e]!);
}

/** `image`: "" or an http(s)/relative URL that cannot end an attribute. */
function safeImage(s: unknown): boolean {
  if (s === '') return true;
  if (typeof s !== 'string' || /[\s"'<>`\x00-\x1f]/.test(s)) return false;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(s);
  return !scheme || /^https?$/i.test(scheme[1]!);
}

function safeLink(s: unknown): boolean {
  return typeof s === 'string' && /^https?:\/\//.test(s) && !/[\s"<>`]/.test(s);
}

type Body = Record<string, any>;

/** Every HTML field of a search or suggest answer, with where it is. */
function htmlFields(body: Body): Array<[string, string]> {
  const out: Array<[string, string]> = [['query', body.query]];
  for (const k of Object.keys(body.totalResultsPerContentGroup ?? {})) out.push(['totalResultsPerContentGroup key', k]);
  for (const [g, list] of Object.entries(body.suggests ?? {}) as Array<[string, Body[]]>) {
    out.push(['suggests key', g]);
    for (const r of list) {
      out.push(['name', r.name]);
      if (r.content !== undefined) out.push(['content', r.content]);
      for (const d of r.dataPoints) out.push(['dataPoints.key', d.key], ['dataPoints.value', d.value]);
    }
  }
  for (const f of body.filterOptions ?? []) {
    out.push(['filterOptions.name', f.name]);
    for (const v of f.values ?? []) out.push(['filterOptions.values.name', v.name]);
  }
  for (const q of body.querySuggestions ?? []) out.push(['querySuggestions.query', q.query]);
  return out;
}

function urlFields(body: Body): Array<[string, unknown, (v: unknown) => boolean]> {
  const out: Array<[string, unknown, (v: unknown) => boolean]> = [];
  for (const list of Object.values(body.suggests ?? {}) as Body[][]) {
    for (const r of list) {
      out.push(['image', r.image, safeImage]);
      if (r.type !== 'custom') out.push(['link', r.link, safeLink]);
    }
  }
  return out;
}

t.test('markup in every document field never reaches an HTML field unescaped', async (t) => {
  const rnd = prng(0x5eed21);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const text = (min = 1, max = 8): string => {
    const n = min + Math.floor(rnd() * (max - min + 1));
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(rnd() < 0.6 ? pick(WORDS) : pick(MARKUP));
    let s = '';
    for (const p of parts) s += (s === '' ? '' : rnd() < 0.7 ? ' ' : '') + p;
    return s;
  };

  const s = await startTestServer({ t });
  const settings = {
    filters: [
      { id: 'fid#1', name: 'Col<script>or</script> "&amp;', type: 'multiple' },
      { id: 'fid#2', name: "Pr'ice<b>", type: 'range' },
    ],
    search: {
      resultMappings: [
        { trigger: { type: 'contains', value: 'golf' }, action: { type: 'custom', html: '<b>owner markup</b>', position: 2, contentGroup: '"><img src=x onerror=alert(1)>' } },
        { trigger: { type: 'contains', value: 'hotel' }, action: { type: 'custom', html: '<i>x</i>', position: 1 } },
      ],
    },
    suggest: { minSearches: 1 },
  };
  const put = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(settings),
  });
  t.equal(put.status, 200, 'settings with markup in filter names and custom groups stored');

  const N = 300;
  const filterValues: string[] = [];
  const docs = Array.from({ length: N }, (_, i) => {
    const fv = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => text(1, 3));
    filterValues.push(...fv);
    return {
      url: `https://site.test/d/${i}/${text(1, 2)}`,
      title: `${pick(WORDS)} ${text(0, 5)}`,
      content: `${pick(WORDS)} ${text(2, 30)}`,
      contentGroup: pick(GROUPS),
      imageUrl: rnd() < 0.2 ? text(1, 2) : pick(IMAGES),
      dataPoints: Array.from({ length: Math.floor(rnd() * 4) }, () => ({ key: `${pick(WORDS)}${text(0, 2)}`, value: text(0, 4), show: rnd() < 0.8 })),
      filters: [
        { key: 'fid#1', value: fv },
        { key: 'fid#2', value: Math.floor(rnd() * 100) },
      ],
      keywords: [text(1, 2)],
      headings: [text(1, 3), text(1, 3)],
      description: text(1, 6),
    };
  });
  const warnings: Body[] = [];
  for (let i = 0; i < N; i += 100) {
    const r = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(docs.slice(i, i + 100)),
    });
    const body = (await r.json()) as Body;
    t.equal(r.status, 200, `batch ${i / 100} indexed (${JSON.stringify(body).slice(0, 200)})`);
    warnings.push(...(body.warnings ?? []));
  }
  t.ok(warnings.length > 0 && warnings.every((w) => w.field === 'imageUrl'), 'unsafe image URLs were left out with warnings');

  // Markup queries in the query log (suggested back as querySuggestions).
  const logged = ['"><img src=x onerror=alert(1)> alpha', '<script>alert(1)</script> bravo', "alpha 'quoted' &amp; <b>"];
  for (const q of logged) {
    for (let k = 0; k < 2; k++) await fetch(`${s.url}/sites?site=default&query=${encodeURIComponent(q)}`);
  }
  s.services.analytics.flush();

  let checked = 0;
  const check = (where: string, body: Body, html: boolean): void => {
    if (html) {
      for (const [field, v] of htmlFields(body)) {
        checked++;
        if (typeof v !== 'string' || !safeHtml(v)) t.fail(`${where}: ${field} not escaped: ${JSON.stringify(v)}`);
      }
    }
    for (const [field, v, ok] of urlFields(body)) {
      checked++;
      if (!ok(v)) t.fail(`${where}: ${field} unsafe: ${JSON.stringify(v)}`);
    }
  };

  for (let i = 0; i < 120; i++) {
    const words = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => (rnd() < 0.25 ? pick(MARKUP) : pick(WORDS)));
    const query = rnd() < 0.1 ? '*' : words.join(' ');
    const params = new URLSearchParams({ site: 'default', log: 'false', query, includeContent: 'true', filterOptions: 'true', limit: '20' });
    if (rnd() < 0.3) params.set('groupResults', 'false');
    if (rnd() < 0.3) params.set('limitPerGroup', 'true');
    if (rnd() < 0.3) params.set('filters', JSON.stringify([{ 'fid#1': [pick(filterValues)] }]));
    const plainRes = await fetch(`${s.url}/sites?${params}`);
    t.equal(plainRes.status, 200, `search ${JSON.stringify(query)}`);
    const plain = (await plainRes.json()) as Body;
    params.set('highlightQueryTerms', 'true');
    const html = (await (await fetch(`${s.url}/sites?${params}`)).json()) as Body;
    const where = `search ${params}`;
    check(`${where} (plain)`, plain, false);
    check(where, html, true);
    // Escaped exactly once: read back, the HTML answer says what the plain one does.
    t.equal(textOf(html.query), plain.query, `${where}: query reads back`);
    t.same(Object.keys(html.totalResultsPerContentGroup).map(textOf), Object.keys(plain.totalResultsPerContentGroup), `${where}: group names read back`);
    const plainByLink = new Map((Object.values(plain.suggests).flat() as Body[]).map((r) => [r.link || r.html, r]));
    for (const r of Object.values(html.suggests).flat() as Body[]) {
      const p = plainByLink.get(r.link || r.html);
      if (!p) continue;
      if (textOf(r.name) !== p.name || textOf(r.content ?? '') !== (p.content ?? '')) t.fail(`${where}: ${r.link} does not read back`);
      const read = r.dataPoints.map((d: Body) => ({ ...d, key: textOf(d.key), value: textOf(d.value) }));
      if (JSON.stringify(read) !== JSON.stringify(p.dataPoints)) t.fail(`${where}: ${r.link} data points do not read back`);
    }

    const sp = new URLSearchParams({ site: 'default', query: query === '*' ? 'al' : query.slice(0, 1 + Math.floor(rnd() * query.length)), includeContent: 'true', maxQuerySuggestions: '10' });
    if (sp.get('query')!.trim() === '') sp.set('query', 'a');
    if (rnd() < 0.3) sp.set('groupResults', 'false');
    sp.set('highlightQueryTerms', rnd() < 0.8 ? 'true' : 'false');
    const sug = await fetch(`${s.url}/sites/suggest?${sp}`);
    t.equal(sug.status, 200, `suggest ${sp}`);
    check(`suggest ${sp}`, (await sug.json()) as Body, sp.get('highlightQueryTerms') === 'true');
  }

  // The logged markup queries come back as suggestions, escaped.
  const qs = (await (await fetch(`${s.url}/sites/suggest?site=default&query=al&maxQuerySuggestions=10&highlightQueryTerms=true`)).json()) as Body;
  t.ok(qs.querySuggestions.some((q: Body) => q.query === '&quot;&gt;&lt;img src=x onerror=alert(1)&gt; alpha'), 'a markup query suggestion, escaped');
  check('suggest al', qs, true);
  t.ok(checked > 20_000, `checked ${checked} fields`);
});

t.test('image URLs: http(s) or relative at ingest (others left out with a warning), and when served', async (t) => {
  const s = await startTestServer({ t });
  const push = async (docs: unknown, path = 'pagesJson') => {
    const r = await fetch(`${s.url}/sites/${path}?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
    return { status: r.status, body: (await r.json()) as Body };
  };
  const doc = (i: number, imageUrl: string) => ({ url: `https://site.test/img/${i}`, title: `kilo ${i}`, content: 'kilo', imageUrl });
  const one = await push(doc(0, 'javascript:alert(document.cookie)'), 'pageJson');
  t.equal(one.status, 200, 'the page is accepted');
  t.same(one.body.indexed, 1);
  t.match(one.body.warnings, [{ index: 0, field: 'imageUrl', message: /http\(s\) or relative/ }], 'with a warning naming imageUrl');
  const batch = await push([doc(1, 'https://img.test/a.png'), doc(2, 'data:text/html,<script>alert(1)</script>'), doc(3, '/img/a "b".png'), doc(4, ' \tJAVA\nSCRIPT:alert(1)')]);
  t.equal(batch.status, 200);
  t.same(batch.body.warnings.map((w: Body) => [w.index, w.field]), [[1, 'imageUrl'], [3, 'imageUrl']], 'one warning per unsafe entry, by position in the batch');
  const clean = await push([doc(5, 'https://img.test/b.png')]);
  t.notOk('warnings' in clean.body, 'no warnings key when nothing was left out');

  // A page stored without the ingest check (written before it, or by another path).
  const index = await s.services.indexes.get('default');
  const seq = await index.write([{ op: 'upsert', doc: { ...doc(6, ''), imageUrl: 'javascript:alert(1)', documentType: 'HTML', contentGroup: '', dataPoints: [], filters: [], boost: 1, keywords: [], language: null, headings: [], source: 'api', status: 200 } }]);
  await index.waitSearchable(seq);

  const r = (await (await fetch(`${s.url}/sites?site=default&query=kilo&groupResults=false&limit=20`)).json()) as Body;
  const images = Object.fromEntries(r.suggests._.map((x: Body) => [x.link.replace('https://site.test/img/', ''), x.image]));
  t.same(images, { 0: '', 1: 'https://img.test/a.png', 2: '', 3: '/img/a%20%22b%22.png', 4: '', 5: 'https://img.test/b.png', 6: '' });
});

t.test('crawled pages keep only http(s) images, resolved against the page', async (t) => {
  const page = (img: string) => `<html><head><title>T</title><meta property="og:image" content="${img}"></head><body><main>text</main></body></html>`;
  const cases: Array<[string, string | null]> = [
    ['javascript:alert(1)', null],
    ['JaVaScRiPt&#58;alert(1)', null],
    // The extractor collapses white space in attributes: a relative path then, not a scheme.
    ['java&#9;script:alert(1)', 'https://site.test/docs/java%20script:alert(1)'],
    ['data:image/svg+xml,&lt;svg onload=alert(1)&gt;', null],
    ['vbscript:msgbox(1)', null],
    ['/img/a.png', 'https://site.test/img/a.png'],
    ['b.png', 'https://site.test/docs/b.png'],
    ['//cdn.test/c.png', 'https://cdn.test/c.png'],
    ['/img/&quot;&gt;&lt;x&gt;.png', 'https://site.test/img/%22%3E%3Cx%3E.png'],
  ];
  for (const [img, want] of cases) t.equal(extractHtml(page(img), 'https://site.test/docs/page', null).imageUrl, want, img);
});

t.test('content groups named like Object.prototype members are groups like any other', async (t) => {
  const s = await startTestServer({ t });
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'Docs'];
  const docs = names.flatMap((g, i) => [0, 1].map((k) => ({ url: `https://site.test/${i}/${k}`, title: `lima ${g}`, content: 'lima', contentGroup: g })));
  const put = await fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
  t.equal(put.status, 200);
  const counts = (o: Record<string, number>) => Object.entries(o).sort();
  const all = names.map((g) => [g, 2]).sort();
  for (const q of ['', '&limitPerGroup=true', '&highlightQueryTerms=true', '&limit=3']) {
    const r = await fetch(`${s.url}/sites?site=default&log=false&query=lima${q}`);
    t.equal(r.status, 200, `search${q}`);
    const body = (await r.json()) as Body;
    t.same(counts(body.totalResultsPerContentGroup), all, `every group counted${q}`);
    t.equal(body.totalResults, 10);
    for (const [g, list] of Object.entries(body.suggests) as Array<[string, Body[]]>) for (const x of list) t.match(x.name, g, `${x.link} under its own group`);
  }
  const only = (await (await fetch(`${s.url}/sites?site=default&log=false&query=lima&includeContentGroups=${encodeURIComponent('["__proto__","constructor"]')}`)).json()) as Body;
  t.same(counts(only.totalResultsPerContentGroup), [['__proto__', 2], ['constructor', 2]]);
  const without = (await (await fetch(`${s.url}/sites?site=default&log=false&query=lima&excludeContentGroups=${encodeURIComponent('["__proto__"]')}`)).json()) as Body;
  t.equal(without.totalResults, 8);
  const sug = await fetch(`${s.url}/sites/suggest?site=default&query=lim`);
  t.equal(sug.status, 200, 'suggest');
  const sb = (await sug.json()) as Body;
  t.same(counts(sb.totalResultsPerContentGroup), all);
  t.same(Object.keys(sb.suggests).sort(), [...names].sort(), 'suggested pages of every group');
});
