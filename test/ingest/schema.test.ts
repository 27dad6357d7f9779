/**
 * Messages of schema-validated page documents name the field and say what it must be and what
 * it was; the schema is the one the OpenAPI document publishes (src/ingest/schema.ts).
 */
import t from 'tap';
import { AppError } from '../../src/core/index.js';
import { PageDocumentInput, validatePage, type ValidateContext } from '../../src/ingest/index.js';

const ctx: ValidateContext = {
  settings: { filters: [{ id: 'fid#1', name: 'Price', type: 'range' }] },
  ignoreUndefinedFilters: false,
  defaultSource: 'api',
};
const base = { url: 'https://example.com/a', title: 'A page', content: 'Some text' };

function problem(doc: unknown): AppError {
  try {
    validatePage(doc, ctx);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('accepted');
}

const cases: Array<[string, unknown, string, RegExp]> = [
  ['range', { ...base, boost: 0 }, 'boost', /boost must be a number greater than 0 and at most 100 \(got 0\)/],
  ['type with the value', { ...base, title: 5 }, 'title', /title must be a string, got number 5/],
  ['nested array entry', { ...base, dataPoints: [{ key: 'a', value: 'x' }, { key: 'b', value: {} }] }, 'dataPoints[1].value', /must be a string \(numbers and booleans are converted\)/],
  ['union branch by type', { ...base, headings: ['a', 3] }, 'headings[1]', /headings\[1\] must be a string, got number 3/],
  ['required', { url: base.url, content: 'x' }, 'title', /title is required/],
  ['length', { ...base, contentGroup: 'x'.repeat(300) }, 'contentGroup', /at most 256 characters \(got 300\)/],
  ['rule outside the schema', { ...base, language: 'Elvish' }, 'language', /ISO 639-1/],
];

for (const [name, doc, field, message] of cases) {
  t.test(name, async (t) => {
    const err = problem(doc);
    t.equal(err.code, 'invalid_document');
    t.equal(err.status, 400);
    t.equal(err.field, field);
    t.match(err.message, message);
  });
}

t.test('every problem of an entry, one per field', async (t) => {
  const err = problem({ ...base, title: 1, boost: 'x', keywords: [1] });
  t.same(err.errors?.map((e) => e.field).sort(), ['boost', 'keywords[0]', 'title']);
});

t.test('the published schema lists the fields validation knows', async (t) => {
  t.same(PageDocumentInput.required?.slice().sort(), ['content', 'title', 'url']);
  t.ok('dataPoints' in PageDocumentInput.properties && 'headings' in PageDocumentInput.properties);
});
