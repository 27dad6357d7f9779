/**
 * `sitesift serve`: loads the config (flags > env > config file), starts the server and
 * handles SIGTERM/SIGINT: graceful close, exit 0; a forced exit 1 after 10 s or on a second
 * signal. Also the body of `src/main.ts`.
 */
import { ConfigError, componentLogger, describeSettings, loadConfig, createLogger } from '../../core/index.js';
import { DataDirInUseError, startServer } from '../../server.js';
import type { CliIO, Command } from '../command.js';

export const SHUTDOWN_DEADLINE_MS = 10_000;

const settings = describeSettings()
  .map((s) => `  ${s.flag.padEnd(26)} ${s.env.padEnd(32)} default ${s.default}`)
  .join('\n');

/**
 * Runs a server until a signal stops it. Resolves the exit code only for start failures; after
 * a successful start the process exits from the signal handler.
 */
export async function runServe(args: string[], io: CliIO): Promise<number> {
  let config;
  try {
    config = loadConfig(args, io.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`sitesift: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  // Lines go to stdout asynchronously (src/core/log.ts); process.exit writes what is pending.
  let root;
  try {
    root = createLogger(config);
  } catch (err) {
    io.stderr.write(`sitesift: SITESIFT_LOG_REDACT: ${(err as Error).message}\n`);
    return 1;
  }
  const log = componentLogger(root, 'server');
  let running;
  try {
    running = await startServer(config, { log: root, stdout: io.stdout });
  } catch (err) {
    io.stderr.write(`sitesift: cannot start: ${(err as Error).message}\n`);
    // A data dir in use is the operator's situation (a second `make start`), not a fault: the
    // one line above says it all; anything else is logged with its stack for a bug report.
    if (!(err instanceof DataDirInUseError)) log.error({ err }, 'start failed');
    return 1;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'signal received, shutting down');
    const force = setTimeout(() => {
      log.error({}, `shutdown took longer than ${SHUTDOWN_DEADLINE_MS} ms; forcing exit`);
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('uncaughtException', (err) => {
    log.error({ err }, 'uncaught exception');
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    log.error({ err }, 'unhandled rejection');
  });
  // Keep the command pending: the process ends from the signal handler.
  return new Promise<number>(() => {});
}

export const serve: Command = {
  name: 'serve',
  summary: 'run the server (HTTP API, worker pool, cron jobs)',
  usage: `Usage: sitesift serve [--name=value ...]

Runs sitesift in the foreground until SIGTERM/SIGINT (graceful shutdown, exit 0).
Settings: flags beat environment variables, which beat the JSON file named by
--config / SITESIFT_CONFIG (keys: the variable names, e.g. "PORT").

  flag                       variable                         default
${settings}
  --config FILE              SITESIFT_CONFIG                  (none)

First start with an empty data dir and no SITESIFT_MASTER_KEY generates a master key
(<data dir>/master.key, mode 0600) and a project "default" with one API key, printed once.

Example: sitesift serve --port 9000 --data-dir /var/lib/sitesift
`,
  run: runServe,
};
