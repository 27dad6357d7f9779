/**
 * HTML extraction. Pure; runs in the pool worker.
 *
 * Parsing is htmlparser2 (a forgiving tokenizer that builds a domhandler tree without the HTML5
 * tree-construction fix-ups; about 4× faster than parse5 on real pages, which made parsing the
 * largest CPU cost of a crawl). The default path (no Control Panel selectors) walks that tree
 * directly; CSS selectors of the Control Panel rules (`contentExtraction`, `dataPoints`,
 * `resultGroups`) run through cheerio on the same tree, created only when a rule needs it.
 *
 * Produces the page's title, headings, main text, image, description, language, links,
 * robots directives and canonical URL, and — when Control Panel rules are given — its data
 * points, filter values and result group (seed 1.5: URL-only pages only).
 */
// cheerio/slim: the selector API without parse5 and undici (a third of the load time per thread).
import * as cheerio from 'cheerio/slim';
import type { AnyNode, Document, Element } from 'domhandler';
import { DomUtils, Parser, parseDocument } from 'htmlparser2';
import type { DataPoint, DataPointRule, ExtractionRule, FilterDefinition, FilterValue, ResultGroupRule } from '../../types.js';
import { resolveLink } from '../url.js';
import { matchesPattern } from '../patterns.js';

/**
 * Parses an HTML page into a domhandler tree (htmlparser2: entities decoded, tag and attribute
 * names lower-cased, `<script>`/`<style>`/`<title>` contents read as raw text). Unlike parse5
 * it does not insert missing `<html>`/`<body>`/`<tbody>` elements.
 */
export function parseHtml(html: string): Document {
  return parseDocument(html);
}

/** Control Panel rules applied to URL-only pages; absent for JSON pages. */
export interface PageRules {
  contentExtraction: ExtractionRule[];
  dataPoints: DataPointRule[];
  resultGroups: ResultGroupRule[];
  filters: FilterDefinition[];
}

/** What the HTML extractor found on one page. */
export interface HtmlExtract {
  title: string;
  headings: string[];
  content: string;
  imageUrl: string | null;
  description: string | undefined;
  language: string | null;
  links: string[];
  canonical: string | null;
  noindex: boolean;
  nofollow: boolean;
  contentGroup: string;
  dataPoints: DataPoint[];
  filters: FilterValue[];
  /** YouTube watch pages: the page metadata describes a video. */
  youtube: boolean;
}

/** Defaults of SPEC §7: main content region and what is never content. */
export const DEFAULT_CONTENT_INCLUDE = ['main', 'article', '[role=main]', 'body'];
export const DEFAULT_CONTENT_EXCLUDE = ['nav', 'header', 'footer', 'script', 'style', 'noscript', 'template', 'svg', 'iframe', 'form', 'aside[role=navigation]'];

const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section',
  'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul', 'title', 'caption', 'summary', 'details',
]);

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Elements that are never content (SPEC §7 defaults), as a tag-name test instead of a selector. */
const DEFAULT_EXCLUDED_TAGS = new Set(['nav', 'header', 'footer', 'script', 'style', 'noscript', 'template', 'svg', 'iframe', 'form']);

function excludedByDefault(el: Element): boolean {
  return DEFAULT_EXCLUDED_TAGS.has(el.name) || (el.name === 'aside' && el.attribs.role === 'navigation');
}

const HEADING_TAGS = new Set(['h1', 'h2', 'h3']);

/**
 * The text of the content region (`roots`) with a line break at block boundaries, and the texts
 * of its h1–h3 headings in document order, skipping excluded elements below the roots. One walk,
 * no DOM changes (removing excluded elements first cost a selector match over every element).
 */
