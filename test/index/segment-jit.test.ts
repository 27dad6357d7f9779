/**
 * A segment build after a major GC reuses the optimized code of the postings builder instead
 * of compiling it again: a thread keeps one builder alive (builderMapKeeper in
 * src/index/segment.ts), so the builder's hidden classes survive the GC between two builds.
 * Counted in a child process with V8's --trace-opt (no timing involved).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = path.join(ROOT, 'test/index/fixtures/segment-builds.ts');

t.test('the postings builder is not recompiled after every major GC', async (t) => {
  const dir = tempDir(t);
  const child = spawn(process.execPath, ['--expose-gc', '--trace-opt', '--import', 'tsx', FIXTURE, dir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let measuring = false;
  let done = false;
  let compiles = 0;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line === 'MEASURE') measuring = true;
    else if (line === 'DONE') done = true;
    else if (measuring && /^\[compiling method .*<JSFunction (addText|lookup|count|end) /.test(line)) compiles++;
  }
  t.ok(done, 'the child built every segment');
  // Without the keeper the 6 measured builds compiled these methods 35 times (each build anew).
  t.ok(compiles <= 3, `builder methods compiled ${compiles} times in 6 builds after warm-up`);
});
