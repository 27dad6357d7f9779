import t from 'tap';
import { highlight, setSnippetWordIdLimit, snippet } from '../../src/search/snippet.js';
import { fold, words } from '../../src/text/index.js';

// The matcher before the character scan: one case-insensitive regex of the matched ASCII words
// as whole words (any non-ASCII code unit counts as a word character), then folded lookups of
// words holding non-ASCII letters. The scan must find exactly the same spans.
function referenceHighlight(text: string, matched: Set<string>): string {
  const spans: Array<{ start: number; end: number }> = [];
  const words = [...matched].filter((w) => /^[a-z0-9]+$/.test(w)).sort((a, b) => b.length - a.length);
  if (words.length) {
    const re = new RegExp(`(?<![A-Za-z0-9\\u0080-\\uffff])(?:${words.join('|')})(?![A-Za-z0-9\\u0080-\\uffff])`, 'gi');
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) spans.push({ start: m.index, end: m.index + m[0].length });
  }
  const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;
  const re2 = /[^\x00-\x7f]/g;
  let m: RegExpExecArray | null;
  while ((m = re2.exec(text)) !== null) {
    if (!WORD_CHAR.test(m[0])) continue;
    let a = m.index;
    let b = m.index + 1;
    while (a > 0 && WORD_CHAR.test(text[a - 1]!)) a--;
    while (b < text.length && WORD_CHAR.test(text[b]!)) b++;
    re2.lastIndex = b;
    if ((fold(text.slice(a, b)).match(/[\p{L}\p{N}]+/gu) ?? []).some((w) => matched.has(w))) spans.push({ start: a, end: b });
  }
  spans.sort((x, y) => x.start - y.start);
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
  let out = '';
  let pos = 0;
  for (const s of spans) {
    if (s.start < pos) continue;
    out += esc(text.slice(pos, s.start)) + '<mark>' + esc(text.slice(s.start, s.end)) + '</mark>';
    pos = s.end;
  }
  return out + esc(text.slice(pos));
}