function regionText(roots: AnyNode[], excluded: (el: Element) => boolean): { content: string; headings: Array<{ tag: string; text: string }> } {
  const out: string[] = [];
  const headings: Array<{ tag: string; text: string }> = [];
  // Text parts of the headings being walked (a heading inside a heading is rare but legal).
  const open: string[][] = [];
  const walk = (n: AnyNode, isRoot: boolean): void => {
    if (n.type === 'text') {
      const d = (n as unknown as { data: string }).data;
      out.push(d);
      for (const h of open) h.push(d);
    } else if (n.type === 'tag') {
      const el = n as Element;
      if (!isRoot && excluded(el)) return;
      const block = BLOCK.has(el.name);
      const heading = !isRoot && HEADING_TAGS.has(el.name);
      let slot = -1;
      if (heading) {
        slot = headings.push({ tag: el.name, text: '' }) - 1;
        open.push([]);
      }
      if (block) out.push('\n');
      for (const c of el.children) walk(c, false);
      if (block) out.push('\n');
      if (heading) headings[slot]!.text = open.pop()!.join('');
    } else if (n.type === 'root' || n.type === 'cdata') {
      // script/style elements (their own node types) and comments are never text.
      for (const c of (n as unknown as { children: AnyNode[] }).children) walk(c, false);
    }
  };
  for (const n of roots) walk(n, true);
  return { content: linesOf(out.join('')), headings };
}

/**
 * Every new line (block boundary or one in the source) ends a line; other white space runs
 * become one space; lines are trimmed and empty ones dropped. Two passes over the whole text
 * instead of a split, a replace per line and a join (this was a third of the extraction time).
 */
