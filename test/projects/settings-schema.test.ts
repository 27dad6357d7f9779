// The settings are declared once (src/core/settings.ts): the validator, the defaults and the
// OpenAPI document's settings schemas come from that declaration. The document's request body
// is walked here and every limit it states is tried against the validator: a value just
// outside is refused naming its path, the bound itself is accepted. A limit changed in one
// place and not the other fails this test.
import t from 'tap';
import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { AppError } from '../../src/core/index.js';
import { API_ROUTES, openApiDocument } from '../../src/http/index.js';
import { defaultSettings, validateSettings } from '../../src/projects/settings.js';

const doc = openApiDocument(API_ROUTES, 'test') as any;
const op = doc.paths['/admin/projects/{siteId}/settings'];
const body = op.put.requestBody.content['application/json'].schema;
const answer = op.get.responses['200'].content['application/json'].schema;

type Node = Record<string, any>;

/** Every leaf of the request body with the path and a minimal object that puts `v` there. */
function* leaves(schema: Node, path: string[], wrap: (v: unknown) => unknown): Generator<[string, Node, (v: unknown) => unknown]> {
  if (schema.type === 'object' && schema.properties && !schema.allOf) {
    for (const [k, s] of Object.entries<Node>(schema.properties)) {
      if (['updatedAt', 'status'].includes(k) && path.length === 0) continue;
      yield* leaves(s, [...path, k], (v) => wrap({ [k]: v }));
    }
    return;
  }
  yield [path.join('.'), schema, wrap];
}

function refusal(input: unknown): AppError | undefined {
  try {
    validateSettings(input, { partial: true });
    return undefined;
  } catch (err) {
    return err as AppError;
  }
}

t.test('every limit the document states is the one the validator applies', async (t) => {
  let tried = 0;
  for (const [path, s, put] of leaves(body, [], (v) => v)) {
    const types = [s.type].flat();
    if (types.includes('integer') || types.includes('number')) {
      if (s.maximum !== undefined) {
        t.equal(refusal(put(s.maximum + 1))?.field, path, `${path} = maximum + 1 refused`);
        t.equal(refusal(put(s.maximum)), undefined, `${path} = maximum accepted`);
        tried++;
      }
      if (s.minimum !== undefined) {
        t.equal(refusal(put(s.minimum - 1))?.field, path, `${path} = minimum - 1 refused`);
        t.equal(refusal(put(s.minimum)), undefined, `${path} = minimum accepted`);
        tried++;
      }
      if (s.exclusiveMinimum !== undefined) t.equal(refusal(put(s.exclusiveMinimum))?.field, path, `${path} = exclusiveMinimum refused`);
      if (types.includes('integer') && s.minimum !== undefined) t.equal(refusal(put(s.minimum + 0.5))?.field, path, `${path}: a fraction refused`);
      t.equal(refusal(put('1'))?.field, path, `${path}: a string refused`);
    } else if (types.includes('boolean')) {
      t.equal(refusal(put('yes'))?.field, path, `${path}: "yes" refused`);
      t.equal(refusal(put(false)), undefined, `${path}: false accepted`);
      tried++;
    } else if (types.includes('string') && Array.isArray(s.enum)) {
      // A value may need another field (embedder "http" needs http.url): not refused for itself.
      for (const v of s.enum) t.not(refusal(put(v))?.field, path, `${path} = ${v} accepted`);
      t.equal(refusal(put('zzz'))?.field, path, `${path} = "zzz" refused`);
      tried++;
    } else if (types.includes('string') && s.maxLength !== undefined && s.format === undefined && s.pattern === undefined) {
      t.equal(refusal(put('x'.repeat(s.maxLength + 1)))?.field, path, `${path}: ${s.maxLength + 1} characters refused`);
      tried++;
    }
  }
  t.ok(tried >= 30, `${tried} limits tried`);
});

t.test('the defaults are the document\'s defaults and a stored object matches the answer schema', async (t) => {
  const d = defaultSettings() as any;
  t.equal(body.properties.crawler.properties.maxDepth.default, d.crawler.maxDepth);
  t.equal(body.properties.search.properties.typoTolerance.default, d.search.typoTolerance);
  t.equal(body.properties.search.properties.semantic.properties.semanticRatio.default, d.search.semantic.semanticRatio);
  const ajv = new Ajv({ strict: false });
  ((addFormatsPlugin as any).default ?? addFormatsPlugin)(ajv);
  for (const f of ['re2', 'cron', 'http-url', 'language']) ajv.addFormat(f, true);
  const check = ajv.compile(answer);
  t.ok(check({ status: 'success', ...d }), JSON.stringify(check.errors));
  t.notOk(check({ status: 'success', ...d, crawler: { ...d.crawler, maxDepth: 'x' } }), 'and a wrong one does not');
  t.notOk(body.required?.includes('crawler'), 'no section is required in a request');
  t.notOk(body.properties.crawler.required?.includes('maxDepth'), 'nor a field that has a default');
  t.ok(answer.required.includes('crawler'), 'every section is in an answer');
});

t.test('a rule between fields: the HTTP embedder needs its URL', async (t) => {
  t.equal(refusal({ search: { semantic: { embedder: 'http' } } })?.field, 'search.semantic.http.url');
  t.match(refusal({ search: { semantic: { embedder: 'http', http: { url: '' } } } })?.message, 'search.semantic.http.url: is required when embedder is "http"');
  t.equal(refusal({ search: { semantic: { embedder: 'http', http: { url: 'http://127.0.0.1:1/v1/embeddings' } } } }), undefined);
});

t.test('the merge-patch media type is documented on PATCH', async (t) => {
  t.ok(op.patch.requestBody.content['application/merge-patch+json']);
});
