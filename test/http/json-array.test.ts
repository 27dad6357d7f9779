/**
 * src/http/json-array.ts: a JSON array parsed element by element gives what JSON.parse gives
 * for the whole text, and declines (undefined) whatever it cannot vouch for, so the caller's
 * whole-body parse reports the error.
 */
import t from 'tap';
import { parseJsonArrayInParts } from '../../src/http/json-array.js';

const parts = (text: string, start = 0) => parseJsonArrayInParts(Buffer.from(text, 'utf8'), start);

t.test('the same value as JSON.parse for arrays of every kind of element', async (t) => {
  const cases = [
    '[]',
    ' [ ] ',
    '[1]',
    '[1,2,3]',
    '\n[ {"a":1} , {"b":[1,2,{"c":"]"}]} ]\r\n\t',
    '[{"s":"a,b]c}d{e[f"},{"s":"quote \\" and backslash \\\\"},{"s":"\\\\"}]',
    '[{"url":"https://x.test/a","title":"Über ☃ 𝄞","content":"x\\u0022y"}, null, true, false, -1.5e3, "s", [[]], {}]',
    '[{"__proto__":{"polluted":1},"a":1,"a":2}]',
  ];
  for (const text of cases) t.same(parts(text), JSON.parse(text), text);
  const proto = parts('[{"__proto__":{"x":1}}]')![0] as Record<string, unknown>;
  t.ok(Object.hasOwn(proto, '__proto__'), '__proto__ stays an own key, as with JSON.parse');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});

t.test('random documents: the same value as JSON.parse', async (t) => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const alphabet = ['a', ',', ']', '[', '{', '}', '"', '\\', ' ', '\n', 'é', '😀', ':'];
  const str = () => Array.from({ length: Math.floor(rnd() * 20) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  for (let round = 0; round < 50; round++) {
    const docs = Array.from({ length: 1 + Math.floor(rnd() * 30) }, () => ({ url: str(), title: str(), tags: [str(), { k: str() }], n: rnd() }));
    const text = JSON.stringify(docs, null, round % 2 ? 2 : undefined);
    t.same(parts(text), JSON.parse(text));
  }
});

t.test('a byte-order mark is skipped by the caller: start past it', async (t) => {
  const buf = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"a":1}]')]);
  t.same(parseJsonArrayInParts(buf, 3), [{ a: 1 }]);
  t.equal(parseJsonArrayInParts(buf, 0), undefined, 'not an array at byte 0');
});

t.test('declines what JSON.parse would reject or what is not a plain array', async (t) => {
  for (const text of ['', '   ', '[1,]', '[,1]', '[1,,2]', '[1 2]', '[1', '[1]]', '[1] x', '[{]', '[1}', '[{"a":1},{"b":}]', '["unterminated]']) {
    t.equal(parts(text), undefined, JSON.stringify(text));
    t.throws(() => JSON.parse(text), JSON.stringify(text) + ' is invalid JSON');
  }
  for (const text of ['{"a":1}', '"[1]"', '7']) t.equal(parts(text), undefined, `${text}: valid JSON, not an array`);
});

t.test('each element is parsed from its own string (no body-sized string)', async (t) => {
  const original = JSON.parse;
  const seen: number[] = [];
  JSON.parse = ((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    seen.push(text.length);
    return original(text, reviver);
  }) as typeof JSON.parse;
  try {
    const docs = Array.from({ length: 100 }, (_, i) => ({ url: `https://x.test/${i}`, content: 'word '.repeat(1000) }));
    const text = JSON.stringify(docs);
    t.same(parts(text), docs);
    t.equal(seen.length, 100, 'one parse per element');
    t.ok(Math.max(...seen) < 6000, 'every parsed string is one document');
    t.ok(text.length > 500_000);
  } finally {
    JSON.parse = original;
  }
});
