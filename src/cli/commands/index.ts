/**
 * `sitesift index <siteId> <file|dir>` — bulk import of page documents into a running server
 * (see src/ingest/bulk-import.ts for formats and behaviour). Exit codes: 0 all indexed,
 * 1 some entries rejected or the import aborted, 2 usage error.
 */
import { formatSummary, ImportAborted, runImport } from '../../ingest/index.js';
import { resolveBaseUrl, resolveMasterKey } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, CliError, parseFlags, UsageError, type Command } from '../command.js';

export const indexCommand: Command = {
  name: 'index',
  summary: 'bulk-import page documents from JSON / JSONL (.gz) files or a directory',
  usage: `Usage: sitesift index <siteId> <file.json|file.jsonl|file.jsonl.gz|dir> [options]

Posts the page documents (seed 2.1 fields; "headings" accepted) to the running server's
POST /sites/pagesJson in batches, with a progress bar (a line per 10% when not a terminal),
then prints how many were indexed and every rejected entry with its file, line and reason.
A .json file holds an array of documents or one document; .jsonl holds one per line; a
directory is read recursively in name order. Existing URLs are replaced (newest write wins).

Options:
  --base-url URL       prefix for relative "url" values (e.g. https://www.postgresql.org/docs/15/)
  --batch-size N       documents per request, 1-100 (default 100)
  --concurrency N      requests in flight, 1-16 (default 2)
  --ignore-undefined-filters
                       drop filter values whose fid# is not defined instead of rejecting
  --no-wait            do not wait at the end until the documents are searchable
  --replace            replace the whole index with the input: the pages are built into a
                       staging index beside the live one (searches keep using the live one),
                       then swapped in at once; pages not in the input are gone. Writes made
                       while it runs reach both indexes. An aborted import changes nothing.
${CLIENT_HELP}

Example:
  sitesift index docs ./export/pages.jsonl.gz --base-url https://example.com/
  sitesift index docs ./export/pages.jsonl.gz --replace
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, {
      ...CLIENT_OPTIONS,
      'base-url': { type: 'string' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string' },
      'ignore-undefined-filters': { type: 'boolean' },
      'no-wait': { type: 'boolean' },
      replace: { type: 'boolean' },
    });
    if (positionals.length !== 2) throw new UsageError('expected <siteId> and <file|dir>');
    const [siteId, input] = positionals as [string, string];
    const batchSize = intFlag(values['batch-size'], '--batch-size', 1, 100, 100);
    const concurrency = intFlag(values.concurrency, '--concurrency', 1, 16, 2);
    const serverUrl = resolveBaseUrl(values, io.env);
    const masterKey = resolveMasterKey(values, io.env);
    try {
      const summary = await runImport({
        serverUrl,
        masterKey,
        siteId,
        input,
        batchSize,
        concurrency,
        ...(values['base-url'] !== undefined ? { baseUrl: values['base-url'] } : {}),
        ignoreUndefinedFilters: values['ignore-undefined-filters'] === true,
        refreshAtEnd: values['no-wait'] !== true,
        replace: values.replace === true,
        out: io.stderr,
      });
      if (values.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
      else io.stdout.write(`${formatSummary(summary)}\n`);
      return summary.rejected.length > 0 ? 1 : 0;
    } catch (err) {
      if (err instanceof ImportAborted) throw new CliError(err.message);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError(`cannot read ${input}: no such file or directory`);
      throw err;
    }
  },
};

function intFlag(v: string | undefined, name: string, min: number, max: number, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be an integer from ${min} to ${max}, got "${v}"`);
  return n;
}

export default indexCommand;
