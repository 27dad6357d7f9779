/**
 * Pool task: fetch one sitemap file through the guarded fetch, decompress it as a stream with a
 * limit and parse it (src/fetch/sitemap-file.ts). The import that walks indexes and enforces
 * the per-import limits runs on the main thread (src/crawl/sitemap.ts) and sends one task per
 * file, so neither a large sitemap's parse nor a gzip bomb's inflation touches the main thread.
 */
import { readSitemapFile, threadResolver, type SitemapFileResult, type SitemapFileTask } from '../src/fetch/index.js';

export type { SitemapFileResult, SitemapFileTask };

/** The task entry point (the pool dispatcher calls it with the task payload). */
export default function readSitemap(payload: SitemapFileTask): Promise<SitemapFileResult> {
  return readSitemapFile(payload, threadResolver);
}
