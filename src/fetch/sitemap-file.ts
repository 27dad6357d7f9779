/**
 * One sitemap file: fetched through the guarded fetch (./fetch.ts: address guard per hop,
 * pinned connection, redirects re-checked, time and byte caps), decompressed as a stream with a
 * limit on decompressed bytes (Content-Encoding and `.gz` files, recognised by their magic bytes,
 * so a small gzip bomb stops at the limit without ever holding it), and parsed as a stream with
 * htmlparser2 in XML mode. Runs in a pool thread (workers/read-sitemap.ts); the import that
 * walks indexes, de-duplicates and enforces the per-import limits is ./sitemap.ts on the main
 * thread.
 *
 * Input and output are plain structured-clonable objects (they cross the worker boundary).
 */
import { once } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { Parser } from 'htmlparser2';
import type { Resolver } from './address-guard.js';
import { fetchGuarded } from './fetch.js';
import { normalizeUrl } from './url.js';

/** One URL of a sitemap. */
export interface SitemapEntry {
  url: string;
  lastmod: string | null;
}

/** What the pool task is asked: one sitemap URL and the limits left for it. */
export interface SitemapFileTask {
  url: string;
  userAgent: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** Decompressed bytes read at most (also the cap on the bytes received). */
  maxBytes: number;
  /** URLs kept at most (the import's remaining budget); more is cut. */
  maxUrls: number;
  /** Child sitemaps of an index kept at most; more is cut. */
  maxSitemaps: number;
}

/** A sitemap file read: its URLs (urlset) or child sitemaps (index), or why it could not be read. */
export interface SitemapFileResult {
  url: string;
  kind: 'urlset' | 'index' | 'failed';
  entries: SitemapEntry[];
  sitemaps: string[];
  /** Set when kind is 'failed': the crawl status (807 refused, 808, 810, an HTTP status, 806 not a sitemap) and why. */
  status?: number;
  error?: string;
  /** What a limit cut short in this file (empty when it was read whole). */
  cut: string[];
  /** URLs listed more than once in this file (kept once). */
  duplicates: number;
}

/** Longest `<loc>` kept (the sitemaps protocol allows 2,048 characters). */
const MAX_LOC_CHARS = 4096;
/** Bytes handed to the decoders and the parser at a time. */
const CHUNK = 64 * 1024;

function normLastmod(v: string): string | null {
  const s = v.trim();
  if (!s) return null;
  const t = Date.parse(s);
  return Number.isFinite(t) ? new Date(t).toISOString() : s;
}

async function* pieces(buf: Buffer): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += CHUNK) yield buf.subarray(i, i + CHUNK);
}

/**
 * The output of `z` fed with `src`, chunk by chunk with backpressure: zlib only inflates as
 * fast as the consumer reads, so stopping the consumer stops the inflation.
 */
async function* through(src: AsyncIterable<Buffer>, z: Transform): AsyncGenerator<Buffer> {
  const stop = new AbortController();
  void (async () => {
    for await (const c of src) {
      if (stop.signal.aborted) return;
      if (!z.write(c)) await once(z, 'drain', { signal: stop.signal });
    }
    z.end();
  })().catch((err: unknown) => {
    if (!stop.signal.aborted) z.destroy(err as Error);
  });
  try {
    for await (const out of z) yield out as Buffer;
  } finally {
    stop.abort();
    z.destroy();
  }
}

/** Decoders for a Content-Encoding header, in the order they undo it; null for an unknown coding. */
function contentDecoders(header: string | undefined): Array<() => Transform> | null {
  if (!header) return [];
  const out: Array<() => Transform> = [];
  for (const coding of header.toLowerCase().split(',').map((c) => c.trim()).filter(Boolean).reverse()) {
    if (coding === 'identity') continue;
    if (coding === 'gzip' || coding === 'x-gzip') out.push(() => zlib.createGunzip());
    else if (coding === 'br') out.push(() => zlib.createBrotliDecompress());
    else if (coding === 'deflate') out.push(() => zlib.createInflate());
    else return null;
  }
  return out;
}

/** Passes `src` through, or through gunzip when it starts with the gzip magic bytes (a `.gz` file). */
async function* gunzipIfGzip(src: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const it = src[Symbol.asyncIterator]();
  let head: Buffer = Buffer.alloc(0);
  let done = false;
  while (head.length < 2 && !done) {
    const r = await it.next();
    if (r.done) done = true;
    else head = head.length ? Buffer.concat([head, r.value]) : r.value;
  }
  async function* rest(): AsyncGenerator<Buffer> {
    if (head.length) yield head;
    if (done) return;
    try {
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    } finally {
      await it.return?.();
    }
  }
  if (head[0] === 0x1f && head[1] === 0x8b) yield* through(rest(), zlib.createGunzip());
  else yield* rest();
}

/** The streaming sitemap reader: the first element decides urlset or sitemapindex. */
class SitemapParser {
  kind: 'urlset' | 'index' | null = null;
  readonly entries: SitemapEntry[] = [];
  readonly sitemaps: string[] = [];
  readonly cut: string[] = [];
  duplicates = 0;
  private readonly seen = new Set<string>();
  private readonly stack: string[] = [];
  private text: string | null = null;
  private tooLong = false;
  private loc: string | null = null;
  private lastmod: string | null = null;
  private full = false;
  private readonly parser: Parser;

  constructor(
    private readonly base: string,
    private readonly maxUrls: number,
    private readonly maxSitemaps: number,
  ) {
    this.parser = new Parser(
      {
        onopentag: (name) => this.open(name),
        onclosetag: (name) => this.close(name),
        ontext: (t) => this.addText(t),
      },
      { xmlMode: true, decodeEntities: true },
    );
  }

  write(chunk: string): void {
    this.parser.write(chunk);
  }

