/**
 * A search node's swap costs what changed: segments an earlier generation already opened are
 * reused (same reader, same file path, so the search threads' reader caches stay warm too), a
 * generation that only adds segments derives its tombstones from the previous one's (checked
 * against the manifest, so a wrong derivation would show as 'scratch'), and the files of a
 * swapped-out generation are released once it is retired.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { api, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { answers, loadFixture, page } from './fixture.js';

async function exportTo(s: TestServer, out: string): Promise<any> {
  const r = await api(s.url, '/admin/export', { method: 'POST', token: s.masterKey, json: { siteId: 'default', out } });
  if (r.status !== 200) throw new Error(`export: ${r.status} ${r.text}`);
  return r.body;
}

t.test('a swap reuses the open segments of the previous generation', async (t) => {
  const primary = await startTestServer({ t });
  await loadFixture(primary);
  const out = tempDataDir(t);
  await exportTo(primary, out);
  // The node's clock runs ahead on demand, to get past the retire grace period without waiting.
  let ahead = 0;
  const node = await startTestServer({
    t,
    env: { SITESIFT_ROLE: 'search', SITESIFT_SNAPSHOT: out, SITESIFT_SNAPSHOT_POLL_MS: '3600000' },
    start: { clock: () => Date.now() + ahead },
  });
  const svc = node.services.node!;
  await svc.poll();
  t.equal(svc.health().ready, true);

  const pin = () => {
    const snap = svc.view('default').gen.acquire();
    snap.release();
    return snap;
  };
  const first = pin();
  const openedFirst = svc.files.opened;
  t.equal(openedFirst, first.segments.length, 'the first generation opens each of its segments');

  // One page changed: the next generation is the old segments (new tombstones) plus one new segment.
  t.equal((await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, { method: 'POST', json: [page(2, 'changed')] })).status, 200);
  await exportTo(primary, out);
  const polled = await svc.poll();
  t.same(polled.swapped, ['default']);
  const second = pin();
  t.equal(second.segments.length, first.segments.length + 1);
  t.equal(svc.files.opened - openedFirst, 1, 'only the new segment file was opened');
  t.equal(svc.health().lastSwap?.openedSegments, 1, 'health reports it');
  t.equal(svc.health().lastSwap?.fetchedBlobs, 1, 'and only the new segment was fetched: the node had every other file');
  t.equal(svc.view('default').gen.derivation, 'incremental', 'tombstones derived from the previous generation’s');
  for (const seg of first.segments) {
    const same = second.segments.find((s) => s.id === seg.id);
    t.ok(same, `segment ${seg.id} still listed`);
    t.equal(same!.reader, seg.reader, `segment ${seg.id}: the same reader`);
    t.equal(same!.reader.path, seg.reader.path, `segment ${seg.id}: the same file path (search threads key their readers by it)`);
  }
  t.same(await answers(node.url), await answers(primary.url), 'answers still identical to the primary’s');

  // More added segments: the same page changed again, a page deleted, a new page, in two flushes.
  let r = await api(primary.url, `/sites/pagesJson?token=${primary.token}&refresh=true`, { method: 'POST', json: [page(2, 'again'), page(60, 'new')] });
  t.equal(r.status, 200);
  r = await api(primary.url, `/index/documents?token=${primary.token}&url=${encodeURIComponent(String(page(7).url))}&refresh=true`, { method: 'DELETE' });
  t.equal(r.status, 200);
  await exportTo(primary, out);
  t.same((await svc.poll()).swapped, ['default']);
  t.equal(svc.view('default').gen.derivation, 'incremental', 'upserts and a delete marker applied to the previous tombstones');
  t.same(await answers(node.url), await answers(primary.url), 'identical after the changes and the delete');

  // A full merge: a generation sharing nothing. Once the old one is retired, its files close.
  t.equal((await api(primary.url, '/admin/projects/default/merge', { method: 'POST', token: primary.masterKey })).status, 200);
  const merged = await exportTo(primary, out);
  t.same((await svc.poll()).swapped, ['default']);
  t.equal(svc.view('default').gen.derivation, 'scratch', 'segments dropped by a merge: derived from scratch');
  const third = pin();
  t.equal(third.segments.length, 1);
  t.ok(second.segments.every((s) => s.reader !== third.segments[0]!.reader));
  t.ok(svc.files.hashes().size > 1, 'the swapped-out generation stays open for its grace period');
  ahead += 60_000;
  await svc.poll();
  const m = JSON.parse(fs.readFileSync(path.join(out, merged.projects[0].manifest), 'utf8'));
  t.same([...svc.files.hashes()], [m.segments[0].sha256], 'once retired, only the merged segment is open');
  t.same(await answers(node.url), await answers(primary.url), 'identical after the merge too');
});
