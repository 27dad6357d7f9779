/** `sitesift project create|list|delete`: project management through the admin API. */
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, parseFlags, table, UsageError, type Command } from '../command.js';

export const project: Command = {
  name: 'project',
  summary: 'create, list or delete projects (sites)',
  usage: `Usage:
  sitesift project create <siteId> [--name NAME]   create a project; prints its first API key (shown once)
  sitesift project list                            list projects with their page counts
  sitesift project delete <siteId> --yes           delete a project and ALL its data

siteId: 1-63 lowercase letters, digits and "-", starting with a letter or digit.

${CLIENT_HELP}

Example: sitesift project create docs --name "Product docs"
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, { ...CLIENT_OPTIONS, name: { type: 'string' }, yes: { type: 'boolean' } });
    const [sub, siteId, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const client = adminClient(values, io.env);
    switch (sub) {
      case 'create': {
        if (!siteId) throw new UsageError('project create needs a <siteId>');
        const res = await client.request('POST', '/admin/projects', { siteId, ...(values.name !== undefined ? { name: values.name } : {}) });
        if (values.json) {
          io.stdout.write(JSON.stringify(res) + '\n');
        } else {
          const key = res.apiKey as { id: string; token: string };
          io.stdout.write(`created project ${String(res.siteId)} ("${String(res.name)}")\nAPI key (shown once): ${key.token}\nkey id: ${key.id}\n`);
        }
        return 0;
      }
      case 'list': {
        if (siteId) throw new UsageError(`unexpected argument "${siteId}"`);
        const res = await client.request('GET', '/admin/projects');
        const projects = res.projects as Array<{ siteId: string; name: string; pages: number; createdAt: string }>;
        if (values.json) io.stdout.write(JSON.stringify(res) + '\n');
        else io.stdout.write(table([['SITE', 'NAME', 'PAGES', 'CREATED'], ...projects.map((p) => [p.siteId, p.name, String(p.pages), p.createdAt])]));
        return 0;
      }
      case 'delete': {
        if (!siteId) throw new UsageError('project delete needs a <siteId>');
        if (!values.yes) throw new UsageError(`deleting "${siteId}" removes all its pages, keys, settings and reports; add --yes to confirm`);
        const res = await client.request('DELETE', `/admin/projects/${encodeURIComponent(siteId)}`);
        io.stdout.write(values.json ? JSON.stringify(res) + '\n' : `deleted project ${siteId}\n`);
        return 0;
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "project ${sub}"` : 'project needs a subcommand: create, list or delete');
    }
  },
};
