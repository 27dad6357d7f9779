import t from 'tap';
import { createHash } from 'node:crypto';
import { MAX_LOGGED_QUERY_CHARS, normaliseQuery, VisitorHasher } from '../../src/analytics/normalize.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);

/** The documented hash, from the hasher's (private) salt: sha256(salt ‖ site ‖ \0 ‖ ip ‖ \0 ‖ ua), 16 hex. */
function expected(h: VisitorHasher, site: string, ip: string, ua: string): string {
  const salt = (h as unknown as { salt: Buffer }).salt;
  return createHash('sha256').update(salt).update(site).update('\0').update(ip).update('\0').update(ua).digest('hex').slice(0, 16);
}

t.test('memoised visitor hashes equal the documented hash, per day, project and visitor', async (t) => {
  const h = new VisitorHasher();
  const a1 = h.hash('docs', '198.51.100.1', 'ua', T0);
  t.equal(a1, expected(h, 'docs', '198.51.100.1', 'ua'));
  t.equal(h.hash('docs', '198.51.100.1', 'ua', T0 + 1000), a1, 'same visitor, same day: same hash (from the memo)');
  t.equal(h.hash('docs', '198.51.100.1', 'ua', T0 + 2000), expected(h, 'docs', '198.51.100.1', 'ua'));
  t.not(h.hash('blog', '198.51.100.1', 'ua', T0), a1, 'another project: another hash');
  t.not(h.hash('docs', '198.51.100.2', 'ua', T0), a1, 'another IP: another hash');
  t.not(h.hash('docs', '198.51.100.1', 'ua2', T0), a1, 'another user agent: another hash');
  // Separators keep (ip, ua) pairs apart in the memo key as in the hash.
  t.not(h.hash('docs', '198.51.100.1u', 'a', T0), a1);
  t.equal(h.hash('docs', undefined, undefined, T0), expected(h, 'docs', '', ''));

  const next = h.hash('docs', '198.51.100.1', 'ua', T0 + DAY);
  t.not(next, a1, 'a new day: new salt, and the memo does not answer with yesterday\'s hash');
  t.equal(next, expected(h, 'docs', '198.51.100.1', 'ua'));
});

t.test('the memo is bounded and never changes a hash', async (t) => {
  const h = new VisitorHasher();
  const n = VisitorHasher.MEMO_SIZE + 50;
  for (let i = 0; i < n; i++) h.hash('docs', `10.0.${i >> 8}.${i & 255}`, 'ua', T0);
  t.ok((h as unknown as { memo: Map<string, string> }).memo.size <= VisitorHasher.MEMO_SIZE, 'at most MEMO_SIZE visitors remembered');
  for (const i of [0, 1, n - 1]) {
    const ip = `10.0.${i >> 8}.${i & 255}`;
    t.equal(h.hash('docs', ip, 'ua', T0), expected(h, 'docs', ip, 'ua'), `visitor ${i} after the memo started over`);
  }
});

t.test('the previous visitor answers without the memo, the same hash, never across a salt rotation', async (t) => {
  const h = new VisitorHasher();
  const memo = (h as unknown as { memo: Map<string, string> }).memo;
  let lookups = 0;
  const get = memo.get.bind(memo);
  memo.get = (k: string) => (lookups++, get(k));
  const a = h.hash('docs', '198.51.100.1', 'ua', T0);
  const before = lookups;
  // Equal strings that are other string objects (each request parses its own).
  t.equal(h.hash('docs', ['198.51.100', '1'].join('.'), 'u' + 'a', T0 + 5), a);
  t.equal(lookups, before, 'the previous visitor: no memo lookup');
  t.not(h.hash('docs', '198.51.100.1', 'ub', T0), a, 'another user agent after it');
  t.not(h.hash('blog', '198.51.100.1', 'ub', T0), h.hash('docs', '198.51.100.1', 'ub', T0), 'another project after it');
  t.equal(h.hash('docs', '198.51.100.1', 'ua', T0), a, 'back to the first visitor: the memo');
  const next = h.hash('docs', '198.51.100.1', 'ua', T0 + DAY);
  t.not(next, a, 'the next day: new salt, not the previous call\'s hash');
  t.equal(next, expected(h, 'docs', '198.51.100.1', 'ua'));
  t.equal(h.hash('docs', undefined, undefined, T0 + DAY), expected(h, 'docs', '', ''));
  t.equal(h.hash('docs', '', '', T0 + DAY), expected(h, 'docs', '', ''), 'absent and empty are the same visitor');
});

t.test('the plain-ASCII fast path gives exactly the full normalisation', async (t) => {
  // The documented normalisation, spelled out (NFKC, lower case, whitespace and controls to one
  // space, trimmed, cut at 200 code points and re-trimmed).
  const full = (q: string) => {
    let s = q.normalize('NFKC').toLowerCase().replace(/[\s\p{Cc}]+/gu, ' ').trim();
    if (Array.from(s).length > MAX_LOGGED_QUERY_CHARS) s = Array.from(s).slice(0, MAX_LOGGED_QUERY_CHARS).join('').trim();
    return s;
  };
  const samples = ['', ' ', 'CREATE TABLE', 'create  table', ' create', 'create ', 'a\tb', 'a\nb', 'x\u0000y', 'x\u007fy', 'pg_dump -Fc', '"quoted phrase" -minus', 'Ünïcode', 'ﬁle', 'Ｐostgres', 'A'.repeat(199) + ' b', 'a'.repeat(201), 'word '.repeat(50).trim()];
  let seed = 1;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  const alphabet = 'aZ09 _-."\t\n\u0001\u007f~';
  for (let i = 0; i < 2000; i++) samples.push(Array.from({ length: Math.floor(rnd() * 12) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join(''));
  for (const q of samples) t.equal(normaliseQuery(q), full(q), JSON.stringify(q));
});
