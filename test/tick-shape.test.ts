import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { pinTickObjectShape } from '../src/tick-shape.js';

const child = fileURLToPath(new URL('./fixtures/tick-shape/child.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sitesift-tick-shape-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The IC state of each key of nextTick's tick-object literal, as V8 prints them. The child's
 * stdout is a file: %DebugPrint writes through C stdio, and into a pipe part of it was lost.
 */
function literalSlotStates(mode: 'pin' | 'none'): string[] {
  const out = join(dir, `${mode}.out`);
  const fd = openSync(out, 'w');
  try {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', child, mode], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  } finally {
    closeSync(fd);
  }
  return [...readFileSync(out, 'utf8').matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
}

t.test('without the pin, a full GC with no tick object alive turns nextTick megamorphic', (t) => {
  // The control: shows the V8 behaviour the module exists for is present in this Node.
  const states = literalSlotStates('none');
  t.equal(states.length, 4, `four computed-literal keys printed: ${states.join(' ')}`);
  t.ok(states.includes('MEGAMORPHIC'), `states: ${states.join(' ')}`);
  t.end();
});

t.test('with the pin, every key of the tick-object literal stays monomorphic across full GCs', (t) => {
  const states = literalSlotStates('pin');
  t.equal(states.length, 4, `four computed-literal keys printed: ${states.join(' ')}`);
  t.same(states, ['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC']);
  t.end();
});

t.test('pinTickObjectShape holds an object and is idempotent', async (t) => {
  t.equal(pinTickObjectShape(), true);
  t.equal(pinTickObjectShape(), true);
});
