import t from 'tap';
import { AppError } from '../../src/core/index.js';
import { MAX_WARNINGS, normalizeLanguage, validateBatch, validatePage, type EntryWarning, type ValidateContext } from '../../src/ingest/validate.js';

const ctx: ValidateContext = {
  settings: {
    filters: [
      { id: 'fid#1', name: 'Price', type: 'range' },
      { id: 'fid#2', name: 'Colour', type: 'multiple' },
    ],
  },
  ignoreUndefinedFilters: false,
  defaultSource: 'api',
};

const base = { url: 'https://example.com/a', title: 'A page', content: 'Some text' };

function failure(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

t.test('minimal document gets documented defaults', async (t) => {
  const doc = validatePage(base, ctx);
  t.same(doc, {
    url: 'https://example.com/a',
    title: 'A page',
    content: 'Some text',
    documentType: 'HTML',
    contentGroup: '',
    imageUrl: null,
    dataPoints: [],
    filters: [],
    boost: 1,
    keywords: [],
    language: null,
    headings: [],
    source: 'api',
    status: 200,
  });
});

t.test('full seed document is accepted and normalised', async (t) => {
  const doc = validatePage(
    {
      url: 'HTTPS://Example.COM:443/docs?q=1#intro',
      documentType: 'pdf',
      title: 'Manual',
      content: 'Body',
      appendPageContent: false,
      contentGroup: ' Docs ',
      imageUrl: 'https://example.com/i.png',
      dataPoints: [
        { key: 'price', value: 9.5, show: true },
        { key: 'author', value: 'Ann', show: false },
        { key: 'instock', value: true },
      ],
      filters: [
        { key: 'fid#1', value: 12 },
        { key: 'fid#2', value: ['red', 'blue', 'red'] },
      ],
      boost: 100,
      keywords: ['manual', 'guide'],
      language: 'German',
      headings: 'Intro | Setup\nUsage',
      description: 'A manual',
    },
    ctx,
  );
  t.equal(doc.url, 'https://example.com/docs?q=1', 'shared URL identity (src/core/url.ts): fragment dropped');
  t.equal(doc.documentType, 'PDF');
  t.equal(doc.contentGroup, 'Docs');
  t.equal(doc.imageUrl, 'https://example.com/i.png');
  t.same(doc.dataPoints, [
    { key: 'price', value: '9.5', show: true },
    { key: 'author', value: 'Ann', show: false },
    { key: 'instock', value: 'true', show: true },
  ]);
  t.same(doc.filters, [
    { key: 'fid#1', value: 12 },
    { key: 'fid#2', value: ['red', 'blue'] },
  ]);
  t.equal(doc.boost, 100);
  t.equal(doc.language, 'de');
  t.same(doc.headings, ['Intro', 'Setup', 'Usage']);
  t.equal(doc.description, 'A manual');
});

t.test('null optional fields mean absent; empty title allowed', async (t) => {
  const doc = validatePage({ ...base, title: '', contentGroup: null, imageUrl: null, appendPageContent: null, language: null, boost: null }, ctx);
  t.equal(doc.title, '');
  t.equal(doc.contentGroup, '');
  t.equal(doc.imageUrl, null);
  t.equal(doc.boost, 1);
});

t.test('language forms', async (t) => {
  t.equal(normalizeLanguage('en'), 'en');
  t.equal(normalizeLanguage('EN'), 'en');
  t.equal(normalizeLanguage('en-GB'), 'en');
  t.equal(normalizeLanguage('pt_BR'), 'pt');
  t.equal(normalizeLanguage('english'), 'en');
  t.equal(normalizeLanguage('Greek'), 'el');
  t.equal(normalizeLanguage('Klingon'), undefined);
  t.equal(normalizeLanguage('xx'), undefined);
});

// [name, document, field named in the error]
const bad: Array<[string, Record<string, unknown>, string]> = [
  ['url missing', { title: 'x', content: 'y' }, 'url'],
  ['url number', { ...base, url: 42 }, 'url'],
  ['url relative', { ...base, url: '/a/b' }, 'url'],
  ['url ftp', { ...base, url: 'ftp://example.com/a' }, 'url'],
  ['url empty', { ...base, url: '' }, 'url'],
  ['url with credentials', { ...base, url: 'https://user:secret@example.com/a' }, 'url'],
  ['url too long', { ...base, url: `https://example.com/${'a'.repeat(2100)}` }, 'url'],
  ['title missing', { url: base.url, content: 'y' }, 'title'],
  ['title number', { ...base, title: 1 }, 'title'],
  ['title array', { ...base, title: ['a'] }, 'title'],
  ['content missing', { url: base.url, title: 'x' }, 'content'],
  ['content object', { ...base, content: {} }, 'content'],
  ['title and content empty', { ...base, title: ' ', content: '' }, 'content'],
  ['documentType unknown', { ...base, documentType: 'EXE' }, 'documentType'],
  ['documentType number', { ...base, documentType: 3 }, 'documentType'],
  ['appendPageContent string', { ...base, appendPageContent: 'true' }, 'appendPageContent'],
  ['contentGroup number', { ...base, contentGroup: 5 }, 'contentGroup'],
  ['imageUrl boolean', { ...base, imageUrl: true }, 'imageUrl'],
  ['boost zero', { ...base, boost: 0 }, 'boost'],
  ['boost negative', { ...base, boost: -1 }, 'boost'],
  ['boost above 100', { ...base, boost: 100.5 }, 'boost'],
  ['boost string', { ...base, boost: '2' }, 'boost'],
  ['keywords string', { ...base, keywords: 'a,b' }, 'keywords'],
  ['keywords entry number', { ...base, keywords: ['a', 2] }, 'keywords[1]'],
  ['language unknown', { ...base, language: 'Elvish' }, 'language'],
  ['language number', { ...base, language: 1 }, 'language'],
  ['headings number', { ...base, headings: 3 }, 'headings'],
  ['headings entry object', { ...base, headings: [{}] }, 'headings[0]'],
  ['description number', { ...base, description: 3 }, 'description'],
  ['dataPoints object', { ...base, dataPoints: {} }, 'dataPoints'],
  ['dataPoint not object', { ...base, dataPoints: ['x'] }, 'dataPoints[0]'],
  ['dataPoint key missing', { ...base, dataPoints: [{ value: 'v', show: true }] }, 'dataPoints[0].key'],
  ['dataPoint key number', { ...base, dataPoints: [{ key: 1, value: 'v', show: true }] }, 'dataPoints[0].key'],
  ['dataPoint value missing', { ...base, dataPoints: [{ key: 'k', show: true }] }, 'dataPoints[0].value'],
  ['dataPoint value object', { ...base, dataPoints: [{ key: 'k', value: {}, show: true }] }, 'dataPoints[0].value'],
  ['dataPoint show string', { ...base, dataPoints: [{ key: 'k', value: 'v', show: 'yes' }] }, 'dataPoints[0].show'],
  ['filters object', { ...base, filters: { key: 'fid#1' } }, 'filters'],
  ['filter undefined', { ...base, filters: [{ key: 'fid#9', value: 1 }] }, 'filters[0].key'],
  ['filter key missing', { ...base, filters: [{ value: 1 }] }, 'filters[0].key'],
  ['filter range string', { ...base, filters: [{ key: 'fid#1', value: '12' }] }, 'filters[0].value'],
  ['filter multiple number', { ...base, filters: [{ key: 'fid#2', value: 3 }] }, 'filters[0].value'],
  ['filter multiple mixed', { ...base, filters: [{ key: 'fid#2', value: ['a', 1] }] }, 'filters[0].value'],
  ['filter twice', { ...base, filters: [{ key: 'fid#1', value: 1 }, { key: 'fid#1', value: 2 }] }, 'filters[1].key'],
];

for (const [name, doc, field] of bad) {
  t.test(`rejects: ${name}`, async (t) => {
    const err = failure(() => validatePage(doc, ctx));
    t.equal(err.code, 'invalid_document');
    t.equal(err.status, 400);
    t.equal(err.field, field, err.message);
    t.ok(err.errors?.some((e) => e.field === field && e.index === 0));
    t.match(err.message, field);
  });
}

t.test('non-object bodies', async (t) => {
  for (const body of [null, 'x', 3, [base]]) {
    const err = failure(() => validatePage(body, ctx));
    t.equal(err.code, 'invalid_document');
    t.equal(err.field, 'body');
  }
});

t.test('undefined filters dropped when ignoreUndefinedFilters', async (t) => {
  const doc = validatePage({ ...base, filters: [{ key: 'fid#9', value: 1 }, { key: 'fid#1', value: 3 }] }, { ...ctx, ignoreUndefinedFilters: true });
  t.same(doc.filters, [{ key: 'fid#1', value: 3 }]);
  // A defined filter with a wrong value stays an error.
  const err = failure(() => validatePage({ ...base, filters: [{ key: 'fid#1', value: 'x' }] }, { ...ctx, ignoreUndefinedFilters: true }));
  t.equal(err.field, 'filters[0].value');
});

t.test('batch: size limits', async (t) => {
  t.equal(failure(() => validateBatch([], ctx)).code, 'invalid_document');
  t.equal(failure(() => validateBatch(base, ctx)).code, 'invalid_document');
  const many = Array.from({ length: 101 }, (_, i) => ({ ...base, url: `https://example.com/${i}` }));
  const err = failure(() => validateBatch(many, ctx));
  t.equal(err.code, 'batch_too_large');
  t.equal(err.status, 400);
  t.equal(validateBatch(many.slice(0, 100), ctx).length, 100);
});

t.test('batch: every bad entry reported with its index, nothing returned', async (t) => {
  const err = failure(() => validateBatch([base, { ...base, title: 3 }, { url: 'nope', title: 't', content: 'c' }, 7], ctx));
  t.equal(err.code, 'invalid_document');
  t.same(
    err.errors?.map((e) => [e.index, e.field]),
    [
      [1, 'title'],
      [2, 'url'],
      [3, 'body'],
    ],
  );
  t.match(err.message, /entry 1, title/);
});

t.test('batch: duplicate URLs, the last wins at its position', async (t) => {
  const docs = validateBatch(
    [
      { ...base, title: 'first' },
      { ...base, url: 'https://example.com/b' },
      { ...base, url: 'https://EXAMPLE.com/a', title: 'last' },
    ],
    ctx,
  );
  t.same(
    docs.map((d) => [d.url, d.title]),
    [
      ['https://example.com/b', 'A page'],
      ['https://example.com/a', 'last'],
    ],
  );
});

t.test('unknown fields are ignored with a warning naming them; the document is accepted', async (t) => {
  const warnings: EntryWarning[] = [];
  const doc = validatePage({ ...base, keyword: ['typo'], dataPoints: [{ key: 'k', value: 'v', color: 1 }], filters: [{ key: 'fid#1', value: 3, unit: 'EUR' }] }, { ...ctx, warnings });
  t.same(doc.dataPoints, [{ key: 'k', value: 'v', show: true }]);
  t.same(doc.filters, [{ key: 'fid#1', value: 3 }]);
  t.notOk('keyword' in doc);
  t.same(warnings.map((w) => [w.index, w.field]), [[0, 'keyword'], [0, 'dataPoints[0].color'], [0, 'filters[0].unit']]);
  t.match(warnings[0]!.message, /ignored/);

  const batchWarnings: EntryWarning[] = [];
  const docs = validateBatch([base, { ...base, url: 'https://example.com/b', extra: 1 }], { ...ctx, warnings: batchWarnings });
  t.equal(docs.length, 2);
  t.same(batchWarnings, [{ index: 1, field: 'extra', message: 'is not a page document field; ignored' }]);

  // A rejected batch answers its errors only.
  const rejected: EntryWarning[] = [];
  failure(() => validateBatch([{ ...base, extra: 1 }, { ...base, title: 5 }], { ...ctx, warnings: rejected }));
  t.same(rejected, []);
});

t.test('warnings are capped: the rest is counted in one entry', async (t) => {
  const many = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`x${i}`, i]));
  const warnings: EntryWarning[] = [];
  validateBatch([{ ...base, ...many }, { ...base, url: 'https://example.com/b', ...many }], { ...ctx, warnings });
  t.equal(warnings.length, MAX_WARNINGS + 1);
  t.same(warnings[MAX_WARNINGS], { index: 0, field: 'body', message: '400 more warnings not listed' });
});
