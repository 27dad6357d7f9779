import t from 'tap';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';
import type { PageDoc, SearchSettings } from '../../src/core/index.js';

const settings: SearchSettings = {
  language: 'en',
  stopWords: null,
  typoTolerance: 'default',
  fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 },
  synonyms: [{ terms: ['tv', 'television'] }, { from: 'pg', to: ['postgresql'] }],
  resultMappings: [],
};
const req = (query: string, extra: Partial<SearchRequest> = {}): SearchRequest => ({
  query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [], ...extra,
});

const docs: PageDoc[] = [
  makeDoc('https://s.test/create-table', 'CREATE TABLE', 'Define a new table. Tables hold rows of data in columns.', { headings: ['Synopsis', 'Description'] }),
  makeDoc('https://s.test/alter-table', 'ALTER TABLE', 'Change the definition of a table. Columns can be added.', { headings: ['Synopsis'] }),
  makeDoc('https://s.test/indexes', 'Indexes', 'An index speeds up queries on a table. Indexes cost writes.'),
  makeDoc('https://s.test/tv', 'Television guide', 'What is on television tonight.', { contentGroup: 'Media' }),
  makeDoc('https://s.test/postgres', 'About PostgreSQL', 'PostgreSQL is a relational database with tables.', { keywords: ['database'] }),
  makeDoc('https://s.test/vacuum', 'Routine Vacuuming', 'Vacuum reclaims storage occupied by dead tuples in a table.'),
  makeDoc('https://s.test/phrase', 'Phrase page', 'the dead tuples are removed; tuples dead otherwise'),
];

const urls = (r: ReturnType<typeof runQuery>) => r.hits.map((h) => h.url.replace('https://s.test/', ''));

t.test('identical ranking however the index is split (with replaced and deleted pages)', async (t) => {
  const extra = [makeDoc('https://s.test/old', 'Old table page', 'obsolete table text'), makeDoc('https://s.test/indexes', 'Stale', 'stale table')];
  const one = snapshotOf([[...extra, ...docs, { delete: 'https://s.test/old' }]]);
  const many = snapshotOf([[extra[0]!], [extra[1]!, docs[0]!], docs.slice(1, 3), docs.slice(3, 5), [docs[5]!], [docs[6]!, { delete: 'https://s.test/old' }]]);
  t.teardown(() => (one.cleanup(), many.cleanup()));
  t.equal(one.totalDocs, many.totalDocs);
  t.same(one.totalLengths, many.totalLengths);
  for (const q of ['table', 'tables', 'dead tuples', 'tabel', 'ind', 'table rows data', '*', 'postgres', 'vacum storage']) {
    const a = runQuery(one, settings, req(q));
    const b = runQuery(many, settings, req(q));
    t.same(urls(b), urls(a), `same order for ${q}`);
    t.same(b.hits.map((h) => h.score.toFixed(9)), a.hits.map((h) => h.score.toFixed(9)), `same scores for ${q}`);
  }
  t.notOk(urls(runQuery(many, settings, req('obsolete'))).includes('old'), 'deleted page not found');
  t.notOk(urls(runQuery(many, settings, req('stale'))).length, 'replaced content not found');
});

t.test('matching semantics', async (t) => {
  const s = snapshotOf([docs]);
  t.teardown(() => s.cleanup());
  const q = (x: string, e: Partial<SearchRequest> = {}) => urls(runQuery(s, settings, req(x, e)));
  t.same(q('create table').slice(0, 1), ['create-table'], 'AND, title first');
  t.ok(q('table').includes('alter-table') && q('table').includes('indexes'), 'all pages with the word');
  t.equal(q('table')[0]!.endsWith('table'), true, 'title matches rank first');
  t.ok(q('tables').includes('alter-table'), 'stemming: tables finds table');
  t.same(q('CRÉATE Tâble').slice(0, 1), ['create-table'], 'case and diacritics folded');
  t.same(q('"dead tuples"').sort(), ['phrase', 'vacuum'], 'phrase');
  t.same(q('"tuples dead"'), ['phrase'], 'phrase order matters');
  t.same(q('table -vacuum').includes('vacuum'), false, 'exclusion');
  t.same(q('table -"dead tuples"').includes('vacuum'), false, 'phrase exclusion');
  t.same(q('vacu'), ['vacuum'], 'last word as prefix');
  t.same(q('vacuum rout'), ['vacuum'], 'prefix after another word');
  t.same(q('vacu ', {}), [], 'a finished word is not a prefix');
  t.same(q('tabel').slice(0, 2).sort(), ['alter-table', 'create-table'], 'typo (transposition) found');
  t.same(q('vacuming'), ['vacuum'], '1 edit at 8 letters');
  t.same(q('tv'), ['tv'], 'synonym group');
  t.same(q('pg'), ['postgres'], 'one-way mapping');
  t.same(q('postgresql'), ['postgres'], 'mapping is one way: postgresql does not find pg');
  t.same(q('table zzzzqqq').length > 0, true, 'drop-last-words fallback');
  t.same(q('the table').length, q('table').length, 'stop words ignored');
  t.same(q('tabel', { typoTolerance: 'off' }), [], 'typo tolerance off');
  t.ok(q('the').length > 0, 'a stop-word-only query still matches');
});

