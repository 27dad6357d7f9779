import type { PageDoc } from '../../src/core/index.js';

/** A valid searchable PageDoc with overrides, for store and search tests. */
export function makeDoc(url: string, title: string, content: string, extra: Partial<PageDoc> = {}): PageDoc {
  return {
    url,
    title,
    content,
    documentType: 'HTML',
    contentGroup: '',
    imageUrl: null,
    dataPoints: [],
    filters: [],
    boost: 1,
    keywords: [],
    language: null,
    headings: [],
    source: 'api',
    status: 200,
    ...extra,
  };
}
