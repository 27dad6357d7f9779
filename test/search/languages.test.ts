import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { runQuery, type SearchRequest } from '../../src/search/engine.js';
import { snippet } from '../../src/search/snippet.js';
import { significantWords } from '../../src/search/expand.js';
import { parseQuery } from '../../src/search/query.js';
import { mergeSegments, SegmentReader, writeSegment } from '../../src/index/index.js';
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
const page = (lang: string, title: string, content: string): PageDoc => makeDoc(`https://s.test/${lang}`, title, content, { language: lang });

/** Per alphabetic language: a page, a query by another form of the same stem, a prefix and a misspelling. */
const ALPHABETIC: Array<{ lang: string; doc: PageDoc; stemmed: string; prefix: string; typo: string }> = [
  { lang: 'de', doc: page('de', 'Pakete verwalten', 'Die Verwaltung installiert Binärpakete aus dem Archiv.'), stemmed: 'Paketen', prefix: 'verwal', typo: 'Verwaltnug' },
  { lang: 'fr', doc: page('fr', 'Installer des logiciels', 'Comment installer les logiciels avec le gestionnaire.'), stemmed: 'installation', prefix: 'gestionn', typo: 'logicels' },
  { lang: 'es', doc: page('es', 'Instalación de programas', 'Los programas se instalan con el gestor.'), stemmed: 'programa', prefix: 'instalac', typo: 'porgramas' },
  { lang: 'it', doc: page('it', 'Gestione dei pacchetti', 'I pacchetti vengono installati dal gestore.'), stemmed: 'pacchetto', prefix: 'gestio', typo: 'pachetti' },
  { lang: 'pt', doc: page('pt', 'Gerenciamento de pacotes', 'Os pacotes são instalados pelo gerenciador.'), stemmed: 'pacote', prefix: 'gerenciam', typo: 'pacoets' },
  { lang: 'nl', doc: page('nl', 'Bestanden beheren', 'De bestanden worden door de beheerder bewaard.'), stemmed: 'bestand', prefix: 'behee', typo: 'bestnaden' },
  { lang: 'sv', doc: page('sv', 'Hantera filerna', 'Filerna sparas av hanteraren.'), stemmed: 'filer', prefix: 'hantera', typo: 'filenra' },
  { lang: 'da', doc: page('da', 'Håndtering af pakkerne', 'Pakkerne installeres af værktøjet.'), stemmed: 'pakker', prefix: 'håndter', typo: 'pakekrne' },
  { lang: 'no', doc: page('no', 'Behandling av programmene', 'Programmene installeres av verktøyet.'), stemmed: 'programmer', prefix: 'behandl', typo: 'programemne' },
  { lang: 'fi', doc: page('fi', 'Ohjelmistojen hallinta', 'Ohjelmistot asennetaan hallintatyökalulla.'), stemmed: 'ohjelmistoja', prefix: 'hallint', typo: 'ohjelmsitojen' },
  { lang: 'ru', doc: page('ru', 'Управление пакетами', 'Пакеты устанавливаются менеджером.'), stemmed: 'пакетов', prefix: 'управл', typo: 'пакетамы' },
];
const CJK: PageDoc[] = [
  page('ja', 'パッケージ管理システム', 'ソフトウェアのインストールと削除を行うツールです。'),
  page('zh', '软件包管理器', '用于安装和删除软件的工具。'),
  page('ko', '패키지 관리자', '소프트웨어를 설치하고 제거하는 도구입니다.'),
  page('th', 'ระบบจัดการแพ็กเกจ', 'เครื่องมือสำหรับติดตั้งซอฟต์แวร์'),
];
const english = makeDoc('https://s.test/en', 'Managing software packages', 'The package manager installs software.');
const all = [...ALPHABETIC.map((x) => x.doc), ...CJK, english];

const first = (snap: ReturnType<typeof snapshotOf>, q: string, extra: Partial<SearchRequest> = {}) => runQuery(snap, settings, req(q, extra)).hits[0]?.url.replace('https://s.test/', '');

