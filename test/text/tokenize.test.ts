import t from 'tap';
import { alnumParts, analyzeText, compounds, fold, urlCompounds, urlWords, words } from '../../src/text/index.js';

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

t.test('URL words and compounds', async (t) => {
  t.same(urlWords('https://www.example.com/docs/15/sql-createtable.html?x=a_b'), ['docs', '15', 'sql', 'createtable', 'x', 'a', 'b']);
  t.same(urlCompounds('https://www.example.com/docs/sql-create-view.html'), ['sqlcreateview']);
  t.same(compounds('pg_proc and e-mail'), ['pgproc', 'email']);
  t.same(compounds('Ärger-Straße'), ['argerstrasse']);
});

t.test('letter/digit runs of mixed words are indexed too', async (t) => {
  t.same(alnumParts('elma04'), ['elma', '04']);
  t.same(alnumParts('utf8'), ['utf', '8']);
  t.same(alnumParts('table'), []);
  t.same(alnumParts('2024'), []);
  t.same(analyzeText('See [elma04] and UTF8 – pg_dump').compounds.sort(), ['04', '8', 'elma', 'pgdump', 'utf'].sort());
});
