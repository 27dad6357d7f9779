import t from 'tap';
import { indexOfSorted, lowerBound } from '../../src/text/index.js';

t.test('lowerBound and indexOfSorted agree with a linear scan', async (t) => {
  const ids = Int32Array.of(1, 3, 3, 5, 8, 13, 21);
  for (let x = 0; x <= 22; x++) {
    const linear = ids.findIndex((v) => v >= x);
    t.equal(lowerBound(ids, x), linear < 0 ? ids.length : linear, `lowerBound ${x}`);
    t.equal(indexOfSorted(ids, x), ids.includes(x) ? ids.indexOf(x) : -1, `indexOfSorted ${x}`);
  }
  const words = ['a', 'ab', 'b', 'ba', '𝒳', 'ｆ'].sort();
  for (const w of ['', 'a', 'aa', 'b', 'c', '𝒳', 'ｆ', '\uffff']) {
    const linear = words.findIndex((v) => v >= w);
    t.equal(lowerBound(words, w), linear < 0 ? words.length : linear, `lowerBound "${w}"`);
  }
  t.equal(lowerBound([], 'x'), 0);
  t.equal(indexOfSorted(new Int32Array(0), 1), -1);
});
