/**
 * The deployment end to end (deploy/cluster.sh, `make cluster`): a primary, nginx and two search
 * nodes on 127.0.0.1. Pages pushed to the primary → exported → both nodes serve them through
 * nginx → a node killed with SIGKILL is routed around → restarted, it catches up → the primary's
 * reports include the searches made on the nodes. Needs nginx (/usr/sbin/nginx, or NGINX).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = path.join(root, 'deploy', 'cluster.sh');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-cluster-'));
const env: NodeJS.ProcessEnv = { ...process.env, CLUSTER_DIR: dir, CLUSTER_POLL_MS: '500', CLUSTER_EXPORT_SCHEDULE: '' };
// The server refuses unknown SITESIFT_* variables; the script sets the ones each process needs.
for (const k of Object.keys(env)) if (k.startsWith('SITESIFT_')) delete env[k];

t.teardown(async () => {
  await run(script, ['down'], { env }).catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

function readEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(dir, 'cluster.env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Polls `probe` until it returns true or about `seconds` pass; returns the last result. */
async function until(probe: () => Promise<boolean>, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 5; i++) {
    if (await probe().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

t.test('push → export → two nodes behind nginx → SIGKILL routed around → catch up → reports', async (t) => {
  await run(script, ['up'], { env, timeout: 300_000 });
  const e = readEnv();
  const key = fs.readFileSync(path.join(dir, 'master.key'), 'utf8').trim();
  const admin = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const exportNow = () => json(`${e.PRIMARY_URL}/admin/export`, { method: 'POST', headers: admin, body: JSON.stringify({ all: true, out: path.join(dir, 'export') }) });
  const titles = async (base: string, query: string) => {
    const r = await json(`${base}/sites?site=docs&query=${encodeURIComponent(query)}&log=false`);
    return r.status === 200 ? (r.body.suggests._ ?? []).map((x: { name: string }) => x.name).sort() : [];
  };

  t.equal((await json(`${e.PRIMARY_URL}/admin/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ siteId: 'docs' }) })).status, 201);
  // Writes go through nginx to the primary.
  const pushed = await json(`${e.LB_URL}/sites/pagesJson?site=docs&refresh=true`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify([
      { url: 'https://c.test/a', title: 'Alpha', content: 'replicated cluster text' },
      { url: 'https://c.test/b', title: 'Beta', content: 'replicated cluster text' },
    ]),
  });
  t.equal(pushed.status, 200);
  t.equal((await exportNow()).status, 200);
  for (const n of [1, 2]) {
    t.ok(await until(async () => (await titles(e[`NODE${n}_URL`]!, 'replicated')).length === 2, 60), `node ${n} serves the export`);
  }
  t.same(await titles(e.LB_URL!, 'replicated'), ['Alpha', 'Beta'], 'through nginx');

  // SIGKILL one node: nginx routes every search to the other.
  const pid1 = Number(fs.readFileSync(path.join(dir, 'node1.pid'), 'utf8'));
  process.kill(pid1, 'SIGKILL');
  await until(async () => {
    try {
      process.kill(pid1, 0);
      return false;
    } catch {
      return true;
    }
  }, 10);
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) {
    statuses.push((await json(`${e.LB_URL}/sites?site=docs&query=replicated+cluster`)).status);
  }
  t.same([...new Set(statuses)], [200], 'every search through nginx answered while node 1 was down');

  // A change while node 1 is down; it restarts and catches up from the snapshot.
  await json(`${e.PRIMARY_URL}/sites/pagesJson?site=docs&refresh=true`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify([{ url: 'https://c.test/c', title: 'Gamma', content: 'replicated cluster text' }]),
  });
  t.equal((await exportNow()).status, 200);
  await run(script, ['start-node', '1'], { env, timeout: 180_000 });
  for (const n of [1, 2]) {
    t.ok(await until(async () => (await titles(e[`NODE${n}_URL`]!, 'replicated')).length === 3, 60), `node ${n} serves the new generation`);
  }

  // The 20 searches made on the nodes (logged) reach the primary's reports.
  const reported = await until(async () => {
    const r = await json(`${e.PRIMARY_URL}/sites/queries/top?site=docs`, { headers: admin });
    return (r.body?.queries ?? []).some((q: { query: string; count: number }) => q.query === 'replicated cluster' && q.count === 20);
  }, 60);
  t.ok(reported, "the primary's top report counts the 20 searches made on the nodes");
});