export function linesOf(text: string): string {
  return text
    .replace(/\s*\n\s*/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .trim();
}

/** Text content of an element (all descendant text, no separators), as cheerio's `.text()`. */
function textOf(el: AnyNode): string {
  return DomUtils.textContent(el);
}

// Resolved links by base directory and href, per thread: the pages of a site link to the same
// pages with the same relative hrefs (navigation, tables of contents), and URL parsing was a
// sixth of the extraction time. Bounded: cleared when full.
const LINK_CACHE_MAX = 50_000;
const linkCache = new Map<string, string | null>();

/**
 * {@link resolveLink} with a cache. The result of a reference that is not query-only (`?x`)
 * depends only on the base up to its last `/` (RFC 3986 §5.2.2), which is the cache key.
 */
function cachedLink(href: string, base: string, baseDir = linkBaseDir(base)): string | null {
  const h = href.trim();
  if (!h || h.startsWith('#') || h.startsWith('?')) return resolveLink(h, base);
  const key = baseDir + h;
  let link = linkCache.get(key);
  if (link === undefined) {
    link = resolveLink(h, base);
    if (linkCache.size >= LINK_CACHE_MAX) linkCache.clear();
    linkCache.set(key, link);
  }
  return link;
}

/** The cache-key prefix of a base URL for {@link cachedLink}: up to its path's last `/`. */
function linkBaseDir(base: string): string {
  const q = base.search(/[?#]/);
  const path = q < 0 ? base : base.slice(0, q);
  return path.slice(0, path.lastIndexOf('/') + 1) + '\n';
}

function parseRobots(value: string | undefined): { noindex: boolean; nofollow: boolean } {
  const v = (value ?? '').toLowerCase();
  return { noindex: /\b(noindex|none)\b/.test(v), nofollow: /\b(nofollow|none)\b/.test(v) };
}

/**
 * Parses an X-Robots-Tag header value. Directives scoped to another bot (`googlebot: noindex`)
 * are ignored; unscoped ones and ones for `sitesift` apply.
 */
export function parseXRobotsTag(header: string | undefined): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  for (const part of (header ?? '').split(/\s*,\s*(?=[a-z-]+\s*:)|\n/i)) {
    const m = part.match(/^\s*([a-z0-9_-]+)\s*:\s*(.*)$/i);
    let directives = part;
    if (m && !/^(noindex|nofollow|none|unavailable_after|max-snippet|max-image-preview|max-video-preview)$/i.test(m[1])) {
      if (!/^sitesift$/i.test(m[1])) continue;
      directives = m[2];
    }
    const r = parseRobots(directives);
    noindex ||= r.noindex;
    nofollow ||= r.nofollow;
  }
  return { noindex, nofollow };
}

/** Parses a `Link` response header and returns the `rel=canonical` target, if any. */
export function canonicalFromLinkHeader(header: string | undefined, base: string): string | null {
  if (!header) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = part.match(/<([^>]*)>(.*)$/);
    if (m && /rel\s*=\s*"?canonical"?/i.test(m[2])) return resolveLink(m[1], base);
  }
  return null;
}

/** ISO 639-1 code from a `lang` attribute (`en-US` → `en`), or null. */
export function languageCode(lang: string | undefined): string | null {
  const m = (lang ?? '').trim().toLowerCase().match(/^([a-z]{2})(?:[-_]|$)/);
  return m ? m[1] : null;
}

/**
 * Removes a leading outline number from a heading: `1.2.`, `A.1.`, `F.1.`, `Chapter 5.`,
 * `Appendix L.`, `Part III.`. A bare word with a dot ("U.S. policy") is kept.
 */
export function stripSectionNumber(heading: string): string {
  const m = heading.match(/^(?:(?:chapter|appendix|part|section)\s+)?(?:[0-9]+|[A-Z]|[IVXLC]+)(?:\.[0-9]+)*\.\s+(?=\S)/i);
  if (!m) return heading;
  return heading.slice(m[0].length);
}

/** Whether a URL is a YouTube watch page (youtube.com/watch?v=, youtu.be/<id>, /shorts/). */
export function isYouTubeWatchUrl(url: string): boolean {
  try {
    const u = new URL(url);
    const host = u.hostname.replace(/^(www|m|music)\./, '');
    if (host === 'youtu.be') return u.pathname.length > 1;
    return host === 'youtube.com' && ((u.pathname === '/watch' && u.searchParams.has('v')) || u.pathname.startsWith('/shorts/'));
  } catch {
    return false;
  }
}

function lookupPath(obj: unknown, path: string[]): unknown[] {
  if (path.length === 0) return [obj];
  if (Array.isArray(obj)) return obj.flatMap((o) => lookupPath(o, path));
  if (obj && typeof obj === 'object') {
    const v = (obj as Record<string, unknown>)[path[0]];
    return v === undefined ? [] : lookupPath(v, path.slice(1));
  }
  return [];
}

function jsonLdObjects($: cheerio.CheerioAPI): unknown[] {
  const out: unknown[] = [];
  $('script[type="application/ld+json"]').each((_i, el) => {
    try {
      const data = JSON.parse($(el).text()) as unknown;
      const push = (d: unknown): void => {
        if (Array.isArray(d)) d.forEach(push);
        else if (d && typeof d === 'object') {
          out.push(d);
          const g = (d as Record<string, unknown>)['@graph'];
          if (Array.isArray(g)) g.forEach(push);
        }
      };
      push(data);
    } catch {
      // Broken JSON-LD is common in the wild; it just yields no data points.
    }
  });
  return out;
}

/**
 * Coerces a raw data point string to its declared type; null when it does not fit (the data
 * point is then left out rather than stored wrong).
 */
export function coerceDataPoint(raw: string, type: DataPointRule['type']): string | null {
  const v = collapse(raw);
  if (!v) return null;
  switch (type) {
    case 'text':
      return v;
    case 'number': {
      // "1.299,00 €" and "$1,299.00" both occur; take the last separator as the decimal one.
      const m = v.match(/-?[\d.,\s]*\d/);
      if (!m) return null;
      let n = m[0].replace(/\s/g, '');
      const lastDot = n.lastIndexOf('.');
      const lastComma = n.lastIndexOf(',');
      if (lastComma > lastDot) n = n.replace(/\./g, '').replace(',', '.');
      else n = n.replace(/,/g, '');
      const num = Number(n);
      return Number.isFinite(num) ? String(num) : null;
    }
    case 'date': {
      const t = Date.parse(v);
      return Number.isFinite(t) ? new Date(t).toISOString() : null;
    }
    case 'boolean': {
      if (/^(true|yes|1|on)$/i.test(v)) return 'true';
      if (/^(false|no|0|off)$/i.test(v)) return 'false';
      return null;
    }
  }
}

function dataPointValues($: cheerio.CheerioAPI, rule: DataPointRule, ld: () => unknown[]): string[] {
  const raw: string[] = [];
  if (rule.selector) {
    $(rule.selector).each((_i, el) => {
      const v = rule.attribute ? $(el).attr(rule.attribute) : $(el).text();
      if (v !== undefined) raw.push(v);
    });
  } else if (rule.meta) {
    const name = rule.meta;
    $('meta').each((_i, el) => {
      const e = $(el);
      if (e.attr('name') === name || e.attr('property') === name || e.attr('itemprop') === name) {
        const v = e.attr(rule.attribute ?? 'content');
        if (v !== undefined) raw.push(v);
      }
    });
  } else if (rule.jsonLd) {
    const path = rule.jsonLd.split('.').filter(Boolean);
    for (const obj of ld()) {
      for (const v of lookupPath(obj, path)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') raw.push(String(v));
      }
      if (raw.length) break;
    }
  }
  return raw.map((r) => coerceDataPoint(r, rule.type)).filter((v): v is string => v !== null);
}

function resolveGroup($$: () => cheerio.CheerioAPI, url: string, groups: ResultGroupRule[]): string {
  for (const g of groups) {
    if (g.urlPattern && matchesPattern(g.urlPattern, url)) return g.name;
    if (g.selector) {
      try {
        if ($$()(g.selector).length > 0) return g.name;
      } catch {
        // An invalid selector matches nothing.
      }
    }
  }
  return '';
}

function safeSelect($: cheerio.CheerioAPI, sel: string): cheerio.Cheerio<AnyNode> | null {
  try {
    return $(sel);
  } catch {
    return null;
  }
}

/** What one pass over every element collects (each `$(selector)` would be a full traversal). */
/** What the tree walk and the streaming scan both record from tag attributes alone. */
type AttributeScan = Pick<PageScan, 'metas' | 'robots' | 'canonicalHref' | 'imageSrcHref' | 'anchors' | 'baseHref'>;

/**
 * Records what `meta`, `link`, `a`/`area` and `base` tags say (first value wins for metas,
 * canonical, image_src and base; every link is kept). Other tags are ignored. Shared by the tree
 * extractor and the streaming one so the two cannot drift apart here.
 */
function recordTagAttributes(scan: AttributeScan, name: string, a: Record<string, string | undefined>): void {
  switch (name) {
    case 'meta': {
      const content = a.content;
      if (content !== undefined) {
        for (const key of [a.name, a.property, a.itemprop]) {
          if (key && !scan.metas.has(key.toLowerCase())) scan.metas.set(key.toLowerCase(), content);
        }
        if (a.name && /^(robots|sitesift)$/i.test(a.name)) scan.robots.push(content);
      }
      break;
    }
    case 'link': {
      const rel = (a.rel ?? '').toLowerCase().split(/\s+/);
      if (rel.includes('canonical') && scan.canonicalHref === undefined) scan.canonicalHref = a.href;
      if (rel.includes('image_src') && scan.imageSrcHref === undefined) scan.imageSrcHref = a.href;
      break;
    }
    case 'a':
    case 'area':
      if (a.href !== undefined) scan.anchors.push({ href: a.href, rel: a.rel ?? '' });
      break;
    case 'base':
      if (a.href !== undefined && scan.baseHref === undefined) scan.baseHref = a.href;
      break;
  }
}

interface PageScan {
  metas: Map<string, string>;
  robots: string[];
  baseHref?: string;
  canonicalHref?: string;
  imageSrcHref?: string;
  title?: Element;
  h1?: Element;
  lang?: string;
  anchors: Array<{ href: string; rel: string }>;
  main?: Element;
  article?: Element;
  roleMain?: Element;
  body?: Element;
}

function scanPage(root: AnyNode): PageScan {
  const scan: PageScan = { metas: new Map(), robots: [], anchors: [] };
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'tag' || n.type === 'script' || n.type === 'style') {
      const el = n as Element;
      const a = el.attribs;
      recordTagAttributes(scan, el.name, a);
      switch (el.name) {
        case 'title':
          scan.title ??= el;
          break;
        case 'h1':
          scan.h1 ??= el;
          break;
        case 'html':
          scan.lang ??= a.lang;
          break;
        case 'main':
          scan.main ??= el;
          break;
        case 'article':
          scan.article ??= el;
          break;
        case 'body':
          scan.body ??= el;
          break;
      }
      if (a.role === 'main') scan.roleMain ??= el;
      // svg <title> and friends are not the page title; nothing below script/style is markup.
      if (el.name === 'svg' || el.type !== 'tag') continue;
    }
    const children = (n as unknown as { children?: AnyNode[] }).children;
    // Reverse push keeps document order for the "first" element of each kind.
    if (children) for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return scan;
}

