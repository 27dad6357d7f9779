import t from 'tap';
import { fold, stem, stopWordsOf, words, wordSpans, isSegmentedScript } from '../../src/text/index.js';

t.test('folding per script', async (t) => {
  const table: Array<[string, string, string]> = [
    ['Ärger Straße', 'arger strasse', 'German: umlaut and ß folded'],
    ['Crème Brûlée', 'creme brulee', 'French accents removed'],
    ['Åsa Øre Ähnlich', 'asa ore ahnlich', 'Scandinavian letters folded'],
    ['İstanbul ılık Işık', 'istanbul ilik isik', 'Turkish dotted and dotless i fold to i'],
    ['Новый Ёлка', 'новый елка', 'Cyrillic: й keeps its breve, ё folds to е'],
    ['Άλφα', 'αλφα', 'Greek accents removed'],
    ['ガイド パッケージ', 'ガイド パッケージ', 'Japanese voicing marks kept'],
    ['ｶﾀｶﾅ', 'カタカナ', 'half-width katakana to full width (NFKC)'],
    ['ภาษาไทย', 'ภาษาไทย', 'Thai vowel and tone marks kept'],
    ['हिन्दी', 'हिन्दी', 'Devanagari vowel signs kept'],
  ];
  for (const [input, want, why] of table) t.equal(fold(input), want, why);
});

t.test('word segmentation for scripts without spaces', async (t) => {
  const table: Array<[string, string[], string]> = [
    ['パッケージ管理', ['パッケージ', '管理'], 'Japanese katakana and kanji'],
    ['ケーススタディの提示', ['ケーススタディ', 'の', '提示'], 'Japanese sentence: a katakana run is one word'],
    ['バイナリーデーター', ['バイナリーデーター'], 'katakana loanwords ICU cuts by chance (バイ|ナ|リー|デー|ター) stay whole'],
    ['ビルドツールの説明', ['ビルドツール', 'の', '説明'], 'and so do compounds of loanwords'],
    ['debianのパッケージ', ['debian', 'の', 'パッケージ'], 'Latin inside a Japanese run stays whole'],
    ['中华人民共和国', ['中华', '人民', '共和国'], 'Chinese'],
    ['ภาษาไทยง่าย', ['ภาษา', 'ไทย', 'ง่าย'], 'Thai'],
    ['한국어 형태소', ['한국어', '형태소'], 'Korean (spaces)'],
    ['Grüße aus Köln', ['grusse', 'aus', 'koln'], 'alphabetic text is unchanged'],
  ];
  for (const [input, want, why] of table) t.same(words(input), want, why);
  t.same(wordSpans('管理ツール'), [[0, 2], [2, 5]], 'word spans for highlighting');
  t.same(wordSpans('ビルドツールの説明'), [[0, 6], [6, 7], [7, 9]], 'a katakana run is one span, as it is one word');
  t.ok(isSegmentedScript('管理') && !isSegmentedScript('paket'));
});

t.test('stemming per language (of folded words)', async (t) => {
  const table: Array<[string, string, string]> = [
    ['en', 'tables', 'tabl'],
    ['de', 'pakete', 'paket'],
    ['de', fold('Häuser'), 'haus'],
    ['fr', 'distribuer', 'distribu'],
    ['fr', 'installation', 'install'],
    ['es', 'paquetes', 'paquet'],
    ['it', 'pacchetti', 'pacchett'],
    ['pt', 'pacotes', 'pacot'],
    ['nl', 'pakketten', 'pakket'],
    ['sv', 'paketen', 'paket'],
    ['da', 'pakkerne', 'pak'],
    ['no', 'pakkene', 'pakk'],
    ['fi', 'paketteja', 'paket'],
    ['ru', 'пакеты', 'пакет'],
    ['ja', 'パッケージ', 'パッケージ'],
    ['pl', 'pakiety', 'pakiety'],
  ];
  for (const [lang, word, want] of table) t.equal(stem(word, lang), want, `${lang}: ${word}`);
  t.equal(stem('15ab', 'de'), '15ab', 'words with digits are not stemmed');
});

t.test('stop words per language', async (t) => {
  const table: Array<[string, string, boolean]> = [
    ['en', 'the', true],
    ['en', 'table', false],
    ['de', 'und', true],
    ['de', 'paket', false],
    ['fr', 'les', true],
    ['es', 'los', true],
    ['it', 'della', true],
    ['pt', 'uma', true],
    ['nl', 'het', true],
    ['sv', 'och', true],
    ['da', 'og', true],
    ['no', 'ikke', true],
    ['fi', 'ja', true],
    ['ru', 'и', true],
    ['ja', 'の', true],
    ['ja', '管理', false],
  ];
  for (const [lang, word, want] of table) t.equal(stopWordsOf(lang).has(word), want, `${lang}: ${word}`);
  t.ok(stopWordsOf('fr').has('a'), 'folded: à is listed as a');
});
