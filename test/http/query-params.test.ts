/**
 * Query parameters are declared once (each route's `query` schema) and both the OpenAPI
 * document and the reader (`readQuery`, src/http/params.ts) come from that declaration. The
 * test reads the parameters from the served /openapi.json and derives its requests from them:
 * a value just outside a documented range, a value outside a documented enum, a boolean that
 * is not one, a string longer than documented must each be a 400 naming the parameter in the
 * reader's wording; the documented bounds and every enum value (in any case) must be read.
 * A limit changed in the route's reading but not its document (or the reverse) fails here.
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { readQuery } from '../../src/http/params.js';
import { api, startTestServer } from '../helpers/server.js';

const s = await startTestServer();
t.teardown(() => s.close());
const created = await api(s.url, '/admin/projects', { method: 'POST', token: s.masterKey, json: { siteId: 'qp' } });
const token = created.body.apiKey.token as string;
const doc = (await api(s.url, '/openapi.json')).body;

/** GET routes with query parameters, each with the parameters of a request that succeeds. */
const BASES: Array<[string, Record<string, string>]> = [
  ['/sites', { site: 'qp', query: '*' }],
  ['/sites/suggest', { site: 'qp', query: 'a' }],
  ['/sites/queries/timechart', { token, interval: 'day' }],
  ['/sites/queries/top', { token }],
  ['/sites/queries/noResults', { token }],
  ['/tasks', { token }],
  ['/sites/indexedContent', { token }],
  ['/sites/tasks', { token }],
];

interface Param {
  name: string;
  required: boolean;
  schema: { type?: string; minimum?: number; maximum?: number; enum?: string[]; anyOf?: Array<{ const?: string }>; maxLength?: number; pattern?: string; default?: unknown; 'x-list'?: unknown };
}

function get(path: string, params: Record<string, string>, extra = '') {
  const qs = new URLSearchParams(params).toString();
  return api(s.url, `${path}?${qs}${extra}`);
}

/** The value was read: any answer but a 400 naming it in the reader's words (a rule between parameters may still refuse it). */
function readOk(name: string, res: { status: number; body: any }): boolean {
  return !(res.status === 400 && res.body.field === name && /must be (an integer|a number|one of|true, false)|is required|must not be empty|at most \d+ characters/.test(res.body.message));
}

t.test('every documented query parameter is read as documented', async (t) => {
  let tried = 0;
  for (const [path, base] of BASES) {
    const ok = await get(path, base);
    t.equal(ok.status, 200, `${path} base request: ${ok.body?.message ?? ''}`);
    const params: Param[] = doc.paths[path].get.parameters.filter((p: { in: string }) => p.in === 'query');
    t.ok(params.length > 0, `${path} documents its parameters`);
    for (const { name, schema: sc } of params) {
      if (name === 'token' || name === 'site') continue;
      const refuse = async (value: string, why: RegExp | string) => {
        const res = await get(path, { ...base, [name]: value });
        t.equal(res.status, 400, `${path} ${name}=${value.slice(0, 20)} refused`);
        t.equal(res.body.field, name, `${path} ${name}: names the parameter`);
        t.match(res.body.message, why, `${path} ${name}=${value.slice(0, 20)}: ${res.body.message}`);
        tried++;
      };
      const accept = async (value: string) => {
        const res = await get(path, { ...base, [name]: value });
        t.ok(readOk(name, res), `${path} ${name}=${value.slice(0, 20)} read (${res.status} ${res.body?.message ?? ''})`);
        tried++;
      };
      const values = sc.enum ?? (sc.anyOf?.every((b) => typeof b.const === 'string') ? sc.anyOf.map((b) => b.const!) : undefined);
      if (values) {
        for (const v of values) {
          await accept(v.toLowerCase());
          await accept(v.toUpperCase());
        }
        await refuse('zzz', `must be one of ${values.join(', ')}`);
      } else if (sc.type === 'integer') {
        if (sc.maximum !== undefined) {
          await refuse(String(sc.maximum + 1), String(sc.maximum));
          await accept(String(sc.maximum));
        }
        if (sc.minimum !== undefined) {
          await refuse(String(sc.minimum - 1), String(sc.minimum));
          await accept(String(sc.minimum));
        }
        await refuse('1.5', 'must be an integer');
        await refuse('abc', 'must be an integer');
      } else if (sc.type === 'number') {
        await refuse(String((sc.maximum ?? 0) + 1), `between ${sc.minimum} and ${sc.maximum}`);
        await refuse(String((sc.minimum ?? 0) - 1), `between ${sc.minimum} and ${sc.maximum}`);
        await accept(String(sc.maximum));
        await accept(String(sc.minimum));
      } else if (sc.type === 'boolean') {
        for (const v of ['TRUE', 'False', '1', '0']) await accept(v);
        await refuse('maybe', 'must be true, false, 1 or 0');
      } else if (sc['x-list']) {
        const res = await get(path, base, `&${name}[]=Docs&${name}[]=_`);
        t.equal(res.status, 200, `${path} ${name}[] keys read`);
        await accept('["Docs"]');
        await refuse('{"a":1}', 'must be a JSON array');
      } else if (sc.type === 'string') {
        if (sc.maxLength !== undefined) await refuse('x'.repeat(sc.maxLength + 1), `at most ${sc.maxLength} characters`);
        if (sc.pattern !== undefined) await refuse('not-a-task-id', `"${name}"`);
      }
    }
  }
  t.ok(tried >= 100, `${tried} requests derived from the document`);
});

t.test('parameters not declared are ignored; a declared one given twice is refused', async (t) => {
  const res = await get('/sites', { site: 'qp', query: '*', bogus: 'x', limit: '5' });
  t.equal(res.status, 200);
  const twice = await get('/sites', { site: 'qp', query: '*' }, '&limit=1&limit=2');
  t.equal(twice.status, 400);
  t.equal(twice.body.field, 'limit');
  t.match(twice.body.message, 'given more than once');
});

t.test('readQuery reads what the schema declares, nothing else', async (t) => {
  const ctx = (query: Record<string, string | string[]>) => ({ query }) as unknown as Context;
  const Q = Type.Object({
    n: Type.Integer({ minimum: 1, maximum: 3, default: 2 }),
    on: Type.Boolean({ default: false }),
    order: Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { default: 'ASC' }),
    name: Type.String({ maxLength: 4 }),
  });
  t.same(readQuery(ctx({ name: 'ab', other: 'x' }), Q), { n: 2, on: false, order: 'ASC', name: 'ab' }, 'defaults filled, undeclared left out');
  t.same(readQuery(ctx({ n: '3', on: 'TRUE', order: 'desc', name: 'abcd' }), Q), { n: 3, on: true, order: 'DESC', name: 'abcd' });
  t.throws(() => readQuery(ctx({ n: '4', name: 'a' }), Q), { field: 'n', message: 'Parameter "n" must be an integer from 1 to 3, got "4".' });
  t.throws(() => readQuery(ctx({}), Q), { field: 'name', message: 'Parameter "name" is required.' });
  t.throws(() => readQuery(ctx({ name: 'abcde' }), Q), { field: 'name', message: 'Parameter "name" must be at most 4 characters.' });
  // The same request against a schema with another maximum: the declaration is what decides.
  const Q5 = Type.Object({ ...Q.properties, n: Type.Integer({ minimum: 1, maximum: 5 }) });
  t.equal(readQuery(ctx({ n: '4', name: 'a' }), Q5).n, 4);
});
