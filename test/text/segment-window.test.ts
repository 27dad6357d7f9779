import t from 'tap';
import { wordEndIn, wordSpans, wordStartIn } from '../../src/text/index.js';

// wordStartIn / wordEndIn look at the pieces around one offset only; they must answer what the
// spans of the whole window slice say, whatever the window cuts: a piece, a word, a surrogate pair.
function reference(text: string, from: number, to: number, at: number): { start: number; end: number } {
  let start = -1;
  let end = -1;
  for (const [a, b] of wordSpans(text.slice(from, to))) {
    if (start < 0 && from + a >= at) start = from + a;
    if (from + b <= at) end = from + b;
  }
  return { start, end };
}

/** `count` texts of up to `max` parts from a seeded generator (the same texts on every run). */
function* texts(parts: string[], seed: number, count: number, max: number): Generator<string> {
  const rnd = (n: number) => Math.floor(((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296) * n);
  for (let k = 0; k < count; k++) {
    let text = '';
    const len = 1 + rnd(max);
    for (let i = 0; i < len; i++) text += parts[rnd(parts.length)];
    yield text;
  }
}

t.test('word starts and ends around an offset equal those of the window slice segmented whole', async (t) => {
  const parts = ['パッケージ管理システムの設定。', 'ソフトウェアを、インストールする', 'debianの', '管理', 'の', 'を', '仮想コンソール', '日本語入力', 'Straße', 'a\u0301', '😀', '𠀋𠀋', '𠮷野家', 'ภาษาไทย', '한국어', ' ', '\n', 'x2y', 'ー', '々', 'ｱｲｳ', '\ud800', '.', '、'];
  let checked = 0;
  let wrong = 0;
  for (const text of texts(parts, 5, 400, 12)) {
    for (let at = 1; at < text.length; at++) {
      for (const w of [1, 3, 8, 32]) {
        const from = Math.max(0, at - w);
        for (const to of [at + w, at + 1, text.length + 5]) {
          const want = reference(text, from, to, at);
          const start = wordStartIn(text, from, to, at);
          const end = wordEndIn(text, from, to, at);
          checked++;
          if (start !== want.start || end !== want.end) {
            if (++wrong <= 5) t.fail(`${JSON.stringify(text)} [${from}, ${to}) at ${at}: start ${start} end ${end}, want ${want.start} ${want.end}`);
          }
        }
      }
    }
  }
  t.equal(wrong, 0, `${checked} windows`);
  t.ok(checked > 50_000);
});

t.test('word boundaries near an offset (examples)', async (t) => {
  t.equal(wordStartIn('管理ツールの説明', 0, 8, 1), 2);
  t.equal(wordEndIn('管理ツールの説明', 0, 8, 3), 2);
  t.equal(wordStartIn('管理ツールの説明', 0, 8, 8), -1, 'no word starts at or after the end');
  t.equal(wordEndIn('管理ツールの説明', 3, 8, 4), -1, 'the cut katakana piece ツー is one word, ending after 4');
  t.equal(wordStartIn('abc def', 0, 7, 1), 4);
  t.equal(wordEndIn('abc def', 0, 7, 5), 3);
});
