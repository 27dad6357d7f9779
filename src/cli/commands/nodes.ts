/** `sitesift nodes create|list|delete`: keys of read-only search nodes, on the primary, through the admin API. */
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, parseFlags, table, UsageError, type Command } from '../command.js';

export const nodes: Command = {
  name: 'nodes',
  summary: 'create, list or revoke the keys search nodes push their query log with',
  usage: `Usage:
  sitesift nodes create [--name NAME]   create a node key; prints it (shown once)
  sitesift nodes list                   list node keys (id, name, prefix, created, last used)
  sitesift nodes delete <id>            revoke a node key (the node's next push is refused)

Run against the primary. Give the key to the node as SITESIFT_NODE_KEY, with
SITESIFT_PRIMARY_URL pointing at the primary: the node then pushes its searches and query-log
events to the primary's reports (docs/DEPLOY.md).

${CLIENT_HELP}

Example: sitesift nodes create --name eu-1
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, { ...CLIENT_OPTIONS, name: { type: 'string' } });
    const [sub, id, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const client = adminClient(values, io.env);
    const print = (res: Record<string, unknown>, text: string) => io.stdout.write(values.json ? JSON.stringify(res) + '\n' : text);
    switch (sub) {
      case 'create': {
        if (id) throw new UsageError(`unexpected argument "${id}" (use --name)`);
        const res = await client.request('POST', '/admin/nodes', values.name !== undefined ? { name: values.name } : {});
        print(res, `created node key ${String(res.id)}\nkey (shown once): ${String(res.key)}\n`);
        return 0;
      }
      case 'list': {
        if (id) throw new UsageError(`unexpected argument "${id}"`);
        const res = await client.request('GET', '/admin/nodes');
        const list = res.nodes as Array<{ id: string; name: string; prefix: string; createdAt: string; lastUsedAt: string | null }>;
        print(res, table([['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED'], ...list.map((k) => [k.id, k.name, k.prefix, k.createdAt, k.lastUsedAt ?? '-'])]));
        return 0;
      }
      case 'delete': {
        if (!id) throw new UsageError('nodes delete needs <id>');
        const res = await client.request('DELETE', `/admin/nodes/${encodeURIComponent(id)}`);
        print(res, `revoked node key ${id}\n`);
        return 0;
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "nodes ${sub}"` : 'nodes needs a subcommand: create, list or delete');
    }
  },
};
