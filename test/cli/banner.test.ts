/**
 * The first-start banner's two curl lines work when pasted together: the push answers once the
 * page is searchable (`refresh=true`), so the search on the next line finds it. The lines are
 * parsed as a shell would split them and sent as the HTTP requests curl would make, against a
 * server whose refresh interval is an hour (without refresh=true the search would find nothing).
 */
import t from 'tap';
import { startTestServer } from '../helpers/server.js';

/** Splits a command line the way sh does for the quoting the banner uses (single quotes, spaces). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in ${line}`);
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      if (/["\\$`&;|<>()]/.test(c)) throw new Error(`unquoted ${c} would mean something else to the shell: ${line}`);
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The request a curl command line makes (the options the banner uses: -X, -H, -d). */
async function runCurl(line: string): Promise<{ status: number; body: any }> {
  const [cmd, ...args] = shellWords(line);
  if (cmd !== 'curl') throw new Error(`not a curl line: ${line}`);
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-X') method = args[++i];
    else if (a === '-H') {
      const h = args[++i]!;
      headers[h.slice(0, h.indexOf(':')).trim()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (a === '-d') {
      body = args[++i];
      headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    } else if (a.startsWith('-')) throw new Error(`unexpected curl option ${a}`);
    else url = a;
  }
  const res = await fetch(url!, { method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  return { status: res.status, body: await res.json() };
}

t.test('the banner: index a page, then search it, pasted together', async (t) => {
  const s = await startTestServer({ t, env: { SITESIFT_REFRESH_MS: '3600000' } });
  const lines = s
    .stdout()
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '));
  t.equal(lines.length, 2, 'two curl lines');
  t.match(lines[0], /refresh=true/);
  const push = await runCurl(lines[0]!);
  t.equal(push.status, 200, JSON.stringify(push.body));
  const search = await runCurl(lines[1]!);
  t.equal(search.status, 200);
  t.equal(search.body.totalResults, 1, 'the page pushed on the line before is found');
  t.match(search.body.suggests?._?.[0], { link: 'https://example.com/hello', name: 'Hello sitesift' }, 'that page');
});