t.test('a page in each alphabetic language is found by a stemmed, a prefixed and a misspelled query', async (t) => {
  const snap = snapshotOf([all]);
  t.teardown(() => snap.cleanup());
  for (const x of ALPHABETIC) {
    // Trailing space: no prefix reading; typos off: only the stem can match.
    t.equal(first(snap, x.stemmed + ' ', { typoTolerance: 'off' }), x.lang, `${x.lang}: stemmed ${x.stemmed}`);
    t.equal(first(snap, x.prefix, { typoTolerance: 'off' }), x.lang, `${x.lang}: prefix ${x.prefix}`);
    t.equal(first(snap, x.typo + ' '), x.lang, `${x.lang}: misspelled ${x.typo}`);
  }
});

t.test('CJK and Thai pages are found by whole words and by part of a word', async (t) => {
  const snap = snapshotOf([all]);
  t.teardown(() => snap.cleanup());
  const table: Array<[string, string, string]> = [
    ['管理', 'ja', 'a word of the title'],
    ['ッケージ管', 'ja', 'starting and ending inside words'],
    ['インスト', 'ja', 'a prefix of a content word'],
    ['ンストール', 'ja', 'the inside of a word'],
    ['软件包', 'zh', 'Chinese word'],
    ['件包管', 'zh', 'Chinese, part of two words'],
    ['패키지', 'ko', 'Korean word'],
    ['แพ็กเกจ', 'th', 'Thai word'],
    ['จัดการ', 'th', 'Thai word inside a run'],
  ];
  for (const [q, want, why] of table) t.equal(first(snap, q), want, `${q}: ${why}`);
  const r = runQuery(snap, settings, req('ンストール'));
  t.equal(r.hits.length, 1, 'no typo edits inside CJK words: only the page holding the part');
});

t.test('highlighting and snippet cuts follow dictionary-word boundaries', async (t) => {
  const text = 'ソフトウェアのインストールと削除を行うパッケージ管理システムです。';
  const out = snippet(text, new Set(['管理']), { highlight: true });
  t.match(out, /パッケージ<mark>管理<\/mark>システム/, 'only the matched word is marked, not the whole run');
  const long = 'ソフトウェアのインストール'.repeat(30) + 'パッケージ管理システム' + 'ネットワーク設定'.repeat(30);
  const cut = snippet(long, new Set(['管理']), { highlight: false, size: 60 });
  t.match(cut, /^…(ソフトウェア|の|インストール)/, 'the passage starts on a word boundary');
  t.match(cut, /(ネットワーク|設定)…$/, 'and ends on one');
});

t.test('a mixed-language project ranks each page with its own language', async (t) => {
  const snap = snapshotOf([all]);
  t.teardown(() => snap.cleanup());
  t.equal(first(snap, 'packages', { typoTolerance: 'off' }), 'en', 'English stemming for the English page');
  t.equal(first(snap, 'Verwaltungen ', { typoTolerance: 'off' }), 'de', 'German stemming for the German page');
  t.equal(first(snap, 'die pakete'), 'de', 'German stop words in a project holding German pages');
  t.equal(first(snap, 'los programas'), 'es');
});

