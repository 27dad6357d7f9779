import t from 'tap';
import { selectMerges, type MergeCandidate } from '../../src/index/merge-policy.js';

const MB = 1024 * 1024;
const seg = (id: string, mb: number, docCount = 100, deadCount = 0): MergeCandidate => ({ id, bytes: mb * MB, docCount, deadCount });
const many = (n: number, mb: number, prefix = 's') => Array.from({ length: n }, (_, i) => seg(`${prefix}${String(i).padStart(2, '0')}`, mb));
const opts = { segmentsPerTier: 8, maxMergeAtOnce: 10, floorBytes: 2 * MB, maxMergedBytes: 1024 * MB, deletesPctAllowed: 25 };

const cases: Array<{ name: string; segs: MergeCandidate[]; expect: (m: string[][]) => void }> = [
  { name: 'empty index', segs: [], expect: (m) => t.same(m, []) },
  { name: 'one clean segment', segs: [seg('a', 10)], expect: (m) => t.same(m, []) },
  { name: 'within the tier budget (8 tiny)', segs: many(8, 0.1), expect: (m) => t.same(m, []) },
  {
    name: '12 tiny segments: the floor makes them equal, one merge of maxMergeAtOnce',
    segs: many(12, 0.1),
    expect: (m) => {
      t.equal(m.length, 1);
      t.equal(m[0]!.length, 10);
    },
  },
  {
    name: 'one big and many small: the small ones merge, the big one stays',
    segs: [seg('big', 500), ...many(20, 0.5)],
    expect: (m) => {
      t.equal(m.length, 1);
      t.notOk(m[0]!.includes('big'));
    },
  },
  {
    name: 'deleted-ratio trigger rewrites a segment alone',
    segs: [seg('a', 50, 100, 30), seg('b', 50, 100, 10)],
    expect: (m) => t.same(m, [['a']]),
  },
  {
    name: 'exactly at the deleted-ratio threshold: nothing',
    segs: [seg('a', 50, 100, 25)],
    expect: (m) => t.same(m, []),
  },
  {
    name: 'too big to merge (over half of maxMergedBytes) is left alone even in a crowd',
    segs: [seg('huge', 600), ...many(9, 0.1)],
    expect: (m) => {
      t.equal(m.length, 1);
      t.notOk(m.flat().includes('huge'));
    },
  },
  {
    name: 'no segment appears in two merges',
    segs: [...many(30, 0.1), seg('d', 1, 100, 90)],
    expect: (m) => {
      const all = m.flat();
      t.equal(new Set(all).size, all.length);
      t.ok(m.length >= 2);
    },
  },
  {
    name: 'segments of only delete markers (docCount 0) are merged away with the small tier',
    segs: Array.from({ length: 12 }, (_, i) => ({ id: `d${i}`, bytes: 8192, docCount: 0, deadCount: 0, deleteCount: 3 })),
    expect: (m) => t.equal(m[0]!.length, 10),
  },
];

for (const c of cases) {
  t.test(c.name, async () => {
    const merges = selectMerges(c.segs, opts);
    c.expect(merges);
    t.same(selectMerges([...c.segs].reverse(), opts), merges, 'deterministic whatever the input order');
  });
}

t.test('pure: the input is not modified', async (t) => {
  const segs = many(12, 0.1);
  const copy = JSON.parse(JSON.stringify(segs));
  selectMerges(segs, opts);
  t.same(segs, copy);
});
