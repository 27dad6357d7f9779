/**
 * `sitesift sitemap <siteId>`: imports the project's sitemaps now on the running server
 * (POST /sites/sitemap) and prints what was read, queued and removed; `--wait` follows the
 * queued pages until they are crawled.
 */
import { adminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, parseFlags, UsageError, type Command } from '../command.js';
import { waitForTask } from './crawl.js';

export const sitemap: Command = {
  name: 'sitemap',
  summary: 'import the sitemaps of a project now',
  usage: `Usage: sitesift sitemap <siteId> [--wait]

Reads the project's crawler.sitemapUrls (sitemap indexes and .gz included) and queues the URLs
that are new, whose lastmod changed, or that have no lastmod. With crawler.removeMissing,
pages that left the sitemaps are removed (only after a read without errors).

Options:
  --wait            follow the import until every queued page is crawled

${CLIENT_HELP}

Example: sitesift sitemap docs --wait
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, { ...CLIENT_OPTIONS, wait: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('sitemap needs exactly one <siteId>');
    const siteId = positionals[0];
    const client = adminClient(values, io.env);
    const res = await client.request('POST', `/sites/sitemap?site=${encodeURIComponent(siteId)}`);
    if (values.json && !values.wait) {
      io.stdout.write(JSON.stringify(res) + '\n');
      return 0;
    }
    const errors = (res.errors as string[] | undefined) ?? [];
    io.stdout.write(`${String(res.urls)} URLs read, ${String(res.queued)} queued, ${String(res.removed)} removed (task ${String(res.taskId)})\n`);
    for (const e of errors) io.stdout.write(`  error: ${e}\n`);
    if (values.wait) {
      const task = await waitForTask(client, siteId, String(res.taskId), io.stdout);
      if (values.json) io.stdout.write(JSON.stringify(task) + '\n');
    }
    return errors.length ? 1 : 0;
  },
};
