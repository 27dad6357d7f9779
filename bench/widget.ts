/**
 * `make bench-widget`: the search widget in headless Chromium against a local server (the
 * built server, as `make start` runs it) holding the PostgreSQL manual (or, without the shared
 * corpus, the browser tests' small shop):
 *
 * - bytes over the wire when an owner's page loads the widget the first time (widget.js,
 *   compressed, with headers) and again within its cache lifetime;
 * - time from a keystroke to painted suggestions: from the `keydown` to the first animation
 *   frame after the listbox shows the answer for the typed text (`data-query`), for
 *   BENCH_KEYS keystrokes (default 200) typed one after the other, each waiting for its
 *   suggestions; p50, p95 and max. It includes the widget's debounce (120 ms by default), so
 *   the figure a visitor sees is debounce + request + render;
 * - long tasks (> 50 ms) on the page during the whole run (PerformanceObserver `longtask`).
 *
 * Writes its section of bench/README.md unless BENCH_REPORT=0 or BENCH_KEYS is set.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { ensureWebBuild } from '../src/web/build.js';
import { hostPage, launchBrowser, startPages } from '../test/helpers/browser.js';
import { DOCS } from '../test/web/fixture.js';
import { loadPgDocs, SHARED } from './lib/corpus.js';
import { BENCH_README, replaceSection, runHeader } from './lib/report.js';
import { createProject, indexDocs, startBenchServer, toPageDocs, type PageBody } from './lib/server.js';

const KEYS = Number(process.env.BENCH_KEYS ?? 200);
const REPORT = process.env.BENCH_REPORT !== '0' && process.env.BENCH_KEYS === undefined;
const SITE = 'docs';

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/** Words to type: lower-cased title words of the corpus, 3–9 letters, deterministic. */
function wordsOf(titles: string[]): string[] {
  const words = new Set<string>();
  for (const t of titles) for (const w of t.toLowerCase().split(/[^a-z]+/)) if (w.length >= 3 && w.length <= 9) words.add(w);
  return [...words];
}

