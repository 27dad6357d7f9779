import t from 'tap';
import { termsWithPrefix } from '../../src/search/expand.js';
import { snapshotOf } from '../helpers/snapshot.js';
import { makeDoc } from '../helpers/docs.js';

t.test('in-memory prefix expansion equals the segment SQL range query', async (t) => {
  const words = ['table', 'tables', 'tablespace', 'tablespaces', 'tab', 'taboo', 'tac', 'ta', 'index', 'indexes', 'indices', 'in', 'café', 'cafe', 'cafés', 'zebra', 'über', 'uber', 'x1', 'x10', 'x2'];
  const snap = snapshotOf([[makeDoc('https://s.test/a', 'Vocabulary', words.join(' ')), makeDoc('https://s.test/b', 'More words', 'table tabular tablet tableau')]]);
  t.teardown(() => snap.cleanup());
  const seg = snap.segments[0]!;
  let checked = 0;
  for (const prefix of ['t', 'ta', 'tab', 'tabl', 'table', 'tables', 'tablesp', 'i', 'in', 'ind', 'caf', 'u', 'x', 'x1', 'z', 'zz', 'a', '']) {
    for (const limit of [1, 3, 60]) {
      t.same(termsWithPrefix(seg, prefix, limit), seg.reader.termsWithPrefix(prefix, limit), `${prefix} / ${limit}`);
      checked++;
    }
  }
  t.equal(checked, 54);
  t.same(termsWithPrefix(seg, 'tabl', 60).slice(0, 3), ['table', 'tableau', 'tables'], 'sorted, prefix-matched');
});
