/**
 * Bulk import against a small stand-in server on 127.0.0.1 that validates with the real
 * validator and records what it accepted; the end-to-end import into a real sitesift server is
 * in test/cli/commands/index.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { AppError } from '../../src/core/index.js';
import { formatSummary, ImportAborted, listInputFiles, runImport, withBaseUrl } from '../../src/ingest/bulk-import.js';
import { validateBatch } from '../../src/ingest/validate.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'ingest');

interface Stub {
  url: string;
  accepted: Map<string, unknown>;
  requests: number;
  close(): Promise<void>;
}

async function stubServer(opts: { token?: string; failWith?: number } = {}): Promise<Stub> {
  const accepted = new Map<string, unknown>();
  const stub = { accepted, requests: 0 } as Stub;
  const server = http.createServer((req, res) => {
    stub.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (opts.failWith) return send(opts.failWith, { status: 'failure', code: 'invalid_token', message: 'The key is not valid.' });
      if (req.headers.authorization !== `Bearer ${opts.token ?? 'master'}`) return send(401, { status: 'failure', code: 'invalid_token', message: 'bad key' });
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname !== '/sites/pagesJson' || u.searchParams.get('site') !== 'docs') return send(404, { status: 'failure', code: 'unknown_site', message: 'no' });
      try {
        const docs = validateBatch(JSON.parse(Buffer.concat(chunks).toString('utf8')), {
          settings: { filters: [] },
          ignoreUndefinedFilters: false,
          defaultSource: 'api',
        });
        for (const d of docs) accepted.set(d.url, d);
        send(200, { status: 'success', indexed: docs.length });
      } catch (err) {
        const e = err as AppError;
        send(e.status, { status: 'failure', code: e.code, message: e.message, field: e.field, errors: e.errors });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () => new Promise((r) => server.close(() => r()));
  return stub;
}

function sink(): PassThrough & { text(): string } {
  const out = new PassThrough() as PassThrough & { text(): string };
  let buf = '';
  out.on('data', (c: Buffer) => (buf += c.toString()));
  out.text = () => buf;
  return out;
}

t.test('JSON array: bad entry isolated, relative URL prefixed, plain progress lines', async (t) => {
  const stub = await stubServer();
  t.teardown(() => stub.close());
  const out = sink();
  const s = await runImport({
    serverUrl: stub.url,
    masterKey: 'master',
    siteId: 'docs',
    input: path.join(fixtures, 'pages.json'),
    baseUrl: 'https://docs.example.com/',
    out,
  });
  t.equal(s.read, 4);
  t.equal(s.indexed, 3);
  t.equal(s.rejected.length, 1);
  t.match(s.rejected[0], { origin: 'pages.json[2]', url: 'https://docs.example.com/guide/upgrade.html', reason: /title must be a string/ });
  t.ok(stub.accepted.has('https://docs.example.com/guide/configure.html'));
  t.match(out.text(), /100% done: 3 indexed, 1 rejected/);
  t.match(formatSummary(s), /4 entries .*3 indexed, 1 rejected[\s\S]*pages\.json\[2\]/);
});

t.test('JSONL (plain and gzip): bad JSON line and invalid entry reported, batches of 2', async (t) => {
  for (const file of ['pages.jsonl', 'pages.jsonl.gz']) {
    const stub = await stubServer();
    const s = await runImport({
      serverUrl: stub.url,
      masterKey: 'master',
      siteId: 'docs',
      input: path.join(fixtures, file),
      baseUrl: 'https://db.example.com/docs/',
      batchSize: 2,
      out: sink(),
    });
    await stub.close();
    t.equal(s.read, 5, file);
    t.equal(s.indexed, 3, file);
    t.same(
      s.rejected.map((r) => r.origin),
      [`${file}:6`, `${file}:3`],
      file,
    );
    t.match(s.rejected.find((r) => r.origin === `${file}:3`)?.reason, /boost/);
    t.match(s.rejected.find((r) => r.origin === `${file}:6`)?.reason, /not valid JSON/);
    t.same([...stub.accepted.keys()].sort(), [
      'https://db.example.com/docs/ref/delete.html',
      'https://db.example.com/docs/ref/insert.html',
      'https://db.example.com/docs/ref/select.html',
    ]);
  }
});

t.test('directory: recursive, name order, non-JSON files skipped', async (t) => {
  t.same(
    (await listInputFiles(path.join(fixtures, 'dir'))).map((f) => path.relative(fixtures, f)),
    [path.join('dir', 'a.json'), path.join('dir', 'sub', 'b.jsonl')],
  );
  const stub = await stubServer();
  t.teardown(() => stub.close());
  const s = await runImport({ serverUrl: stub.url, masterKey: 'master', siteId: 'docs', input: path.join(fixtures, 'dir'), out: sink() });
  t.equal(s.indexed, 3);
  t.same(s.rejected.map((r) => [r.origin, r.url]), [['b.jsonl:2', 'https://dir.example.com/c.html']]);
  t.match(s.rejected[0]!.reason, /language/);
});

t.test('TTY progress bar', async (t) => {
  const stub = await stubServer();
  t.teardown(() => stub.close());
  const out = Object.assign(sink(), { isTTY: true, columns: 100 });
  await runImport({ serverUrl: stub.url, masterKey: 'master', siteId: 'docs', input: path.join(fixtures, 'dir'), out });
  t.match(out.text(), /\r\[#+\] 100% 3 indexed, 1 rejected/);
});

t.test('auth failure aborts the import', async (t) => {
  const stub = await stubServer();
  t.teardown(() => stub.close());
  const err = await runImport({ serverUrl: stub.url, masterKey: 'wrong', siteId: 'docs', input: path.join(fixtures, 'dir'), out: sink() }).catch((e: unknown) => e);
  t.ok(err instanceof ImportAborted);
  t.match((err as Error).message, /invalid_token/);
  await t.rejects(
    runImport({ serverUrl: stub.url, masterKey: 'master', siteId: 'other', input: path.join(fixtures, 'dir'), out: sink() }),
    /unknown_site/,
  );
  await t.rejects(
    runImport({ serverUrl: stub.url, masterKey: 'master', siteId: 'docs', input: path.join(fixtures, 'dir'), baseUrl: 'nope', out: sink() }),
    /--base-url/,
  );
});

t.test('withBaseUrl leaves absolute and non-string URLs alone', async (t) => {
  t.same(withBaseUrl({ url: 'https://a.example/x' }, 'https://b.example/'), { url: 'https://a.example/x' });
  t.same(withBaseUrl({ url: 'x.html' }, 'https://b.example/docs/'), { url: 'https://b.example/docs/x.html' });
  t.same(withBaseUrl({ url: 3 }, 'https://b.example/'), { url: 3 });
  t.same(withBaseUrl({ url: 'x.html' }, undefined), { url: 'x.html' });
});
