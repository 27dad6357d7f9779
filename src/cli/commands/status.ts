/** `sitesift status`: is the server up, and what does it hold. */
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, CliError, parseFlags, table, UsageError, type Command } from '../command.js';

export const status: Command = {
  name: 'status',
  summary: 'show whether the server is up and its projects',
  usage: `Usage: sitesift status

Checks GET /health, then lists the projects with their page counts (needs the master key).
Exit code 0 when the server answers, 1 otherwise.

${CLIENT_HELP}
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, CLIENT_OPTIONS);
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const client = adminClient(values, io.env);
    let health: Response;
    try {
      health = await fetch(`${client.baseUrl}/health`);
    } catch {
      throw new CliError(`sitesift is not reachable at ${client.baseUrl}`);
    }
    if (!health.ok) throw new CliError(`sitesift at ${client.baseUrl} is unhealthy (HTTP ${health.status})`);
    const res = await client.request('GET', '/admin/projects');
    const projects = res.projects as Array<{ siteId: string; pages: number }>;
    if (values.json) {
      io.stdout.write(JSON.stringify({ status: 'ok', url: client.baseUrl, projects }) + '\n');
    } else {
      io.stdout.write(`sitesift at ${client.baseUrl}: ok, ${projects.length} project(s)\n`);
      if (projects.length > 0) io.stdout.write(table([['SITE', 'PAGES'], ...projects.map((p) => [p.siteId, String(p.pages)])]));
    }
    return 0;
  },
};
