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

t.test('firstWords reads only a prefix and gives the first n words of the whole text', async (t) => {
  const { firstWords } = await import('../../src/text/tokenize.js');
  const parts = ['Straße', 'pg_dump', 'naïve', 'utf8', 'パッケージ管理システムの設定。', 'ソフトウェアを、インストールする', '™', 'e-mail', '½', 'Ünïcödé', '\u3000', '\n', 'word'];
  let seed = 3;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let k = 0; k < 200; k++) {
    const len = Math.floor(rnd() * 400);
    let text = '';
    for (let i = 0; i < len; i++) text += parts[Math.floor(rnd() * parts.length)]! + (rnd() < 0.7 ? ' ' : '');
    for (const n of [1, 5, 20, 300]) t.same(firstWords(text, n), words(text).slice(0, n), `text ${k}, n ${n}`);
  }
  t.same(firstWords('one two three four', 2), ['one', 'two']);
  t.same(firstWords('one two', 0), []);
});

t.test('segmentWord cuts pieces by its class table exactly as the piece regex does', async (t) => {
  const { segmentWord, segmentWordByRegex } = await import('../../src/text/segment.js');
  const chars = ['ー', '々', 'ア', 'あ', '漢', '𠀋', 'a', '1', 'ก', '한', 'ລ', 'ក', 'မ', 'é', 'ж', 'ヴ', 'ｱ', '〆', '〇'];
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let k = 0; k < 3000; k++) {
    let w = '';
    const len = 1 + Math.floor(rnd() * 10);
    for (let i = 0; i < len; i++) w += chars[Math.floor(rnd() * chars.length)];
    t.same(segmentWord(w), segmentWordByRegex(w), w);
  }
});

t.test('wordSpans cuts pieces by its class table exactly as the piece regex does', async (t) => {
  const { wordSpans, wordSpansByRegex } = await import('../../src/text/segment.js');
  const chars = ['ー', '々', 'ア', 'あ', '漢', '𠀋', 'a', '1', 'ก', '한', 'ລ', 'ក', 'မ', 'é', 'ж', 'ヴ', 'ｱ', '〆', '〇', ' ', '。', '-', '\u3099', 'の', '管理', 'ツール', 'パッケージ'];
  let seed = 17;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let k = 0; k < 3000; k++) {
    let w = '';
    const len = 1 + Math.floor(rnd() * 16);
    for (let i = 0; i < len; i++) w += chars[Math.floor(rnd() * chars.length)];
    t.same(wordSpans(w), wordSpansByRegex(w), w);
  }
});

/**
 * `count` texts, each `length(rnd)` pieces drawn from `parts`, from a seeded linear congruential
 * generator (the same texts on every run).
 */
function* joinedPieces(parts: string[], seed: number, count: number, length: (rnd: (n: number) => number) => number): Generator<string> {
  const rnd = (n: number) => Math.floor(((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296) * n);
  for (let k = 0; k < count; k++) {
    let text = '';
    const len = length(rnd);
    for (let i = 0; i < len; i++) text += parts[rnd(parts.length)];
    yield text;
  }
}

t.test('wordSpans (one table scan over the text) equals the piece regex definition on long mixed texts', async (t) => {
  const { wordSpans, wordSpansByRegex } = await import('../../src/text/segment.js');
  const parts = ['パッケージ管理システムの設定。', 'ソフトウェアを、インストールする', 'debianの', 'Straße', 'naïve', 'a\u0301', ' \u0301', '😀', '𠀋', 'ภาษาไทย', '한국어', '½', '™', '—', '\u3000', ' ', '\n', 'x2y', 'ー', '々', 'ｱｲｳ', '\ud800', '.'];
  let same = 0;
  for (const text of joinedPieces(parts, 41, 1500, (rnd) => rnd(60))) {
    if (JSON.stringify(wordSpans(text)) === JSON.stringify(wordSpansByRegex(text))) same++;
    else t.same(wordSpans(text), wordSpansByRegex(text), JSON.stringify(text));
  }
  t.equal(same, 1500);
});

t.test('words equals its definition (folded runs of letters, digits and marks, CJK runs segmented) on random mixed texts', async (t) => {
  const { isSegmentedScript, segmentWord } = await import('../../src/text/index.js');
  const definition = (text: string) =>
    (fold(text).match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).flatMap((w) => (isSegmentedScript(w) ? segmentWord(w) : [w]));
  const parts = ['Straße', 'ÄRGER', 'naïve', 'Ｆｕｌｌ', 'ﬁle', '½', 'İstanbul', 'ΣΟΦΙΑ', 'ёлка', 'pg_dump', 'utf8', '管理', 'パッケージ', '—', '…', '„', 'a\u0301', 'K', ' ', ' ', '\n', '.', 'word'];
  let same = 0;
  for (const text of joinedPieces(parts, 23, 2000, (rnd) => 1 + rnd(12))) {
    if (JSON.stringify(words(text)) === JSON.stringify(definition(text))) same++;
    else t.same(words(text), definition(text), text);
  }
  t.equal(same, 2000);
});
