import t from 'tap';
import Database from 'better-sqlite3';
import { packBytes, packText, storedText, unpackPrefix, unpackText } from '../../src/index/stored-codec.js';

// Deterministic pseudo-random text over ASCII, 2-, 3- and 4-byte characters.
let seed = 7;
const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const alphabet = ['a', 'b', 'e', ' ', ' ', '.', 'é', 'ß', 'Ж', '中', '文', '😀', '𠀋', '\n'];
const randomText = (n: number, chars = alphabet): string => Array.from({ length: n }, () => chars[Math.floor(rnd() * chars.length)]).join('');
const words = 'vacuum reclaims storage occupied by dead tuples in a table index scan'.split(' ');
const prose = (n: number): string => Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]).join(' ');

/** What a TEXT column of formats 1–5 gives back for `s` (better-sqlite3's binding and reading). */
const db = new Database(':memory:');
t.teardown(() => db.close());
const viaText = (s: string): string => db.prepare('SELECT CAST(? AS TEXT)').pluck().get(s) as string;
const substrOfText = (s: string, n: number): string => db.prepare('SELECT substr(CAST(? AS TEXT), 1, ?)').pluck().get(s, n) as string;

const cases: Array<[string, string]> = [
  ['empty', ''],
  ['one character', 'x'],
  ['short ascii (stored raw)', 'Synopsis'],
  ['heading markers', 'xqzbeg Synopsis xqzend xqzbeg Description xqzend'],
  ['a page JSON', JSON.stringify({ url: 'https://www.example.org/a', documentType: 'HTML', contentGroup: '', imageUrl: null, dataPoints: [], filters: [], boost: 1, keywords: [], language: null, headings: ['A'], source: 'api', status: 200 })],
  ['non-BMP only', '😀𠀋🎉'],
  ['mixed scripts', randomText(5_000)],
  ['prose', prose(3_000)],
  ['very long row (4 MB)', prose(700_000)],
  ['incompressible', randomText(40_000, Array.from({ length: 2000 }, (_, i) => String.fromCodePoint(0x4e00 + i)))],
  ['lone surrogates and a reversed pair', 'a\ud800b\udfffc\ude00\ud83d end'],
  ['NUL characters', 'before\u0000after\u0000'],
];

t.test('packText/unpackText round trip: what a TEXT column of the older formats gives back', async (t) => {
  for (const [name, s] of cases) {
    const packed = packText(s);
    t.equal(unpackText(packed), viaText(s), name);
    t.equal(storedText(packed), viaText(s), `${name}: storedText of the blob`);
    const textBytes = db.prepare('SELECT CAST(CAST(? AS TEXT) AS BLOB)').pluck().get(s) as Buffer | null;
    t.same(packBytes(textBytes ?? Buffer.alloc(0)), packed, `${name}: packing a TEXT column's bytes (a merge of an older format) gives the same value`);
    if (!/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))) t.equal(unpackText(packed), s, `${name}: the very string`);
  }
  t.equal(packText('').length, 0, 'the empty string packs to no bytes');
  t.ok(packText('Synopsis').length <= 'Synopsis'.length + 1, 'a short value costs at most one byte more');
  const long = prose(20_000);
  t.ok(packText(long).length * 3 < Buffer.byteLength(long), 'prose packs at least threefold');
  t.equal(unpackText(packText('a\ud800b')), 'a\ufffd\ufffd\ufffdb', 'a lone surrogate reads as three U+FFFD, as from a TEXT column');
  t.equal(storedText('plain'), 'plain', 'TEXT of the older formats is passed through');
  t.equal(storedText(null), '');
  t.throws(() => unpackText(Buffer.from([9, 1, 2])), /unknown tag 9/);
});

t.test("unpackPrefix gives SQLite's substr of the TEXT, also for prefixes cut within characters", async (t) => {
  let checked = 0;
  for (const [name, s] of cases) {
    const packed = packText(s);
    for (const n of [0, 1, 2, 3, 5, 7, 100, 4_999, 5_000, 12_000, 40_000, 1_000_000]) {
      const got = unpackPrefix(packed, n);
      const want = substrOfText(s, n);
      if (got !== want) t.fail(`${name}: prefix of ${n} (got ${got.length} units, want ${want.length})`);
      checked++;
    }
  }
  // Long mixed-script rows with the cut at every kind of character: the partial inflation must
  // never end a prefix inside a character.
  for (let k = 0; k < 40; k++) {
    const s = randomText(20_000 + Math.floor(rnd() * 20_000));
    const n = 11_990 + k;
    if (unpackPrefix(packText(s), n) !== substrOfText(s, n)) t.fail(`mixed row ${k}, prefix of ${n}`);
    checked++;
  }
  t.ok(checked > 150, `${checked} prefixes equal to substr`);
});
