/** `sitesift keys create|list|rename|delete`: API keys of one project, through the admin API. */
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, parseFlags, table, UsageError, type Command } from '../command.js';

export const keys: Command = {
  name: 'keys',
  summary: 'create, list, rename or delete API keys of a project',
  usage: `Usage:
  sitesift keys create <siteId> [--label LABEL] [--scopes LIST]
                                                   create a key; prints its token (shown once)
  sitesift keys list <siteId>                      list keys (id, label, prefix, scopes, created, last used)
  sitesift keys rename <siteId> <keyId> <label>    change a key's label
  sitesift keys delete <siteId> <keyId>            delete a key (it stops working at once)

--scopes is a comma list of search, index, reports, settings, admin; without it the key has
full access to its project. A key never reaches another project.

${CLIENT_HELP}

Example: sitesift keys create docs --label "CI importer" --scopes index
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, { ...CLIENT_OPTIONS, label: { type: 'string' }, scopes: { type: 'string' } });
    const [sub, siteId, keyId, label, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (sub && !siteId) throw new UsageError(`keys ${sub} needs a <siteId>`);
    const client = adminClient(values, io.env);
    const base = `/admin/projects/${encodeURIComponent(siteId ?? '')}/keys`;
    const print = (res: Record<string, unknown>, text: string) => io.stdout.write(values.json ? JSON.stringify(res) + '\n' : text);
    switch (sub) {
      case 'create': {
        if (keyId) throw new UsageError(`unexpected argument "${keyId}" (use --label)`);
        const body: Record<string, unknown> = {};
        if (values.label !== undefined) body.label = values.label;
        if (values.scopes !== undefined) body.scopes = values.scopes.split(',').map((s) => s.trim()).filter((s) => s !== '');
        const res = await client.request('POST', base, body);
        const scopes = res.scopes as string[] | null;
        print(res, `created key ${String(res.id)} for ${siteId} (${scopes ? `scopes: ${scopes.join(', ')}` : 'full project access'})\ntoken (shown once): ${String(res.token)}\n`);
        return 0;
      }
      case 'list': {
        if (keyId) throw new UsageError(`unexpected argument "${keyId}"`);
        const res = await client.request('GET', base);
        const list = res.keys as Array<{ id: string; label: string; prefix: string; createdAt: string; lastUsedAt: string | null; scopes: string[] | null }>;
        print(
          res,
          table([['ID', 'LABEL', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED'], ...list.map((k) => [k.id, k.label, k.prefix, k.scopes ? k.scopes.join(',') : 'all', k.createdAt, k.lastUsedAt ?? '-'])]),
        );
        return 0;
      }
      case 'rename': {
        if (!keyId || label === undefined) throw new UsageError('keys rename needs <siteId> <keyId> <label>');
        const res = await client.request('PATCH', `${base}/${encodeURIComponent(keyId)}`, { label });
        print(res, `renamed key ${keyId} to "${label}"\n`);
        return 0;
      }
      case 'delete': {
        if (!keyId) throw new UsageError('keys delete needs <siteId> <keyId>');
        if (label !== undefined) throw new UsageError(`unexpected argument "${label}"`);
        const res = await client.request('DELETE', `${base}/${encodeURIComponent(keyId)}`);
        print(res, `deleted key ${keyId}\n`);
        return 0;
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "keys ${sub}"` : 'keys needs a subcommand: create, list, rename or delete');
    }
  },
};