t.test('exact matches always above typo matches', async (t) => {
  const s = snapshotOf([[
    makeDoc('https://s.test/a', 'Contant heavy contant contant', 'contant contant contant', { boost: 100 }),
    makeDoc('https://s.test/b', 'Misc', 'a long text that mentions constant only once among many many other words here'),
  ]]);
  t.teardown(() => s.cleanup());
  const r = runQuery(s, settings, req('constant'));
  t.same(urls(r), ['b', 'a']);
  t.equal(r.hits[0]!.typos, 0);
  t.equal(r.hits[1]!.typos, 1);
});

t.test('boost multiplies, ties break on URL', async (t) => {
  const s = snapshotOf([[
    makeDoc('https://s.test/z', 'Same', 'same'),
    makeDoc('https://s.test/m', 'Same', 'same'),
    makeDoc('https://s.test/a', 'Same', 'same'),
    makeDoc('https://s.test/boosted', 'Same', 'same', { boost: 2 }),
  ]]);
  t.teardown(() => s.cleanup());
  const r = runQuery(s, settings, req('same'));
  t.same(urls(r), ['boosted', 'a', 'm', 'z']);
  t.equal(r.hits[0]!.score.toFixed(9), (r.hits[1]!.score * 2).toFixed(9));
});

t.test('partial selection orders the top k exactly like a full sort', async (t) => {
  const { selectTop } = await import('../../src/search/rerank.js');
  let seed = 3;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const [n, k] of [[1000, 10], [500, 100], [50, 10], [300, 299]] as const) {
    const hits = Array.from({ length: n }, (_, i) => ({
      seg: null as never, id: i, url: `u${String(Math.floor(rnd() * n)).padStart(5, '0')}`, group: '_',
      score: Math.floor(rnd() * 20), typos: Math.floor(rnd() * 2),
    }));
    const full = [...hits].sort((a, b) => a.typos - b.typos || b.score - a.score || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
    const part = [...hits];
    selectTop(part, k);
    t.same(part.slice(0, k).map((h) => [h.typos, h.score, h.url]), full.slice(0, k).map((h) => [h.typos, h.score, h.url]), `n=${n} k=${k}`);
    t.same(new Set(part), new Set(hits), 'nothing lost');
  }
});

t.test('collecting only the top k gives the same first page, totals and facets', async (t) => {
  const many = Array.from({ length: 260 }, (_, i) =>
    makeDoc(`https://k.test/${String(i).padStart(3, '0')}`, `Page ${i % 7 === 0 ? 'widget' : 'other'}`, `widget ${'filler '.repeat(i % 13)} text ${i % 5 === 0 ? 'widget' : ''}`, {
      contentGroup: i % 2 ? 'A' : '', filters: [{ key: 'fid#1', value: [i % 3 ? 'x' : 'y'] }],
    }));
  const snap = snapshotOf([many.slice(0, 100), many.slice(100)]);
  t.teardown(() => snap.cleanup());
  const defs = [{ id: 'fid#1', name: 'F', type: 'multiple' as const }];
  for (const q of ['widget', 'widget text', 'page widget other text filler']) {
    const full = runQuery(snap, settings, req(q, { facetDefs: defs }));
    const top = runQuery(snap, settings, req(q, { facetDefs: defs, topK: 5 }));
    t.equal(top.total, full.total, `total for ${q}`);
    t.equal(full.total, full.hits.length);
    t.ok(top.hits.length <= 100 && top.hits.length < full.hits.length, 'only the top is materialised');
    t.same(top.hits.slice(0, 100).map((h) => h.url), full.hits.slice(0, 100).map((h) => h.url), `same top 100 for ${q}`);
    t.same(top.perGroup, full.perGroup, 'group counts');
    t.same(top.facets, full.facets, 'facets');
  }
});

