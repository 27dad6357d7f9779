import t from 'tap';
import { SuggestionIndex } from '../../src/analytics/suggestions.js';

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The specification, by brute force over a plain model. */
function expected(model: Map<string, { count: number; last: number }>, typed: string, max: number, min: number): string[] {
  return [...model]
    .filter(([q, s]) => s.count >= min && s.last > 0 && q !== '*' && (q.startsWith(typed) || q.includes(' ' + typed)))
    .sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1))
    .slice(0, max)
    .map(([q]) => q);
}

t.test('random adds, result flips, expiry: lookups always equal the brute-force answer', async (t) => {
  const r = rng(11);
  const words = ['pg', 'page', 'pager', 'index', 'in', 'insert', 'ind', 'a', 'ab', 'abc', 'vacuum', 'va', 'p'];
  const pick = () => words[Math.floor(r() * words.length)]!;
  const queries = Array.from(new Set(Array.from({ length: 300 }, () => (r() < 0.5 ? pick() : `${pick()} ${pick()}`)).concat('*')));
  const typedSet = ['p', 'pa', 'pag', 'page', 'pager', 'i', 'in', 'ind', 'inde', 'index i', 'a', 'ab', 'abc', 'a a', 'v', 'va', '*', 'x', 'pg p'];
  const ix = new SuggestionIndex();
  const model = new Map<string, { count: number; last: number }>();
  let at = 0;
  let mismatches = 0;
  let checks = 0;
  for (let step = 0; step < 6000; step++) {
    const q = queries[Math.floor(r() * queries.length)]!;
    const results = r() < 0.15 ? 0 : 1 + Math.floor(r() * 9);
    ix.add(q, 1, results, ++at);
    const m = model.get(q) ?? { count: 0, last: results };
    m.count++;
    m.last = results;
    model.set(q, m);
    if (step % 1500 === 1499) {
      // Window move: some queries lose searches.
      for (const [mq, ms] of model) {
        const d = Math.floor(ms.count / 2);
        if (d > 0) {
          ix.subtract(mq, d);
          ms.count -= d;
        }
      }
      ix.compact();
      for (const [mq, ms] of model) if (ms.count === 0) model.delete(mq);
    }
    if (step % 7 === 0) {
      const typed = typedSet[Math.floor(r() * typedSet.length)]!;
      const max = 1 + Math.floor(r() * 10);
      const min = 1 + Math.floor(r() * 4);
      const got = ix.lookup(typed, max, min).map((s) => s.query);
      const want = expected(model, typed, max, min);
      checks++;
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        mismatches++;
        if (mismatches < 5) t.same(got, want, `step ${step}: "${typed}" max ${max} min ${min}`);
      }
    }
  }
  t.equal(mismatches, 0, `${checks} lookups matched the brute-force answer`);
});

t.test('bulk load equals incremental adds', async (t) => {
  const a = new SuggestionIndex();
  const b = new SuggestionIndex();
  const rows: Array<[string, number, number, number]> = [];
  for (let i = 0; i < 5000; i++) rows.push([`q${i % 997} w${i % 13}`, 1 + (i % 5), i % 11, i]);
  for (const [q, c, res, at] of rows) a.add(q, c, res, at);
  b.load(rows);
  for (const typed of ['q', 'q1', 'q12', 'q123', 'w', 'w1', 'w12 ', 'q5 w']) {
    t.same(b.lookup(typed, 10, 2), a.lookup(typed, 10, 2), typed);
  }
});

t.test('prefixes of 1–6 characters are cached and kept exact by adds; the cache is bounded', async (t) => {
  const r = rng(5);
  const words = ['create', 'creates', 'created', 'crew', 'table', 'tables', 'tablespace', 'tab', 'index', 'indexes', 'a', 'ab'];
  const pick = () => words[Math.floor(r() * words.length)]!;
  const queries = [...new Set(Array.from({ length: 200 }, () => (r() < 0.5 ? pick() : `${pick()} ${pick()}`)))];
  const typedSet = ['c', 'cr', 'cre', 'crea', 'creat', 'create', 'created', 'tabl', 'table', 'tables', 'tab', 'ind', 'index', 'a', 'crea t', 'x'];
  for (const cap of [3, 50_000]) {
    const ix = new SuggestionIndex(cap);
    const model = new Map<string, { count: number; last: number }>();
    let at = 0;
    let mismatches = 0;
    for (let step = 0; step < 4000; step++) {
      const q = queries[Math.floor(r() * queries.length)]!;
      const results = r() < 0.1 ? 0 : 1 + Math.floor(r() * 9);
      ix.add(q, 1, results, ++at);
      const m = model.get(q) ?? { count: 0, last: results };
      m.count++;
      m.last = results;
      model.set(q, m);
      if (step % 5 === 0) {
        const typed = typedSet[Math.floor(r() * typedSet.length)]!;
        const max = 1 + Math.floor(r() * 10);
        const min = 1 + Math.floor(r() * 3);
        const got = ix.lookup(typed, max, min).map((s) => s.query);
        const want = expected(model, typed, max, min);
        if (JSON.stringify(got) !== JSON.stringify(want) && ++mismatches < 5) t.same(got, want, `cap ${cap} step ${step}: "${typed}"`);
      }
    }
    t.equal(mismatches, 0, `cap ${cap}: every lookup matched the brute-force answer`);
    const cached = (ix as unknown as { short: Map<string, unknown> }).short;
    t.ok(cached.size <= cap, `cap ${cap}: ${cached.size} cached prefixes`);
    if (cap > 100) {
      ix.lookup('creat', 3, 1);
      ix.lookup('tables', 3, 1);
      t.ok(cached.has('creat') && cached.has('tables'), 'prefixes of 5–6 characters are cached');
    }
  }
});

