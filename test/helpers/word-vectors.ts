/**
 * A tiny word-vector table for semantic-search tests: a handful of words on four topic axes
 * (undoing work, speed, food, databases), written with the real file format, so that tests
 * know which pages are neighbours of which questions without the 22 MB built-in table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { encodeWordVectors } from '../../src/text/index.js';
import { embedderFingerprint } from '../../src/text/index.js';

// [undo, speed, food, database, noise1, noise2]; rank 0 is a filler (its SIF weight is 0).
const WORDS: Array<[string, number[]]> = [
  ['the', [0, 0, 0, 0, 0, 1]],
  ['rollback', [1, 0, 0, 0.2, 0, 0]],
  ['undo', [0.9, 0, 0, 0, 0.3, 0]],
  ['revert', [0.95, 0, 0, 0, 0.2, 0]],
  ['mistake', [0.8, 0, 0, 0, 0.4, 0]],
  ['abort', [0.9, 0.1, 0, 0.1, 0, 0]],
  ['changes', [0.6, 0, 0, 0.3, 0.3, 0]],
  ['performance', [0, 1, 0, 0.1, 0, 0]],
  ['faster', [0, 0.95, 0, 0, 0.2, 0]],
  ['speed', [0, 0.9, 0, 0, 0.3, 0]],
  ['tips', [0, 0.6, 0, 0, 0.6, 0]],
  ['slow', [0, 0.8, 0, 0, 0.4, 0]],
  ['cake', [0, 0, 1, 0, 0, 0]],
  ['chocolate', [0, 0, 0.9, 0, 0.3, 0]],
  ['recipe', [0, 0, 0.95, 0, 0.2, 0]],
  ['table', [0, 0, 0, 1, 0, 0]],
  ['database', [0, 0.1, 0, 0.95, 0, 0]],
  ['transaction', [0.5, 0, 0, 0.8, 0, 0]],
  ['queries', [0, 0.4, 0, 0.9, 0, 0]],
  ['define', [0, 0, 0, 0.7, 0.7, 0]],
  ['new', [0, 0, 0, 0.3, 0.9, 0]],
  ['make', [0, 0.3, 0.2, 0.2, 0.9, 0]],
];

/** Writes the table into `dir` and returns its path (the built-in embedder's `table`). */
export function writeFixtureWordVectors(dir: string): string {
  const file = path.join(dir, 'fixture.wv');
  const rows = WORDS.map(([, v]) => {
    const n = Math.hypot(...v);
    return Float32Array.from(v.map((x) => x / n));
  });
  fs.writeFileSync(file, encodeWordVectors(WORDS.map(([w]) => w), rows, Float32Array.from([0, 0, 0, 0, 0, 1])));
  return file;
}

/** The fingerprint segments built with the fixture carry (the built-in one). */
export const FIXTURE_FP = embedderFingerprint('builtin');
