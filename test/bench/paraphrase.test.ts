/**
 * The paraphrase question set (bench/data/pg-paraphrase.jsonl) keeps its rule: no question
 * shares a content word with the title of the page that answers it, so a title match cannot
 * answer it. The check (bench/lib/paraphrase.ts) runs here on a small fixture and on the whole
 * set, against the titles stored with the questions (no corpus needed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { contentStems, loadParaphrases, sharedWithTitle } from '../../bench/lib/paraphrase.js';

t.test('the overlap check: content-word stems shared with the title, stop words and numbers left out', async (t) => {
  const title = 'Chapter 14. Performance Tips';
  t.same(sharedWithTitle({ q: 'make my queries faster', url: 'performance-tips.html', title }), []);
  t.same(sharedWithTitle({ q: 'performance tips for slow queries', url: 'performance-tips.html', title }).sort(), ['perform', 'tip'], 'shared words are caught');
  t.same(sharedWithTitle({ q: 'Performing better', url: 'performance-tips.html', title }), ['perform'], 'through their stems, in any case');
  t.same(sharedWithTitle({ q: 'the 14 things about a chapter', url: 'x.html', title: 'The 14' }), [], 'stop words and numbers do not count');
  t.same([...contentStems('Running the Tables, 2 of them')].sort(), ['run', 'tabl']);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'para-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'set.jsonl');
  fs.writeFileSync(file, [
    { q: 'undo a change I made by mistake', url: 'sql-rollback.html', title: 'ROLLBACK' },
    { q: 'rollback everything', url: 'sql-rollback.html', title: 'ROLLBACK' },
  ].map((x) => JSON.stringify(x)).join('\n') + '\n\n');
  const set = loadParaphrases(file);
  t.equal(set.length, 2, 'one question a line, blank lines skipped');
  t.same(set.map((p) => sharedWithTitle(p)), [[], ['rollback']], 'the second question breaks the rule');
});

t.test('every question of the PostgreSQL set keeps the rule; the set is large and has no duplicates', async (t) => {
  const set = loadParaphrases();
  t.ok(set.length >= 150, `at least 150 questions (${set.length})`);
  for (const p of set) {
    if (typeof p.q !== 'string' || typeof p.url !== 'string' || typeof p.title !== 'string' || !p.q.trim() || !p.title.trim()) t.fail(`malformed entry ${JSON.stringify(p)}`);
    if (!/^[a-z0-9-]+\.html$/.test(p.url)) t.fail(`url is a page of the manual, relative: ${p.url}`);
  }
  const breaking = set.filter((p) => sharedWithTitle(p).length > 0).map((p) => `${p.q} ↔ ${p.title}: ${sharedWithTitle(p).join(', ')}`);
  t.same(breaking, [], 'no question shares a content word with its page\'s title');
  const seen = new Set(set.map((p) => p.q.trim().toLowerCase()));
  t.equal(seen.size, set.length, 'no question twice');
  t.ok(new Set(set.map((p) => p.url)).size >= 100, 'the questions cover many pages');
});
