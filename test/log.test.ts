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
