import t from 'tap';
import { startTestServer } from '../helpers/server.js';

// The answer cache (src/search/cache.ts) is on by default: every change must show at once.
t.test('cached search answers never outlive a write, a delete or a settings change', async (t) => {
  const s = await startTestServer({ t });
  const post = (docs: unknown[]) =>
    fetch(`${s.url}/sites/pagesJson?token=${s.token}&refresh=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(docs) });
  const search = async (q: string) => (await (await fetch(`${s.url}/sites?site=default&log=false&groupResults=false&query=${encodeURIComponent(q)}`)).json()) as {
    totalResults: number; suggests: Record<string, Array<{ link: string }>>;
  };
  const links = (b: { suggests: Record<string, Array<{ link: string }>> }) => Object.values(b.suggests).flat().map((r) => r.link).sort();
  const page = (n: number, title: string) => ({ url: `https://site.test/${n}`, title, content: `Page ${n} about gadgets.` });

  t.equal((await post([page(1, 'Gadget one')])).status, 200);
  t.equal((await search('gadget')).totalResults, 1);
  t.equal((await search('gadget')).totalResults, 1, 'same answer twice (cached)');

  t.equal((await post([page(2, 'Gadget two')])).status, 200);
  t.same(links(await search('gadget')), ['https://site.test/1', 'https://site.test/2'], 'a new page shows at once');

  t.equal((await post([page(2, 'Widget two')])).status, 200);
  t.same(links(await search('widget')), ['https://site.test/2'], 'a replaced page shows its new title');

  const del = await fetch(`${s.url}/index/documents?token=${s.token}&url=${encodeURIComponent('https://site.test/1')}`, { method: 'DELETE' });
  t.equal(del.status, 200);
  // A delete is durable when acknowledged and searchable after the next refresh: poll (bounded)
  // rather than assume a timing. A stale cached answer would keep the page forever.
  let after = await search('gadget');
  for (let i = 0; i < 100 && links(after).includes('https://site.test/1'); i++) {
    await new Promise((r) => setTimeout(r, 50));
    after = await search('gadget');
  }
  t.notOk(links(after).includes('https://site.test/1'), 'a deleted page leaves the answers');

  const r = await fetch(`${s.url}/admin/projects/default/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ search: { resultMappings: [{ trigger: { type: 'equals', value: 'gadget' }, action: { type: 'hide', urls: ['https://site.test/2'] } }] } }),
  });
  t.equal(r.status, 200);
  t.same(links(await search('gadget')), [], 'a settings change applies to the next answer');
});
