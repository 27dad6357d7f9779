import t from 'tap';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { LANGUAGE_FACET, parseFilters, passes, type ActiveFilter } from '../../src/search/filters.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import type { FilterDefinition, PageDoc, SearchSettings } from '../../src/core/index.js';

const settings: SearchSettings = {
  language: 'en', stopWords: null, typoTolerance: 'default',
  fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [],
};
const defs: FilterDefinition[] = [
  { id: 'fid#1', name: 'Color', type: 'multiple' },
  { id: 'fid#2', name: 'Price', type: 'range' },
  { id: 'fid#3', name: 'Size', type: 'multiple' },
];
const req = (query: string, extra: Partial<SearchRequest> = {}): SearchRequest => ({
  query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: defs, ...extra,
});

// A deterministic pseudo-random fixture.
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const colors = ['red', 'green', 'blue', 'black'];
const sizes = ['S', 'M', 'L'];
const docs: PageDoc[] = Array.from({ length: 120 }, (_, i) => {
  const filters: PageDoc['filters'] = [];
  if (rnd() < 0.8) filters.push({ key: 'fid#1', value: colors.filter(() => rnd() < 0.4) });
  if (rnd() < 0.7) filters.push({ key: 'fid#2', value: Math.round(rnd() * 1000) / 10 });
  if (rnd() < 0.6) filters.push({ key: 'fid#3', value: [sizes[Math.floor(rnd() * 3)]!] });
  // Every third page in the project default (English), the others German or French.
  const language = [null, 'de', 'fr'][i % 3]!;
  return makeDoc(`https://f.test/${String(i).padStart(3, '0')}`, `Shirt ${i}`, `A shirt ${rnd() < 0.5 ? 'cotton' : 'linen'} item ${i}`, { filters, language });
});
const languageOf = (d: PageDoc): string => d.language ?? 'en';

t.test('parseFilters validation', async (t) => {
  t.same(parseFilters('[{"fid#1":["red"]},{"fid#2":{"min":1}}]', defs), [
    { key: 'fid#1', type: 'multiple', values: ['red'] },
    { key: 'fid#2', type: 'range', min: 1, max: null },
  ]);
  t.same(parseFilters('[{"language":["de","German","fr-CA"]}]', defs), [{ key: 'language', type: 'multiple', values: ['de', 'fr'] }], 'language: codes, names and tags, each once');
  for (const bad of ['[{"language":"de"}]', '[{"language":["klingon"]}]', '[{"language":[1]}]']) {
    t.throws(() => parseFilters(bad, defs), { code: 'invalid_parameter', field: 'filters' }, bad);
  }
  for (const bad of ['nope', '{}', '[{"fid#9":["x"]}]', '[{"fid#1":"red"}]', '[{"fid#2":[1]}]', '[{"fid#2":{"min":"1"}}]', '[{"fid#2":{"low":1}}]', '[{"fid#1":["a"],"fid#3":["S"]}]']) {
    t.throws(() => parseFilters(bad, defs), { code: 'invalid_parameter', field: 'filters' }, bad);
  }
});