t.test('exactness re-ranking: title and heading signals, checked only where the words are in that field', async (t) => {
  // Every page holds "foreign data" in its content; the signals come from titles and headings.
  const body = 'foreign data wrappers access foreign data kept elsewhere. ';
  const pages = [
    makeDoc('https://s.test/exact', 'Chapter 5. Foreign Data', body),
    makeDoc('https://s.test/start', 'Foreign Data Wrappers', body),
    makeDoc('https://s.test/phrase', 'Using Foreign Data Safely', body),
    makeDoc('https://s.test/heading', 'Unrelated title', body, { headings: ['Intro', 'Foreign Data'] }),
    makeDoc('https://s.test/heading-part', 'Another title', body, { headings: ['Foreign Data Wrappers'] }),
    makeDoc('https://s.test/words-apart', 'Data about foreign keys', body, { headings: ['Data', 'Foreign'] }),
    makeDoc('https://s.test/none', 'Nothing here', body),
  ];
  const s = snapshotOf([pages]);
  const split = snapshotOf([pages.slice(0, 3), pages.slice(3)]);
  t.teardown(() => (s.cleanup(), split.cleanup()));
  for (const [name, snap] of [['one segment', s], ['two segments', split]] as const) {
    const r = runQuery(snap, settings, req('foreign data'));
    const score = new Map(r.hits.map((h) => [h.url.replace('https://s.test/', ''), h.score]));
    const base = score.get('none')!;
    // The same content everywhere: the ratio to a page without signals is the re-ranking
    // multiplier times the BM25F difference of the title/heading fields; compare orders instead.
    t.equal(urls(r)[0], 'exact', `${name}: title equal to the query (without its numbering) first`);
    t.ok(score.get('start')! > score.get('phrase')! && score.get('phrase')! > score.get('words-apart')!, `${name}: title starting with the query, then holding it`);
    t.ok(score.get('heading')! > score.get('heading-part')!, `${name}: a heading equal to the query beats a heading holding it`);
    t.ok(score.get('heading')! > 2 * base, `${name}: heading bonus applied`);
    t.ok(score.get('words-apart')! < score.get('heading')!, `${name}: words in separate headings earn no heading bonus`);
  }
  // The prefix reading of an unfinished last word: "foreign dat" reads the title "Foreign Data" as equal (scaled).
  const p = urls(runQuery(s, settings, req('foreign dat')));
  t.equal(p[0], 'exact', 'prefix reading: title equal to the completed query first');
});

t.test('group counts of plain requests equal the general path (same totals, same key order, same hits)', async (t) => {
  const groups = ['Blog', '', 'Docs', 'API', ''];
  const pages: PageDoc[] = [];
  for (let i = 0; i < 60; i++) {
    pages.push(makeDoc(`https://s.test/p${i}`, `Page ${i} table${i % 3 ? ' index' : ''}`, `table rows ${i % 2 ? 'index' : 'vacuum'} data ${'word '.repeat(i % 7)}`, { contentGroup: groups[i % groups.length]! }));
  }
  const snap = snapshotOf([pages.slice(0, 25), pages.slice(25, 40), pages.slice(40)]);
  t.teardown(() => snap.cleanup());
  for (const q of ['table', 'table index', 'table rows index vacuum data', '*', 'tabel']) {
    for (const topK of [undefined, 3]) {
      const plain = runQuery(snap, settings, req(q, topK ? { topK } : {}));
      // Excluding a group nobody has takes the general path with the same answer.
      const general = runQuery(snap, settings, req(q, { excludeContentGroups: ['none-such'], ...(topK ? { topK } : {}) }));
      t.equal(JSON.stringify(plain.perGroup), JSON.stringify(general.perGroup), `${q} (topK ${topK}): per-group totals and key order`);
      t.equal(plain.total, general.total, `${q}: total`);
      t.same(plain.hits.map((h) => [h.url, h.group, h.score]), general.hits.map((h) => [h.url, h.group, h.score]), `${q}: hits`);
    }
  }
  const r = runQuery(snap, settings, req('table'));
  t.same(Object.keys(r.perGroup).sort(), ['API', 'Blog', 'Docs', '_']);
  t.equal(Object.values(r.perGroup).reduce((a, b) => a + b, 0), r.total);
});

t.test('a word\'s document frequency follows each generation\'s tombstones (cached per bitmap)', async (t) => {
  const pages = [
    makeDoc('https://s.test/a', 'Tables', 'tables and rows'),
    makeDoc('https://s.test/b', 'Tablespaces', 'tablespace rows'),
    makeDoc('https://s.test/c', 'Tabular output', 'tabular rows'),
    makeDoc('https://s.test/d', 'Other', 'tabs, tabulate and table: no such word'),
  ];
  // "rows" is the rarer word, so the tab… expansions are only probed for its pages and their
  // document frequency comes from the cached union.
  const whole = snapshotOf([pages]);
  const without = snapshotOf([pages.filter((p) => p.url !== 'https://s.test/b')]);
  t.teardown(() => (whole.cleanup(), without.cleanup()));
  // The same reader in a later generation where page b is deleted (new bitmap, as the store publishes).
  const seg = whole.segments[0]!;
  const rowB = seg.reader.rows().find((r) => r.url === 'https://s.test/b')!;
  const dead = new Uint8Array(seg.dead);
  dead[rowB.id] = 1;
  const later = {
    ...whole,
    generation: 2,
    segments: [{ ...seg, dead, liveCount: seg.liveCount - 1, liveLengths: seg.liveLengths.map((l, f) => l - rowB.lengths[f]!) }],
    totalDocs: whole.totalDocs - 1,
    totalLengths: whole.totalLengths.map((l, f) => l - rowB.lengths[f]!),
  };
  const scores = (s: typeof whole, q: string) => runQuery(s, settings, req(q)).hits.map((h) => `${h.url} ${h.score.toFixed(12)}`);
  for (const q of ['rows tab', 'rows tabl']) {
    const before = scores(whole, q);
    t.ok(before.some((x) => x.startsWith('https://s.test/b ')), `${q}: b found before`);
    t.same(scores(later, q), scores(without, q), `${q}: after the delete, scores as if b never existed`);
    t.same(scores(whole, q), before, `${q}: the earlier generation keeps its own statistics`);
  }
});
