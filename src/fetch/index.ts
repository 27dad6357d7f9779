/**
 * One page fetched and extracted, on any thread (the pool threads run it for the crawler through
 * workers/fetch-extract.ts): the address guard, the guarded HTTP fetch, charset decoding, HTML and
 * document extraction with the Control Panel rules, the crawler's URL helpers, the page as an
 * index document, the batched pool fetcher the main thread hands the crawler, and one sitemap
 * file fetched and parsed (workers/read-sitemap.ts). Loads nothing of
 * the crawler's queue or scheduler (src/crawl), so a pool thread stays small.
 *
 * @example
 * const result = await fetchAndExtract({ url, rules: null, userAgent: 'sitesift', timeoutMs: 10_000, maxBytes: 10 << 20, allowPrivate: false });
 * if (result.kind === 'page') ops.push({ op: 'upsert', doc: pageDoc(result, result.url, 'crawler') });
 */
export { checkTarget, isPrivateAddress, systemResolver, threadResolver } from './address-guard.js';
export type { Resolver } from './address-guard.js';
export { fetchAndExtract, htmlPage, pageDoc } from './page.js';
export type { ExtractedPage, FetchExtractResult, FetchExtractTask } from './page.js';
export { hostOf, isHttpUrl, normalizeUrl, resolveLink } from './url.js';
export type { PageRules } from './extract/rules.js';
export { batchedPoolFetch } from './pool-fetch.js';
export type { BatchMessage, FetchExtractBatch, FetchPool } from './pool-fetch.js';
export { extractHtml } from './extract/html.js';
export { fetchGuarded } from './fetch.js';
export { readSitemapFile } from './sitemap-file.js';
export type { SitemapEntry, SitemapFileResult, SitemapFileTask } from './sitemap-file.js';
