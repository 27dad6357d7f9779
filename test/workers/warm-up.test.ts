/**
 * Pool-thread warm-up (workers/warm-up.ts): the fixture pages go through the real extractor and
 * into real segments; a pool created with `warmUp` starts every thread at once, warms each before
 * its first task, and keeps them past the idle timeout; a pool without it does neither.
 */
import t from 'tap';
import { createPool, runTask } from '../../src/core/index.js';
import { extractHtml } from '../../src/fetch/index.js';
import { fixturePage, runWarmUp, WARM_UP_PAGES, type WarmUpReport } from '../../workers/warm-up.js';

type Answer = { threadId: number; startUp: WarmUpReport | null };

t.test('fixture pages look like documentation pages to the extractor', async (t) => {
  const x = extractHtml(fixturePage(3), 'http://warm-up.invalid/docs/chapter-3.html', null, {});
  t.match(x.title, /^3\. /);
  t.equal(x.language, 'en');
  t.ok(x.headings.length >= 5, 'section headings found');
  t.ok(x.content.length > 2000, 'main content extracted');
  t.ok(x.links.some((l) => /^http:\/\/warm-up\.invalid\/docs\/chapter-3-\d\.html$/.test(l)) && x.links.some((l) => /^http:\/\/warm-up\.invalid\/chapter-3-\d\.html$/.test(l)), "relative links resolved");
  t.not(fixturePage(4), fixturePage(3), 'pages vary');
});

t.test('one warm-up extracts every fixture page and builds and merges two segments', async (t) => {
  const r = runWarmUp();
  t.equal(r.pages, WARM_UP_PAGES);
  t.ok(r.links >= WARM_UP_PAGES, 'links extracted');
  t.equal(r.segmentDocs, WARM_UP_PAGES, 'every fixture document written into a segment');
});

t.test('a warm pool starts and warms every thread before its first task, and keeps them', async (t) => {
  const pool = createPool({ workers: 2, warmUp: true, idleTimeoutMs: 1 });
  t.teardown(() => pool.destroy());
  t.equal(pool.threads.length, 2, 'both threads started with the pool');
  const first = await runTask<Answer>(pool, 'warm-up');
  t.equal(first.startUp?.pages, WARM_UP_PAGES, 'the thread warmed up before its first task');
  t.equal(first.startUp?.segmentDocs, WARM_UP_PAGES);
  // Idle far past the 1 ms idle timeout: a warm thread is never thrown away.
  await new Promise((r) => setTimeout(r, 200));
  t.equal(pool.threads.length, 2, 'threads kept past the idle timeout');
  const again = await runTask<Answer>(pool, 'warm-up');
  t.not(again.startUp, null, 'still a warmed thread');
});

t.test('a pool without warmUp starts threads on demand and skips the warm-up', async (t) => {
  const pool = createPool({ workers: 1 });
  t.teardown(() => pool.destroy());
  t.equal(pool.threads.length, 0, 'no thread before the first task');
  const r = await runTask<Answer>(pool, 'warm-up');
  t.equal(r.startUp, null);
});
