/**
 * HTML extraction. Pure; runs in the pool worker.
 *
 * The page is parsed once by htmlparser2 into a domhandler tree (a forgiving tokenizer without
 * the HTML5 tree-construction fix-ups; parsing is the largest CPU cost of a crawl and parse5 is
 * several times slower). One walk over that tree records what tags and attributes say (metas,
 * links, base, canonical, title, first h1, language, the content region candidates), a second
 * walk over the content region collects its text and headings. The CSS selectors of the Control
 * Panel rules (./rules.ts) run through cheerio over the same tree, loaded only when a rule needs
 * selectors.
 *
 * Produces the page's title, headings, main text, image, description, language, links, robots
 * directives and canonical URL, and — when Control Panel rules are given — its data points,
 * filter values and result group.
 */
// cheerio/slim: the selector API without parse5 and undici (a third of the load time per thread).
import * as cheerio from 'cheerio/slim';
import type { AnyNode, Document, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { DataPoint, ExtractionRule, FilterValue } from '../../core/index.js';
import { resolveLink } from '../url.js';
import { readDataPoints, resolveGroup, safeSelect, type LazyCheerio, type PageRules } from './rules.js';
import { collapse, linesOf } from './whitespace.js';

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

/**
 * Extracts one HTML page. `url` is the final URL (after redirects); `rules` are the project's
 * Control Panel rules, or null for a JSON page's appended content; `headers` are the response
 * headers (lower-case names: `x-robots-tag`, `link` and `content-language` are read).
 *
 * @example
 * const x = extractHtml('<title>Port</title><main><h1>Berths</h1><p>Guests welcome.</p></main>', 'https://example.org/', null);
 * // x.title === 'Port', x.headings == ['Berths'], x.content === 'Berths\nGuests welcome.'
 */
export function extractHtml(html: string, url: string, rules: PageRules | null, headers: Record<string, string> = {}): HtmlExtract {
  const doc = parseDocument(html);
  let cheerioApi: cheerio.CheerioAPI | null = null;
  const $$: LazyCheerio = () => (cheerioApi ??= cheerio.load(doc));
  const scan = scanPage(doc);
  const base = (scan.baseHref && resolveLink(scan.baseHref, url)) || url;

  const metaRobots = parseRobots(scan.robots.join(','));
  const headerRobots = parseXRobotsTag(headers['x-robots-tag']);
  const noindex = metaRobots.noindex || headerRobots.noindex;
  const nofollow = metaRobots.nofollow || headerRobots.nofollow;

  const canonical = (scan.canonicalHref && resolveLink(scan.canonicalHref, base)) || canonicalFromLinkHeader(headers['link'], url);
  const links = nofollow ? [] : followedLinks(scan.anchors, base);

  const contentGroup = rules ? resolveGroup($$, url, rules.resultGroups) : '';
  const ruleList = rules?.contentExtraction ?? [];
  const rule = ruleList.find((r) => r.contentGroup && r.contentGroup === contentGroup) ?? ruleList.find((r) => !r.contentGroup);

  const meta = (key: string): string | undefined => {
    const v = scan.metas.get(key);
    return v ? collapse(v) : undefined;
  };

  // Title: the rule's selector, else <title>, else the first h1, else og:title.
  let title = '';
  if (rule?.title) title = collapse(safeSelect($$(), rule.title)?.first().text() ?? '');
  if (!title && scan.title) title = collapse(DomUtils.textContent(scan.title));
  if (!title && scan.h1) title = collapse(DomUtils.textContent(scan.h1));
  if (!title) title = meta('og:title') ?? '';

  // <html lang>, og:locale, then the Content-Language header (its first language).
  const language = languageCode(scan.lang ?? meta('og:locale')?.replace('_', '-') ?? headers['content-language']?.split(',')[0]);
  const description = meta('description') ?? meta('og:description');

  // Image: the rule's selector, else og:image, twitter:image, link rel=image_src.
  let imageRaw: string | undefined;
  if (rule?.image) {
    const el = safeSelect($$(), rule.image)?.first();
    imageRaw = el?.attr('src') ?? el?.attr('content') ?? el?.attr('href');
  }
  imageRaw ??= meta('og:image') ?? meta('og:image:url') ?? meta('twitter:image') ?? scan.imageSrcHref;
  const imageUrl = imageRaw ? resolveLink(imageRaw, base) : null;

  const { dataPoints, filters } = rules ? readDataPoints($$, rules) : { dataPoints: [], filters: [] };

  const region = contentRegion(doc, scan, rule, $$);
  // Section numbers ("F.1.", "Chapter 5.", "Part III.") are navigation, not words anyone searches for.
  // An h1 that repeats the title is the title, not a section: counted again as a heading it
  // would boost the title words of pages that happen to use an h1 for it over pages that use
  // an h2 (and JSON clients do not send their title as a heading either).
  const titleKey = stripSectionNumber(title);
  const headings = [
    ...new Set(
      region.headings
        .map((h) => ({ tag: h.tag, text: stripSectionNumber(collapse(h.text)) }))
        .filter((h) => h.text && !(h.tag === 'h1' && h.text === titleKey))
        .map((h) => h.text),
    ),
  ];

  return {
    title,
    headings,
    content: region.content,
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
 *
 * @example
 * if (extractHtml(html, url, rules).youtube) entry = extractYouTube(html, url);
 */
export function extractYouTube(html: string, url: string): { title: string; content: string; imageUrl: string | null; keywords: string[] } {
  const $ = cheerio.load(parseDocument(html));
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

/**
 * Parses an X-Robots-Tag header value. Directives scoped to another bot (`googlebot: noindex`)
 * are ignored; unscoped ones and ones for `sitesift` apply.
 *
 * @example parseXRobotsTag('googlebot: noindex, sitesift: nofollow') // { noindex: false, nofollow: true }
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

/**
 * Parses a `Link` response header and returns the `rel=canonical` target resolved against
 * `base`, if any.
 *
 * @example canonicalFromLinkHeader('<https://a.example/x>; rel="canonical"', 'https://a.example/y') // 'https://a.example/x'
 */
export function canonicalFromLinkHeader(header: string | undefined, base: string): string | null {
  if (!header) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = part.match(/<([^>]*)>(.*)$/);
    if (m && /rel\s*=\s*"?canonical"?/i.test(m[2])) return resolveLink(m[1], base);
  }
  return null;
}

/**
 * ISO 639-1 code from a `lang` attribute, or null.
 *
 * @example languageCode('en-US') // 'en'
 */
export function languageCode(lang: string | undefined): string | null {
  const m = (lang ?? '').trim().toLowerCase().match(/^([a-z]{2})(?:[-_]|$)/);
  return m ? m[1] : null;
}

/**
 * Removes a leading outline number from a heading: `1.2.`, `A.1.`, `F.1.`, `Chapter 5.`,
 * `Appendix L.`, `Part III.`. A bare word with a dot ("U.S. policy") is kept.
 *
 * @example stripSectionNumber('Chapter 5. Data Definition') // 'Data Definition'
 */
export function stripSectionNumber(heading: string): string {
  const m = heading.match(/^(?:(?:chapter|appendix|part|section)\s+)?(?:[0-9]+|[A-Z]|[IVXLC]+)(?:\.[0-9]+)*\.\s+(?=\S)/i);
  if (!m) return heading;
  return heading.slice(m[0].length);
}

/**
 * Whether a URL is a YouTube watch page (youtube.com/watch?v=, youtu.be/<id>, /shorts/).
 *
 * @example isYouTubeWatchUrl('https://youtu.be/dQw4w9WgXcQ') // true
 */
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

function parseRobots(value: string | undefined): { noindex: boolean; nofollow: boolean } {
  const v = (value ?? '').toLowerCase();
  return { noindex: /\b(noindex|none)\b/.test(v), nofollow: /\b(nofollow|none)\b/.test(v) };
}

/** What one walk over the page's elements records (each `$(selector)` would be a full traversal). */
interface PageScan {
  /** Meta values by lower-cased name, property or itemprop; the first one wins. */
  metas: Map<string, string>;
  /** Contents of `<meta name="robots">` and `<meta name="sitesift">`. */
  robots: string[];
  baseHref?: string;
  canonicalHref?: string;
  imageSrcHref?: string;
  title?: Element;
  h1?: Element;
  lang?: string;
  /** Every `<a>` and `<area>` with an href, in document order. */
  anchors: Array<{ href: string; rel: string }>;
  main?: Element;
  article?: Element;
  roleMain?: Element;
  body?: Element;
}

/** One depth-first walk in document order: the first element of each kind wins. */
function scanPage(root: AnyNode): PageScan {
  const scan: PageScan = { metas: new Map(), robots: [], anchors: [] };
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'tag' || n.type === 'script' || n.type === 'style') {
      const el = n as Element;
      const a = el.attribs;
      switch (el.name) {
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
        case 'title':
        case 'h1':
        case 'main':
        case 'article':
        case 'body':
          scan[el.name] ??= el;
          break;
        case 'html':
          scan.lang ??= a.lang;
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

/** The page's followed links: resolved, de-duplicated, without `rel=nofollow` anchors. */
function followedLinks(anchors: PageScan['anchors'], base: string): string[] {
  const links: string[] = [];
  const seen = new Set<string>();
  const baseDir = linkBaseDir(base);
  for (const a of anchors) {
    if (a.rel && a.rel.toLowerCase().split(/\s+/).includes('nofollow')) continue;
    const link = cachedLink(a.href, base, baseDir);
    if (link && !seen.has(link)) {
      seen.add(link);
      links.push(link);
    }
  }
  return links;
}

// Resolved links by base directory and href, per thread: the pages of a site link to the same
// pages with the same relative hrefs (navigation, tables of contents), and URL parsing is a
// large share of extraction time. Bounded: cleared when full.
const LINK_CACHE_MAX = 50_000;
const linkCache = new Map<string, string | null>();

/**
 * {@link resolveLink} with a cache. The result of a reference that is not query-only (`?x`)
 * depends only on the base up to its last `/` (RFC 3986 §5.2.2), which is the cache key.
 */
function cachedLink(href: string, base: string, baseDir: string): string | null {
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

/** Elements that are never content, whatever the rules say. */
const DEFAULT_EXCLUDED_TAGS = new Set(['nav', 'header', 'footer', 'script', 'style', 'noscript', 'template', 'svg', 'iframe', 'form']);

function excludedByDefault(el: Element): boolean {
  return DEFAULT_EXCLUDED_TAGS.has(el.name) || (el.name === 'aside' && el.attribs.role === 'navigation');
}

interface RegionText {
  content: string;
  headings: Array<{ tag: string; text: string }>;
}

/**
 * The content region of a parsed page: the first `contentInclude` selector of the rule that
 * matches, else the first `<main>`, `<article>`, `[role=main]` or `<body>`, else the whole
 * document without its head; minus the default exclusions and the rule's `contentExclude`.
 */
function contentRegion(doc: Document, scan: PageScan, rule: ExtractionRule | undefined, $$: LazyCheerio): RegionText {
  let roots: AnyNode[] | null = null;
  for (const sel of rule?.contentInclude ?? []) {
    const r = safeSelect($$(), sel);
    if (r && r.length) {
      roots = r.toArray();
      break;
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

/** Elements whose start and end break a line of the extracted text. */
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section',
  'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul', 'title', 'caption', 'summary', 'details',
]);

const HEADING_TAGS = new Set(['h1', 'h2', 'h3']);

/**
 * The text of the content region (`roots`) with a line break at block boundaries, and the texts
 * of its h1–h3 headings in document order, skipping excluded elements below the roots. One walk
 * that leaves the tree as it is: removing the excluded elements first would take a selector
 * match over every element.
 */
function regionText(roots: AnyNode[], excluded: (el: Element) => boolean): RegionText {
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
