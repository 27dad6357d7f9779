/**
 * Crash safety at the store level: a child process writes and prints every acknowledged batch;
 * we SIGKILL it at several points, reopen the store and compare with the acknowledged ops.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { liveRows, openStore, realPool, tempDir } from './helpers.js';
import { readManifest } from '../../src/index/manifest.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

type Op = ['u', string, string] | ['d', string];
interface Sent {
  id: number;
  ops: Op[];
}
interface Run {
  sent: Sent[];
  acked: Set<number>;
}

/** Runs the child until `killWhen` says so, SIGKILLs it, returns what it sent and what was acknowledged. */
async function runAndKill(dir: string, pauseIn: string | null, killWhen: (state: { acks: number; paused: boolean; acksAfterPause: number }) => boolean): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir], {
    cwd: ROOT,
    env: { ...process.env, SITESIFT_TEST_PAUSE_IN: pauseIn ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const run: Run = { sent: [], acked: new Set() };
  const state = { acks: 0, paused: false, acksAfterPause: 0 };
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let killed = false;
  for await (const line of createInterface({ input: child.stdout! })) {
    // Lines read after the kill are still true statements of the child; keep them.
    if (line.startsWith('SENT ')) run.sent.push(JSON.parse(line.slice(5)) as Sent);
    else if (line.startsWith('ACK ')) {
      run.acked.add(Number(line.slice(4)));
      state.acks++;
      if (state.paused) state.acksAfterPause++;
    } else if (line.startsWith('PAUSED ')) state.paused = true;
    if (!killed && killWhen(state)) {
      child.kill('SIGKILL');
      killed = true;
    }
  }
  await exited;
  if (!killed) throw new Error('child exited before the kill point');
  return run;
}

/**
 * What must hold after recovery. Per URL with an acknowledged op, the final state (content, or
 * absent) must be the one of its last acknowledged op or of an op sent after it (an op that
 * was written but whose acknowledgement the kill cut off may or may not have survived).
 */
async function verify(t: Test, dir: string, run: Run, pool: ReturnType<typeof realPool>): Promise<void> {
  const history = new Map<string, Array<{ id: number; state: string | null }>>();
  for (const b of run.sent) {
    for (const op of b.ops) {
      let h = history.get(op[1]);
      if (!h) history.set(op[1], (h = []));
      h.push({ id: b.id, state: op[0] === 'u' ? op[2] : null });
    }
  }
  const store = await openStore(dir, pool);
  const listed = new Set(readManifest(dir).segments.map((s) => s.file));
  t.same(fs.readdirSync(path.join(dir, 'segments')).filter((f) => !listed.has(f)), [], 'no unlisted segment file after recovery');
  await store.flush();
  const snap = store.acquire();
  let rows: ReturnType<typeof liveRows>;
  try {
    rows = liveRows(snap); // throws if a URL is live twice
  } finally {
    snap.release();
  }
  let checked = 0;
  let missing = 0;
  let resurrected = 0;
  let stale = 0;
  for (const [url, h] of history) {
    let last = -1;
    h.forEach((op, i) => {
      if (run.acked.has(op.id)) last = i;
    });
    if (last < 0) continue;
    checked++;
    const allowed = h.slice(last).map((op) => op.state);
    const row = rows.get(url);
    const state = row ? row.content : null;
    if (!allowed.includes(state) || store.has(url) !== (state !== null)) {
      if (state === null) missing++;
      else if (!allowed.includes(null) && h[last]!.state === null) resurrected++;
      else stale++;
      t.comment(`unexpected state of ${url}: ${JSON.stringify(state)}, allowed ${JSON.stringify(allowed)}`);
    }
  }
  t.ok(checked > 50, `${checked} URLs with acknowledged ops checked`);
  t.equal(missing, 0, 'every acknowledged document is present');
  t.equal(resurrected, 0, 'deleted URLs stay deleted');
  t.equal(stale, 0, 'contents are the newest acknowledged (or a newer unacknowledged) version');
  t.same(new Set(rows.keys()), new Set(store.urls()), 'published live rows equal the acknowledged view');
  t.equal(snap.totalDocs, rows.size, 'totalDocs counts each live URL once');
  await store.merge({ full: true });
  const after = store.acquire();
  t.same(new Set(liveRows(after).keys()), new Set(rows.keys()), 'a full merge keeps the same live set');
  after.release();
  await store.close();
}

t.test('kill right after acknowledgements', async (t) => {
  const dir = tempDir(t);
  const acked = await runAndKill(dir, null, (s) => s.acks >= 60);
  t.ok(acked.acked.size >= 60);
  await verify(t, dir, acked, realPool(t));
});

t.test('kill during a segment build', async (t) => {
  const dir = tempDir(t);
  const acked = await runAndKill(dir, 'build', (s) => s.paused && s.acksAfterPause >= 15);
  await verify(t, dir, acked, realPool(t));
});

t.test('kill between publishing a segment file and writing the manifest', async (t) => {
  const dir = tempDir(t);
  const acked = await runAndKill(dir, 'commit', (s) => s.paused);
  await verify(t, dir, acked, realPool(t));
});

t.test('kill with a temp manifest written but not renamed', async (t) => {
  const dir = tempDir(t);
  const acked = await runAndKill(dir, 'manifest', (s) => s.paused);
  t.ok(fs.readdirSync(dir).some((n) => n.startsWith('manifest.json.tmp')), 'the crash left a temp manifest');
  await verify(t, dir, acked, realPool(t));
});

t.test('kill during a merge while writes continue', async (t) => {
  const dir = tempDir(t);
  const acked = await runAndKill(dir, 'merge', (s) => s.paused && s.acksAfterPause >= 15);
  await verify(t, dir, acked, realPool(t));
});
