/**
 * Ranking of long natural-language queries (≥ LONG_QUERY_WORDS significant words, OR mode):
 * BM25F with k1 K1_LONG, content b from B_LONG and the title weight scaled by
 * FIELD_SCALE_LONG (docs/SEARCH.md "Long queries"). Each row would order the pages the other
 * way with the short-query parameters (k1 1.2, content b 0.75, full title weight).
 */
import t from 'tap';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { LONG_QUERY_WORDS } from '../../src/search/expand.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import type { PageDoc, SearchSettings } from '../../src/core/index.js';

const settings: SearchSettings = {
  language: 'en',
  stopWords: null,
  typoTolerance: 'default',
  fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 },
  synonyms: [],
  resultMappings: [],
};
const req = (query: string, extra: Partial<SearchRequest> = {}): SearchRequest => ({
  query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [], ...extra,
});

// Filler text without any query word (fixed, so lengths and statistics are reproducible).
const FILL = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'eiusmod', 'tempor', 'incididunt'];
const filler = (n: number, seed: number) => Array.from({ length: n }, (_, i) => FILL[(i * 7 + seed) % FILL.length]).join(' ');
const background: PageDoc[] = [
  makeDoc('https://s.test/bg1', 'Maintenance schedule', 'turbine inspection intervals ' + filler(40, 1)),
  makeDoc('https://s.test/bg2', 'Glossary', 'blade pitch and turbine yaw ' + filler(60, 2)),
  makeDoc('https://s.test/bg3', 'Sensors', 'vibration sensors on the tower ' + filler(30, 3)),
  makeDoc('https://s.test/bg4', 'Contact', filler(20, 4)),
  makeDoc('https://s.test/bg5', 'History', 'measurements since 1990 ' + filler(50, 5)),
  makeDoc('https://s.test/bg6', 'Damping products', 'damping ' + filler(25, 6)),
];
const QUESTION = 'how is turbine blade vibration damping measured';
const urls = (r: ReturnType<typeof runQuery>) => r.hits.map((h) => h.url.replace('https://s.test/', ''));
const before = (list: string[], a: string, b: string) => list.indexOf(a) >= 0 && list.indexOf(a) < list.indexOf(b);

t.test('the fixture question is a long query', async (t) => {
  t.ok(QUESTION.split(' ').filter((w) => !['how', 'is'].includes(w)).length >= LONG_QUERY_WORDS);
});

const rows: Array<{ name: string; pages: PageDoc[]; query: string; first: string; second: string }> = [
  {
    name: 'a page whose body discusses two of the words outranks a short page with one word in its title',
    pages: [
      makeDoc('https://s.test/title-only', 'Damping', 'damping ' + filler(5, 7)),
      makeDoc('https://s.test/body', 'Field notes', filler(52, 8) + ' blade blade vibration vibration ' + filler(53, 9)),
    ],
    query: QUESTION,
    first: 'body',
    second: 'title-only',
  },
  {
    name: 'a 150-word page with three mentions outranks a 16-word page with one (less length normalisation)',
    pages: [
      makeDoc('https://s.test/short', 'Notes', 'vibration ' + filler(15, 7)),
      makeDoc('https://s.test/long', 'Report', [filler(50, 8), 'vibration', filler(50, 9), 'vibration', filler(50, 10), 'vibration', filler(50, 11)].join(' ')),
    ],
    query: QUESTION,
    first: 'long',
    second: 'short',
  },
  {
    // Control: short queries keep the short-query parameters (the title still dominates).
    name: 'a one-word query still puts the title match first',
    pages: [
      makeDoc('https://s.test/title-only', 'Damping', 'damping ' + filler(5, 7)),
      makeDoc('https://s.test/body', 'Field notes', filler(52, 8) + ' damping damping ' + filler(53, 9)),
    ],
    query: 'damping',
    first: 'title-only',
    second: 'body',
  },
];

for (const row of rows) {
  t.test(row.name, async (t) => {
    const snap = snapshotOf([[...background, ...row.pages]]);
    t.teardown(() => snap.cleanup());
    const got = urls(runQuery(snap, settings, req(row.query)));
    t.ok(before(got, row.first, row.second), `${row.first} before ${row.second} (got ${got.join(', ')})`);
  });
}

t.test('long-query ranking is the same however the index is split', async (t) => {
  const pages = [...background, ...rows[0]!.pages, ...rows[1]!.pages];
  const one = snapshotOf([pages]);
  const many = snapshotOf([pages.slice(0, 3), pages.slice(3, 7), pages.slice(7)]);
  t.teardown(() => (one.cleanup(), many.cleanup()));
  const a = runQuery(one, settings, req(QUESTION));
  const b = runQuery(many, settings, req(QUESTION));
  t.same(urls(b), urls(a));
  t.same(b.hits.map((h) => h.score.toFixed(9)), a.hits.map((h) => h.score.toFixed(9)));
});
