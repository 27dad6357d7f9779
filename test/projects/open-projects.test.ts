// Projects are opened through a bounded cache: thousands of projects touched in turn (index,
// query log, and for some a pushed page and a search on a search thread) hold a bounded number
// of file descriptors; the project listing opens no index; shutdown after that is quick and
// clean (a child server stopped with SIGTERM).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { api, spawnServer, startTestServer } from '../helpers/server.js';

const PROJECTS = Number(process.env.OPEN_PROJECTS_TEST_COUNT ?? 5_000);
const OPEN = 16;
/** Every 100th project also gets a page and a search (a segment file, a search-thread reader). */
const WITH_DATA_EVERY = 100;

const fds = (pid: number | 'self' = 'self'): number => readdirSync(`/proc/${pid}/fd`).length;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

// On tmpfs where there is one: creating and closing 5,000 query logs is fsync-bound on a disk
// (about 50 ms a project), and what is measured here is descriptors, not the disk.
const dataDir = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'sitesift-test-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

t.test(`${PROJECTS} projects touched in turn stay under a fixed descriptor count`, async (t) => {
  const s = await startTestServer({ dataDir, env: { SITESIFT_OPEN_PROJECTS: String(OPEN), SITESIFT_SEARCH_THREADS: '1' } });
  const { projects, indexes, analytics } = s.services;
  // Warm every kind of file once (first index, query log, search thread) before the baseline.
  await indexes.get('default');
  analytics.site('default');
  await turn();
  const baseline = fds();
  let max = baseline;
  for (let i = 0; i < PROJECTS; i++) {
    const siteId = `p${i}`;
    const { key } = projects.createProject(siteId);
    if (i % WITH_DATA_EVERY === 0) {
      const push = await api(s.url, '/sites/pageJson?refresh=true', {
        method: 'POST',
        token: key.token,
        json: { url: `https://example.com/${siteId}`, title: `Page of ${siteId}`, content: 'lighthouse keeper' },
      });
      t.equal(push.status, 200, `push ${siteId}`);
      const found = await api(s.url, `/sites?site=${siteId}&query=lighthouse`);
      t.equal(found.body?.totalResults, 1, `search ${siteId}`);
      analytics.record(siteId, { query: 'lighthouse', results: 1 });
    } else {
      await indexes.get(siteId);
      analytics.site(siteId);
    }
    await turn();
    max = Math.max(max, fds());
  }
  analytics.flush();
  t.comment(`descriptors: baseline ${baseline}, max ${max} over ${PROJECTS} projects (${OPEN} kept open)`);
  t.ok(indexes.openCount <= OPEN + 1, `open indexes ${indexes.openCount}`);
  t.ok(analytics.openSites <= OPEN, `open query logs ${analytics.openSites}`);
  // An index is a write-log file plus its segments, a query log a database, its WAL and shm.
  t.ok(max - baseline < 20 * OPEN, `at most ${20 * OPEN} descriptors above the baseline (got ${max - baseline})`);

  // A project closed long ago still answers: reopened on its next use.
  const again = await api(s.url, '/sites?site=p0&query=lighthouse');
  t.equal(again.body?.totalResults, 1, 'reopened on use');

  // The listing reads what it lists without opening the indexes.
  const before = indexes.opened;
  const list = await api(s.url, '/admin/projects', { token: s.masterKey });
  t.equal(list.status, 200);
  t.equal(list.body.projects.length, PROJECTS + 1);
  const pages = new Map<string, number>(list.body.projects.map((p: { siteId: string; pages: number }) => [p.siteId, p.pages]));
  t.equal(pages.get('p100'), 1, 'a closed project with a page counts it');
  t.equal(pages.get('p101'), 0);
  t.equal(indexes.opened, before, 'the listing opened no index');
  await s.close();
});

t.test('a child server lists thousands of projects and stops on SIGTERM within 10 s, exit 0', async (t) => {
  const child = await spawnServer(dataDir, { SITESIFT_OPEN_PROJECTS: String(OPEN), SITESIFT_SEARCH_THREADS: '1' });
  const pid = child.child.pid!;
  const master = readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim();
  const start = fds(pid);
  const list = await api(child.url, '/admin/projects', { token: master });
  t.equal(list.status, 200);
  t.equal(list.body.projects.length, PROJECTS + 1);
  t.equal(list.body.projects.filter((p: { pages: number }) => p.pages === 1).length, PROJECTS / WITH_DATA_EVERY, 'pages of every project with one');
  const afterList = fds(pid);
  t.ok(afterList - start < 20 * OPEN, `listing ${PROJECTS} projects: descriptors ${start} → ${afterList}`);
  for (let i = 0; i < 200; i++) await api(child.url, `/sites?site=p${i * 25}&query=lighthouse`);
  t.ok(fds(pid) - start < 20 * OPEN, `200 projects searched: descriptors ${start} → ${fds(pid)}`);
  // The server forces exit 1 when a graceful shutdown passes 10 s (src/cli/commands/serve.ts),
  // so exit 0 says it finished within that.
  const code = await child.kill('SIGTERM');
  t.equal(code, 0, `exit code (stderr: ${child.stderr().slice(-500)})`);
});
