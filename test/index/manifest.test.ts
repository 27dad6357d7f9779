/**
 * writeManifest / readManifest: the atomic replace (temp, fsync, rename, fsync directory) now
 * runs on libuv's threadpool; a crash at any step leaves the old or the new manifest, never a
 * mix or nothing. Crashes are simulated by failing the next file step (the process goes on, as
 * a restart would: readManifest is what start-up runs).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { emptyManifest, readManifest, writeManifest, MANIFEST_FILE, type Manifest } from '../../src/index/manifest.js';
import { tempDir } from './helpers.js';

const gen = (n: number): Manifest => ({ ...emptyManifest(), generation: n, committedSeq: n * 10 });

/** Replaces `fs.promises[name]` until the test ends. */
function patchFsp<K extends 'rename' | 'open'>(t: { teardown(fn: () => void): void }, name: K, impl: (typeof fs.promises)[K]): void {
  const orig = fs.promises[name];
  fs.promises[name] = impl;
  t.teardown(() => {
    fs.promises[name] = orig;
  });
}

t.test('writeManifest replaces the manifest and leaves no temp file', async (t) => {
  const dir = tempDir(t);
  t.same(readManifest(dir), emptyManifest(), 'a new project reads an empty manifest');
  await writeManifest(dir, gen(1));
  await writeManifest(dir, gen(2));
  t.same(readManifest(dir), gen(2));
  t.same(fs.readdirSync(dir), [MANIFEST_FILE]);
});

t.test('a crash before the rename leaves the old manifest; start-up deletes the temp file', async (t) => {
  const dir = tempDir(t);
  await writeManifest(dir, gen(1));
  await t.rejects(
    writeManifest(dir, gen(2), () => {
      throw new Error('crash before rename');
    }),
    /crash before rename/,
  );
  t.equal(fs.readdirSync(dir).length, 2, 'the temp manifest is left behind');
  t.same(readManifest(dir), gen(1), 'old generation');
  t.same(fs.readdirSync(dir), [MANIFEST_FILE], 'temp file removed by readManifest');
});

t.test('a crash between the rename and the directory fsync leaves the new manifest', async (t) => {
  const dir = tempDir(t);
  await writeManifest(dir, gen(1));
  const open = fs.promises.open;
  // The directory fsync opens the project directory itself: fail that open.
  patchFsp(t, 'open', ((p: fs.PathLike, ...rest: unknown[]) => {
    if (path.resolve(String(p)) === path.resolve(dir)) return Promise.reject(new Error('crash before dir fsync'));
    return (open as (...a: unknown[]) => Promise<fs.promises.FileHandle>)(p, ...rest);
  }) as typeof fs.promises.open);
  await t.rejects(writeManifest(dir, gen(2)), /crash before dir fsync/);
  t.same(readManifest(dir), gen(2), 'new generation (the rename happened)');
  t.same(fs.readdirSync(dir), [MANIFEST_FILE]);
});

t.test('the main thread is free while the manifest is written', async (t) => {
  const dir = tempDir(t);
  const rename = fs.promises.rename;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  patchFsp(t, 'rename', (async (a: fs.PathLike, b: fs.PathLike) => {
    await gate;
    return rename(a, b);
  }) as typeof fs.promises.rename);
  let finished = false;
  const p = writeManifest(dir, gen(1)).then(() => (finished = true));
  // Timers run while the write waits (a synchronous write would have finished before this line).
  await new Promise((r) => setTimeout(r, 1));
  t.equal(finished, false, 'still writing');
  t.notOk(fs.existsSync(path.join(dir, MANIFEST_FILE)), 'nothing published before the rename');
  release();
  await p;
  t.same(readManifest(dir), gen(1));
});
