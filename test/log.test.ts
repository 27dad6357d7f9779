import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../src/log.js';

function capture() {
  const lines: any[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, stream };
}

t.test('one JSON line per event with level, time, msg and fields', async (t) => {
  const { lines, stream } = capture();
  const log = createLogger('info', stream);
  log.debug('hidden');
  log.info('plain');
  log.warn({ siteId: 'docs' }, 'with fields');
  log.child({ reqId: 'r1' }).error({ err: new Error('boom') }, 'failed');
  t.equal(lines.length, 3, 'below-level events dropped');
  t.match(lines[0], { level: 'info', msg: 'plain', time: /^\d{4}-\d\d-\d\dT/ });
  t.match(lines[1], { level: 'warn', msg: 'with fields', siteId: 'docs' });
  t.match(lines[2], { level: 'error', msg: 'failed', reqId: 'r1', err: { name: 'Error', message: 'boom', stack: /boom/ } });
});

t.test('silent drops everything; unserialisable fields do not throw', async (t) => {
  const { lines, stream } = capture();
  createLogger('silent', stream).error('nothing');
  t.equal(lines.length, 0);
  const cyclic: any = {};
  cyclic.self = cyclic;
  createLogger('debug', stream).info({ cyclic }, 'still logged');
  t.equal(lines[0].msg, 'still logged');
});

t.test('buffered: info lines wait; a warning writes them and itself at once, in order', async (t) => {
  const { lines, stream } = capture();
  const log = createLogger('info', stream, {}, { bufferMs: 60_000 });
  log.info('first');
  log.child({ reqId: 'r2' }).info('second');
  t.equal(lines.length, 0, 'info lines are held');
  log.warn('third');
  t.same(
    lines.map((l) => l.msg),
    ['first', 'second', 'third'],
    'pending lines (also a child\'s) come before the warning',
  );
  t.equal(lines[1].reqId, 'r2');
  log.info('fourth');
  log.child({}).error('fifth');
  t.same(lines.map((l) => l.msg).slice(3), ['fourth', 'fifth'], 'an error flushes too');
  log.info('sixth');
  log.flush();
  t.equal(lines.at(-1).msg, 'sixth', 'flush() writes what is pending');
  log.flush();
  t.equal(lines.length, 6, 'an empty flush writes nothing');
});

t.test('buffered: the timer and the size bound write pending lines', async (t) => {
  const timed = capture();
  const log = createLogger('info', timed.stream, {}, { bufferMs: 1 });
  log.info('soon');
  t.equal(timed.lines.length, 0);
  await new Promise((r) => setTimeout(r, 30));
  t.same(timed.lines.map((l) => l.msg), ['soon'], 'written once the buffer time passed');

  const big = capture();
  const held = createLogger('info', big.stream, {}, { bufferMs: 60_000 });
  const pad = 'x'.repeat(1000);
  for (let i = 0; i < 80; i++) held.info({ pad }, `line ${i}`);
  t.ok(big.lines.length >= 60 && big.lines.length < 80, `64 KiB of pending lines are written without waiting (${big.lines.length} of 80)`);
  held.flush();
  t.equal(big.lines.length, 80);
  t.same(big.lines.map((l) => l.msg), Array.from({ length: 80 }, (_, i) => `line ${i}`), 'in order');
});

t.test('unbuffered (the default) writes each line at once', async (t) => {
  const { lines, stream } = capture();
  const log = createLogger('info', stream);
  log.info('now');
  t.equal(lines.length, 1);
});
