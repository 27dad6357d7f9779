/**
 * Test helpers for the HTTP API (test process). Every server runs on 127.0.0.1 with a fresh
 * temporary data directory; nothing reads /work/shared or the real environment.
 *
 * - {@link tempDataDir}: a temp dir removed when the test ends (pass `t`) or by the caller.
 * - {@link startTestServer}: in-process server (port 0, fast refresh, silent logs, no cron jobs,
 *   no rate limits unless `env` sets them, answers checked against the OpenAPI schemas);
 *   returns `url`, `masterKey`, the `default` project's `token`, `services`, `close()`.
 * - {@link spawnServer}: a child process `node --import tsx src/main.ts` for crash and signal
 *   tests; resolves once it logs "listening".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { loadConfig, createLogger, type Logger } from '../../src/core/index.js';
import { startServer, type StartOptions } from '../../src/server.js';
import type { Services } from '../../src/services.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Anything with tap's `teardown` (keeps helpers independent of tap's types). */
interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Creates a temp data dir; with `t` it is removed at the end of the test. */
export function tempDataDir(t?: Teardown): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sitesift-test-'));
  t?.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestServer {
  url: string;
  /** The separate metrics listener (SITESIFT_METRICS_ADDRESS in `env`), or null. */
  metricsUrl: string | null;
  dataDir: string;
  masterKey: string;
  /** Token of the `default` project's first key (bootstrap), or '' when none was created. */
  token: string;
  services: Services;
  /** Everything the server printed to "stdout" (the first-start banner). */
  stdout: () => string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Environment-style settings (e.g. `{ SITESIFT_REFRESH_MS: '50' }`); HOST/PORT/data dir are set. */
  env?: Record<string, string>;
  /** Reuse a data dir (restart tests); default a fresh temp dir. */
  dataDir?: string;
  /** Passed through to startServer (e.g. `app: { routes }`, `clock`, `log`). */
  start?: StartOptions;
  /** Close the server and remove the temp dir at the end of `t`. */
  t?: Teardown;
}

/**
 * Starts an in-process server with a fresh data dir (first-start bootstrap included, so the
 * `default` project and its `token` exist). Fast refresh (50 ms), 2 workers, logs silenced
 * unless `SITESIFT_LOG_LEVEL` (or `LOG_LEVEL`) is given in `env` (then they go to stderr).
 */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDataDir();
  // Tests send bursts no visitor would; the rate-limit tests turn the limits on in `env`.
  // Semantic search is off unless a test gives word vectors (SITESIFT_WORD_VECTORS, a fixture).
  const env = { SITESIFT_WORD_VECTORS: 'none', SITESIFT_REFRESH_MS: '50', SITESIFT_WORKERS: '2', SITESIFT_RATE_PUBLIC_PER_SECOND: '0', SITESIFT_RATE_INDEX_PER_SECOND: '0', ...opts.env, HOST: '127.0.0.1', PORT: '0', SITESIFT_DATA_DIR: dataDir };
  const config = loadConfig([], env);
  let printed = '';
  const out = new PassThrough();
  out.on('data', (c: Buffer) => (printed += c.toString()));
  const log: Logger = opts.env?.LOG_LEVEL || opts.env?.SITESIFT_LOG_LEVEL ? createLogger(config, process.stderr) : createLogger('silent');
  // Every JSON answer is checked against its documented schema (src/http/openapi.ts): an
  // answer that does not match becomes a 500 naming the route, so the test that got it fails.
  const running = await startServer(config, { log, stdout: out, jobs: false, ...opts.start, app: { validateResponses: true, ...opts.start?.app } });
  const token = /API key\s*:\s*(\S+)/.exec(printed)?.[1] ?? '';
  const server: TestServer = {
    url: running.url,
    metricsUrl: running.metricsUrl,
    dataDir,
    masterKey: running.services.config.masterKey!,
    token,
    services: running.services,
    stdout: () => printed,
    close: async () => {
      await running.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  opts.t?.teardown(() => server.close());
  return server;
}

export interface SpawnedServer {
  url: string;
  child: ChildProcess;
  /** Everything the child wrote to stdout / stderr so far. */
  stdout: () => string;
  stderr: () => string;
  /** Sends `signal` and resolves the exit code (or the signal name when killed by it). */
  kill(signal?: NodeJS.Signals): Promise<number | string>;
  /** Resolves the exit code / signal once the child exits (without sending anything). */
  exited: Promise<number | string>;
}

/**
 * Spawns `node --import tsx src/main.ts` on 127.0.0.1:0 with `dataDir` and extra `env`, and
 * resolves once its "listening" log line appears (rejects if it exits first or after 30 s).
 */
export function spawnServer(dataDir: string, env: Record<string, string> = {}, args: string[] = []): Promise<SpawnedServer> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SITESIFT_') && k !== 'HOST' && k !== 'PORT' && k !== 'LOG_LEVEL') clean[k] = v;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), ...args], {
    cwd: ROOT,
    env: { ...clean, HOST: '127.0.0.1', PORT: '0', SITESIFT_DATA_DIR: dataDir, SITESIFT_WORKERS: '2', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise<SpawnedServer>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 30 s\nstdout:\n${out}\nstderr:\n${err}`));
    }, 30_000);
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        let rec: { msg?: string; url?: string };
        try {
          rec = JSON.parse(line);
        } catch {
          continue;
        }
        if (rec.msg === 'listening' && rec.url) {
          clearTimeout(timer);
          const url = rec.url;
          resolve({
            url,
            child,
            stdout: () => out,
            stderr: () => err,
            exited,
            kill: (signal = 'SIGTERM') => {
              child.kill(signal);
              return exited;
            },
          });
          return;
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening\nstdout:\n${out}\nstderr:\n${err}`));
    });
  });
}

/** fetch + JSON body, for terse assertions: `const { status, body, headers } = await api(url, '/health')`. */
export async function api(
  base: string,
  pathAndQuery: string,
  init: { method?: string; token?: string; json?: unknown; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.Authorization = `Bearer ${init.token}`;
  let body: string | Buffer | undefined = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(base + pathAndQuery, { method: init.method ?? 'GET', headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}
