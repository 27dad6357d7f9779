/**
 * `sitesift restore`: recreates a project from a snapshot in a primary's data directory
 * (src/snapshot/restore.ts). Runs with the server stopped: it takes the data directory's lock.
 */
import path from 'node:path';
import { ProjectRegistry } from '../../projects/index.js';
import { restoreProject } from '../../snapshot/index.js';
import { DataDirInUseError, lockDataDir } from '../../server.js';
import { CliError, parseFlags, UsageError, type Command } from '../command.js';

export const restore: Command = {
  name: 'restore',
  summary: 'recreate a project from a snapshot (server stopped)',
  usage: `Usage: sitesift restore <siteId> --from DIR|URL [--keys] [--data-dir DIR]

Recreates the project <siteId> in the data directory from the snapshot written by
sitesift export: its index at the exported generation (every file checked against its
hash; a file that fails stops the restore and nothing is left behind), its name and
settings, and with --keys its API keys (the snapshot must have been exported with --keys;
the old tokens work again). Without --keys the snapshot's keys are left out (old tokens are
unknown) and one new key is created and printed once. The project must not exist; the server
must be stopped (restore takes the data directory's lock). Query-log history and suggestions
are not restored.

  --from DIR|URL     the export directory, or the http(s) URL it is served at (as nodes read it)
  --keys             restore the project's API keys from the snapshot
  --data-dir DIR     the primary's data directory (default: SITESIFT_DATA_DIR or ./data)
  --json             print the result as JSON

Example: sitesift restore docs --from /backups/sitesift-export --keys
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, {
      from: { type: 'string' },
      keys: { type: 'boolean' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new UsageError('restore needs exactly one <siteId>');
    if (!values.from) throw new UsageError('restore needs --from DIR|URL');
    const dataDir = path.resolve(values['data-dir'] || io.env.SITESIFT_DATA_DIR || './data');
    let unlock: () => void;
    try {
      unlock = lockDataDir(dataDir);
    } catch (err) {
      if (err instanceof DataDirInUseError) throw new CliError(`${err.message} (stop the server before restoring)`);
      throw err;
    }
    const projects = ProjectRegistry.open(dataDir);
    try {
      const from = /^https?:\/\//i.test(values.from) ? values.from : path.resolve(values.from);
      const r = await restoreProject({ dataDir, siteId: positionals[0]!, from, keys: values.keys === true, projects }).catch((err: Error) => {
        throw new CliError(err.message);
      });
      if (values.json) io.stdout.write(JSON.stringify(r) + '\n');
      else {
        io.stdout.write(`restored ${r.siteId} at generation ${r.generation}: ${r.pages} pages in ${r.segments} segments\n`);
        if (r.key) io.stdout.write(`new API key (shown once): ${r.key.token}\n`);
      }
      return 0;
    } finally {
      projects.close();
      unlock();
    }
  },
};