  end(): void {
    this.parser.end();
  }

  /** Stops collecting once a limit is reached (the caller stops feeding). */
  get stopped(): boolean {
    return this.full;
  }

  private local(name: string): string {
    return name.slice(name.indexOf(':') + 1).toLowerCase();
  }

  private open(raw: string): void {
    const name = this.local(raw);
    const parent = this.stack[this.stack.length - 1];
    this.stack.push(name);
    if (this.stack.length === 1) {
      if (name === 'urlset') this.kind = 'urlset';
      else if (name === 'sitemapindex') this.kind = 'index';
      return;
    }
    if ((name === 'url' || name === 'sitemap') && this.stack.length === 2) {
      this.loc = null;
      this.lastmod = null;
    } else if ((name === 'loc' || name === 'lastmod') && (parent === 'url' || parent === 'sitemap') && this.stack.length === 3) {
      this.text = '';
      this.tooLong = false;
    }
  }

  private addText(t: string): void {
    if (this.text === null || this.tooLong) return;
    if (this.text.length + t.length > MAX_LOC_CHARS) {
      this.tooLong = true;
      this.text = '';
      return;
    }
    this.text += t;
  }

  private close(raw: string): void {
    const name = this.local(raw);
    const depth = this.stack.length;
    this.stack.pop();
    if ((name === 'loc' || name === 'lastmod') && depth === 3 && this.text !== null) {
      const value = this.tooLong ? null : this.text.trim();
      if (name === 'loc') this.loc = value;
      else this.lastmod = value;
      this.text = null;
    } else if ((name === 'url' || name === 'sitemap') && depth === 2) this.item(name);
  }

  private item(name: string): void {
    if (this.full || !this.loc) return;
    let abs: string;
    try {
      abs = new URL(this.loc, this.base).toString();
    } catch {
      return;
    }
    const url = /^https?:/i.test(abs) ? normalizeUrl(abs) : null;
    if (!url) return;
    if (name === 'url' && this.kind === 'urlset') {
      if (this.seen.has(url)) {
        this.duplicates++;
        return;
      }
      if (this.entries.length >= this.maxUrls) return this.stop(`${this.base}: stopped after ${this.entries.length} URLs (the import's URL limit)`);
      this.seen.add(url);
      this.entries.push({ url, lastmod: this.lastmod === null ? null : normLastmod(this.lastmod) });
    } else if (name === 'sitemap' && this.kind === 'index') {
      // Repeats are kept: the import reads each sitemap once and says which were listed again.
      if (this.sitemaps.length >= this.maxSitemaps) return this.stop(`${this.base}: stopped after ${this.sitemaps.length} child sitemaps (the import's sitemap limit)`);
      this.sitemaps.push(url);
    }
  }

  private stop(note: string): void {
    this.full = true;
    this.cut.push(note);
  }
}

/**
 * Fetches and parses one sitemap file. Never throws: a refused, failed or unreadable file is
 * `kind: 'failed'` with its status; what a limit cut short is listed in `cut`, with what was
 * read up to that point kept. `resolver` is injectable for tests; pool threads use their own.
 *
 * @example
 * const r = await readSitemapFile({ url: 'https://docs.example.org/sitemap.xml', userAgent: 'sitesift',
 *   timeoutMs: 10_000, allowPrivate: false, maxBytes: 50 << 20, maxUrls: 50_000, maxSitemaps: 1000 }, systemResolver);
 * if (r.kind === 'index') readEach(r.sitemaps);
 */
export async function readSitemapFile(task: SitemapFileTask, resolver: Resolver): Promise<SitemapFileResult> {
  const result = (over: Partial<SitemapFileResult>): SitemapFileResult => ({ url: task.url, kind: 'failed', entries: [], sitemaps: [], cut: [], duplicates: 0, ...over });
  const res = await fetchGuarded(task.url, {
    userAgent: task.userAgent,
    timeoutMs: task.timeoutMs,
    maxBytes: task.maxBytes,
    allowPrivate: task.allowPrivate,
    resolver,
    decode: false,
    headers: { accept: 'application/xml,text/xml;q=0.9,*/*;q=0.8' },
  });
  if (res.kind === 'failure') return result({ status: res.status, error: res.message });
  if (res.status !== 200) return result({ status: res.status, error: `HTTP ${res.status}` });
  const decoders = contentDecoders(res.headers['content-encoding']);
  if (!decoders) return result({ status: 806, error: `Unsupported Content-Encoding ${res.headers['content-encoding']}` });

  // The final URL (after redirects) is the base of relative locations.
  const parser = new SitemapParser(res.url, Math.max(0, task.maxUrls), Math.max(0, task.maxSitemaps));
  const text = new StringDecoder('utf8');
  let stream: AsyncIterable<Buffer> = pieces(res.body);
  for (const make of decoders) stream = through(stream, make());
  stream = gunzipIfGzip(stream);
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += chunk.length;
      if (total > task.maxBytes) {
        parser.write(text.write(chunk.subarray(0, chunk.length - (total - task.maxBytes))));
        parser.cut.push(`${task.url}: stopped after ${task.maxBytes} decompressed bytes (the sitemap byte limit)`);
        break;
      }
      parser.write(text.write(chunk));
      if (parser.stopped) break;
    }
    parser.write(text.end());
    parser.end();
  } catch (err) {
    return result({ status: 806, error: `Could not decompress the sitemap: ${(err as Error)?.message ?? String(err)}` });
  }
  const base = { entries: parser.entries, sitemaps: parser.sitemaps, cut: parser.cut, duplicates: parser.duplicates };
  if (parser.kind === null) return result({ ...base, status: 806, error: 'Not a sitemap (no <urlset> or <sitemapindex>)' });
  return result({ ...base, kind: parser.kind });
}
