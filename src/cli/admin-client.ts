/**
 * HTTP client for the admin API of a running server, used by the management commands.
 * Base URL: `--url`, else `SITESIFT_URL`, else `http://$HOST:$PORT` (defaults 127.0.0.1:8080).
 * Master key: `SITESIFT_MASTER_KEY`, else `<data dir>/master.key` (`--data-dir`,
 * `SITESIFT_DATA_DIR`, `./data`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CliError } from './command.js';

export interface ClientFlags {
  url?: string;
  'data-dir'?: string;
}

export interface AdminClient {
  baseUrl: string;
  /** Sends a request with the master key; resolves the JSON body of a 2xx, else throws CliError. */
  request(method: string, pathAndQuery: string, body?: unknown): Promise<Record<string, unknown>>;
}

export function resolveBaseUrl(flags: ClientFlags, env: NodeJS.ProcessEnv): string {
  if (flags.url) return flags.url.replace(/\/+$/, '');
  if (env.SITESIFT_URL) return env.SITESIFT_URL.replace(/\/+$/, '');
  const host = env.HOST || '127.0.0.1';
  const port = env.PORT || '8080';
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function resolveMasterKey(flags: ClientFlags, env: NodeJS.ProcessEnv): string {
  if (env.SITESIFT_MASTER_KEY) return env.SITESIFT_MASTER_KEY.trim();
  const dataDir = path.resolve(flags['data-dir'] || env.SITESIFT_DATA_DIR || './data');
  const file = path.join(dataDir, 'master.key');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new CliError(`no master key: set SITESIFT_MASTER_KEY or point --data-dir at the server's data directory (${file} not readable)`);
  }
}

export function adminClient(flags: ClientFlags, env: NodeJS.ProcessEnv): AdminClient {
  const baseUrl = resolveBaseUrl(flags, env);
  let key: string | null = null;
  return {
    baseUrl,
    async request(method, pathAndQuery, body) {
      key ??= resolveMasterKey(flags, env);
      let res: Response;
      try {
        res = await fetch(baseUrl + pathAndQuery, {
          method,
          headers: { Authorization: `Bearer ${key}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
          body: body !== undefined ? JSON.stringify(body) : undefined,
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        throw new CliError(`cannot reach sitesift at ${baseUrl} (${cause}); is it running (sitesift serve)?`);
      }
      const text = await res.text();
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new CliError(`unexpected response from ${baseUrl} (HTTP ${res.status}): ${text.slice(0, 200)}`);
      }
      if (!res.ok) throw new CliError(`${String(json.message ?? 'request failed')} (${String(json.code ?? res.status)})`);
      return json;
    },
  };
}