t.test('1–2-character prefixes are ready after a load or compaction (no scan on first use) and exact', async (t) => {
  const r = rng(23);
  const words = ['create', 'crew', 'table', 'tab', 'index', 'a', 'ab', 'b', 'vacuum', 'c'];
  const pick = () => words[Math.floor(r() * words.length)]!;
  const model = new Map<string, { count: number; last: number }>();
  const rows: Array<[string, number, number, number]> = [];
  for (let i = 0; i < 400; i++) {
    const q = r() < 0.4 ? pick() : `${pick()} ${pick()}`;
    const count = 1 + Math.floor(r() * 6);
    const last = r() < 0.15 ? 0 : 3;
    rows.push([q, count, last, i]);
    const m = model.get(q) ?? { count: 0, last };
    m.count += count;
    m.last = last;
    model.set(q, m);
  }
  rows.push(['*', 50, 9, 1000]);
  model.set('*', { count: 50, last: 9 });
  const ix = new SuggestionIndex();
  ix.load(rows);
  const cached = (ix as unknown as { short: Map<string, unknown> }).short;
  const typed = ['c', 'cr', 't', 'ta', 'a', 'ab', 'b', 'i', 'v', 'va', '*', 'x'];
  t.ok(['c', 'cr', 'ta', 'ab', 'v'].every((p) => cached.has(p)), 'lists of 1–2 characters exist before any lookup');
  t.notOk(cached.has('cre'), 'longer prefixes are still computed on first use');
  for (const p of typed) for (const min of [1, 2, 5]) t.same(ix.lookup(p, 10, min).map((s) => s.query), expected(model, p, 10, min), `"${p}" min ${min}`);
  // Compaction (daily window move) recomputes them.
  for (const [q, m] of model) {
    if (q.startsWith('c')) {
      ix.subtract(q, m.count);
      model.delete(q);
    }
  }
  ix.compact();
  t.ok(cached.has('ta'), 'recomputed after compaction');
  for (const p of typed) t.same(ix.lookup(p, 10, 1).map((s) => s.query), expected(model, p, 10, 1), `after compaction "${p}"`);
  const small = new SuggestionIndex(3);
  small.load(rows);
  t.ok((small as unknown as { short: Map<string, unknown> }).short.size <= 3, 'within the cache bound');
});

t.test('version: unchanged only while every lookup answers the same (what stored suggest responses rely on)', async (t) => {
  const r = rng(5);
  const words = ['pg', 'page', 'index', 'in', 'a', 'ab', 'vacuum', 'va'];
  const pick = () => words[Math.floor(r() * words.length)]!;
  const queries = Array.from(new Set(Array.from({ length: 80 }, () => (r() < 0.5 ? pick() : `${pick()} ${pick()}`))));
  const typedSet = ['p', 'pa', 'page', 'i', 'in', 'a', 'ab', 'v', 'va', 'vacuum p', 'x'];
  const ix = new SuggestionIndex();
  ix.load(queries.slice(0, 20).map((q, i) => [q, 1 + (i % 4), 1, i] as [string, number, number, number]));
  // Answers seen per (version, typed, max, minSearches): the same version must give the same answer.
  const seen = new Map<string, string>();
  let reused = 0;
  let stale = 0;
  const versions = new Set<number>();
  let at = 100;
  let unmoved = 0;
  let movedByLookup = 0;
  for (let step = 0; step < 4000; step++) {
    const before = ix.version;
    const op = r();
    let mutated = true;
    if (op < 0.15) ix.add(queries[Math.floor(r() * queries.length)]!, 1, r() < 0.2 ? 0 : 3, ++at);
    else if (op < 0.17) ix.subtract(queries[Math.floor(r() * queries.length)]!, 1);
    else if (op < 0.175) ix.compact();
    else mutated = false;
    if (mutated) {
      if (ix.version <= before) unmoved++;
    } else {
      const typed = typedSet[Math.floor(r() * typedSet.length)]!;
      // Few argument combinations, so that the same lookup comes again at one version.
      const max = r() < 0.5 ? 3 : 10;
      const min = r() < 0.5 ? 1 : 2;
      const got = JSON.stringify(ix.lookup(typed, max, min));
      if (ix.version !== before) movedByLookup++;
      const key = `${ix.version}|${typed}|${max}|${min}`;
      const was = seen.get(key);
      if (was === undefined) seen.set(key, got);
      else if (was === got) reused++;
      else stale++;
      versions.add(ix.version);
    }
  }
  t.equal(unmoved, 0, 'every add, subtract and compact moved the version');
  t.equal(movedByLookup, 0, 'no lookup moved it');
  t.equal(stale, 0, 'no version ever answered two ways');
  t.ok(reused > 100, `answers were looked up again at the same version (${reused})`);
  t.ok(versions.size > 500, `and across many versions (${versions.size})`);
});
