import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { componentLogger, createLogger, isoTime, runWithRequestId, serverDestination, REDACTED } from '../../src/core/log.js';
import { loadConfig } from '../../src/core/config.js';

/** A destination that keeps each line parsed (pino writes one line per call). */
function capture() {
  const lines: any[] = [];
  const raw: string[] = [];
  const stream = {
    write(chunk: string) {
      for (const l of chunk.split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l));
      }
    },
  };
  return { lines, raw, stream };
}

t.test('one JSON line per event: level name, ISO time, fields, msg last; errors with type, message and stack', async (t) => {
  const { lines, raw, stream } = capture();
  const log = createLogger('info', stream);
  log.debug('hidden');
  log.info('plain');
  log.warn({ siteId: 'docs' }, 'with fields');
  log.child({ job: 'r1' }).error({ err: Object.assign(new Error('boom'), { code: 'E_BOOM' }) }, 'failed');
  t.equal(lines.length, 3, 'below-level events dropped');
  t.match(lines[0], { level: 'info', msg: 'plain', time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ });
  t.same(Object.keys(lines[0]), ['level', 'time', 'msg'], 'no pid or hostname');
  t.match(lines[1], { level: 'warn', msg: 'with fields', siteId: 'docs' });
  t.match(lines[2], { level: 'error', msg: 'failed', job: 'r1', err: { type: 'Error', message: 'boom', code: 'E_BOOM', stack: /boom/ } });
  t.match(raw[1], /^\{"level":"warn","time":"[^"]+","siteId":"docs","msg":"with fields"\}$/, 'key order');
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

t.test('a level per component: its own where set, the base level elsewhere', async (t) => {
  const { lines, stream } = capture();
  const root = createLogger({ logLevel: 'info', logComponents: { crawl: 'debug', http: 'silent', index: 'error' } }, stream);
  root.debug('root debug');
  root.info('root info');
  componentLogger(root, 'crawl').debug('crawl debug');
  componentLogger(root, 'http').error('http error');
  componentLogger(root, 'index').warn('index warn');
  componentLogger(root, 'index').error('index error');
  componentLogger(root, 'server').debug('server debug');
  componentLogger(root, 'server').info({ x: 1 }, 'server info');
  componentLogger(root, 'crawl').child({ siteId: 's' }).debug('crawl child debug');
  t.same(lines.map((l) => l.msg), ['root info', 'crawl debug', 'index error', 'server info', 'crawl child debug']);
  t.same(lines.map((l) => l.component), [undefined, 'crawl', 'index', 'server', 'crawl'], 'component on every component line');
});

t.test('the configured SITESIFT_LOG_LEVEL reaches the loggers', async (t) => {
  const { lines, stream } = capture();
  const config = loadConfig([], { SITESIFT_LOG_LEVEL: 'warn,jobs=debug' });
  t.equal(config.logLevel, 'warn');
  t.same(config.logComponents, { jobs: 'debug' });
  const root = createLogger(config, stream);
  componentLogger(root, 'jobs').debug('jobs debug');
  componentLogger(root, 'crawl').info('crawl info');
  t.same(lines.map((l) => l.msg), ['jobs debug']);
});

t.test('every line logged while a request runs carries its id, whichever logger writes it', async (t) => {
  const { lines, stream } = capture();
  const root = createLogger('info', stream);
  const crawl = componentLogger(root, 'crawl');
  root.info('before');
  await runWithRequestId('req-1', async () => {
    root.info('in request');
    await new Promise((r) => setTimeout(r, 5));
    crawl.info('after an await, another component');
    await Promise.all([
      runWithRequestId('req-2', async () => {
        await new Promise((r) => setImmediate(r));
        crawl.warn('nested request');
      }),
      (async () => {
        await new Promise((r) => setTimeout(r, 10));
        root.info('still the first');
      })(),
    ]);
  });
  root.info('after');
  t.same(
    lines.map((l) => [l.msg, l.reqId]),
    [
      ['before', undefined],
      ['in request', 'req-1'],
      ['after an await, another component', 'req-1'],
      ['nested request', 'req-2'],
      ['still the first', 'req-1'],
      ['after', undefined],
    ],
  );
});

t.test('redaction: keys, tokens and Authorization headers by default, more paths by configuration', async (t) => {
  const { lines, raw, stream } = capture();
  const secrets = ['ssm_master_secret_0123456789', 'sk_project_secret_abc', 'Bearer hdr_secret_xyz', 'qs_secret_1', 'qs_secret_2', 'pw_secret'];
  const root = createLogger({ logLevel: 'info', logRedact: ['password', 'db.password'] }, stream);
  const log = componentLogger(root, 'http');
  log.info(
    {
      masterKey: secrets[0],
      project: { token: secrets[1], name: 'docs' },
      headers: { authorization: secrets[2], accept: 'text/html' },
      url: `https://example.com/sites?q=x&token=${secrets[3]}&page=2`,
      path: `/sites?key=${secrets[4]}`,
      db: { password: secrets[5], host: 'h' },
    },
    'secrets',
  );
  log.child({ token: secrets[1] }).info('bound');
  for (const s of secrets) t.notOk(raw.some((l) => l.includes(s)), `${s.slice(0, 8)}… never written`);
  t.match(lines[0], {
    masterKey: REDACTED,
    project: { token: REDACTED, name: 'docs' },
    headers: { authorization: REDACTED, accept: 'text/html' },
    url: `https://example.com/sites?q=x&token=${REDACTED}&page=2`,
    path: `/sites?key=${REDACTED}`,
    db: { password: REDACTED, host: 'h' },
  });
  t.equal(lines[1].token, REDACTED, 'bindings are redacted too');
});

t.test('an invalid SITESIFT_LOG_LEVEL or SITESIFT_LOG_REDACT stops the config with a line naming it', async (t) => {
  t.throws(() => loadConfig([], { SITESIFT_LOG_LEVEL: 'info,crawler=debug' }), /SITESIFT_LOG_LEVEL: unknown log component "crawler"/);
  t.throws(() => loadConfig([], { SITESIFT_LOG_LEVEL: 'info,crawl=loud' }), /SITESIFT_LOG_LEVEL \(crawl\) must be one of/);
  t.throws(() => loadConfig([], { SITESIFT_LOG_REDACT: 'a..b' }), /SITESIFT_LOG_REDACT: "a\.\.b" is not a redact path/);
  t.same(loadConfig([], { SITESIFT_LOG_REDACT: 'a.b, c[*].d ,e["x-y"]' }).logRedact, ['a.b', 'c[*].d', 'e["x-y"]']);
  t.equal(loadConfig([], { LOG_LEVEL: 'debug' }).logLevel, 'debug', 'LOG_LEVEL is still read');
});

const here = path.dirname(fileURLToPath(import.meta.url));

t.test('the asynchronous destination writes every pending line when the process exits or crashes', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sitesift-log-'));
  const script = path.join(dir, 'child.ts');
  const logModule = path.join(here, '../../src/core/log.ts');
  writeFileSync(
    script,
    `import { createLogger } from ${JSON.stringify(logModule)};
const log = createLogger('info');
for (let i = 0; i < 20000; i++) log.info({ i, pad: 'x'.repeat(100) }, 'line');
if (process.argv[2] === 'exit') process.exit(3);
throw new Error('crash after logging');
`,
  );
  for (const how of ['exit', 'crash']) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', script, how], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const lines = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    t.equal(lines.length, 20000, `${how}: all 20,000 lines written`);
    t.equal(lines.at(-1).i, 19999, `${how}: in order to the last`);
    t.equal(r.status, how === 'exit' ? 3 : 1, `${how}: exit status`);
  }
});

t.test('the server destination batches info lines (one write per batch, not per request); warn and error lines write everything pending at once, in order', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sitesift-log-'));
  const file = path.join(dir, 'log');
  const fd = openSync(file, 'a');
  t.teardown(() => closeSync(fd));
  const read = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).msg);
  const until = async (n: number) => {
    for (let i = 0; i < 500 && read().length < n; i++) await new Promise((r) => setTimeout(r, 10));
  };
  // A flush interval longer than the test: only a warn line or an explicit flush writes.
  const held = createLogger('info', serverDestination(fd, 600_000));
  for (let i = 0; i < 3; i++) {
    held.info(`access ${i}`);
    await new Promise((r) => setTimeout(r, 20)); // time for a write, had one been started
  }
  t.same(read(), [], 'info lines wait in the buffer');
  held.warn('slow');
  await until(4);
  t.same(read(), ['access 0', 'access 1', 'access 2', 'slow'], 'a warn line writes what was pending, then itself');
  // The flush timer writes a pending info line without any warn line.
  const timed = createLogger('info', serverDestination(fd, 20));
  timed.info('after the timer');
  await until(5);
  t.same(read().at(-1), 'after the timer');
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
  const stream = { write: (chunk: string) => void raw.push(...chunk.split('\n').filter(Boolean)) };
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
