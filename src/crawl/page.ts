/**
 * Fetch-and-extract of one URL: the body of the pool task `workers/fetch-extract.ts`, kept here
 * so the main thread (tests, robots.txt) and the worker share one implementation.
 *
 * Input and output are plain structured-clonable objects (they cross the worker boundary).
 */
import type { DocumentType } from '../types.js';
import { cachingResolver, systemResolver, type Resolver } from './address-guard.js';
import { decodeText } from './charset.js';
import { DOCUMENT_TYPE_OF, detectKind, extractDocument } from './extract/documents.js';
import { canonicalFromLinkHeader, extractHtml, extractYouTube, parseXRobotsTag } from './extract/html.js';
import type { PageRules } from './extract/rules.js';
import { fetchGuarded, type RedirectHop } from './fetch.js';

/** The pool task input. */
export interface FetchExtractTask {
  url: string;
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  allowPrivate: boolean;
  /** Control Panel rules (URL-only pages), or null when content is appended to a JSON page. */
  rules: PageRules | null;
}

/** A fetch that produced no page: refused, too large, timeout/network, or an HTTP error status. */
export interface FetchExtractFailure {
  kind: 'failure';
  url: string;
  status: number;
  message: string;
  hops: RedirectHop[];
  retryable: boolean;
}

/** The extracted page; `status` is 200, or 806/809 when nothing indexable came out. */
export interface ExtractedPage {
  kind: 'page';
  /** Final URL after redirects. */
  url: string;
  hops: RedirectHop[];
  status: number;
  message?: string;
  title: string;
  content: string;
  headings: string[];
  description?: string;
  documentType: DocumentType;
  imageUrl: string | null;
  language: string | null;
  keywords: string[];
  contentGroup: string;
  dataPoints: { key: string; value: string; show: boolean }[];
  filters: { key: string; value: number | string[] }[];
  links: string[];
  canonical: string | null;
  noindex: boolean;
  nofollow: boolean;
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

// One per thread: the address guard resolves the host before every request of a crawl.
const threadResolver = cachingResolver(systemResolver, 30_000);

/**
 * Fetches and extracts one URL. Never throws: every problem is a result with its status code.
 * `resolver` is injectable for tests; the worker uses the system resolver behind a 30 s cache.
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
  const base: Omit<ExtractedPage, 'status' | 'title' | 'content' | 'documentType'> = {
    kind: 'page',
    url: res.url,
    hops: res.hops,
    headings: [],
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
  const contentType = res.headers['content-type'];
  const kind = detectKind(contentType, res.url, res.body);
  if (!kind) {
    return { ...base, status: 806, message: `Unsupported content type ${contentType ?? '(none)'}`, title: '', content: '', documentType: 'HTML' };
  }
  const documentType = DOCUMENT_TYPE_OF[kind];
  try {
    if (kind === 'html') {
      const { text } = decodeText(res.body, contentType, true);
      const x = extractHtml(text, res.url, task.rules, res.headers);
      const page: ExtractedPage = {
        ...base,
        status: 200,
        title: x.title || fileTitle(res.url),
        content: x.content,
        headings: x.headings,
        description: x.description,
        documentType,
        imageUrl: x.imageUrl,
        language: x.language,
        contentGroup: x.contentGroup,
        dataPoints: x.dataPoints,
        filters: x.filters,
        links: x.links,
        canonical: x.canonical,
        noindex: x.noindex,
        nofollow: x.nofollow,
      };
      if (x.youtube) {
        const y = extractYouTube(text, res.url);
        page.documentType = 'YOUTUBE_VIDEO';
        page.title = y.title || page.title;
        page.content = y.content || page.description || '';
        page.imageUrl = y.imageUrl ?? page.imageUrl;
        page.keywords = y.keywords;
        page.links = [];
      }
      if (!page.content.trim() && !(page.documentType === 'YOUTUBE_VIDEO' && page.title)) {
        return { ...page, status: 809, message: 'No text after extraction' };
      }
      return page;
    }
    const doc = await extractDocument(kind, res.body, contentType);
    const robots = parseXRobotsTag(res.headers['x-robots-tag']);
    const page: ExtractedPage = {
      ...base,
      status: 200,
      title: doc.title || fileTitle(res.url),
      content: doc.content,
      documentType,
      canonical: canonicalFromLinkHeader(res.headers['link'], res.url),
      noindex: robots.noindex,
      nofollow: robots.nofollow,
    };
    if (!page.content.trim()) return { ...page, status: 809, message: 'No text after extraction' };
    return page;
  } catch (err) {
    return {
      ...base,
      status: 806,
      message: `Could not read the ${documentType} document: ${(err as Error)?.message ?? String(err)}`.slice(0, 300),
      title: '',
      content: '',
      documentType,
    };
  }
}
