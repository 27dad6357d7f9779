/**
 * The documentation keeps describing the code that exists: every repository path README.md,
 * docs/*.md and bench/README.md name is there, no doc points outside the repository or into the
 * project's working history, and bench/README.md keeps one marked section per benchmark for
 * `make bench` to rewrite (bench/lib/report.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { replaceSectionText, sectionMarkers } from '../bench/lib/report.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = ['README.md', 'bench/README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const BENCHMARKS = ['ingest', 'search', 'suggest', 'crawl', 'relevance', 'widget'];

/** Repository paths named in backticks or links: `src/…`, `workers/…`, `jobs/…`, `test/…`, `bench/…`. */
function namedPaths(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:`|\]\(|\(|\s)((?:\.\.\/)?(?:src|workers|jobs|test|bench)\/[^\s`)#'",;]*)/g)) {
    let p = m[1]!.replace(/^\.\.\//, '').replace(/[.:]+$/, '');
    // Patterns such as `workers/<task>.ts` or `test/path/x.test.ts` name no file, and bench/out/
    // holds what a benchmark run writes.
    if (/[<>*…{}]/.test(p) || p === 'test/path/x.test.ts' || p.startsWith('bench/out/')) continue;
    p = p.replace(/\/$/, '');
    out.add(p);
  }
  return [...out];
}

for (const doc of DOCS) {
  const text = readFileSync(path.join(ROOT, doc), 'utf8');
  t.test(doc, async (t) => {
    // Links are relative to the doc's folder; backticked paths to the repository root.
    const missing = namedPaths(text).filter((p) => !existsSync(path.join(ROOT, p)) && !existsSync(path.join(ROOT, path.dirname(doc), p)));
    t.same(missing, [], 'every named path exists');
    t.notMatch(text, /\.\.\/shared/, 'no path outside the repository');
    t.notMatch(text, /SPEC\.md/, 'no contract outside the repository');
    t.notMatch(text, /\bsessions? \d/i, 'no session numbers');
  });
}

t.test('the path finder sees backticked paths and links, and skips patterns', async (t) => {
  t.same(namedPaths('see `src/index/store.ts`, [x](../src/core/url.ts) and `workers/<task>.ts`').sort(), ['src/core/url.ts', 'src/index/store.ts']);
});

t.test('bench/README.md has one section per benchmark', async (t) => {
  const text = readFileSync(path.join(ROOT, 'bench/README.md'), 'utf8');
  for (const name of BENCHMARKS) {
    const { start, end } = sectionMarkers(name);
    const from = text.indexOf(start);
    t.ok(from >= 0 && text.indexOf(end, from) > from, `${name}: start and end markers, in order`);
    t.equal(text.split(start).length, 2, `${name}: one section`);
  }
});

t.test('replaceSectionText replaces only the section, or appends it', async (t) => {
  const text = 'intro\n<!-- bench:a -->\nold a\n<!-- /bench:a -->\nhow to read b\n<!-- bench:b -->\nold b\n<!-- /bench:b -->\nend\n';
  const once = replaceSectionText(text, 'a', 'new a\n');
  t.equal(once, 'intro\n<!-- bench:a -->\nnew a\n<!-- /bench:a -->\nhow to read b\n<!-- bench:b -->\nold b\n<!-- /bench:b -->\nend\n');
  t.equal(replaceSectionText(once, 'a', 'new a'), once, 'idempotent');
  t.equal(replaceSectionText('x\n', 'c', 'c body'), 'x\n\n<!-- bench:c -->\nc body\n<!-- /bench:c -->\n', 'a missing section is appended');
});