/** A seeded linear congruential generator: `rnd(n)` is the next number in [0, n). */
function lcg(seed: number): (n: number) => number {
  return (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
}

/** `len` words of `vocab`, each followed by one of `seps`, drawn with `rnd`. */
function randomText(rnd: (n: number) => number, vocab: readonly string[], seps: readonly string[], len: number): string {
  let text = '';
  for (let i = 0; i < len; i++) text += vocab[rnd(vocab.length)]! + seps[rnd(seps.length)]!;
  return text;
}
t.test('highlighting marks whole words case-insensitively and escapes the rest', async (t) => {
  const m = new Set(['table', 'create', 'pg', 'caf\u00e9', 'cafe', '15']);
  t.equal(highlight('CREATE TABLE <t> & tables; pg_dump', m), '<mark>CREATE</mark> <mark>TABLE</mark> &lt;t&gt; &amp; tables; <mark>pg</mark>_dump');
  t.equal(highlight('tableX xtable table1 Table', m), 'tableX xtable table1 <mark>Table</mark>');
  t.equal(highlight('Café table', m), '<mark>Café</mark> <mark>table</mark>');
  t.equal(highlight('tableé table', m), 'tableé <mark>table</mark>', 'a word followed by a non-ASCII letter is another word');
  t.equal(highlight('PostgreSQL 15.2', m), 'PostgreSQL <mark>15</mark>.2');
  t.equal(highlight('<script>alert(1)</script>', new Set(['script'])), '&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt;');
});

t.test('the character scan finds the same words as the regex it replaced (random texts)', async (t) => {
  const rnd = lcg(7);
  const vocab = ['table', 'Table', 'TABLE', 'tab', 'tables', 'a', 'b1', 'x9y', 'caf\u00e9', 'na\u00efve', '\u00e9t\u00e9', 'stra\u00dfe', 'idx', 'conf', 'configure', 'z'];
  const seps = [' ', '  ', '_', '-', '.', ',', '\n', '<', '>', '&', '"', "'", '/', '\u00a0', '\u2014', '(', ')', ''];
  let same = 0;
  for (let n = 0; n < 400; n++) {
    const text = randomText(rnd, vocab, seps, 1 + rnd(40));
    const matched = new Set<string>();
    const k = 1 + rnd(5);
    for (let i = 0; i < k; i++) matched.add(fold(vocab[rnd(vocab.length)]!));
    if (highlight(text, matched) === referenceHighlight(text, matched)) same++;
    else t.fail(`differs on ${JSON.stringify(text)} with ${JSON.stringify([...matched])}`);
  }
  t.equal(same, 400);
});

t.test('snippets pick the window with the most distinct matched words', async (t) => {
  const text = 'alpha '.repeat(100) + 'beta gamma delta ' + 'omega '.repeat(100);
  const s = snippet(text, new Set(['beta', 'gamma']), { highlight: true });
  t.match(s, /^….*<mark>beta<\/mark> <mark>gamma<\/mark> delta.*…$/);
  t.ok(s.length <= 300 + 60);
  t.equal(snippet('short text', new Set(['nothing']), { highlight: true }), 'short text');
});

t.test('texts kept with a memo (runs grouped by hash) give the same snippets as a fresh scan', async (t) => {
  const rnd = lcg(11);
  const vocab = ['table', 'Table', 'tables', 'index', 'INDEX', 'rows', 'caf\u00e9', 'x9', 'a', 'vacuum', 'data', 'conf', 'config', 'z'];
  const seps = [' ', ', ', '. ', '_', '-', '\n', '<b>', ' & ', '\u2014'];
  let same = 0;
  for (let n = 0; n < 150; n++) {
    const text = randomText(rnd, vocab, seps, 70 + rnd(400));
    const memo = {};
    for (let r = 0; r < 3; r++) {
      const matched = new Set<string>();
      const k = 1 + rnd(4);
      for (let i = 0; i < k; i++) matched.add(fold(vocab[rnd(vocab.length)]!));
      for (const highlight of [true, false]) {
        const a = snippet(text, matched, { highlight, memo });
        const b = snippet(text, matched, { highlight });
        if (a === b) same++;
        else t.fail(`differs with ${JSON.stringify([...matched])}: ${a} vs ${b}`);
      }
    }
  }
  t.equal(same, 900);
});

t.test('CJK and accented texts kept with a memo (runs indexed by word) give the same snippets and marks as a fresh scan', async (t) => {
  const rnd = lcg(29);
  // Runs holding several folded words (管理ツール), words in several runs, accented Latin runs.
  // 'ä¼b' folds to two words (a¼ → a1⁄4): a run whose second word may be the first matched.
  const vocab = ['管理', 'ツール', 'パッケージ', 'の', 'を', 'インストール', '削除', '情報', 'Straße', 'Größe', 'café', 'debian', 'apt', 'ä¼b'];
  const seps = ['', '', '。', '、', ' ', '\n', '（', '）'];
  let same = 0;
  for (let n = 0; n < 60; n++) {
    const text = randomText(rnd, vocab, seps, 80 + rnd(400));
    const memo = {};
    for (let r = 0; r < 4; r++) {
      const matched = new Set<string>();
      const k = 1 + rnd(r === 3 ? 40 : 5);
      for (let i = 0; i < k; i++) {
        const ws = words(vocab[rnd(vocab.length)]!);
        matched.add(i < vocab.length ? ws[rnd(ws.length)]! : `w${i}`);
      }
      const a = snippet(text, matched, { highlight: true, memo });
      const b = snippet(text, matched, { highlight: true });
      if (a === b && highlight(text, matched, memo) === highlight(text, matched)) same++;
      else t.fail(`differs with ${JSON.stringify([...matched])}: ${a} vs ${b}`);
    }
  }
  t.equal(same, 240);
});

t.test('words whose hashes collide are told apart; a card memo keeps its title and content runs apart', async (t) => {
  // "ac0" and "aan" have the same hash (31·c2 + c3: 31·99 + 48 = 31·97 + 110).
  const text = 'aan ac0 AAN AC0 ' + 'filler words '.repeat(40) + 'Ac0 aAn';
  t.equal(highlight('aan ac0 AAN AC0', new Set(['ac0'])), 'aan <mark>ac0</mark> AAN <mark>AC0</mark>');
  t.equal(highlight('aan ac0 AAN AC0', new Set(['ac0', 'aan'])), '<mark>aan</mark> <mark>ac0</mark> <mark>AAN</mark> <mark>AC0</mark>');
  const card = {};
  const title = 'Ac0 and <aan>';
  for (let r = 0; r < 3; r++) {
    for (const m of [new Set(['ac0']), new Set(['aan']), new Set(['ac0', 'aan', 'filler'])]) {
      // Title and content alternate on one memo object, as a result card's do.
      t.equal(highlight(title, m, card), highlight(title, m));
      t.equal(snippet(text, m, { highlight: true, memo: card }), snippet(text, m, { highlight: true }));
    }
  }
  t.equal(highlight(text, new Set(['aan']), card).match(/<mark>/g)?.length, 3, 'aan, AAN, aAn');
});

// The snippet window as it was chosen before span lists became parallel arrays: a Map of word
// counts over two pointers (including its corner: a span longer than the window).
function referenceSnippet(text: string, matched: Set<string>, size: number): string {
  const spans: Array<{ word: string; start: number; end: number }> = [];
  const words = [...matched].filter((w) => /^[a-z0-9]+$/.test(w)).sort((a, b) => b.length - a.length);
  const scan = text.slice(0, 12_000);
  if (words.length) {
    const re = new RegExp(`(?<![A-Za-z0-9\\u0080-\\uffff])(?:${words.join('|')})(?![A-Za-z0-9\\u0080-\\uffff])`, 'gi');
    let m: RegExpExecArray | null;
    while ((m = re.exec(scan)) !== null) spans.push({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length });
  }
  const counts = new Map<string, number>();
  let from = 0;
  if (spans.length) {
    let bestI = 0;
    let bestDistinct = -1;
    let bestCount = -1;
    let j = 0;
    for (let i = 0; i < spans.length; i++) {
      while (j < spans.length && spans[j]!.end - spans[i]!.start <= size) {
        counts.set(spans[j]!.word, (counts.get(spans[j]!.word) ?? 0) + 1);
        j++;
      }
      if (counts.size > bestDistinct || (counts.size === bestDistinct && j - i > bestCount)) {
        bestDistinct = counts.size;
        bestCount = j - i;
        bestI = i;
      }
      const c = counts.get(spans[i]!.word)! - 1;
      if (c === 0) counts.delete(spans[i]!.word);
      else counts.set(spans[i]!.word, c);
    }
    const first = spans[bestI]!;
    let lastEnd = first.end;
    for (let k = bestI; k < spans.length && spans[k]!.end - first.start <= size; k++) lastEnd = spans[k]!.end;
    const lead = Math.min(Math.floor(size / 5), Math.max(0, size - (lastEnd - first.start)));
    if (first.start - lead > 0) {
      const i = first.start - lead;
      if (/\s/.test(text[i - 1]!)) from = i;
      else {
        const s = text.slice(i, i + 60).search(/\s/);
        from = s < 0 ? i : i + s + 1;
      }
    }
  }
  let to = Math.min(text.length, from + size);
  if (to < text.length && !/\s/.test(text[to]!)) {
    const back = text.slice(Math.max(0, to - 60), to);
    const k = back.search(/\s\S*$/);
    to = Math.max(from + 1, k < 0 ? to : Math.max(0, to - 60) + k);
  }
  while (from < to && /\s/.test(text[from]!)) from++;
  while (to > from && /\s/.test(text[to - 1]!)) to--;
  return (from > 0 ? '…' : '') + text.slice(from, to) + (to < text.length && text.slice(to).trim() !== '' ? '…' : '');
}

t.test('many matched words in a kept text (more lists than the merge takes: one sort) and the window against its Map reference', async (t) => {
  // High bits of a 32-bit LCG (its low bits repeat with short periods, so texts would hold
  // only a few of the words).
  let seed = 23;
  const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % n;
  // ac0/aan collide; every word is ASCII so the reference's regex finds the same spans.
  const vocab = ['table', 'Tables', 'index', 'INDEX', 'rows', 'x9', 'a', 'vacuum', 'data', 'conf', 'config', 'z', 'ac0', 'AAN', 'wal', 'lsn', 'gin', 'gist', 'brin', 'hash'];
  const seps = [' ', ', ', '. ', '_', '-', '\n', '<b>', ' & '];
  let same = 0;
  for (let n = 0; n < 120; n++) {
    const text = randomText(rnd, vocab, seps, 70 + rnd(500));
    const memo = {};
    for (let r = 0; r < 3; r++) {
      const matched = new Set<string>();
      // 6-19 distinct words (a stride coprime with the vocabulary's length): both the merge
      // (at most 8 lists) and the sort.
      const k = 6 + rnd(14);
      const off = rnd(vocab.length);
      for (let i = 0; i < k; i++) matched.add(fold(vocab[(off + 7 * i) % vocab.length]!));
      const a = snippet(text, matched, { highlight: true, memo });
      const b = snippet(text, matched, { highlight: true });
      const plain = snippet(text, matched, { highlight: false, memo });
      if (a === b && plain === referenceSnippet(text, matched, 240) && highlight(text, matched, memo) === referenceHighlight(text, matched)) same++;
      else t.fail(`differs with ${JSON.stringify([...matched])}`);
    }
  }
  t.equal(same, 360);
});

t.test('a matched word longer than the snippet window picks the window its Map reference did', async (t) => {
  const long = 'x'.repeat(30);
  for (const text of [`a b ${long} c a b c ${long} a`, `${long} a ${long} b c`, `a ${long} ${long} b a c a b`]) {
    for (const m of [new Set([long]), new Set([long, 'a']), new Set(['a', 'b', 'c', long])]) {
      t.equal(snippet(text, m, { highlight: false, size: 20 }), referenceSnippet(text, m, 20), `${text} / ${[...m].join(',')}`);
    }
  }
});

t.test('kept CJK texts give the same snippets and marks while the word id table starts again and again', async (t) => {
  // Kept texts and matched sets meet as lists of word ids; a tiny table limit starts a new
  // generation of ids on nearly every text and set, so lists of older generations are remade.
  const rnd = lcg(31);
  const vocab = ['管理', 'ツール', 'パッケージ', 'の', 'を', 'インストール', '削除', '情報', '設定', 'ファイル', 'Größe', 'café', 'debian', 'apt'];
  const seps = ['', '', '。', '、', ' ', '\n'];
  t.teardown(() => setSnippetWordIdLimit(1 << 20));
  for (const limit of [1, 6, 40, 1 << 18]) {
    setSnippetWordIdLimit(limit);
    const cards: Array<{ text: string; memo: object }> = [];
    for (let n = 0; n < 12; n++) {
      // Each text from a few of the words: a matched word unknown to the table when the set's
      // ids were taken may come with a text indexed later in the same query.
      const own = Array.from({ length: 4 }, () => vocab[rnd(vocab.length)]!);
      let text = '';
      const len = 100 + rnd(300);
      for (let i = 0; i < len; i++) text += own[rnd(own.length)]! + seps[rnd(seps.length)]!;
      cards.push({ text, memo: {} });
    }
    let same = 0;
    for (let q = 0; q < 30; q++) {
      const matched = new Set<string>();
      const k = 1 + rnd(q % 3 === 0 ? 30 : 4);
      for (let i = 0; i < k; i++) matched.add(i < 6 ? words(vocab[rnd(vocab.length)]!)[0]! : `w${q}-${i}`);
      // One matched set over several kept texts, as one query over its results.
      for (let c = 0; c < 4; c++) {
        const { text, memo } = cards[rnd(cards.length)]!;
        const a = snippet(text, matched, { highlight: true, memo });
        if (a === snippet(text, matched, { highlight: true }) && highlight(text, matched, memo) === highlight(text, matched)) same++;
        else t.fail(`limit ${limit}: differs with ${JSON.stringify([...matched])}`);
      }
    }
    t.equal(same, 120, `limit ${limit}`);
  }
});

t.test('a matched word first met in a later result of the same query is marked there', async (t) => {
  // The query's word ids are taken at its first kept text, which lacks 検索: the second text,
  // indexed after, holds it (words no other test here uses, so no earlier text put them in
  // this thread's word table).
  const first = '翻訳の手順。'.repeat(30);
  const second = '文書を検索。'.repeat(30);
  const matched = new Set(['翻訳', '検索']);
  t.match(snippet(first, matched, { highlight: true, memo: {} }), /<mark>翻訳<\/mark>/);
  const s = snippet(second, matched, { highlight: true, memo: {} });
  t.match(s, /<mark>検索<\/mark>/);
  t.equal(s, snippet(second, matched, { highlight: true }));
});

t.test('short CJK texts kept with a memo (titles: a few runs, looked up by word id) give the snippets and marks of a fresh scan', async (t) => {
  const rnd = lcg(43);
  // 'ä¼b' folds to two words, a1 and 4b: the first matched one names the run, and a1 also
  // comes alone, so which one it is changes the counts that choose a short snippet's window.
  const vocab = ['管理', 'ツール', 'パッケージ', 'の', 'を', 'インストール', '削除', '情報', 'Größe', 'café', 'debian', 'ä¼b', 'ä¼b', 'a1', '4b'];
  const seps = ['', '', '。', ' ', '「', '」'];
  let same = 0;
  for (let n = 0; n < 200; n++) {
    const text = randomText(rnd, vocab, seps, 1 + rnd(30));
    const memo = {};
    for (let r = 0; r < 3; r++) {
      const matched = new Set<string>();
      const k = 1 + rnd(r === 2 ? 30 : 4);
      for (let i = 0; i < k; i++) {
        const ws = words(vocab[rnd(vocab.length)]!);
        matched.add(i < 6 ? ws[rnd(ws.length)]! : `v${i}`);
      }
      if (r === 0) matched.add('a1').add('4b');
      const kept = snippet(text, matched, { highlight: true, size: 20, memo });
      if (kept === snippet(text, matched, { highlight: true, size: 20 }) && highlight(text, matched, memo) === highlight(text, matched)) same++;
      else t.fail(`differs on ${JSON.stringify(text)} with ${JSON.stringify([...matched])}`);
    }
  }
  t.equal(same, 600);
});
