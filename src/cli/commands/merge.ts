/** `sitesift merge <siteId>`: asks the running server to merge a project's segments into one. */
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, parseFlags, UsageError, type Command } from '../command.js';

export const merge: Command = {
  name: 'merge',
  summary: "merge a project's index segments into one (full merge)",
  usage: `Usage: sitesift merge <siteId>

Runs a full merge of the project's index on the running server and waits for it. Searches and
writes continue meanwhile; useful before an export or after a large bulk import.

${CLIENT_HELP}

Example: sitesift merge docs
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, CLIENT_OPTIONS);
    if (positionals.length !== 1) throw new UsageError('merge needs exactly one <siteId>');
    const siteId = positionals[0];
    const res = await adminClient(values, io.env).request('POST', `/admin/projects/${encodeURIComponent(siteId)}/merge`);
    io.stdout.write(values.json ? JSON.stringify(res) + '\n' : `merged ${siteId} (${String(res.pages)} pages)\n`);
    return 0;
  },
};
