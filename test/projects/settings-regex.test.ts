// Settings regular expressions are checked by the engine that runs them (RE2): what the
// settings route accepts compiles and matches at run time, what RE2 cannot run is refused
// with 400 naming the settings path and the unsupported construct.
import t from 'tap';
import { compilePattern, matchesPattern, patternError } from '../../src/text/index.js';
import { compileUrlPattern } from '../../src/ingest/index.js';
import { api, startTestServer } from '../helpers/server.js';

const s = await startTestServer();
const FOCUS = process.env.FOCUS;
t.teardown(() => s.close());
const M = s.masterKey;

// [pattern, accepted, what the refusal must say]
const TABLE: Array<[string, true] | [string, false, RegExp]> = [
  ['/private/', true],
  ['^https://example\\.com/blog/\\d+$', true],
  ['(?i)/DOCS/', true],
  ['(?i:admin)', true],
  ['(?s)a.b', true],
  ['(?U)a+', true],
  ['\\p{Greek}', true],
  ['[[:alpha:]]+', true],
  ['\\Qa.b\\E', true],
  ['\\u0041', true],
  ['(?<year>\\d{4})', true],
  ['(a+)+$', true],
  ['x{1000}', true],
  ['\\z', true],
  ['^(?=.*secret)', false, /lookahead/],
  ['foo(?!bar)', false, /lookahead/],
  ['(?<=/)admin', false, /lookbehind/],
  ['(?<!x)y', false, /lookbehind/],
  ['(a)\\1', false, /backreferences/],
  ['(?<n>a)\\k<n>', false, /backreferences/],
  ['(?P=n)', false, /backreferences/],
  ['(?>a+)', false, /atomic/],
  ['a++', false, /possessive/],
  ['x{1001}', false, /1000 repetitions/],
  ['(?#comment)x', false, /comments/],
  ['\\Z', false, /RE2 cannot compile it: invalid escape sequence/],
  ['(', false, /missing \)/],
  ['[a-', false, /missing \]/],
];

/** Every settings path that holds a regular expression, with a body that puts `p` there. */
const PLACES: Array<[string, (p: string) => unknown]> = [
  ['crawler.blacklist[2]', (p) => ({ crawler: { blacklist: ['/a/', '/b/', p] } })],
  ['crawler.whitelist[0]', (p) => ({ crawler: { whitelist: [p] } })],
  ['crawler.noIndex[1]', (p) => ({ crawler: { noIndex: ['/print/', p] } })],
  ['resultGroups[0].urlPattern', (p) => ({ resultGroups: [{ name: 'Docs', urlPattern: p }] })],
  [
    'search.resultMappings[1].trigger.value',
    (p) => ({
      search: {
        resultMappings: [
          { trigger: { type: 'equals', value: 'x' }, action: { type: 'hide', urls: ['https://example.com/x'] } },
          { trigger: { type: 'regex', value: p }, action: { type: 'redirect', url: 'https://example.com/y' } },
        ],
      },
    }),
  ],
];

t.test('the settings route accepts what RE2 runs and refuses what it cannot, naming the path', async (t) => {
  for (const [path, body] of PLACES) {
    for (const [pattern, ok, why] of TABLE) {
      const res = await api(s.url, '/admin/projects/default/settings', { method: 'PUT', token: M, json: body(pattern) });
      if (ok) {
        t.equal(res.status, 200, `${path} = ${pattern} accepted (${res.body?.message ?? ''})`);
        t.equal(patternError(pattern), null);
        t.ok(compilePattern(pattern), `${pattern} compiles where it runs`);
      } else {
        t.equal(res.status, 400, `${path} = ${pattern} refused`);
        t.equal(res.body.code, 'invalid_parameter');
        t.equal(res.body.field, path, `field of ${pattern}`);
        t.match(res.body.message, why!, `${pattern}: ${res.body.message}`);
        t.equal(compilePattern(pattern), null, `${pattern} would never match at run time`);
      }
    }
  }
  // A refused PUT stored nothing: the last accepted one is still there.
  const last = await api(s.url, '/admin/projects/default/settings', { token: M });
  t.same(last.body.search.resultMappings[1].trigger.value, '\\z');
});

t.test('(?i) means the same in settings and in urlPattern', async (t) => {
  const res = await api(s.url, '/admin/projects/default/settings', { method: 'PUT', token: M, json: { crawler: { blacklist: ['(?i)/PRIVATE/'] } } });
  t.equal(res.status, 200);
  t.ok(matchesPattern('(?i)/PRIVATE/', 'https://example.com/private/x'), 'settings pattern matches case-insensitively');
  t.notOk(matchesPattern('/PRIVATE/', 'https://example.com/private/x'), 'case-sensitive without the flag');
  const m = compileUrlPattern('(?i)/PRIVATE/');
  t.ok(m.test('https://example.com/private/x'));
  m.dispose();
  t.throws(() => compileUrlPattern('^(?=.*secret)'), { code: 'invalid_parameter', field: 'urlPattern', message: /lookahead/ });
});

t.test('compiling and refusing many patterns does not exhaust the engine heap', async (t) => {
  // re2-wasm's heap is a fixed 16 MiB per thread; each refused 1,500-character pattern used to
  // leak its whole engine object, so a few thousand refusals aborted the process.
  const pad = 'x'.repeat(1500);
  let refused = 0;
  for (let i = 0; i < 9_000; i++) if (patternError(`${pad}${i}(?=a)`) !== null) refused++;
  t.equal(refused, 9_000);
  for (let i = 0; i < 3_000; i++) compileUrlPattern(`/p${i}/`).dispose();
  t.equal(patternError('/still/works/'), null);
  t.ok(matchesPattern('/still/', 'https://example.com/still/'));
});