/** The content region of a parsed page: the first `contentInclude` match, else the defaults. */
function domRegion(
  doc: Document,
  scan: PageScan,
  rule: ExtractionRule | undefined,
  $$: () => cheerio.CheerioAPI,
): { content: string; headings: Array<{ tag: string; text: string }> } {
  let roots: AnyNode[] | null = null;
  if (rule?.contentInclude?.length) {
    for (const sel of rule.contentInclude) {
      const r = safeSelect($$(), sel);
      if (r && r.length) {
        roots = r.toArray();
        break;
      }
    }
  }
  let excluded = excludedByDefault;
  if (!roots) {
    const el = scan.main ?? scan.article ?? scan.roleMain ?? scan.body;
    roots = [el ?? doc];
    // No <body> tag: htmlparser2 (unlike parse5) does not split the page into head and body,
    // so the head's <title> would be read as content.
    if (!el) excluded = (e) => excludedByDefault(e) || e.name === 'head' || e.name === 'title';
  }
  if (rule?.contentExclude?.length) {
    const $ = $$();
    const extra = new Set<AnyNode>();
    for (const sel of rule.contentExclude) {
      try {
        $(roots).find(sel).each((_i, el) => void extra.add(el));
      } catch {
        // Invalid exclude selectors are ignored.
      }
    }
    const base = excluded;
    excluded = (el) => base(el) || extra.has(el);
  }
  return regionText(roots, excluded);
}

