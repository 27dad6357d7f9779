import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger, isoTime } from '../../src/core/log.js';

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

t.test('every line is the JSON of {level, time, ...bindings, ...fields, msg} (fast concatenation or not)', async (t) => {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      raw.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  const err = new Error('boom');
  const withToJson = { toJSON: () => 'custom', a: 1 };
  const own = JSON.parse('{"__proto__":{"x":1},"a":2}') as object;
  const bindingSets: Array<Record<string, unknown>> = [{}, { reqId: 'r-1' }, { reqId: 'r"2\n', n: 3 }, { msg: 'bound msg' }, { level: 'x', time: 1 }, { 7: 'digit' }];
  const fieldSets: Array<object | string> = [
    'plain string',
    'quote " and \u2028 and é',
    {},
    { method: 'GET', path: '/sites/suggest', status: 200, ms: 0.123, siteId: 'pg' },
    { reqId: 'overrides the binding' },
    { msg: 'field msg', level: 'field level' },
    { 1: 'integer key', b: 2 },
    { err },
    { nested: { err, list: [1, 'two', null] } },
    { gone: undefined, nil: null, nan: NaN },
    withToJson,
    own,
  ];
  for (const bindings of bindingSets) {
    const root = createLogger('debug', stream);
    const log = Object.keys(bindings).length ? root.child(bindings) : root;
    for (const fields of fieldSets) {
      for (const msg of [undefined, 'the msg']) {
        raw.length = 0;
        if (typeof fields === 'string') log.info(fields);
        else log.info(fields, msg);
        t.equal(raw.length, 1);
        const time = /"time":"([^"]+)"/.exec(raw[0]!)?.[1];
        const line: Record<string, unknown> = { level: 'info', time, ...bindings };
        if (typeof fields === 'string') line.msg = fields;
        else {
          for (const [k, v] of Object.entries(fields)) line[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
          line.msg = msg ?? '';
        }
        t.equal(raw[0], JSON.stringify(line), `bindings #${bindingSets.indexOf(bindings)}, fields #${fieldSets.indexOf(fields)}, msg ${msg ?? 'none'}`);
      }
    }
  }
});

t.test('buffered: lines are encoded into a buffer the stream keeps; multi-byte and oversized lines intact, in order', async (t) => {
  const chunks: unknown[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk, _enc, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  const log = createLogger('info', stream, {}, { bufferMs: 60_000 });
  const text = (i: number) => `é€😀 ${i} "q"`;
  for (let i = 0; i < 3; i++) log.info({ text: text(i) }, `line ${i}`);
  log.flush();
  t.equal(chunks.length, 1, 'pending lines go as one chunk');
  t.ok(Buffer.isBuffer(chunks[0]), 'the chunk is the buffer the lines were encoded into (not a string kept on the heap)');
  const first = Buffer.from(chunks[0] as Buffer);
  // A later line must not overwrite a chunk the stream still holds.
  for (let i = 3; i < 6; i++) log.info({ text: text(i) }, `line ${i}`);
  // Longer than the whole buffer (3 bytes per character): written on its own, after what is pending.
  const huge = '€'.repeat(30_000);
  log.info({ huge }, 'huge');
  log.info({ text: text(6) }, 'line 6');
  log.flush();
  t.same(chunks[0], first, 'a written chunk is never reused');
  const lines = chunks.map((c) => (Buffer.isBuffer(c) ? c.toString('utf8') : String(c))).join('').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  t.same(lines.map((l) => l.msg), ['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5', 'huge', 'line 6'], 'every line, in order');
  t.same(lines.filter((l) => l.text).map((l) => l.text), [0, 1, 2, 3, 4, 5, 6].map(text), 'multi-byte text intact');
  t.equal(lines[6].huge, huge);
});

t.test('isoTime is toISOString for every time value: across second, day and year boundaries, backwards, before 1970, beyond 9999', async (t) => {
  const bases = [0, -1, -1000, -86_400_001, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 11, 31, 23, 59, 59, 990), Date.UTC(9999, 11, 31, 23, 59, 59, 998), Date.UTC(10000, 0, 1), Date.now()];
  let checked = 0;
  for (const base of bases) {
    // Forwards over two second boundaries, then backwards, so the kept second changes both ways.
    const times = Array.from({ length: 2100 }, (_, i) => base - 50 + i);
    for (const ms of [...times, ...times.reverse()]) {
      const want = new Date(ms).toISOString();
      if (isoTime(ms) !== want) {
        t.fail(`${ms}: ${isoTime(ms)} instead of ${want}`);
        return;
      }
      checked++;
    }
  }
  t.equal(checked, bases.length * 4200, 'all equal');
  t.equal(isoTime(1.5), new Date(1.5).toISOString(), 'a fraction of a millisecond: as toISOString');
});

t.test('a line carries the current time (isoTime of the clock at the write)', async (t) => {
  const raw: string[] = [];
  const stream = { write: (chunk: string | Buffer) => raw.push(...chunk.toString().split('\n').filter(Boolean)) > 0 } as unknown as Writable;
  const log = createLogger('info', stream);
  const before = Date.now();
  log.info('a');
  log.info({ b: 1 }, 'b');
  const after = Date.now();
  t.equal(raw.length, 2);
  for (const l of raw) {
    const time = (JSON.parse(l) as { time: string }).time;
    const ms = Date.parse(time);
    t.ok(ms >= before && ms <= after, `${time} within the write`);
    t.equal(time, new Date(ms).toISOString(), 'ISO 8601 as toISOString writes it');
  }
});
