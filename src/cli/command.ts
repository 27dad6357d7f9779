/**
 * The CLI's command contract. `src/cli.ts` holds the table of commands; each command lives in
 * `src/cli/commands/<name>.ts` and exports a {@link Command}. To add one: write the file and add
 * it to the table in `src/cli.ts`. `--help`/`-h` is handled centrally (prints `usage`).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Writable } from 'node:stream';

/** Everything a command may touch of the outside world (tests pass their own). */
export interface CliIO {
  env: NodeJS.ProcessEnv;
  stdout: Writable;
  stderr: Writable;
}

export interface Command {
  name: string;
  /** One line for `sitesift --help`. */
  summary: string;
  /** Full `--help` text (usage line, subcommands, options, an example). */
  usage: string;
  /** Runs with the arguments after the command name; resolves the exit code. */
  run(args: string[], io: CliIO): Promise<number>;
}

/** A usage mistake: printed as `error: ...` plus a `--help` hint, exit code 2. */
export class UsageError extends Error {}

/** A failure to report: printed as `error: ...`, exit code 1. */
export class CliError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict flag parsing (unknown flags are usage errors) with positionals allowed. */
export function parseFlags<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Options shared by every command that talks to a running server. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies Options;

export const CLIENT_HELP = `Connection options:
  --url URL         server base URL (default: SITESIFT_URL, else http://HOST:PORT from the
                    environment, else http://127.0.0.1:8080)
  --data-dir DIR    where to find master.key when SITESIFT_MASTER_KEY is not set
                    (default: SITESIFT_DATA_DIR or ./data)
  --json            print the raw JSON response`;

/** Formats rows as aligned columns (first row = header). */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n') + '\n';
}