/** Whether a rule set needs CSS selectors (then the page is parsed into a tree for cheerio). */
function needsSelectors(rules: PageRules | null): boolean {
  if (!rules) return false;
  return (
    rules.dataPoints.length > 0 ||
    rules.resultGroups.some((g) => !!g.selector) ||
    rules.contentExtraction.some((r) => !!(r.title || r.image || r.contentInclude?.length || r.contentExclude?.length))
  );
}

/** What {@link streamPage} found: the scan's fields with texts instead of elements. */
interface StreamScan extends Omit<PageScan, 'title' | 'h1' | 'main' | 'article' | 'roleMain' | 'body'> {
  titleText?: string;
  h1Text?: string;
  region: { content: string; headings: Array<{ tag: string; text: string }> };
}

/** Text and headings of one candidate content region while the page streams past. */
class RegionCollector {
  /** Element depth of the root (0: the document), -1 before it opened. */
  root = -1;
  done = false;
  /** Depth of the excluded element being skipped, 0 when none. */
  skip = 0;
  readonly out: string[] = [];
  readonly headings: Array<{ tag: string; text: string }> = [];
  readonly open: Array<{ depth: number; slot: number; parts: string[] }> = [];
  constructor(readonly excluded: (name: string, attribs: Record<string, string>) => boolean) {}
  get active(): boolean {
    return this.root >= 0 && !this.done;
  }
}

const isExcludedTag = (name: string, attribs: Record<string, string>): boolean =>
  DEFAULT_EXCLUDED_TAGS.has(name) || (name === 'aside' && attribs.role === 'navigation');

// Without a <body>, the document minus its head (see extractHtml).
const isExcludedTagOrHead = (name: string, attribs: Record<string, string>): boolean =>
  isExcludedTag(name, attribs) || name === 'head' || name === 'title';

/** The first `<title>` or `<h1>` whose text is being collected (all its text, like textContent). */
interface Capture {
  depth: number;
  parts: string[];
  field: 'titleText' | 'h1Text';
}

/**
 * htmlparser2's event handler of {@link streamPage}: per-page state in fields, the handlers on
 * the prototype. Why a class: handlers written as closures inside streamPage were new functions
 * on every page, and a pool thread's major GC (segment builds cause several per crawl) dropped
 * their optimized code once the page that made them was done, so V8 recompiled all three every
 * few hundred pages (seen with `--trace-opt` during a crawl: ≈0.3 s of background compilation
 * per crawl, and each new set ran unoptimized until hot again). Prototype methods are one
 * function each per thread, optimized once.
 */
