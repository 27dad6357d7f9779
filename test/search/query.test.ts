import t from 'tap';
import { parseQuery, normaliseQuery } from '../../src/search/query.js';
import { fold, words, stemEn, isEnglishStopWord, urlWords, normaliseLanguage } from '../../src/search/analyze.js';
import { Vocabulary, typoBudget } from '../../src/search/typo.js';

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
  t.equal(normaliseQuery('  Créate   TABLE!! '), 'create table');
});

t.test('folding table', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['Ärger Straße', ['arger', 'strasse']],
    ['ÉCOLE', ['ecole']],
    ['ﬁle', ['file']], // NFKC ligature
    ['Ｆｕｌｌ', ['full']], // NFKC full width
    ['naïve café', ['naive', 'cafe']],
    ['Øresund Łódź', ['oresund', 'lodz']],
    ['pg_dump 15.18', ['pg', 'dump', '15', '18']],
    ['日本語', ['日本語']],
  ];
  for (const [input, want] of cases) t.same(words(input), want, input);
  t.equal(fold('ABC'), 'abc');
});

t.test('stemming and stop words', async (t) => {
  t.equal(stemEn('tables'), 'tabl');
  t.equal(stemEn('table'), 'tabl');
  t.equal(stemEn('running'), 'run');
  t.equal(stemEn('15'), '15', 'numbers are not stemmed');
  t.ok(isEnglishStopWord('the'));
  t.notOk(isEnglishStopWord('table'));
  t.same(urlWords('https://www.example.com/docs/15/sql-createtable.html?x=a_b'), ['docs', '15', 'sql', 'createtable', 'x', 'a', 'b']);
  t.equal(normaliseLanguage('English'), 'en');
  t.equal(normaliseLanguage('de-AT'), 'de');
  t.equal(normaliseLanguage('klingon'), null);
});

t.test('typo budget by word length', async (t) => {
  const cases: Array<[number, 'default' | 'strict' | 'off', number]> = [
    [3, 'default', 0], [4, 'default', 1], [7, 'default', 1], [8, 'default', 2], [12, 'default', 2],
    [5, 'strict', 0], [6, 'strict', 1], [9, 'strict', 1], [9, 'off', 0],
  ];
  for (const [len, tol, want] of cases) t.equal(typoBudget(len, tol), want, `${len} letters, ${tol}`);
});

t.test('fuzzy vocabulary (Damerau)', async (t) => {
  const v = new Vocabulary(['table', 'tables', 'cable', 'stable', 'vacuum', 'the', 'postgresql', 'postgres', 'trigger']);
  const f = (w: string, d: number, prefix = false) => v.fuzzy(w, d, prefix).map((m) => `${m.term}:${m.distance}`).sort();
  t.same(f('tabel', 1), ['table:1'], 'transposition is one edit');
  t.same(f('tble', 1), ['table:1'], 'deletion');
  t.same(f('tablle', 1), ['table:1'], 'insertion');
  t.same(f('tablws', 1), ['tables:1'], 'substitution');
  t.same(f('cable', 1), ['cable:0', 'table:1'].filter((x) => x.startsWith('cable')), 'first letter must match');
  t.same(f('vacum', 1), ['vacuum:1']);
  t.same(f('postgrsql', 2), ['postgresql:1']);
  t.same(f('postgrs', 2), ['postgres:1', 'postgresql:2'].slice(0, 1), 'a 7-letter word within 2 of postgres only');
  t.same(f('teh', 1), ['the:1'], 'transposed first two letters');
  t.same(f('trigr', 1, true).includes('trigger:1'), true, 'prefix with a typo');
});

t.test('letter/digit runs of mixed words are indexed too', async (t) => {
  const { alnumParts, analyzeText } = await import('../../src/search/analyze.js');
  t.same(alnumParts('elma04'), ['elma', '04']);
  t.same(alnumParts('utf8'), ['utf', '8']);
  t.same(alnumParts('table'), []);
  t.same(alnumParts('2024'), []);
  t.same(analyzeText('See [elma04] and UTF8 – pg_dump').compounds.sort(), ['04', '8', 'elma', 'pgdump', 'utf'].sort());
});
