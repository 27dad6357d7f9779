/**
 * Extraction after a major GC reuses the optimized tokenizer and handler code instead of
 * compiling it again: the extractor keeps the last page's parser (streamMapKeeper in
 * src/crawl/extract/html.ts), so their hidden classes survive a GC between two pages.
 * Counted in a child process with V8's --trace-opt (no timing involved).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURE = path.join(ROOT, 'test/crawl/fixtures/extract-pages.ts');

t.test('the tokenizer and the stream handler are not recompiled after every major GC', async (t) => {
  const child = spawn(process.execPath, ['--expose-gc', '--trace-opt', '--import', 'tsx', FIXTURE], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let measuring = false;
  let done = false;
  let compiles = 0;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line === 'MEASURE') measuring = true;
    else if (line.startsWith('DONE ')) done = true;
    else if (measuring && /^\[compiling method .*<JSFunction (parse|onopentag|ontext|onclosetag|stateInTagName|stateText) /.test(line)) compiles++;
  }
  t.ok(done, 'the child extracted every page');
  // Without the keeper: 133 compilations here; with it 4 (pages of new shapes after the first 200).
  t.ok(compiles <= 16, `tokenizer and handler methods compiled ${compiles} times in 400 pages with 20 major GCs`);
});
