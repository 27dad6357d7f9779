// `npm install` prints no EBADENGINE warning on the Node versions the project supports: every
// package of the lockfile, as recorded there and as installed, accepts the oldest Node the
// project declares (a Node 20) and the Node running the tests.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string, opts?: { includePrerelease?: boolean }): boolean;
  minVersion(range: string): { version: string; major: number } | null;
};

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  link?: boolean;
}
const readJson = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const pkg = readJson(path.join(ROOT, 'package.json'));
const lock = readJson(path.join(ROOT, 'package-lock.json')) as { packages: Record<string, LockEntry> };

const oldest = semver.minVersion(pkg.engines.node);
const nodes = [oldest!.version, process.versions.node];

/** The node range a package declares, or null (no field, or the old array form npm ignores). */
function nodeRange(engines: LockEntry['engines']): string | null {
  return engines && !Array.isArray(engines) && typeof engines.node === 'string' ? engines.node : null;
}

t.test('the project declares a Node 20 as its oldest supported version', async (t) => {
  t.equal(oldest?.major, 20, `engines.node ${pkg.engines.node}`);
});

t.test('every lockfile package accepts the supported Node versions', async (t) => {
  const refused: string[] = [];
  let checked = 0;
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where === '' || entry.link) continue;
    const ranges = [['lockfile', nodeRange(entry.engines)]];
    const installed = path.join(ROOT, where, 'package.json');
    if (existsSync(installed)) {
      const manifest = readJson(installed);
      if (entry.version && manifest.version !== entry.version) {
        refused.push(`${where}: installed ${manifest.version}, lockfile ${entry.version} (run npm ci)`);
      }
      ranges.push(['installed', nodeRange(manifest.engines)]);
    }
    for (const [source, range] of ranges) {
      if (range === null) continue;
      checked++;
      for (const node of nodes) {
        if (!semver.satisfies(node, range, { includePrerelease: true })) refused.push(`${where} (${source}) wants node ${range}, not ${node}`);
      }
    }
  }
  t.ok(checked > 50, `${checked} engines fields checked`);
  t.same(refused, [], 'no package refuses a supported Node');
});
