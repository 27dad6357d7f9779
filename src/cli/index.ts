/**
 * Public surface of the command line's parts: the command contract and errors, and one object
 * per command (`src/cli/commands/<name>.ts`), which src/cli.ts lists in its table. `runServe`
 * is the process entry of `serve` (src/main.ts).
 */
export { CliError, UsageError } from './command.js';
export type { CliIO, Command } from './command.js';
export { crawl } from './commands/crawl.js';
export { exportCommand } from './commands/export.js';
export { indexCommand } from './commands/index.js';
export { keys } from './commands/keys.js';
export { merge } from './commands/merge.js';
export { nodes } from './commands/nodes.js';
export { project } from './commands/project.js';
export { restore } from './commands/restore.js';
export { runServe, serve } from './commands/serve.js';
export { sitemap } from './commands/sitemap.js';
export { status } from './commands/status.js';
