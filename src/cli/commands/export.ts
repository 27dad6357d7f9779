/** `sitesift export`: asks the running primary to write a snapshot (src/snapshot/export.ts). */
import path from 'node:path';
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, parseFlags, UsageError, type Command } from '../command.js';

export const exportCommand: Command = {
  name: 'export',
  summary: 'write a snapshot of projects for read-only search nodes and backups',
  usage: `Usage: sitesift export <siteId> --out DIR|URL [--keys]
       sitesift export --all --out DIR|URL [--keys]

The running primary writes a content-addressed snapshot of the project's current index
generation: each segment file once under its SHA-256 (blobs/sha256/..), a manifest per project
and generation, projects/<siteId>/latest.json and index.json, each replaced atomically. Files
already there are not written again, so a re-export ships only what changed. Writes and
searches go on during the export. Search nodes read the same location
(sitesift serve --role search --snapshot DIR|URL); sitesift restore reads it back.

  --out DIR|URL        a directory on the server's machine (relative paths are resolved here),
                       or an http(s) URL that accepts PUT (nothing is pruned there)
  --all                every project
  --keys               also carry the projects' API key hashes (for restore --keys) and the HTTP embedder's API key
  --prune-grace-ms N   keep files no current manifest needs this long (default: the server's
                       SITESIFT_EXPORT_PRUNE_GRACE_MS, 1 hour)

${CLIENT_HELP}

Example: sitesift export docs --out /srv/sitesift-export
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, {
      ...CLIENT_OPTIONS,
      out: { type: 'string' },
      all: { type: 'boolean' },
      keys: { type: 'boolean' },
      'prune-grace-ms': { type: 'string' },
    });
    if (!values.out) throw new UsageError('export needs --out DIR|URL');
    if (values.all ? positionals.length !== 0 : positionals.length !== 1) throw new UsageError('export needs exactly one <siteId>, or --all');
    const out = /^https?:\/\//i.test(values.out) ? values.out : path.resolve(values.out);
    const grace = values['prune-grace-ms'];
    if (grace !== undefined && !/^\d+$/.test(grace)) throw new UsageError('--prune-grace-ms must be a whole number of milliseconds');
    const res = await adminClient(values, io.env).request('POST', '/admin/export', {
      out,
      ...(values.all ? { all: true } : { siteId: positionals[0] }),
      ...(values.keys ? { keys: true } : {}),
      ...(grace !== undefined ? { pruneGraceMs: Number(grace) } : {}),
    });
    if (values.json) {
      io.stdout.write(JSON.stringify(res) + '\n');
      return 0;
    }
    for (const p of res.projects as Array<Record<string, number | string>>) {
      io.stdout.write(`exported ${p.siteId} generation ${p.generation}: ${p.segments} segments, ${p.blobsWritten} new blobs, ${p.bytesWritten} bytes written\n`);
    }
    const pruned = res.pruned as Record<string, number>;
    io.stdout.write(`${String(res.out)}: ${String(res.bytesWritten)} bytes written in ${String(res.ms)} ms; pruned ${pruned.manifests} manifests, ${pruned.blobs} blobs\n`);
    return 0;
  },
};
