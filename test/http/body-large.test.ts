/**
 * readJson (src/http/body.ts) with bodies of 64 KiB and more: arrays are parsed element by
 * element (src/http/json-array.ts) with the same result, and anything else — invalid JSON, a
 * non-array, a byte-order mark — answers exactly as the whole-body parse does.
 */
import t from 'tap';
import { readJson } from '../../src/http/body.js';
import { startTestServer } from '../helpers/server.js';

const s = await startTestServer({
  start: {
    app: {
      routes(router) {
        router.post('/test/json', async (ctx) => {
          ctx.body = { got: await readJson(ctx) };
        });
      },
    },
  },
});
t.teardown(() => s.close());

const post = async (body: Uint8Array<ArrayBuffer> | string) => {
  const res = await fetch(`${s.url}/test/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, body: (await res.json()) as { got?: unknown; code?: string; message?: string } };
};
const docs = Array.from({ length: 100 }, (_, i) => ({ url: `https://x.test/${i}`, title: `Page ${i} "quoted" [x], {y}`, content: 'Ünïcode wörds, and more. '.repeat(40) }));
const big = JSON.stringify(docs);

t.test('a large array: the same value', async (t) => {
  t.ok(Buffer.byteLength(big) > 64 * 1024);
  const r = await post(big);
  t.equal(r.status, 200);
  t.same(r.body.got, docs);
  const bom = await post(Uint8Array.from(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(big)])));
  t.same(bom.body.got, docs, 'after a byte-order mark');
});

t.test('large invalid bodies: the whole-body parse error', async (t) => {
  for (const text of [big.slice(0, -1), `${big.slice(0, -1)},]`, `${big} x`, big.replace('"title"', 'title')]) {
    let expected = '';
    try {
      JSON.parse(text);
    } catch (err) {
      expected = `The request body is not valid JSON: ${(err as Error).message}.`;
    }
    const r = await post(text);
    t.equal(r.status, 400);
    t.equal(r.body.code, 'invalid_json');
    t.equal(r.body.message, expected);
  }
});

t.test('a large object (not an array): parsed whole', async (t) => {
  const obj = { docs };
  const r = await post(JSON.stringify(obj));
  t.same(r.body.got, obj);
});
