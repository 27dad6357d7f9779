import t from 'tap';
import { parseStatusFilter, toIndexedPage } from '../../src/ingest/reports.js';

t.test('status filter parsing', async (t) => {
  t.same(parseStatusFilter('200'), { min: 200, max: 200 });
  t.same(parseStatusFilter('4XX'), { min: 400, max: 499 });
  t.same(parseStatusFilter('8xx'), { min: 800, max: 899 });
  for (const bad of ['2000', '99', 'abc', '4X', 'XX', '0xx', '']) t.equal(parseStatusFilter(bad), undefined, bad);
});

t.test('row shape: "_" for no group, message only when present', async (t) => {
  const row = { url: 'https://e.com/a', title: 'A', contentType: 'PDF', status: 200, contentGroup: '', source: 'api' as const, indexedAt: 'x', updatedAt: 'y' };
  t.same(toIndexedPage(row), { ...row, contentGroup: '_' });
  t.same(toIndexedPage({ ...row, status: 404, message: 'Not Found', contentGroup: 'Docs' }).message, 'Not Found');
  t.notOk('message' in toIndexedPage({ ...row, message: '' }));
});
