/**
 * `sitesift crawl <siteId>`: starts a site crawl on the running server (POST /sites/crawl), or
 * with `--page URL` queues one URL (POST /index/documents); `--wait` follows the task until it
 * is done, and with `--page` fails (exit 1, naming the status) unless the page was indexed.
 * Talks to the server with the master key, naming the project in `site`.
 */
import { adminClient, type AdminClient } from '../admin-client.js';
import { CLIENT_HELP, CLIENT_OPTIONS, CliError, parseFlags, UsageError, type Command } from '../command.js';

/** A task's `progress` as the CLI prints it: `found 5, fetched 3, indexed 2, skipped 1 (404: 1), failed 0`. */
export function formatProgress(progress: unknown): string {
  if (typeof progress !== 'object' || progress === null) return '';
  const p = progress as { found?: number; fetched?: number; indexed?: number; skipped?: Record<string, number>; failed?: number };
  const skipped = Object.entries(p.skipped ?? {});
  const skippedTotal = skipped.reduce((a, [, n]) => a + n, 0);
  const byStatus = skipped.length ? ` (${skipped.map(([status, n]) => `${status}: ${n}`).join(', ')})` : '';
  return `found ${p.found ?? 0}, fetched ${p.fetched ?? 0}, indexed ${p.indexed ?? 0}, skipped ${skippedTotal}${byStatus}, failed ${p.failed ?? 0}`;
}

/**
 * Polls GET /tasks/{id} until the task is done or failed; prints a line whenever its state,
 * progress (the figures of `GET /tasks`) or message changes.
 */
export async function waitForTask(client: AdminClient, siteId: string, taskId: string, out: NodeJS.WritableStream, intervalMs = 1000): Promise<Record<string, unknown>> {
  let last = '';
  for (;;) {
    const task = await client.request('GET', `/tasks/${encodeURIComponent(taskId)}?site=${encodeURIComponent(siteId)}`);
    const figures = formatProgress(task.progress);
    const line = `${String(task.state)}${task.message ? ` — ${String(task.message)}` : ''}${figures ? ` · ${figures}` : ''}`;
    if (line !== last) out.write(`  ${line}\n`);
    last = line;
    if (task.state === 'done' || task.state === 'failed') return task;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const crawl: Command = {
  name: 'crawl',
  summary: "crawl a project's site now, or queue one URL (--page)",
  usage: `Usage: sitesift crawl <siteId> [--page URL] [--wait]

Without --page: starts a crawl of the project's site from its settings' crawler.rootUrls
(breadth-first inside the allowed hosts, to maxDepth/maxPages). A crawl already running is
reported instead of starting a second one.
With --page URL: queues that one URL; the crawler fetches it under the project's rules. With
--wait the exit code is 0 only when the page was indexed (status 200); otherwise the command
prints the page's status (404, 807 blocked address, 810 network error, ...) and exits 1.

Options:
  --page URL        queue one URL instead of crawling the site
  --wait            follow the task until it is done (prints its state, progress and message)

${CLIENT_HELP}

Examples:
  sitesift crawl docs --wait
  sitesift crawl docs --page https://docs.example.com/new-page.html
`,
  async run(args, io) {
    const { values, positionals } = parseFlags(args, { ...CLIENT_OPTIONS, page: { type: 'string' }, wait: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('crawl needs exactly one <siteId>');
    const siteId = positionals[0];
    const client = adminClient(values, io.env);
    const site = `site=${encodeURIComponent(siteId)}`;
    const res = values.page
      ? await client.request('POST', `/index/documents?${site}&url=${encodeURIComponent(values.page)}`)
      : await client.request('POST', `/sites/crawl?${site}`);
    const taskId = String(res.taskId);
    if (values.json && !values.wait) {
      io.stdout.write(JSON.stringify(res) + '\n');
      return 0;
    }
    io.stdout.write(values.page ? `queued ${String(res.url)} (task ${taskId})\n` : `crawl of ${siteId} started (task ${taskId})\n`);
    if (!values.wait) return 0;
    const task = await waitForTask(client, siteId, taskId, io.stdout);
    if (values.json) io.stdout.write(JSON.stringify(task) + '\n');
    // A page task is "done" once its outcome is recorded, a 404 or a refused address included:
    // only an indexed page (200) is a success for the caller who asked for that page.
    if (values.page && task.indexStatus !== 200) {
      const status = task.indexStatus === undefined ? 'no status' : `status ${String(task.indexStatus)}`;
      throw new CliError(`${String(res.url ?? values.page)} was not indexed: ${status}${task.message ? ` (${String(task.message)})` : ''}`);
    }
    if (task.state === 'failed') throw new CliError(`task ${taskId} failed: ${String(task.message ?? '')}`);
    return 0;
  },
};
