/**
 * Pool-thread warm-up (worker thread): runs the crawler's HTML extraction and the index's text
 * analysis and segment build over built-in fixture pages, so that V8 has compiled and optimised
 * that code before the thread's first real crawl or build.
 *
 * Why: until V8 has optimised it, extraction and segment building run several times slower per
 * page, for about the first hundred pages of a thread. A long-running server's threads are warm
 * anyway; a crawl that starts soon after start-up (or on replaced threads) would pay that on its
 * first pages.
 *
 * Used two ways:
 * - at thread start, when the pool was created with `warmUp` (src/core/pool.ts): the dispatcher
 *   (workers/index.ts) runs {@link warmUpThread} before the thread takes its first task;
 * - as the pool task `warm-up`, which answers this thread's start-up {@link WarmUpReport}
 *   (null when it did not warm up), so callers and tests can see that it happened.
 *
 * Best effort: a failure (e.g. no writable temp dir for the fixture segment) only means a
 * colder thread, never a failed one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { pageDoc, htmlPage } from '../src/fetch/index.js';
import { mergeSegments, writeSegment, type SegmentEntry } from '../src/index/index.js';
import type { PageDoc } from '../src/core/index.js';

/** What one warm-up ran. */
export interface WarmUpReport {
  /** Fixture pages extracted. */
  pages: number;
  /** Links the extractor found on them (a sanity check that extraction ran). */
  links: number;
  /** Documents written into the fixture segments (then merged once). */
  segmentDocs: number;
  /** Wall time, ms. */
  ms: number;
}

/** Pages extracted per warm-up; about where extraction reached its warm per-page cost. */
export const WARM_UP_PAGES = 120;
/** Documents per fixture segment (two are built, then merged). */
const SEGMENT_DOCS = 60;

// A vocabulary to vary the fixture's words: analysis and postings should see many distinct
// terms (stems, compounds, numbers), as on real pages, not one page's words a hundred times.
const WORDS = (
  'the index stores every page of a site and answers queries ranked by relevance; a crawler ' +
  'fetches pages, follows links breadth first and extracts titles, headings and main content. ' +
  'configuration parameters such as max_connections, shared_buffers and work_mem control memory; ' +
  'functions like array_agg(integer) or to_tsvector(regconfig, text) return values quickly. ' +
  'replication, vacuuming, indexes (B-tree, GiST, GIN), transactions and isolation levels are ' +
  'described with examples: SELECT count(*) FROM pages WHERE status = 200 ORDER BY url; 42 rows.'
).split(/\s+/);

function sentence(i: number, n: number): string {
  const out: string[] = [];
  for (let k = 0; k < n; k++) out.push(WORDS[(i * 7 + k * 13) % WORDS.length]!);
  return out.join(' ');
}

/**
 * Fixture page `i`: a documentation page shaped like the ones sites usually have (navigation
 * tables, a table of contents, nested sections with h2–h3, paragraphs with inline code and
 * entities, a program listing, tables, lists, a footer; XHTML or HTML5), ≈10 KB, words and links
 * varying with `i` (every page links to pages no earlier one did).
 */
