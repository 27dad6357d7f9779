import t from 'tap';
import { parseQuery, normaliseQuery } from '../../src/search/query.js';

t.test('parseQuery table', async (t) => {
  const cases: Array<[string, Partial<ReturnType<typeof parseQuery>> & { w?: string[]; prefixLast?: boolean }]> = [
    ['create table', { w: ['create', 'table'], prefixLast: true }],
    ['create table ', { w: ['create', 'table'], prefixLast: false }],
    ['"dead tuples" vacuum', { w: ['dead', 'tuples', 'vacuum'], phrases: [['dead', 'tuples']], prefixLast: true }],
    ['vacuum "dead tuples"', { w: ['vacuum', 'dead', 'tuples'], phrases: [['dead', 'tuples']], prefixLast: false }],
    ['table -index', { w: ['table'], excludes: ['index'], prefixLast: false }],
    ['table -"dead tuples"', { w: ['table'], excludedPhrases: [['dead', 'tuples']] }],
    ['e-mail c++', { w: ['e', 'mail', 'c'], prefixLast: true }],
    ['a "lone quote', { w: ['a', 'lone', 'quote'], phrases: [['lone', 'quote']] }],
    ['"', { w: [] }],
    ['- table', { w: ['table'] }],
    ['*', { browse: true, w: [] }],
    ['  *  ', { browse: true, w: [] }],
    ['"single"', { w: ['single'], phrases: [] }],
  ];
  for (const [q, want] of cases) {
    const p = parseQuery(q);
    if (want.w) t.same(p.words.map((x) => x.word), want.w, `words of ${q}`);
    if (want.phrases) t.same(p.phrases, want.phrases, `phrases of ${q}`);
    if (want.excludes) t.same(p.excludes, want.excludes, `excludes of ${q}`);
    if (want.excludedPhrases) t.same(p.excludedPhrases, want.excludedPhrases, `excluded phrases of ${q}`);
    if (want.browse !== undefined) t.equal(p.browse, want.browse, `browse ${q}`);
    if (want.prefixLast !== undefined) t.equal(p.words[p.words.length - 1]!.prefix, want.prefixLast, `prefix of last word in ${q}`);
  }
  t.ok(parseQuery('"exact words"').words.every((w) => w.exactOnly), 'phrase words are exact only');
  // A hyphen right after a stop word continues a shortened compound (German, Dutch …).
  const stops = new Set(['und', 'and']);
  const hyphen: Array<[string, string[], string[]]> = [
    ['Datensicherung und -wiederherstellung', ['datensicherung', 'und', 'wiederherstellung'], []],
    ['Debian-Mentoren und -Sponsoren', ['debian', 'mentoren', 'und', 'sponsoren'], []],
    ['table -index', ['table'], ['index']],
    ['table and -"dead tuples"', ['table', 'and'], []],
    ['"a und" -b', ['a', 'und'], ['b']],
    ['und -b -c', ['und', 'b'], ['c']],
  ];
  for (const [q, w, ex] of hyphen) {
    const p = parseQuery(q, stops);
    t.same(p.words.map((x) => x.word), w, `words of ${q}`);
    t.same(p.excludes, ex, `excludes of ${q}`);
  }
  t.same(parseQuery('Datensicherung und -wiederherstellung').excludes, ['wiederherstellung'], 'without stop words: an exclusion');
  t.equal(parseQuery('und -wied', stops).words[1]!.prefix, true, 'the continued word is a prefix when typed last');
  t.equal(normaliseQuery('  Créate   TABLE!! '), 'create table');
});
