/**
 * `sitesift crawl` — PLACEHOLDER owned by another engineer: replace this file (keep the
 * exported name `crawl`), it is already in the command table of src/cli.ts.
 */
import { CliError, type Command } from '../command.js';

export const crawl: Command = {
  name: 'crawl',
  summary: 'start a crawl of a project',
  usage: `Usage: sitesift crawl ...

start a crawl of a project (not available in this build yet).
`,
  async run() {
    throw new CliError('"sitesift crawl" is not available in this build yet');
  },
};
