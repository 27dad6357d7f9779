import t from 'tap';
import { highlight, snippet } from '../../src/search/snippet.js';
import { fold } from '../../src/search/analyze.js';

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
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const vocab = ['table', 'Table', 'TABLE', 'tab', 'tables', 'a', 'b1', 'x9y', 'caf\u00e9', 'na\u00efve', '\u00e9t\u00e9', 'stra\u00dfe', 'idx', 'conf', 'configure', 'z'];
  const seps = [' ', '  ', '_', '-', '.', ',', '\n', '<', '>', '&', '"', "'", '/', '\u00a0', '\u2014', '(', ')', ''];
  let same = 0;
  for (let n = 0; n < 400; n++) {
    let text = '';
    const len = 1 + rnd(40);
    for (let i = 0; i < len; i++) text += vocab[rnd(vocab.length)]! + seps[rnd(seps.length)]!;
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
  let seed = 11;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const vocab = ['table', 'Table', 'tables', 'index', 'INDEX', 'rows', 'caf\u00e9', 'x9', 'a', 'vacuum', 'data', 'conf', 'config', 'z'];
  const seps = [' ', ', ', '. ', '_', '-', '\n', '<b>', ' & ', '\u2014'];
  let same = 0;
  for (let n = 0; n < 150; n++) {
    let text = '';
    const len = 70 + rnd(400);
    for (let i = 0; i < len; i++) text += vocab[rnd(vocab.length)]! + seps[rnd(seps.length)]!;
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
