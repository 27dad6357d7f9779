import t from 'tap';
import { inCodeUnitOrder, sortedWithPrefix, trieNodeBound, typoBudget, Vocabulary } from '../../src/text/index.js';

/** Trie nodes by brute force: the root plus every distinct non-empty code-point prefix. */
function distinctPrefixes(terms: readonly string[]): number {
  const seen = new Set<string>();
  for (const term of terms) {
    const cps = [...term];
    for (let i = 1; i <= cps.length; i++) seen.add(cps.slice(0, i).join(''));
  }
  return seen.size + 1;
}

/** Code-point order, the order a segment's vocabulary comes in (SQLite BINARY over UTF-8). */
function codePointSort(terms: string[]): string[] {
  return [...terms].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

// Shared prefixes, prefixes of other words, a duplicate, an empty word, non-ASCII letters,
// astral characters (surrogate pairs) that share their high surrogate but not their code point,
// and a BMP character above the surrogates (where UTF-16 and code-point order differ).
const WORDS = [
  'table', 'tables', 'tablespace', 'tab', 'cable', 'stable', 'vacuum', 'vacuumdb', 'the', 'postgres',
  'postgresql', 'trigger', 'triggers', 'café', 'cafe', 'caffè', 'naïve', '𝒳ray', '𝒴ray', '𝒳', 'ｆｕｌｌ',
  'tab', '', 'über', 'übersicht',
];

function fuzzyAll(v: Vocabulary, word: string, d: number, prefix: boolean): string[] {
  return v.fuzzy(word, d, prefix).map((m) => `${m.term}:${m.distance}`).sort();
}

t.test('a vocabulary in code-point order gets arrays of exactly its node count', async (t) => {
  const sorted = codePointSort(WORDS);
  const v = new Vocabulary(sorted);
  t.equal(trieNodeBound(sorted), distinctPrefixes(sorted), 'the bound is the brute-force node count');
  t.equal(v.nodeCount, distinctPrefixes(sorted), 'the trie has one node per distinct prefix');
  t.equal(v.capacity, v.nodeCount, 'no slack in the arrays');
});

t.test('any other order: the bound is an upper bound and the arrays are trimmed', async (t) => {
  const orders = [WORDS, [...WORDS].reverse(), codePointSort(WORDS).reverse(), [...WORDS].sort()];
  // A few deterministic shuffles.
  let seed = 7;
  for (let k = 0; k < 5; k++) {
    const a = [...WORDS];
    for (let i = a.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const j = seed % (i + 1);
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    orders.push(a);
  }
  const reference = new Vocabulary(codePointSort(WORDS));
  for (const order of orders) {
    const v = new Vocabulary(order);
    t.ok(trieNodeBound(order) >= v.nodeCount, 'upper bound');
    t.equal(v.nodeCount, distinctPrefixes(order), 'same trie size whatever the order');
    t.equal(v.capacity, v.nodeCount, 'trimmed to the nodes used');
    for (const [w, d, p] of [['tabel', 1, false], ['vacum', 1, false], ['cafe', 1, false], ['𝒳ra', 1, true], ['postgrsql', 2, false], ['tab', 1, true]] as const) {
      t.same(fuzzyAll(v, w, d, p), fuzzyAll(reference, w, d, p), `${w}: same matches as the sorted build`);
    }
  }
});

t.test('astral words: a shared high surrogate is not a shared code point', async (t) => {
  // '𝒳' and '𝒴' are U+1D4B3 and U+1D4B4: the same high surrogate, different low surrogates.
  const terms = ['𝒳a', '𝒴a'];
  t.equal(trieNodeBound(terms), 5, 'root + 𝒳 + a + 𝒴 + a');
  t.equal(new Vocabulary(terms).nodeCount, 5);
  t.equal(trieNodeBound([]), 1, 'an empty vocabulary is the root alone');
  t.same(new Vocabulary([]).fuzzy('abcd', 1), []);
});

t.test('prefix listing keeps a vocabulary already in code-unit order, sorts a copy otherwise', async (t) => {
  const ascii = ['a', 'ab', 'abc', 'b', 'table', 'tables'];
  t.equal(inCodeUnitOrder(ascii), ascii, 'the same array, no copy');
  // Code-point order puts U+FF46 before U+1D4B3; UTF-16 code-unit order (0xD835…) the other way round.
  const codePoints = ['ｆｕｌｌ', '𝒳ray'];
  const sorted = inCodeUnitOrder(codePoints);
  t.not(sorted, codePoints, 'a copy');
  t.same(sorted, ['𝒳ray', 'ｆｕｌｌ']);
  t.same(codePoints, ['ｆｕｌｌ', '𝒳ray'], 'the segment vocabulary itself is not reordered');
});

/** The first `limit` words starting with `prefix` in code-unit order, by brute force over a sorted list. */
function prefixedReference(terms: readonly string[], prefix: string, limit: number): string[] {
  return [...new Set(terms)].sort().filter((t) => t.startsWith(prefix)).slice(0, limit);
}

t.test('prefix listing from the trie equals a sorted word list, in code-unit order', async (t) => {
  // Astral words ('𝒳ray') sort before U+FF46 ('ｆｕｌｌ') in code units, after it in code points.
  const terms = [...WORDS, 'ｆａ', '𝒳', '𝒳a', 'ta', 'tabl', 'tablet', 'tableau', 'z'];
  const v = new Vocabulary(codePointSort(terms));
  let checked = 0;
  for (const prefix of ['', 't', 'ta', 'tab', 'tabl', 'table', 'tables', 'tablesp', 'x', 'caf', 'café', 'ü', 'über', 'n', 'z', 'zz']) {
    for (const limit of [0, 1, 2, 3, 60]) {
      t.same(v.withPrefix(prefix, limit), prefixedReference(terms, prefix, limit), `"${prefix}" / ${limit}`);
      checked++;
    }
  }
  t.equal(checked, 80);
  t.same(prefixedReference(terms, '', 100).filter((w) => /[^\x00-\x7f]/.test(w) && !/[àèéïü]/.test(w)), ['𝒳', '𝒳a', '𝒳ray', '𝒴ray', 'ｆａ', 'ｆｕｌｌ'], 'the reference itself: astral before U+FFxx');
  t.same(v.withPrefix('', 100), prefixedReference(terms, '', 100));
});

t.test('prefix listing declines where the trie order is not code-unit order', async (t) => {
  const v = new Vocabulary(codePointSort(WORDS));
  t.equal(v.withPrefix('\ud835', 10), null, 'a prefix ending inside a surrogate pair');
  t.equal(v.withPrefix('𝒳', 10), null, 'a prefix with a surrogate pair');
  const lone = new Vocabulary(['a', 'a\ud835b', 'ab']);
  t.equal(lone.withPrefix('a', 10), null, 'a vocabulary holding a lone surrogate');
  t.same(lone.fuzzy('ab', 1).map((m) => m.term).sort(), ['a', 'a\ud835b', 'ab'].sort(), 'its words are still spelled exactly');
});

t.test('the trie keeps no word list: matches are spelled from the trie', async (t) => {
  const list = codePointSort(WORDS);
  const v = new Vocabulary(list);
  const before = fuzzyAll(v, 'tabel', 2, true);
  const prefixed = v.withPrefix('ta', 60);
  list.fill('changed');
  t.same(fuzzyAll(v, 'tabel', 2, true), before, 'changing the list after the build changes no match');
  t.same(v.withPrefix('ta', 60), prefixed);
  t.same(fuzzyAll(v, '𝒳rat', 1, false), ['𝒳ray:1'], 'astral words spelled whole');
  t.same(fuzzyAll(v, 'tabel', 1, false), ['table:1'], 'a match with its distance');
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

t.test('prefix listing from a sorted word list, where the trie cannot answer', async (t) => {
  const terms = [...WORDS, 'ｆａ', '𝒳', '𝒳a', 'a\ud835b', 'ta', 'tabl', 'tablet', 'z'];
  const sorted = inCodeUnitOrder(codePointSort([...new Set(terms)]));
  for (const prefix of ['', 't', 'tab', 'table', '𝒳', 'a\ud835', 'zz']) {
    for (const limit of [0, 1, 3, 60]) t.same(sortedWithPrefix(sorted, prefix, limit), prefixedReference(terms, prefix, limit), `"${prefix}" / ${limit}`);
  }
});
