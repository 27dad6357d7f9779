/**
 * The HTTP embedder against a local fake `/v1/embeddings` server (deterministic vectors):
 * request shape, batching, the API key, retries with backoff, what is not retried, timeouts
 * and answers of the wrong shape. (The store's handling of a down embedder — indexing goes on
 * lexically, segments are embedded later — is in test/index/vectors.test.ts.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { HttpEmbedderSettings } from '../../src/core/index.js';
import { embedHttp } from '../../src/text/index.js';

interface Seen {
  auth: string | undefined;
  body: { model: string; input: string[] };
}

/** Answers with `plan[i]` for the i-th request ('ok', a status, 'hang', 'garbage', 'short', 'reorder'); 'ok' after the plan. */
async function fakeServer(t: { teardown(fn: () => unknown): void }, plan: Array<'ok' | number | 'hang' | 'garbage' | 'short' | 'reorder'> = []) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Seen['body'];
      seen.push({ auth: req.headers.authorization, body });
      const step = plan[seen.length - 1] ?? 'ok';
      if (step === 'hang') return; // never answers (the client times out)
      if (typeof step === 'number') return void res.writeHead(step, { 'content-type': 'text/plain' }).end(`status ${step}`);
      if (step === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{not json');
      const vec = (s: string) => [s.length, (s.match(/[aeiou]/g) ?? []).length, step === 'short' ? undefined : 1].filter((x) => x !== undefined);
      let data = body.input.map((s, index) => ({ index, embedding: vec(s) }));
      if (step === 'reorder') data = data.reverse();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`, seen };
}

const settings = (url: string, extra: Partial<HttpEmbedderSettings> = {}): HttpEmbedderSettings => ({
  url, model: 'fake-model', dimensions: 3, apiKey: null, batchSize: 2, timeoutMs: 5_000, retries: 2, ...extra,
});
const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => Math.fround(x / n));
};
const sleeps = () => {
  const waited: number[] = [];
  return { waited, sleep: async (ms: number) => void waited.push(ms) };
};

t.test('texts go in batches in the /v1/embeddings shape, with the key as a bearer token; vectors come back unit length, in order', async (t) => {
  const fake = await fakeServer(t, ['ok', 'reorder', 'ok']);
  const texts = ['rollback', 'performance tips', 'a', 'undo changes', ''];
  const out = await embedHttp(settings(fake.url, { apiKey: 'sk-test' }), texts);
  t.equal(fake.seen.length, 3, '5 texts at 2 per request');
  t.same(fake.seen.map((s) => s.body.input.length), [2, 2, 1]);
  t.same(fake.seen[0]!.body, { model: 'fake-model', input: ['rollback', 'performance tips'] });
  t.equal(fake.seen[2]!.body.input[0], ' ', 'an empty text is sent as one space (services refuse empty inputs)');
  t.ok(fake.seen.every((s) => s.auth === 'Bearer sk-test'), 'Authorization: Bearer <apiKey>');
  const expect = [...texts.slice(0, 4), ' '].map((s) => unit([s.length, (s.match(/[aeiou]/g) ?? []).length, 1]));
  t.same(out.map((v) => [...v]), expect, 'unit vectors in input order, even when the answer lists them out of order');
  const none = await fakeServer(t);
  await embedHttp(settings(none.url), ['x']);
  t.equal(none.seen[0]!.auth, undefined, 'no key, no Authorization header');
});

t.test('retryable failures are retried with growing waits; the answer after them counts', async (t) => {
  const fake = await fakeServer(t, [503, 429, 'ok']);
  const s = sleeps();
  const [v] = await embedHttp(settings(fake.url, { retries: 2 }), ['undo'], { sleep: s.sleep });
  t.equal(fake.seen.length, 3, 'two failures, then the answer');
  t.same(s.waited, [250, 500], 'backoff doubles');
  t.same([...v!], unit([4, 2, 1]));
  const garbage = await fakeServer(t, ['garbage', 'ok']);
  t.equal((await embedHttp(settings(garbage.url), ['x'], { sleep: sleeps().sleep })).length, 1, 'an answer that is not JSON is retried');
});

t.test('a down embedder fails with one EmbedderError naming the URL and the cause, after its retries', async (t) => {
  const fake = await fakeServer(t, [500, 502, 503, 'ok']);
  const s = sleeps();
  await t.rejects(embedHttp(settings(fake.url, { retries: 2 }), ['a'], { sleep: s.sleep }), { name: 'EmbedderError', message: new RegExp(`embedder ${fake.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} failed after 3 attempt\\(s\\): HTTP 503: status 503`) });
  t.equal(fake.seen.length, 3, 'retries + 1 attempts, no more');

  const refused = await fakeServer(t, [401]);
  await t.rejects(embedHttp(settings(refused.url, { retries: 3 }), ['a'], { sleep: sleeps().sleep }), /HTTP 401: status 401/);
  t.equal(refused.seen.length, 1, 'a 401 (bad key) is not retried');

  // Nothing listens on this port any more: a connection error, retried, then reported.
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1/embeddings`;
  await new Promise<void>((r) => closed.close(() => r()));
  const s2 = sleeps();
  await t.rejects(embedHttp(settings(deadUrl, { retries: 1 }), ['a'], { sleep: s2.sleep }), { name: 'EmbedderError', message: /failed after 2 attempt\(s\)/ });
  t.same(s2.waited, [250], 'the connection error was retried once');
});

t.test('a hanging embedder times out per request; wrong vector sizes fail at once', async (t) => {
  const slow = await fakeServer(t, ['hang', 'hang']);
  await t.rejects(embedHttp(settings(slow.url, { timeoutMs: 150, retries: 1 }), ['a'], { sleep: sleeps().sleep }), { message: /no answer within 150 ms/ });
  t.equal(slow.seen.length, 2, 'each attempt timed out');

  const short = await fakeServer(t, ['short']);
  await t.rejects(embedHttp(settings(short.url), ['a'], { sleep: sleeps().sleep }), { name: 'EmbedderError', message: `embedder ${short.url}: expected vectors of 3 dimensions, got 2` });
  t.equal(short.seen.length, 1, 'a model of another size is a configuration error, not retried');
});
