import t from 'tap';
import { AppError } from '../../src/core/index.js';
import { compileUrlPattern } from '../../src/ingest/url-pattern.js';

t.test('search semantics over the whole URL', async (t) => {
  const m = compileUrlPattern('/blog/\\d+');
  t.ok(m.test('https://example.com/blog/2024/x'));
  t.notOk(m.test('https://example.com/blog/x'));
  // Repeated calls are stateless (no lastIndex carried between URLs).
  t.ok(m.test('https://example.com/blog/1'));
  t.ok(m.test('https://example.com/blog/1'));
  m.dispose();
  const anchored = compileUrlPattern('^https://example\\.com/$');
  t.ok(anchored.test('https://example.com/'));
  t.notOk(anchored.test('https://example.com/a'));
  anchored.dispose();
  const ci = compileUrlPattern('(?i)/DOCS/');
  t.ok(ci.test('https://example.com/docs/a'));
  ci.dispose();
});

t.test('catastrophic pattern runs in linear time', async (t) => {
  const m = compileUrlPattern('(a+)+$');
  const url = `https://example.com/${'a'.repeat(5000)}!`;
  t.notOk(m.test(url));
  m.dispose();
});

t.test('invalid patterns are 400 naming the field', async (t) => {
  for (const p of ['(', '[a-', '(?=x)', '(a)\\1', '', 'x'.repeat(3000)]) {
    try {
      compileUrlPattern(p);
      t.fail(`accepted ${p.slice(0, 20)}`);
    } catch (err) {
      t.ok(err instanceof AppError);
      t.equal((err as AppError).code, 'invalid_parameter');
      t.equal((err as AppError).field, 'urlPattern');
    }
  }
});
