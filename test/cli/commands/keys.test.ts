/**
 * `sitesift keys create --scopes` end to end: the CLI (runCli, in-process) against a real
 * server on 127.0.0.1; the key it prints is refused outside its scopes.
 */
import t from 'tap';
import { runCliAgainst } from '../../helpers/cli.js';
import { api, startTestServer } from '../../helpers/server.js';

t.test('keys create --scopes, keys list shows them', async (t) => {
  const s = await startTestServer({ t });
  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return runCliAgainst(s, ['keys', ...args]);
  }
  const created = await cli(['create', 'default', '--label', 'box', '--scopes', 'search, index']);
  t.equal(created.code, 0, created.stderr);
  t.match(created.stdout, /scopes: search, index/);
  const token = /token \(shown once\): (ss_\S+)/.exec(created.stdout)![1]!;
  const list = await cli(['list', 'default']);
  t.match(list.stdout, /^ID\s+LABEL\s+PREFIX\s+SCOPES\s+CREATED/m);
  t.match(list.stdout, /\sbox\s+\S+\s+search,index\s/);
  t.match(list.stdout, /\sdefault\s+\S+\s+all\s/, 'the unscoped key lists "all"');
  t.equal((await api(s.url, '/sites/indexStatus', { token })).status, 403, 'the printed key has no reports scope');
  const bad = await cli(['create', 'default', '--scopes', 'root']);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /scopes/);
});
