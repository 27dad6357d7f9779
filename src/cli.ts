#!/usr/bin/env node
/**
 * The `sitesift` command line (package.json `bin`). {@link COMMANDS} is the table of commands,
 * one file each in `src/cli/commands/`; to add a command, write its file, export it from
 * src/cli/index.ts and list it here.
 * Exit codes: 0 success, 1 failure, 2 usage error.
 */
import { pathToFileURL } from 'node:url';
import { readFileSync, realpathSync } from 'node:fs';
import {
  CliError, UsageError, type CliIO, type Command, crawl, exportCommand, indexCommand, keys, merge, nodes,
  project, restore, serve, sitemap, status,
} from './cli/index.js';

/** Every command, keyed by name, in the order `--help` lists them. */
export const COMMANDS: ReadonlyMap<string, Command> = new Map(
  [serve, project, keys, nodes, indexCommand, crawl, sitemap, merge, exportCommand, restore, status].map((c) => [c.name, c]),
);

/**
 * The package's version, from its package.json (next to `src/` under tsx, two levels up from
 * `dist/src/` when installed).
 *
 * @example packageVersion() // '0.1.0'
 */
export function packageVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'sitesift' && pkg.version) return pkg.version;
    } catch {
      // Not this level: try the next.
    }
  }
  return 'unknown';
}

export function mainHelp(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((n) => n.length));
  const lines = [...COMMANDS.values()].map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: sitesift <command> [options]

Commands:
${lines.join('\n')}

Run "sitesift <command> --help" for a command's options; "sitesift --version" prints the version.
`;
}

/** Runs the CLI with `argv` (without `node` and the script); resolves the exit code. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(mainHelp());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    io.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = COMMANDS.get(name);
  if (!command) {
    io.stderr.write(`sitesift: unknown command "${name}"\n\n${mainHelp()}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(command.usage);
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`sitesift ${name}: ${err.message}\nRun "sitesift ${name} --help" for usage.\n`);
      return 2;
    }
    if (err instanceof CliError) {
      io.stderr.write(`sitesift ${name}: error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

function isEntryPoint(): boolean {
  if (!process.argv[1]) return false;
  try {
    // npm's bin link is a symlink: compare real paths.
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  runCli(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`sitesift: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