t.test('ranking is identical however a multilingual index is split, and merges keep the stems', async (t) => {
  const one = snapshotOf([all]);
  const many = snapshotOf([all.slice(0, 4), all.slice(4, 9), all.slice(9, 13), all.slice(13)]);
  t.teardown(() => (one.cleanup(), many.cleanup()));
  for (const q of ['Paketen', 'pakete', 'ッケージ管', '管理', 'programas', 'software', 'пакетов', 'инсталл']) {
    const a = runQuery(one, settings, req(q));
    const b = runQuery(many, settings, req(q));
    t.same(b.hits.map((h) => h.url), a.hits.map((h) => h.url), `same order for ${q}`);
    t.same(b.hits.map((h) => h.score.toFixed(9)), a.hits.map((h) => h.score.toFixed(9)), `same scores for ${q}`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lang-merge-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = path.join(dir, 'a.seg');
  const b = path.join(dir, 'b.seg');
  writeSegment(a, [{ seq: 1, at: 1, firstAt: 1, doc: ALPHABETIC[0]!.doc }], [], { defaultLanguage: 'en' });
  writeSegment(b, [{ seq: 2, at: 2, firstAt: 2, doc: ALPHABETIC[1]!.doc }], [], { defaultLanguage: 'en' });
  const m = path.join(dir, 'm.seg');
  mergeSegments(m, [{ path: a, liveIds: [0] }, { path: b, liveIds: [0] }], []);
  const r = SegmentReader.open(m);
  t.teardown(() => r.close());
  t.same(r.languages, ['de', 'fr']);
  t.same(r.termsWithLanguageStem('de', 'paket'), ['pakete']);
  t.ok(r.termsWithLanguageStem('fr', 'install').includes('installer'));
});

t.test('stop words: the languages present, plus search.stopWordAdditions', async (t) => {
  const slots = (q: string, st: SearchSettings, langs: string[]) => significantWords(parseQuery(q), st, langs).slots.map((w) => w.word);
  t.same(slots('die pakete', settings, ['en']), ['die', 'pakete'], 'an English-only project keeps German words');
  t.same(slots('die pakete', settings, ['de', 'en']), ['pakete'], 'German stop words once German pages are present');
  t.same(slots('the pakete', settings, ['de']), ['pakete'], 'the project language (en) counts too');
  const withAdd = { ...settings, stopWordAdditions: { de: ['pakete'] } };
  t.same(slots('verwalten pakete', withAdd, ['de']), ['verwalten'], 'an added German stop word');
  t.same(slots('verwalten pakete', withAdd, ['fr']), ['verwalten', 'pakete'], 'only where German is present');
  t.same(slots('die pakete', { ...settings, stopWords: ['pakete'] }, ['de']), ['die'], 'search.stopWords replaces the lists');
});

t.test('a CJK query cut in two prefers pages holding it uninterrupted', async (t) => {
  const apart = makeDoc('https://s.test/apart', '情報と管理', '情報の説明。管理の説明。情報の一覧。', { language: 'ja' });
  const together = makeDoc('https://s.test/together', 'その他', '情報管理の扱い。', { language: 'ja' });
  const snap = snapshotOf([[apart, together]]);
  t.teardown(() => snap.cleanup());
  const r = runQuery(snap, settings, req('情報管理'));
  t.same(r.hits.map((h) => h.url.replace('https://s.test/', '')), ['together', 'apart'], 'both match both words; the uninterrupted one first');
  t.ok(r.hits[1]!.score > r.hits[0]!.score, 'although the other scores higher');
});

t.test('a part of a katakana run finds it, however ICU would cut the run', async (t) => {
  const ja = (slug: string, title: string, content: string) => makeDoc(`https://s.test/${slug}`, title, content, { language: 'ja' });
  const snap = snapshotOf([[
    ja('binary', 'バイナリーデーター', 'バイナリーデーターの扱い。'),
    ja('mail', 'メールデーター変換', 'メールの変換。'),
    ja('build', 'ビルドツール', 'パッケージのビルド。'),
    ja('other', '電子メール', 'メールとデータの説明。ビルの話。'),
  ]]);
  t.teardown(() => snap.cleanup());
  const table: Array<[string, string]> = [
    ['ナリーデータ', 'binary'],
    ['メールデータ', 'mail'],
    ['ビルドツ', 'build'],
    ['ルドツー', 'build'],
  ];
  for (const [q, want] of table) t.equal(first(snap, q), want, q);
});

t.test('a hyphen after a stop word continues a shortened compound instead of excluding', async (t) => {
  const de = (slug: string, title: string, content: string) => makeDoc(`https://s.test/${slug}`, title, content, { language: 'de' });
  const snap = snapshotOf([[
    de('sicherung', 'Datensicherung und -wiederherstellung', 'Sicherung und Wiederherstellung der Daten.'),
    de('nur', 'Datensicherung', 'Wie man Daten sichert.'),
  ]]);
  t.teardown(() => snap.cleanup());
  t.equal(first(snap, 'Datensicherung und -wiederherstellung'), 'sicherung', '"und -wiederherstellung" is a word of the query');
  t.equal(first(snap, 'Datensicherung und -wied'), 'sicherung', 'and a prefix when typed last');
  const r = runQuery(snap, settings, req('Datensicherung -wiederherstellung'));
  t.same(r.hits.map((h) => h.url.replace('https://s.test/', '')), ['nur'], 'after a content word, -word still excludes');
});

t.test('a misspelled word whose stem is a stop word is not matched by that stop word', async (t) => {
  const de = (slug: string, title: string, content: string) => makeDoc(`https://s.test/${slug}`, title, content, { language: 'de' });
  const snap = snapshotOf([[
    de('diese', 'Was ist diese FAQ?', 'Einleitung.'),
    de('des', 'Die FAQ des Projekts', 'Die FAQ des Projekts und des Teams.'),
  ]]);
  t.teardown(() => snap.cleanup());
  // `dese` stems to `des` in German: as a stem match it would put every page holding "des"
  // before the typo match `diese`.
  t.equal(first(snap, 'Was ist dese FAQ? '), 'diese');
  t.equal(first(snap, 'des FAQ '), 'des', 'the stop word typed itself still matches');
});

t.test('a word typed in a rarer inflected form ranks pages holding that form first', async (t) => {
  const de = (slug: string, title: string, content: string) => makeDoc(`https://s.test/${slug}`, title, content, { language: 'de' });
  const fillers = Array.from({ length: 8 }, (_, i) => de(`f${i}`, `Seite ${i}`, `Ein Paket und noch ein Paket, Nummer ${i}.`));
  const form = de('form', 'Hinweise', 'Die Anleitung des Pakets steht im Archiv, mit allen weiteren Hinweisen zur Installation.');
  const stem = de('stem', 'Hinweise', 'Paket, Paket und Paket: die Anleitung.');
  const snap = snapshotOf([[...fillers, form, stem]]);
  const many = snapshotOf([fillers.slice(0, 5), [...fillers.slice(5), form], [stem]]);
  t.teardown(() => (snap.cleanup(), many.cleanup()));
  // Trailing space: no prefix reading of the last word.
  t.equal(first(snap, 'pakets anleitung '), 'form', 'the form as typed (rare) outweighs more of its common stem');
  t.equal(first(snap, 'paket anleitung '), 'stem', 'typed in its common form, the stem page keeps its lead');
  const a = runQuery(snap, settings, req('pakets anleitung '));
  const b = runQuery(many, settings, req('pakets anleitung '));
  t.same(b.hits.map((h) => [h.url, h.score.toFixed(9)]), a.hits.map((h) => [h.url, h.score.toFixed(9)]), 'the same however the index is split');
});

t.test('stop words of a short query rank pages holding them higher without being required', async (t) => {
  const fr = (slug: string, title: string, content: string) => makeDoc(`https://s.test/${slug}`, title, content, { language: 'fr' });
  const snap = snapshotOf([[
    fr('worded', 'Les versions', 'Quand vous lisez ceci, la version est gelée uniquement pour la troisième fois.'),
    fr('other', 'Les versions', 'La version gelée, gelée encore : rien de plus.'),
    fr('none', 'Autre', 'Une page sans rapport.'),
  ]]);
  t.teardown(() => snap.cleanup());
  const r = runQuery(snap, settings, req('vous gelée troisième '));
  t.same(r.hits.map((h) => h.url.replace('https://s.test/', '')), ['worded', 'other'], 'the page with the whole wording first; the other still matches');
  t.same(runQuery(snap, settings, req('gelée ')).hits.map((h) => h.url.replace('https://s.test/', '')), ['other', 'worded'], 'without the stop words, more of the word wins');
  t.equal(first(snap, 'gelée unique'), 'worded', 'a stop word still being typed counts through its completions (uniquement)');
});