class StreamHandler {
  readonly scan: StreamScan = { metas: new Map(), robots: [], anchors: [], region: { content: '', headings: [] } };
  readonly main = new RegionCollector(isExcludedTag);
  readonly article = new RegionCollector(isExcludedTag);
  readonly roleMain = new RegionCollector(isExcludedTag);
  readonly body = new RegionCollector(isExcludedTag);
  readonly whole = new RegionCollector(isExcludedTagOrHead);
  readonly collectors = [this.main, this.article, this.roleMain, this.body, this.whole];
  depth = 0;
  // Inside <svg> nothing is scanned (its <title> is not the page title).
  svgDepth = 0;
  capture: Capture[] = [];

  constructor() {
    this.whole.root = 0;
  }

  /**
   * A candidate that opened is preferred to every candidate after it in `collectors`, so those
   * stop collecting (most pages have a <body>: without this the text was collected twice).
   */
  private opened(c: RegionCollector): void {
    c.root = this.depth;
    for (let i = this.collectors.indexOf(c) + 1; i < this.collectors.length; i++) this.collectors[i]!.done = true;
  }

  onopentag(name: string, a: Record<string, string>): void {
    const depth = ++this.depth;
    const scan = this.scan;
    if (this.svgDepth === 0) {
      recordTagAttributes(scan, name, a);
      switch (name) {
        case 'title':
          if (scan.titleText === undefined) {
            scan.titleText = '';
            this.capture.push({ depth, parts: [], field: 'titleText' });
          }
          break;
        case 'h1':
          if (scan.h1Text === undefined) {
            scan.h1Text = '';
            this.capture.push({ depth, parts: [], field: 'h1Text' });
          }
          break;
        case 'html':
          scan.lang ??= a.lang;
          break;
        case 'main':
          if (this.main.root < 0) this.opened(this.main);
          break;
        case 'article':
          if (this.article.root < 0) this.opened(this.article);
          break;
        case 'body':
          if (this.body.root < 0) this.opened(this.body);
          break;
      }
      if (a.role === 'main' && this.roleMain.root < 0) this.opened(this.roleMain);
      if (name === 'svg') this.svgDepth = depth;
    }
    const block = BLOCK.has(name);
    const heading = HEADING_TAGS.has(name);
    for (const c of this.collectors) {
      if (!c.active || c.skip) continue;
      if (c.root === depth) {
        if (block) c.out.push('\n');
        continue;
      }
      // script/style are never text, whatever the exclusion rules say.
      if (name === 'script' || name === 'style' || c.excluded(name, a)) {
        c.skip = depth;
        continue;
      }
      if (block) c.out.push('\n');
      if (heading) c.open.push({ depth, slot: c.headings.push({ tag: name, text: '' }) - 1, parts: [] });
    }
  }

  ontext(text: string): void {
    for (const k of this.capture) k.parts.push(text);
    for (const c of this.collectors) {
      if (!c.active || c.skip) continue;
      c.out.push(text);
      for (const h of c.open) h.parts.push(text);
    }
  }

  onclosetag(name: string): void {
    const depth = this.depth;
    const block = BLOCK.has(name);
    for (const c of this.collectors) {
      if (!c.active) continue;
      if (c.skip) {
        if (c.skip === depth) c.skip = 0;
        continue;
      }
      const h = c.open[c.open.length - 1];
      if (h && h.depth === depth) {
        c.open.pop();
        c.headings[h.slot]!.text = h.parts.join('');
      }
      if (block) c.out.push('\n');
      if (c.root === depth) c.done = true;
    }
    const capture = this.capture;
    if (capture.length && capture[capture.length - 1]!.depth === depth) {
      const k = capture.pop()!;
      this.scan[k.field] = k.parts.join('');
    }
    if (this.svgDepth === depth) this.svgDepth = 0;
    this.depth--;
  }
}

/**
 * The last page's parser (with its tokenizer and {@link StreamHandler}), kept until the next
 * page replaces it: one page's text per thread. It keeps the parser's, tokenizer's and
 * handler's hidden classes (maps) alive. V8 holds map transitions weakly, so a major GC of a
 * pool thread between two pages (segment builds cause several per crawl) found no parser
 * alive, the maps died, and the optimized tokenizer and handler code, whose inline caches
 * named them, was deoptimised and compiled again after every such GC. The 1,169 pages of the
 * PostgreSQL manual with a major GC every 100 pages, one thread: 355–391 TurboFan
 * compilations (4.5–7.1 s of background compile) and 2.5–2.8 s of extraction CPU without the
 * keeper, 61 (0.8 s) and 1.5 s with it; output identical.
 */
