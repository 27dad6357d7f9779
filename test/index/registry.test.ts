import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { doc, fakeClock, realPool, tempDir } from './helpers.js';
import { IndexRegistry } from '../../src/index/registry.js';

t.test('one instance per project, lazy open, drop deletes the folder, closeAll flushes', async (t) => {
  const dataDir = tempDir(t);
  const pool = realPool(t);
  const langs: string[] = [];
  const registry = new IndexRegistry({
    dataDir,
    pool,
    refreshMs: 60_000,
    clock: fakeClock(),
    defaultLanguage: (siteId) => {
      langs.push(siteId);
      return 'en';
    },
  });
  t.same(await registry.openProjects(), []);
  const [a1, a2] = await Promise.all([registry.get('alpha'), registry.get('alpha')]);
  t.equal(a1, a2, 'concurrent gets share one instance');
  const b = await registry.get('beta');
  t.same((await registry.openProjects()).map((p) => p.siteId).sort(), ['alpha', 'beta']);
  await a1.write([{ op: 'upsert', doc: doc('https://alpha.test/1', 'alpha') }]);
  await b.write([{ op: 'upsert', doc: doc('https://beta.test/1', 'beta') }]);
  await registry.drop('beta');
  t.notOk(fs.existsSync(path.join(dataDir, 'projects', 'beta')), 'dropped project folder deleted');
  await registry.closeAll();
  t.same(fs.readdirSync(path.join(dataDir, 'projects', 'alpha', 'wal')), [], 'closeAll flushed: nothing left to replay');
  t.same(langs, ['alpha'], 'the default language is read per build, per project');

  const again = new IndexRegistry({ dataDir, pool, refreshMs: 60_000 });
  const a = await again.get('alpha');
  t.ok(a.has('https://alpha.test/1'));
  const beta = await again.get('beta');
  t.notOk(beta.has('https://beta.test/1'), 'a dropped project starts empty');
  await again.closeAll();
});

t.test('deleteWhere, listEntries, stats, firstAt carried forward', async (t) => {
  const registry = new IndexRegistry({ dataDir: tempDir(t), pool: realPool(t), refreshMs: 60_000, clock: fakeClock(Date.UTC(2026, 0, 1)) });
  const index = await registry.get('site');
  await index.write([
    { op: 'upsert', doc: doc('https://x.test/docs/a', 'a') },
    { op: 'upsert', doc: doc('https://x.test/docs/b.pdf', 'b', { documentType: 'PDF', title: 'B' }) },
    { op: 'upsert', doc: doc('https://x.test/blog/c', '', { status: 404, message: 'Not found', source: 'crawler' }) },
    { op: 'upsert', doc: doc('https://x.test/blog/d', '', { status: 803, message: 'noindex', source: 'crawler' }) },
  ]);
  await index.flush();
  await index.write([{ op: 'upsert', doc: doc('https://x.test/docs/a', 'a v2') }]); // unpublished
  t.same(index.stats(), { pages: 2, byClass: { '3XX': 0, '4XX': 1, '5XX': 0, '8XX': 1 }, pending: 1, lastUpdated: new Date(Date.UTC(2026, 0, 1) + 1).toISOString() });

  let list = index.listEntries({});
  t.equal(list.total, 4);
  t.same(list.rows.map((r) => r.url), ['https://x.test/blog/c', 'https://x.test/blog/d', 'https://x.test/docs/a', 'https://x.test/docs/b.pdf']);
  const a = list.rows[2]!;
  t.equal(a.indexedAt, new Date(Date.UTC(2026, 0, 1)).toISOString(), 'firstAt kept from the first version');
  t.equal(a.updatedAt, new Date(Date.UTC(2026, 0, 1) + 1).toISOString());
  t.match(list.rows[0], { status: 404, message: 'Not found', source: 'crawler' });
  t.same(index.listEntries({ contentType: 'pdf' }).rows.map((r) => r.title), ['B']);
  t.equal(index.listEntries({ status: '4XX' }).total, 1);
  t.equal(index.listEntries({ status: 803 }).total, 1);
  t.equal(index.listEntries({ status: '200' }).total, 2);
  t.equal(index.listEntries({ urlContains: '/blog/' }).total, 2);
  list = index.listEntries({ offset: 1, limit: 2 });
  t.equal(list.total, 4);
  t.same(list.rows.map((r) => r.url), ['https://x.test/blog/d', 'https://x.test/docs/a']);

  await index.write([{ op: 'upsert', doc: doc('https://x.test/docs/e', 'e') }]); // acknowledged, unpublished
  t.equal(await index.deleteWhere((url) => url.includes('/docs/')), 3, 'counts published and unpublished live URLs');
  t.equal(await index.deleteWhere((url) => url.includes('/docs/')), 0, 'already gone');
  t.same([...index.urls()].sort(), ['https://x.test/blog/c', 'https://x.test/blog/d']);
  await index.flush();
  const snap = index.acquire();
  t.equal(snap.totalDocs, 0);
  snap.release();
  t.equal(index.stats().pages, 0);
  await registry.closeAll();
});