t.test('filters and disjunctive facet counts match a brute-force count', async (t) => {
  const snap = snapshotOf([docs.slice(0, 50), docs.slice(50)]);
  t.teardown(() => snap.cleanup());
  const selections: ActiveFilter[][] = [
    [],
    [{ key: 'fid#1', type: 'multiple', values: ['red', 'blue'] }],
    [{ key: 'fid#1', type: 'multiple', values: ['green'] }, { key: 'fid#2', type: 'range', min: 20, max: 70 }],
    [{ key: 'fid#2', type: 'range', min: null, max: 50 }, { key: 'fid#3', type: 'multiple', values: ['S', 'L'] }],
    [{ key: 'fid#1', type: 'multiple', values: ['black'] }, { key: 'fid#3', type: 'multiple', values: ['M'] }, { key: 'fid#2', type: 'range', min: 10, max: null }],
    [{ key: 'language', type: 'multiple', values: ['de'] }],
    [{ key: 'language', type: 'multiple', values: ['en', 'fr'] }, { key: 'fid#1', type: 'multiple', values: ['red'] }],
  ];
  for (const query of ['shirt', 'cotton', '*']) {
    for (const sel of selections) {
      const r = runQuery(snap, settings, req(query, { filters: sel, facetDefs: [...defs, LANGUAGE_FACET], defaultLanguage: 'en' }));
      const textMatch = docs.filter((d) => query === '*' || d.title.toLowerCase().includes(query) || d.content.includes(query));
      const expected = textMatch.filter((d) => sel.every((f) => passes(d.filters, f, languageOf(d)))).map((d) => d.url).sort();
      t.same(r.hits.map((h) => h.url).sort(), expected, `result set for ${query} ${JSON.stringify(sel)}`);
      const langBase = textMatch.filter((d) => sel.every((f) => f.key === 'language' || passes(d.filters, f, languageOf(d))));
      const langCounts = new Map<string, number>();
      for (const d of langBase) langCounts.set(languageOf(d), (langCounts.get(languageOf(d)) ?? 0) + 1);
      const langFacet = r.facets.find((f) => f.key === 'language') as { name: string; values: Array<{ name: string; value: string; count: number }> } | undefined;
      if (langCounts.size < 2) t.notOk(langFacet, `no language facet for one language (${query} ${JSON.stringify(sel)})`);
      else {
        t.same(Object.fromEntries(langFacet!.values.map((v) => [v.value, v.count])), Object.fromEntries(langCounts), `language counts for ${query} ${JSON.stringify(sel)}`);
        t.same(langFacet!.values.find((v) => v.value === 'de')?.name, 'German', 'value names are English language names');
      }
      for (const def of defs) {
        // Disjunctive: every selection except this filter's own.
        const base = textMatch.filter((d) => sel.every((f) => f.key === def.id || passes(d.filters, f, languageOf(d))));
        const facet = r.facets.find((f) => f.key === def.id) as Record<string, unknown> | undefined;
        const withKey = base.filter((d) => d.filters.some((f) => f.key === def.id && (def.type === 'range' ? typeof f.value === 'number' : Array.isArray(f.value) && f.value.length > 0)));
        if (withKey.length === 0) {
          t.notOk(facet, `no facet ${def.id}`);
          continue;
        }
        if (def.type === 'multiple') {
          const counts = new Map<string, number>();
          for (const d of base) for (const f of d.filters) if (f.key === def.id && Array.isArray(f.value)) for (const v of new Set(f.value)) counts.set(v, (counts.get(v) ?? 0) + 1);
          const got = new Map((facet!.values as Array<{ value: string; count: number }>).map((v) => [v.value, v.count]));
          t.same(Object.fromEntries(got), Object.fromEntries(counts), `counts ${def.id} for ${query} ${JSON.stringify(sel)}`);
        } else {
          const vals = base.flatMap((d) => d.filters.filter((f) => f.key === def.id && typeof f.value === 'number').map((f) => f.value as number));
          t.same([facet!.min, facet!.max], [Math.min(...vals), Math.max(...vals)], `range ${def.id}`);
        }
      }
    }
  }
});

t.test('sorting: numbers, dates, text; missing values last in both orders', async (t) => {
  const dp = (v: string | null) => (v === null ? [] : [{ key: 'k', value: v, show: true }]);
  const snap = snapshotOf([[
    makeDoc('https://o.test/a', 'Item', 'item', { dataPoints: dp('10') }),
    makeDoc('https://o.test/b', 'Item', 'item', { dataPoints: dp('9') }),
    makeDoc('https://o.test/c', 'Item', 'item', { dataPoints: dp(null) }),
    makeDoc('https://o.test/d', 'Item', 'item', { dataPoints: dp('100') }),
    makeDoc('https://o.test/e', 'Item', 'item', { dataPoints: dp(null) }),
  ], [
    makeDoc('https://o.test/f', 'Date', 'date', { dataPoints: dp('2024-02-01') }),
    makeDoc('https://o.test/g', 'Date', 'date', { dataPoints: dp('2023-12-31T10:00:00Z') }),
    makeDoc('https://o.test/h', 'Date', 'date', { dataPoints: dp('2024-01-15') }),
    makeDoc('https://o.test/i', 'Text', 'text', { dataPoints: dp('banana') }),
    makeDoc('https://o.test/j', 'Text', 'text', { dataPoints: dp('Apple') }),
  ]]);
  t.teardown(() => snap.cleanup());
  const order = (q: string, dir: 'ASC' | 'DESC') => runQuery(snap, settings, req(q, { sort: 'k', sortOrder: dir })).hits.map((h) => h.url.slice(-1));
  t.same(order('item', 'ASC'), ['b', 'a', 'd', 'c', 'e'], 'numeric ascending, missing last (ties by URL)');
  t.same(order('item', 'DESC'), ['d', 'a', 'b', 'c', 'e'], 'numeric descending, missing still last');
  t.same(order('date', 'ASC'), ['g', 'h', 'f']);
  t.same(order('date', 'DESC'), ['f', 'h', 'g']);
  t.same(order('text', 'ASC'), ['j', 'i'], 'text, case-insensitive');
});
