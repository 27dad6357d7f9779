/**
 * The built-in embedder's word vectors (src/text/word-vectors.ts): one shared table per
 * process, looked up through a hash index instead of a per-thread Map of every word.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import t from 'tap';
import { adoptWordVectors, decodeWordVectors, encodeWordVectors, loadWordVectors, sharedWordVectors, wordVectorsBytes } from '../../src/text/index.js';

function unit(v: number[]): Float32Array {
  const n = Math.hypot(...v);
  return Float32Array.from(v.map((x) => x / n));
}

const WORDS = ['the', 'rollback', 'über', 'naïve', 'a', 'rollbacks', 'rollback', '東京', 'x'.repeat(40)];
const ROWS = WORDS.map((_, i) => unit([1 + i, (i * 7) % 5, -i, 0.5]));

t.test('lookups find every word at its first row, and nothing else', async (t) => {
  const wv = decodeWordVectors(encodeWordVectors(WORDS, ROWS, unit([0, 0, 0, 1])));
  t.equal(wv.count, WORDS.length);
  t.equal(wv.dims, 4);
  for (const [i, w] of WORDS.entries()) t.equal(wv.index.get(w), WORDS.indexOf(w), `${w} → row ${WORDS.indexOf(w)}${WORDS.indexOf(w) !== i ? ' (listed twice: the first row)' : ''}`);
  for (const w of ['', 'rollbac', 'rollbackss', 'The', 'uber', 'x'.repeat(39)]) t.equal(wv.index.get(w), undefined, `"${w}" is not in the table`);
  t.same([...wv.rows.subarray(4, 8)], [...ROWS[1]!].map((x) => Math.round(x * 127)), 'rows as int8');
  t.same([...wv.common], [0, 0, 0, 1]);
  t.ok(wv.rows.buffer instanceof SharedArrayBuffer, 'the table lives in shared memory');
});

t.test('a thread that adopts the table shares its memory instead of reading the file', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sitesift-wv-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'small.wv');
  fs.writeFileSync(file, encodeWordVectors(WORDS, ROWS, unit([0, 0, 0, 1])));
  const before = wordVectorsBytes();
  const wv = loadWordVectors(file);
  t.equal(loadWordVectors(file), wv, 'loaded once per thread');
  t.ok(wordVectorsBytes() - before >= wv.bytes && wv.bytes >= WORDS.length * 4, 'its bytes are counted once');
  const shared = sharedWordVectors();
  t.ok(shared[file], 'handed to threads by file name');

  // The file is gone: the worker can only answer from the shared table.
  fs.rmSync(file);
  const src = new URL('../../src/text/word-vectors.ts', import.meta.url).pathname;
  const tsx = (await import('node:module')).createRequire(import.meta.url).resolve('tsx/cjs');
  const code = `require(${JSON.stringify(tsx)});
    const { workerData, parentPort } = require('node:worker_threads');
    const m = require(${JSON.stringify(src)});
    m.adoptWordVectors(workerData.tables);
    const wv = m.loadWordVectors(workerData.file);
    wv.rows[4] = 99; // a write the main thread sees: the same memory
    parentPort.postMessage({ row: wv.index.get('naïve'), missing: wv.index.get('nope') ?? null });`;
  const w = new Worker(code, { eval: true, workerData: { tables: shared, file } });
  const answer = await new Promise<{ row: number; missing: null }>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  t.same(answer, { row: 3, missing: null }, 'the worker looked words up without the file');
  t.equal(wv.rows[4], 99, 'and it wrote into the memory this thread holds');

  adoptWordVectors({ [file]: shared[file]! });
  t.equal(loadWordVectors(file), wv, 'adopting a table already loaded keeps it');
});