async function main(): Promise<void> {
  const manifest = await ensureWebBuild();
  const usePg = existsSync(path.join(SHARED, 'corpus'));
  const corpus: PageBody[] = usePg
    ? toPageDocs(loadPgDocs())
    : DOCS.map((d) => ({ url: 'https://shop.example' + d.path, title: d.title, content: d.content, headings: [], contentGroup: d.group, imageUrl: '', appendPageContent: false }));
  const server = await startBenchServer();
  const host = await startPages({});
  const browser = await launchBrowser();
  try {
    await createProject(server, SITE);
    await indexDocs(server, SITE, corpus);
    host.pages.set('/', { body: hostPage(server.url, SITE) });
    console.log(`server: ${server.mode}, ${corpus.length} pages (${usePg ? 'PostgreSQL manual' : 'test shop'}), widget.js ${manifest.assets['widget.js'].gzipBytes} B gzip`);

    const page = await browser.newPage();
    const transfers: Array<{ url: string; body: number; headers: number; status: number }> = [];
    page.on('requestfinished', async (r) => {
      if (!r.url().startsWith(server.url)) return;
      const sizes = await r.sizes();
      const res = await r.response();
      transfers.push({ url: r.url(), body: sizes.responseBodySize, headers: sizes.responseHeadersSize, status: res?.status() ?? 0 });
    });
    await page.addInitScript(() => {
      const w = window as unknown as { __long: number[]; __longAt: number[] };
      w.__long = [];
      w.__longAt = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          w.__long.push(e.duration);
          w.__longAt.push(e.startTime);
        }
      }).observe({ type: 'longtask', buffered: true });
    });
    await page.goto(host.url + '/');
    const input = page.getByRole('combobox', { name: 'Search this site' });
    await input.waitFor();
    const first = transfers.filter((x) => new URL(x.url).pathname === '/widget.js');
    const firstBytes = first.reduce((n, x) => n + x.body + x.headers, 0);
    transfers.length = 0;
    await page.goto(host.url + '/');
    await input.waitFor();
    const again = transfers.filter((x) => new URL(x.url).pathname === '/widget.js');
    const againBytes = again.reduce((n, x) => n + x.body + x.headers, 0);

    // Timing hooks in the page: keydown time, and the frame after the matching answer shows.
    await page.evaluate(() => {
      const w = window as unknown as { __down: number; __painted: Record<string, number> };
      w.__painted = {};
      document.addEventListener('keydown', () => (w.__down = performance.now()), true);
      const root = document.querySelector('[data-sitesift]')!.shadowRoot!;
      new MutationObserver(() => {
        const q = root.querySelector('[role=listbox]')?.getAttribute('data-query');
        if (q && w.__painted[q] === undefined) {
          const down = w.__down;
          requestAnimationFrame(() => (w.__painted[q] = performance.now() - down));
        }
      }).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-query'] });
    });

    const words = wordsOf(corpus.map((d) => d.title));
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const samples: number[] = [];
    let missed = 0;
    while (samples.length + missed < KEYS) {
      const word = words[Math.floor(rnd() * words.length)]!;
      await input.fill('');
      await page.evaluate(() => ((window as unknown as { __painted: Record<string, number> }).__painted = {}));
      for (let i = 0; i < word.length && samples.length + missed < KEYS; i++) {
        const typed = word.slice(0, i + 1);
        await page.keyboard.press(word[i]!);
        const ms = await page
          .waitForFunction((q) => (window as unknown as { __painted: Record<string, number> }).__painted[q], typed, { timeout: 5000, polling: 5 })
          .then((h) => h.jsonValue() as Promise<number>)
          .catch(() => null);
        if (ms === null) missed++;
        else samples.push(ms);
      }
    }
    // Long tasks from the moment widget.js was requested on; earlier ones are the browser's own
    // navigation work (unloading the previous page, parsing this one), counted apart.
    const tasks = await page.evaluate(() => {
      const w = window as unknown as { __long: number[]; __longAt: number[] };
      const script = performance.getEntriesByType('resource').find((r) => r.name.includes('/widget.js'));
      const from = script ? script.startTime : 0;
      return { widget: w.__long.filter((_, i) => w.__longAt[i]! + w.__long[i]! >= from), before: w.__long.filter((_, i) => w.__longAt[i]! + w.__long[i]! < from) };
    });
    const longTasks = tasks.widget;
    const widgetGzip = gzipSync(readFileSync(path.resolve('dist/web/widget.js')), { level: 9 }).length;

    const p50 = quantile(samples, 0.5);
    const p95 = quantile(samples, 0.95);
    const max = Math.max(...samples);
    const lines = [
      `widget.js first load: ${firstBytes} B over the wire (${first.map((x) => `${x.status}, body ${x.body} B, headers ${x.headers} B`).join('; ')}); budget 25,600 B gzip, file ${widgetGzip} B gzip`,
      `widget.js again within max-age: ${againBytes} B${againBytes === 0 ? ' (from the browser cache)' : ` (${again.map((x) => x.status).join(', ')})`}`,
      `keystroke → painted suggestions over ${samples.length} keystrokes: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${max.toFixed(1)} ms (debounce 120 ms included)${missed ? `; ${missed} keystrokes without an answer in 5 s` : ''}`,
      `long tasks > 50 ms from widget.js on: ${longTasks.length}${longTasks.length ? ` (longest ${Math.max(...longTasks).toFixed(0)} ms)` : ''}; before it (the page's own navigation): ${tasks.before.length}`,
    ];
    for (const l of lines) console.log(l);
    console.log(JSON.stringify({ bench: 'widget', firstLoadBytes: firstBytes, repeatLoadBytes: againBytes, widgetGzip, keys: samples.length, missed, p50, p95, max, longTasks: longTasks.length, longTasksBefore: tasks.before.length }));

    if (REPORT) {
      replaceSection(
        BENCH_README,
        'widget',
        [
          runHeader(),
          '',
          `${corpus.length.toLocaleString('en')} pages (${usePg ? 'the PostgreSQL manual' : 'the test shop'}), server ${server.mode === 'dist' ? 'built (dist/)' : 'through tsx'}, Chromium ${browser.context.browser()?.version() ?? ''} headless.`,
          '',
          '| | |',
          '|---|---:|',
          `| widget.js on first load, over the wire (gzip body + headers) | ${firstBytes.toLocaleString('en')} B |`,
          `| widget.js again within its max-age | ${againBytes.toLocaleString('en')} B |`,
          `| keystroke → painted suggestions, p50 (${samples.length} keystrokes) | ${p50.toFixed(1)} ms |`,
          `| keystroke → painted suggestions, p95 | ${p95.toFixed(1)} ms |`,
          `| keystroke → painted suggestions, max | ${max.toFixed(1)} ms |`,
          `| long tasks > 50 ms from widget.js on (typing included) | ${longTasks.length} |`,
          `| long tasks > 50 ms before widget.js (the page's own navigation) | ${tasks.before.length} |`,
        ].join('\n'),
      );
      console.log('bench/README.md: widget section written');
    }
  } finally {
    await browser.close();
    await host.close();
    await server.stop();
  }
}

await main();
