/**
 * Runs the CLI in-process against a running server, as the master key, and captures what it
 * printed.
 *
 * @example const r = await runCliAgainst(s, ['keys', 'list', 'default']); // { code, stdout, stderr }
 */
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli.js';

export async function runCliAgainst(server: { url: string; masterKey: string }, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await runCli([...args, '--url', server.url], { env: { SITESIFT_MASTER_KEY: server.masterKey }, stdout, stderr });
  return { code, stdout: out, stderr: err };
}
