import t from 'tap';
import { filterAndPage, parseStatusFilter, type StoreEntry } from '../../src/ingest/reports.js';

function entry(url: string, over: Partial<StoreEntry> = {}): StoreEntry {
  return { url, title: url, documentType: 'HTML', status: 200, contentGroup: '', source: 'api', indexedAt: 0, updatedAt: 1000, ...over };
}

const entries = [
  entry('https://e.com/c'),
  entry('https://e.com/a.pdf', { documentType: 'PDF', contentGroup: 'Docs' }),
  entry('https://e.com/gone', { status: 404, message: 'Not Found', source: 'crawler' }),
  entry('https://e.com/B', { status: 801, message: 'blacklisted', source: 'crawler' }),
  entry('https://e.com/err', { status: 503 }),
];

t.test('status filter parsing', async (t) => {
  t.same(parseStatusFilter('200'), { min: 200, max: 200 });
  t.same(parseStatusFilter('4XX'), { min: 400, max: 499 });
  t.same(parseStatusFilter('8xx'), { min: 800, max: 899 });
  for (const bad of ['2000', '99', 'abc', '4X', 'XX', '0xx', '']) t.equal(parseStatusFilter(bad), undefined, bad);
});

t.test('no filter: sorted by URL, shaped per SPEC', async (t) => {
  const r = filterAndPage(entries, { offset: 0, limit: 50 });
  t.equal(r.total, 5);
  t.same(r.pages.map((p) => p.url), ['https://e.com/B', 'https://e.com/a.pdf', 'https://e.com/c', 'https://e.com/err', 'https://e.com/gone']);
  t.same(r.pages[1], {
    url: 'https://e.com/a.pdf',
    title: 'https://e.com/a.pdf',
    contentType: 'PDF',
    status: 200,
    contentGroup: 'Docs',
    source: 'api',
    indexedAt: '1970-01-01T00:00:00.000Z',
    updatedAt: '1970-01-01T00:00:01.000Z',
  });
  t.equal(r.pages[2]!.contentGroup, '_');
  t.equal(r.pages[4]!.message, 'Not Found');
});

t.test('filters and paging', async (t) => {
  t.same(filterAndPage(entries, { offset: 0, limit: 50, url: 'E.COM/G' }).pages.map((p) => p.url), ['https://e.com/gone']);
  t.equal(filterAndPage(entries, { offset: 0, limit: 50, contentType: 'PDF' }).total, 1);
  t.equal(filterAndPage(entries, { offset: 0, limit: 50, status: { min: 200, max: 200 } }).total, 2);
  t.equal(filterAndPage(entries, { offset: 0, limit: 50, status: { min: 400, max: 599 } }).total, 2);
  const page = filterAndPage(entries, { offset: 1, limit: 2 });
  t.equal(page.total, 5);
  t.same(page.pages.map((p) => p.url), ['https://e.com/a.pdf', 'https://e.com/c']);
  t.same(filterAndPage(entries, { offset: 10, limit: 2 }).pages, []);
});
