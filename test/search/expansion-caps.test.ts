import t from 'tap';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { expansionsOf } from '../../src/search/expand.js';
import { parseQuery } from '../../src/search/query.js';
import { fuzzyOrder, Vocabulary } from '../../src/text/index.js';
import type { PageDoc, SearchSettings } from '../../src/core/index.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';

// The expansion caps (60 prefix completions, 120 words holding a CJK piece, 60 prefix-typo
// matches) are per snapshot: a word with more candidates than the cap must get the same
// alternatives, hence the same hits, scores, order and totals, however the index is split.

const settings: SearchSettings = {
  language: 'en', stopWords: null, typoTolerance: 'default',
  fieldWeights: { title: 8, keywords: 6, headings: 4, url: 3, content: 1 }, synonyms: [], resultMappings: [],
};
const req = (query: string): SearchRequest => ({
  query, filters: [], sort: null, sortOrder: 'ASC', includeContentGroups: null, excludeContentGroups: null, facetDefs: [], topK: 1000,
});

// 200 completions of `plor` (plora … ploroo) and of `データ` (データア …), 200 katakana words
// holding `データ` inside (アデータ …, アイデータ …): more than each cap.
const N = 200;
const LATIN = 'abcdefghijklmno';
const KANA = 'アイウエオカキクケコサシスセソ';
const suffixes = (alphabet: string) => [...alphabet, ...[...alphabet].flatMap((a) => [...alphabet].map((b) => a + b))].slice(0, N);
const latin = suffixes(LATIN).map((s) => `plor${s}`);
const kanaPrefix = suffixes(KANA).map((s) => `データ${s}`);
const kanaInside = suffixes(KANA).map((s) => `${s}データ`);

const pages: PageDoc[] = latin.map((w, i) => {
  // Each page holds its own words and, repeated, those of a page far away in the list: scores
  // then differ from page to page and each word is on two pages.
  const j = (i * 37 + 11) % N;
  const body = [w, kanaPrefix[i], kanaInside[i], `${latin[j]} `.repeat(1 + (i % 4)), `${kanaInside[j]} `.repeat(1 + (i % 3)), 'filler text'].join(' ');
  // Forms of one stem spread over the list, the later pages holding the earlier forms in code-point order.
  const forms = i === 150 ? ' connect' : i === 90 ? ' connected' : i === 30 ? ' connecting' : i === 10 ? ' connection' : '';
  return makeDoc(`https://caps.test/p${i}`, `Page ${i}`, body + forms);
});

const ranked = (r: ReturnType<typeof runQuery>) => ({ total: r.total, hits: r.hits.map((h) => `${h.url.replace('https://caps.test/', '')} ${h.score}`) });

t.test('prefix, CJK substring and prefix-typo alternatives and results do not depend on segmentation', async (t) => {
  const one = snapshotOf([pages]);
  // Contiguous batches: each holds the completions of its own part of the word list, so each
  // segment's own first 60 differ from the snapshot's.
  const three = snapshotOf([pages.slice(0, 40), pages.slice(40, 80), pages.slice(80)]);
  const many = snapshotOf(Array.from({ length: 10 }, (_, k) => pages.slice(k * 20, k * 20 + 20)));
  t.teardown(() => (one.cleanup(), three.cleanup(), many.cleanup()));

  const cases: Array<[string, string]> = [
    ['plor', 'prefix completions'],
    ['データ', 'CJK prefix completions and words holding the piece'],
    ['plar', 'prefix typos (one edit in the prefix)'],
    ['filler plor', 'prefix as the last of two words'],
    ['connections ', 'same-stem forms (no cap; their order breaks ties)'],
  ];
  for (const [query, what] of cases) {
    const words = parseQuery(query).words;
    const last = words[words.length - 1]!;
    const alts = (s: typeof one) => expansionsOf(last, s, settings, 'default', true, false).map((a) => `${a.term} ${a.kind} ${a.distance} ${a.weight}`);
    const base = alts(one);
    t.ok(base.length >= (query.startsWith('conn') ? 4 : 60), `${what}: ${base.length} alternatives`);
    t.same(alts(three), base, `${what}: same alternatives in the same order with three segments`);
    t.same(alts(many), base, `${what}: same alternatives in the same order with ten segments`);
    const r1 = ranked(runQuery(one, settings, req(query)));
    t.ok(r1.total > 0 && r1.total < pages.length, `${what}: ${r1.total} of ${pages.length} pages`);
    t.same(ranked(runQuery(three, settings, req(query))), r1, `${what}: same hits, scores, order and total with three segments`);
    t.same(ranked(runQuery(many, settings, req(query))), r1, `${what}: same hits, scores, order and total with ten segments`);
  }
  const kinds = (query: string) => new Set(expansionsOf(parseQuery(query).words[0]!, one, settings, 'default', true, false).map((a) => a.kind));
  t.ok(kinds('plar').has('typo'), 'plar expands through prefix typos');
  const cjk = expansionsOf(parseQuery('データ').words[0]!, one, settings, 'default', true, false);
  t.ok(cjk.filter((a) => !a.term.startsWith('データ')).length >= 60, 'データ expands to words holding it inside');
  t.ok(cjk.filter((a) => a.term.startsWith('データ')).length >= 60, 'データ expands to its completions');
});

t.test('fuzzyOrder is the order in which Vocabulary.fuzzy lists its matches, whatever the order of the words given', async (t) => {
  const words = [...latin, 'plar', 'plarx', 'lpor', 'lporz', 'pl', 'pqor', 'ploz', 'plo', 'p𝒳or', 'plor𝒳', 'plor\uffe0', 'plórа'];
  const sorted = [...words].sort((a, b) => {
    const x = [...a].map((c) => c.codePointAt(0)!);
    const y = [...b].map((c) => c.codePointAt(0)!);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return x.length - y.length;
  });
  const reversed = [...sorted].reverse();
  for (const [word, d, prefix] of [['plor', 1, true], ['plar', 1, true], ['lpor', 1, true], ['plorab', 1, false], ['plorxx', 2, false]] as const) {
    const all = new Vocabulary(sorted).fuzzy(word, d, prefix, 10_000).map((m) => m.term);
    t.ok(all.length > 3, `${word}: ${all.length} matches`);
    t.same(all, [...all].sort(fuzzyOrder(word)), `${word}: listed in fuzzyOrder`);
    t.same(new Vocabulary(reversed).fuzzy(word, d, prefix, 10_000).map((m) => m.term), all, `${word}: same order from an unsorted build`);
    t.same(new Vocabulary(sorted).fuzzy(word, d, prefix, 7).map((m) => m.term), all.slice(0, 7), `${word}: the limit keeps the first`);
  }
});
