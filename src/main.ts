/**
 * Process entry for `serve` (`node dist/src/main.js [--flags]`, or `node --import tsx
 * src/main.ts` in crash tests). Same as `sitesift serve`.
 */
import { runServe } from './cli/index.js';

runServe(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sitesift: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