export function fixturePage(i: number): string {
  // Hrefs new to every page, as on a crawl's first pages: link resolution parses each one.
  const link = (k: number, text: string) => `<a href="${k % 3 ? '' : '../'}chapter-${i}-${k}.html#sect-${k}" title="${text}">${text}</a>`;
  const para = (k: number) =>
    `<a id="idx-${i}-${k}" class="indexterm"></a><p>\n  ${sentence(i + k, 18)} <code class="function">fn_${k}(integer)</code> &amp; <em>${sentence(i + k + 1, 6)}</em>` +
    ` <span class="emphasis"><strong>${sentence(i + k + 2, 6)}</strong></span> &lt;tag&gt;&nbsp;&#8212; &#x2014; ${link(k, sentence(k, 3))}.\n </p>`;
  const sect = (k: number) =>
    `<div class="sect2" id="sect-${k}"><div class="titlepage"><h3 class="title">${i}.${k}. ${sentence(i + k, 4)}</h3></div>` +
    `${para(k)}${para(k + 1)}<pre class="programlisting">\nSELECT ${sentence(k, 3).replace(/[^a-z ]/g, '')}\n  FROM t${k} WHERE id = ${i};\n</pre>` +
    `<div class="table"><table border="1"><colgroup><col /><col /></colgroup><thead><tr><th>Name</th><th>Description</th></tr></thead><tbody>` +
    [0, 1, 2].map((r) => `<tr><td><code class="literal">col_${r}</code></td><td>${sentence(i + r, 6)}</td></tr>`).join('') +
    `</tbody></table></div><ul class="itemizedlist"><li><p>${sentence(k, 8)}</p></li><li><p>${link(k + 2, sentence(k + 2, 2))}</p></li></ul>` +
    `<dl class="variablelist"><dt><span class="term"><code>opt_${k}</code></span></dt><dd><p>${sentence(i + k + 3, 10)}</p></dd></dl></div>`;
  const nav = `<table width="100%" summary="Navigation"><tr><td>${link(1, 'Prev')}</td><td>${link(2, 'Up')}</td><th>${sentence(i, 3)}</th><td><a href="index.html">Home</a></td><td>${link(3, 'Next')}</td></tr></table>`;
  return (
    // Half XHTML with an XML declaration, half HTML5 (the two prologues sites usually have).
    (i % 2 ? '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">' : '<!DOCTYPE html>') +
    `<html lang="en"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><meta name="generator" content="fixture" />` +
    `<title>${i}. ${sentence(i, 5)}</title><meta name="description" content="${sentence(i + 3, 10)}" />` +
    `<meta property="og:image" content="/img/${i}.png" /><link rel="stylesheet" href="style.css" /><link rel="next" href="chapter-${i + 1}.html" />` +
    `<script>var page = ${i};</script><style>body { margin: 0 }</style></head>` +
    `<body><div class="navheader">${nav}<hr /></div><!-- content --><div class="sect1" id="chapter-${i}">` +
    `<div class="titlepage"><h2 class="title">${i}. ${sentence(i, 5)}</h2></div>` +
    `<div class="toc"><dl class="toc">${[0, 1, 2, 3].map((k) => `<dt>${link(k, `${i}.${k}. ${sentence(i + k, 4)}`)}</dt>`).join('')}</dl></div>` +
    `${para(0)}${[0, 1, 2, 3].map(sect).join('')}</div><div class="navfooter"><hr />${nav}</div></body></html>`
  );
}

/**
 * Runs the warm-up once in the calling thread (synchronous CPU work, under a second on a cold
 * thread): extracts {@link WARM_UP_PAGES} fixture pages, writes two fixture segments of their
 * documents into a temp dir, merges them, and removes the dir. Throws only on a bug in the
 * extraction itself; temp-dir problems skip the segment part.
 */
export function runWarmUp(): WarmUpReport {
  const t0 = performance.now();
  const docs: PageDoc[] = [];
  let links = 0;
  for (let i = 0; i < WARM_UP_PAGES; i++) {
    // `.invalid` (RFC 2606): these URLs can never be fetched, and never collide with a crawl's.
    const url = `http://warm-up.invalid/docs/${i % 7}/chapter-${i}.html`;
    const page = htmlPage({ kind: 'response', url, status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: Buffer.from(fixturePage(i)), hops: [] }, null);
    links += page.links.length;
    // Some error entries, as a crawl writes them, so the segment build sees both kinds.
    docs.push({ ...pageDoc(page, url, 'crawler'), status: i % 10 === 9 ? 404 : 200 });
  }
  let segmentDocs = 0;
  let dir: string | null = null;
  try {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sitesift-warm-up-'));
    const entries = (from: number): SegmentEntry[] =>
      docs.slice(from, from + SEGMENT_DOCS).map((doc, k) => ({ seq: from + k + 1, at: 0, firstAt: 0, doc }));
    const a = writeSegment(path.join(dir, 'a.db'), entries(0), [], { defaultLanguage: 'en' });
    const b = writeSegment(path.join(dir, 'b.db'), entries(SEGMENT_DOCS), [], { defaultLanguage: 'en' });
    segmentDocs = a.docCount + b.docCount;
    const live = (n: number) => Array.from({ length: n }, (_, k) => k).filter((k) => k % 5 !== 0);
    mergeSegments(path.join(dir, 'ab.db'), [{ path: path.join(dir, 'a.db'), liveIds: live(a.docCount) }, { path: path.join(dir, 'b.db'), liveIds: live(b.docCount) }], []);
  } catch {
    // No writable temp dir (or a full disk): the extraction part still warmed the thread.
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  return { pages: WARM_UP_PAGES, links, segmentDocs, ms: performance.now() - t0 };
}

let startUp: WarmUpReport | null = null;

/**
 * The start-up warm-up of a pool thread (called once by the dispatcher before the thread takes
 * tasks). Never throws: a failed warm-up leaves a cold but working thread.
 */
export function warmUpThread(): WarmUpReport | null {
  try {
    startUp = runWarmUp();
  } catch {
    startUp = null;
  }
  return startUp;
}

/** Pool task `warm-up`: this thread's id and start-up report (null: the thread did not warm up). */
export default function warmUpTask(): { threadId: number; startUp: WarmUpReport | null } {
  return { threadId, startUp };
}
