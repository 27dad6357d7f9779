/**
 * `sitesift export` — PLACEHOLDER owned by another engineer: replace this file (keep the
 * exported name `exportCommand`), it is already in the command table of src/cli.ts.
 */
import { CliError, type Command } from '../command.js';

export const exportCommand: Command = {
  name: 'export',
  summary: 'write a snapshot of a project for read-only search nodes',
  usage: `Usage: sitesift export ...

write a snapshot of a project for read-only search nodes (not available in this build yet).
`,
  async run() {
    throw new CliError('"sitesift export" is not available in this build yet');
  },
};