let streamMapKeeper: Parser | null = null;

/**
 * The default extraction (no Control Panel selectors) in one pass of htmlparser2's tokenizer,
 * without building a tree: the same events the tree builder would get, so the same structure —
 * {@link scanPage} and {@link regionText} over the tree give identical results (checked on every
 * page of the PostgreSQL manual). The content region is not known until the end (a `<main>` may
 * come after a `<body>` started), so the candidates (first main, article, role=main, body, the
 * document) collect side by side and the best one is kept.
 */
function streamPage(html: string): StreamScan {
  const h = new StreamHandler();
  const parser = new Parser(h, { decodeEntities: true });
  parser.end(html);
  streamMapKeeper = parser;
  // Elements still open at the end were closed by end() (htmlparser2 emits their close tags).
  const chosen = [h.main, h.article, h.roleMain, h.body].find((c) => c.root >= 0) ?? h.whole;
  h.scan.region = { content: linesOf(chosen.out.join('')), headings: chosen.headings };
  return h.scan;
}

/**
 * Extracts one HTML page. `url` is the final URL (after redirects); `rules` are the project's
 * Control Panel rules, or null for a JSON page's appended content.
 */
export function extractHtml(html: string, url: string, rules: PageRules | null, headers: Record<string, string> = {}): HtmlExtract {
  // Without selectors to run, one streaming pass; otherwise a tree for cheerio.
  const fast = needsSelectors(rules) ? null : streamPage(html);
  const doc = fast ? null : parseHtml(html);
  // cheerio over the same tree, only for Control Panel selectors (never called on the fast path).
  let cheerioApi: cheerio.CheerioAPI | null = null;
  const $$ = (): cheerio.CheerioAPI => (cheerioApi ??= cheerio.load(doc!));
  const scan: PageScan | StreamScan = fast ?? scanPage(doc!);
  const base = (scan.baseHref && resolveLink(scan.baseHref, url)) || url;

  const metaRobots = parseRobots(scan.robots.join(','));
  const headerRobots = parseXRobotsTag(headers['x-robots-tag']);
  const noindex = metaRobots.noindex || headerRobots.noindex;
  const nofollow = metaRobots.nofollow || headerRobots.nofollow;

  const canonical = (scan.canonicalHref && resolveLink(scan.canonicalHref, base)) || canonicalFromLinkHeader(headers['link'], url);

  const links: string[] = [];
  if (!nofollow) {
    const seen = new Set<string>();
    const baseDir = linkBaseDir(base);
    for (const a of scan.anchors) {
      if (a.rel && a.rel.toLowerCase().split(/\s+/).includes('nofollow')) continue;
      const link = cachedLink(a.href, base, baseDir);
      if (link && !seen.has(link)) {
        seen.add(link);
        links.push(link);
      }
    }
  }

  const contentGroup = rules ? resolveGroup($$, url, rules.resultGroups) : '';
  const ruleList = rules?.contentExtraction ?? [];
  const rule = ruleList.find((r) => r.contentGroup && r.contentGroup === contentGroup) ?? ruleList.find((r) => !r.contentGroup);

  const meta = (key: string): string | undefined => {
    const v = scan.metas.get(key);
    return v ? collapse(v) : undefined;
  };

  // Title: the rule's selector, else <title>, else the first h1.
  let title = '';
  if (rule?.title) title = collapse(safeSelect($$(), rule.title)?.first().text() ?? '');
  const titleText = fast ? fast.titleText : (scan as PageScan).title && textOf((scan as PageScan).title!);
  const h1Text = fast ? fast.h1Text : (scan as PageScan).h1 && textOf((scan as PageScan).h1!);
  if (!title && titleText) title = collapse(titleText);
  if (!title && h1Text) title = collapse(h1Text);
  if (!title) title = meta('og:title') ?? '';

  const language = languageCode(scan.lang ?? meta('og:locale')?.replace('_', '-'));
  const description = meta('description') ?? meta('og:description');

  // Image: the rule's selector, else og:image, twitter:image, link rel=image_src.
  let imageRaw: string | undefined;
  if (rule?.image) {
    const el = safeSelect($$(), rule.image)?.first();
    imageRaw = el?.attr('src') ?? el?.attr('content') ?? el?.attr('href');
  }
  imageRaw ??= meta('og:image') ?? meta('og:image:url') ?? meta('twitter:image') ?? scan.imageSrcHref;
  const imageUrl = imageRaw ? resolveLink(imageRaw, base) : null;

  // Data points need the untouched DOM (they may live in header/footer), so read them before
  // the content region is pruned.
  const dataPoints: DataPoint[] = [];
  const filters: FilterValue[] = [];
  if (rules) {
    let ldCache: unknown[] | null = null;
    const ld = (): unknown[] => (ldCache ??= jsonLdObjects($$()));
    const valuesByKey = new Map<string, string[]>();
    for (const dp of rules.dataPoints) {
      let values: string[] = [];
      try {
        values = dataPointValues($$(), dp, ld);
      } catch {
        values = [];
      }
      if (values.length === 0) continue;
      valuesByKey.set(dp.key, values);
      dataPoints.push({ key: dp.key, value: values[0], show: dp.show });
    }
    for (const f of rules.filters) {
      const values = f.dataPoint ? valuesByKey.get(f.dataPoint) : undefined;
      if (!values?.length) continue;
      if (f.type === 'range') {
        const n = Number(values[0]);
        if (Number.isFinite(n)) filters.push({ key: f.id, value: n });
      } else {
        filters.push({ key: f.id, value: [...new Set(values.flatMap((v) => v.split(/\s*[,;|]\s*/)).filter(Boolean))] });
      }
    }
  }

  // Main content: the first include selector that matches (defaults found by the scan), minus
  // the excludes below it.
  const text = fast ? fast.region : domRegion(doc!, scan as PageScan, rule, $$);
  const content = text.content;
  // Section numbers ("F.1.", "Chapter 5.", "Part III.") are navigation, not words anyone searches for.
  // An h1 that repeats the title is the title, not a section: counted again as a heading it
  // would boost the title words of pages that happen to use an h1 for it over pages that use
  // an h2 (and JSON clients do not send their title as a heading either).
  const titleKey = stripSectionNumber(title);
  const headings = [
    ...new Set(
      text.headings
        .map((h) => ({ tag: h.tag, text: stripSectionNumber(collapse(h.text)) }))
        .filter((h) => h.text && !(h.tag === 'h1' && h.text === titleKey))
        .map((h) => h.text),
    ),
  ];

  return {
    title,
    headings,
    content,
    imageUrl,
    description,
    language,
    links,
    canonical,
    noindex,
    nofollow,
    contentGroup,
    dataPoints,
    filters,
    youtube: isYouTubeWatchUrl(url),
  };
}

/**
 * A YouTube watch page as a video entry: title, description and keywords come from the page
 * metadata (og:/itemprop/name tags), not from the page body, which is mostly script.
 */
export function extractYouTube(html: string, url: string): { title: string; content: string; imageUrl: string | null; keywords: string[] } {
  const $ = cheerio.load(parseHtml(html));
  const meta = (key: string): string | undefined => {
    const v = $(`meta[property="${key}"], meta[name="${key}"], meta[itemprop="${key}"]`).first().attr('content');
    return v ? collapse(v) : undefined;
  };
  const title = meta('og:title') ?? meta('title') ?? collapse($('title').first().text()).replace(/ - YouTube$/, '');
  const description = meta('og:description') ?? meta('description') ?? '';
  const keywords = (meta('keywords') ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  const channel = $('link[itemprop="name"]').first().attr('content') ?? $('[itemprop="author"] [itemprop="name"]').first().attr('content');
  const content = [description, channel ? `Channel: ${channel}` : ''].filter(Boolean).join('\n');
  const img = meta('og:image') ?? meta('thumbnailUrl');
  return { title, content, imageUrl: img ? resolveLink(img, url) : null, keywords };
}
