/**
 * Fetch-and-extract of one URL: the body of the pool task `workers/fetch-extract.ts`, kept here
 * so the main thread (tests, robots.txt) and the worker share one implementation.
 *
 * Input and output are plain structured-clonable objects (they cross the worker boundary).
 */
import type { DocSource, DocumentType, PageDoc } from '../core/index.js';
import { threadResolver, type Resolver } from './address-guard.js';
import { decodeText } from './charset.js';
import { DOCUMENT_TYPE_OF, detectKind, extractDocument, type FileKind } from './extract/documents.js';
import { canonicalFromLinkHeader, extractHtml, extractYouTube, languageCode, parseXRobotsTag, type HtmlExtract } from './extract/html.js';
import { resolveGroup, type PageRules } from './extract/rules.js';
import { fetchGuarded, type FetchedResponse, type FetchFailure, type FetchOptions, type RedirectHop } from './fetch.js';

/** The pool task input: the URL and how to fetch it (the worker brings its own resolver). */
export interface FetchExtractTask extends Pick<FetchOptions, 'userAgent' | 'timeoutMs' | 'maxBytes' | 'allowPrivate'> {
  url: string;
  /** Control Panel rules (URL-only pages), or null when content is appended to a JSON page. */
  rules: PageRules | null;
}

/** A fetch that produced no page: refused, too large, timeout/network, or an HTTP error status. */
export type FetchExtractFailure = FetchFailure;

/** The extracted page; `status` is 200, or 806/809 when nothing indexable came out. */
export interface ExtractedPage extends Omit<HtmlExtract, 'youtube' | 'description'> {
  kind: 'page';
  /** Final URL after redirects. */
  url: string;
  hops: RedirectHop[];
  status: number;
  message?: string;
  description?: string;
  documentType: DocumentType;
  keywords: string[];
}

export type FetchExtractResult = FetchExtractFailure | ExtractedPage;

function fileTitle(url: string): string {
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? '');
    return last || url;
  } catch {
    return url;
  }
}

/** A page with nothing extracted yet. */
function emptyPage(url: string, hops: RedirectHop[], documentType: DocumentType): ExtractedPage {
  return {
    kind: 'page',
    url,
    hops,
    status: 200,
    title: '',
    content: '',
    headings: [],
    documentType,
    imageUrl: null,
    language: null,
    keywords: [],
    contentGroup: '',
    dataPoints: [],
    filters: [],
    links: [],
    canonical: null,
    noindex: false,
    nofollow: false,
  };
}

/**
 * An HTML response as a page; a YouTube watch page as a video entry described by its metadata.
 * Throws only on a bug in the extractor.
 *
 * @example const page = htmlPage({ kind: 'response', url, status: 200, headers: { 'content-type': 'text/html' }, body, hops: [] }, null);
 */
export function htmlPage(res: FetchedResponse, rules: PageRules | null): ExtractedPage {
  const { text } = decodeText(res.body, res.headers['content-type'], true);
  const { youtube, ...x } = extractHtml(text, res.url, rules, res.headers);
  const page: ExtractedPage = { ...emptyPage(res.url, res.hops, 'HTML'), ...x, title: x.title || fileTitle(res.url) };
  if (youtube) {
    const y = extractYouTube(text, res.url);
    page.documentType = 'YOUTUBE_VIDEO';
    page.title = y.title || page.title;
    page.content = y.content || page.description || '';
    page.imageUrl = y.imageUrl ?? page.imageUrl;
    page.keywords = y.keywords;
    page.links = [];
  }
  return page;
}

/**
 * A document response (PDF, office formats, text) as a page; robots and canonical come from its
 * headers, its result group from the groups' URL patterns (selectors need markup).
 */
async function documentPage(res: FetchedResponse, kind: Exclude<FileKind, 'html'>, rules: PageRules | null): Promise<ExtractedPage> {
  const doc = await extractDocument(kind, res.body, res.headers['content-type']);
  const robots = parseXRobotsTag(res.headers['x-robots-tag']);
  return {
    ...emptyPage(res.url, res.hops, DOCUMENT_TYPE_OF[kind]),
    title: doc.title || fileTitle(res.url),
    content: doc.content,
    contentGroup: rules ? resolveGroup(null, res.url, rules.resultGroups) : '',
    canonical: canonicalFromLinkHeader(res.headers['link'], res.url),
    language: languageCode(res.headers['content-language']?.split(',')[0]),
    noindex: robots.noindex,
    nofollow: robots.nofollow,
  };
}

/**
 * Fetches and extracts one URL. Never throws: every problem is a result with its status code.
 * `resolver` is injectable for tests; the worker uses the system resolver behind a 30 s cache.
 *
 * @example
 * const r = await fetchAndExtract({ url, userAgent: 'sitesift', timeoutMs: 10_000, maxBytes: 5_000_000, allowPrivate: false, rules: null });
 * if (r.kind === 'page' && r.status === 200) index(r);
 */
export async function fetchAndExtract(task: FetchExtractTask, resolver: Resolver = threadResolver): Promise<FetchExtractResult> {
  const res = await fetchGuarded(task.url, {
    userAgent: task.userAgent,
    timeoutMs: task.timeoutMs,
    maxBytes: task.maxBytes,
    allowPrivate: task.allowPrivate,
    resolver,
  });
  if (res.kind === 'failure') return res;
  if (res.status !== 200) {
    return {
      kind: 'failure',
      url: res.url,
      status: res.status,
      message: `HTTP ${res.status}`,
      hops: res.hops,
      // 429 and 5xx are worth another try; other statuses are answers.
      retryable: res.status >= 500 || res.status === 429 || res.status === 408,
    };
  }
  const contentType = res.headers['content-type'];
  const kind = detectKind(contentType, res.url, res.body);
  if (!kind) return { ...emptyPage(res.url, res.hops, 'HTML'), status: 806, message: `Unsupported content type ${contentType ?? '(none)'}` };
  let page: ExtractedPage;
  try {
    page = kind === 'html' ? htmlPage(res, task.rules) : await documentPage(res, kind, task.rules);
  } catch (err) {
    const documentType = DOCUMENT_TYPE_OF[kind];
    const message = `Could not read the ${documentType} document: ${(err as Error)?.message ?? String(err)}`.slice(0, 300);
    return { ...emptyPage(res.url, res.hops, documentType), status: 806, message };
  }
  // A video entry may consist of its title alone.
  if (!page.content.trim() && !(page.documentType === 'YOUTUBE_VIDEO' && page.title)) return { ...page, status: 809, message: 'No text after extraction' };
  return page;
}

/**
 * A crawled page as an index document under `url` (the normalised final URL).
 *
 * @example ops.push({ op: 'upsert', doc: pageDoc(result, finalUrl, 'crawler') });
 */
export function pageDoc(page: ExtractedPage, url: string, source: DocSource): PageDoc {
  const doc: PageDoc = {
    url,
    title: page.title,
    content: page.content,
    documentType: page.documentType,
    contentGroup: page.contentGroup,
    imageUrl: page.imageUrl,
    dataPoints: page.dataPoints,
    filters: page.filters,
    boost: 1,
    keywords: page.keywords,
    language: page.language,
    headings: page.headings,
    source,
    status: 200,
  };
  if (page.description) doc.description = page.description;
  return doc;
}
