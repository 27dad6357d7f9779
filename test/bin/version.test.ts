/**
 * `sitesift --version` prints the version of package.json and exits 0 (through the CLI entry
 * point, as the `sitesift` bin runs it).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };

t.test('--version, -V and version print the package version alone', async (t) => {
  for (const arg of ['--version', '-V', 'version']) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), arg], { encoding: 'utf8', cwd: root });
    t.equal(out, `${version}\n`, arg);
  }
});

t.test('the main help mentions --version', async (t) => {
  const { mainHelp } = await import('../../src/cli.js');
  t.match(mainHelp(), /sitesift --version/);
});
