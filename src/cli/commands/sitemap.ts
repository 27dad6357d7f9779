/**
 * `sitesift sitemap` — PLACEHOLDER owned by another engineer: replace this file (keep the
 * exported name `sitemap`), it is already in the command table of src/cli.ts.
 */
import { CliError, type Command } from '../command.js';

export const sitemap: Command = {
  name: 'sitemap',
  summary: 'import the sitemaps of a project now',
  usage: `Usage: sitesift sitemap ...

import the sitemaps of a project now (not available in this build yet).
`,
  async run() {
    throw new CliError('"sitesift sitemap" is not available in this build yet');
  },
};
