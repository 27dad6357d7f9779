/**
 * An in-memory ProjectIndex for crawler tests: the parts the crawler uses (write, has, urls,
 * entryOf, listEntries), with the store's newest-seq-wins semantics.
 */
import type { ProjectIndex, WriteOp } from '../../../src/index/index.js';
import type { PageDoc, Settings } from '../../../src/core/index.js';
import { defaultSettings } from '../../../src/projects/index.js';

export class MemoryIndex {
  readonly siteId = 'test';
  seq = 0;
  readonly docs = new Map<string, { doc: PageDoc; seq: number; at: number }>();
  readonly log: Array<WriteOp & { seq: number }> = [];
  constructor(private readonly clock: () => number = Date.now) {}
  async write(ops: WriteOp[]): Promise<number> {
    for (const op of ops) {
      this.seq++;
      this.log.push({ ...op, seq: this.seq });
      if (op.op === 'upsert') this.docs.set(op.doc.url, { doc: op.doc, seq: this.seq, at: this.clock() });
      else this.docs.delete(op.url);
    }
    return this.seq;
  }
  /** flush() calls so far (the crawler publishes a finished run at once). */
  flushes = 0;
  /** The options of the last flush() call. */
  lastFlushOptions: { minPartDocs?: number } | undefined;
  async flush(opts?: { minPartDocs?: number }): Promise<void> {
    this.flushes++;
    this.lastFlushOptions = opts;
  }
  has(url: string): boolean {
    return this.docs.has(url);
  }
  urls(): Iterable<string> {
    return this.docs.keys();
  }
  entryOf(url: string) {
    const e = this.docs.get(url);
    return e ? { seq: e.seq, source: e.doc.source, status: e.doc.status, at: e.at } : null;
  }
  get(url: string): PageDoc | undefined {
    return this.docs.get(url)?.doc;
  }
  searchable(): string[] {
    return [...this.docs.values()].filter((e) => e.doc.status === 200).map((e) => e.doc.url).sort();
  }
  asIndex(): ProjectIndex {
    return this as unknown as ProjectIndex;
  }
}

/** Settings with every section at its defaults (SPEC §7), crawler politeness off for tests. */
export function testSettings(crawler: Partial<Settings['crawler']> = {}, rest: Partial<Settings> = {}): Settings {
  const d = defaultSettings();
  return {
    ...d,
    crawler: {
      ...d.crawler,
      requestDelayMs: 0,
      concurrencyPerHost: 4,
      timeoutMs: 5000,
      maxBytes: 5_000_000,
      userAgent: 'sitesift-test/1.0',
      removeMissing: true,
      ...crawler,
    },
    search: { ...d.search, fieldWeights: { title: 3, keywords: 2, headings: 2, url: 1, content: 1 } },
    suggest: { minSearches: 1, typoTolerance: 'default' },
    analytics: { retentionDays: 90 },
    ...rest,
  };
}
