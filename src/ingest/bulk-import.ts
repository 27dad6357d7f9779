/**
 * Bulk import (`sitesift index <siteId> <path>`, `make reindex`): reads page documents from
 * `.json` (an array or one object), `.jsonl`/`.ndjson` (one object a line), their `.gz` forms,
 * or a directory of such files (recursively, in name order), and posts them to a running
 * server's `POST /sites/pagesJson` in batches of up to 100.
 *
 * Runs in the CLI process (not in the server). The server validates; this module only isolates
 * the bad entries of a rejected batch — using the server's per-entry `errors` when present,
 * otherwise by re-sending the batch entry by entry — so that one bad document does not keep its
 * 99 neighbours out, and reports each rejected entry with its file, line and reason.
 *
 * Progress is measured in input bytes (uncompressed, for `.gz` too) whose documents the server
 * has answered, so it needs no counting pass over the input.
 */
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { MAX_BATCH } from './validate.js';

/** One document read from the input, with where it came from. */
export interface ImportEntry {
  /** `file:line` (JSONL) or `file[index]` (JSON array), for the summary. */
  origin: string;
  /** The parsed document, or undefined when the text was not valid JSON. */
  doc?: unknown;
  parseError?: string;
}

/** A document the server (or the reader) refused, with the reason. */
export interface Rejection {
  origin: string;
  url?: string;
  reason: string;
}

export interface ImportSummary {
  /** Entries read from the input. */
  read: number;
  /** Documents the server acknowledged (sum of `indexed`; duplicates in a batch count once). */
  indexed: number;
  rejected: Rejection[];
  /** Wall-clock milliseconds. */
  elapsedMs: number;
  /** With `replace`: what the swap reported (pages live after it, pages it removed). */
  replaced?: { pages: number; removed: number; mirrored: number };
  /** The server's reindex task that lists this import (`GET /tasks`), when the server keeps one. */
  taskId?: string;
}

export interface ImportOptions {
  /** Server base URL, e.g. `http://127.0.0.1:8080`. */
  serverUrl: string;
  /** Master key, sent as `Authorization: Bearer`. */
  masterKey: string;
  siteId: string;
  /** File or directory to import. */
  input: string;
  /** Prefix for relative `url` values (the corpus has `acronyms.html`). */
  baseUrl?: string;
  /** Documents per request, 1–100 (default 100). */
  batchSize?: number;
  /** Requests in flight (default 2). */
  concurrency?: number;
  /** Pass `ignoreUndefinedFilters=true`. */
  ignoreUndefinedFilters?: boolean;
  /** Ask the server to wait until the last batch is searchable (`refresh=true`). */
  refreshAtEnd?: boolean;
  /**
   * Replace the project's index with the input: the pages go to a staging index (POST
   * /index/replace), which is swapped in at the end in one commit; pages not in the input are
   * gone. An aborted import abandons the staging index and leaves the live one untouched.
   */
  replace?: boolean;
  /**
   * Record the import as a reindex task on the server (`POST /tasks`, counts reported with
   * `PATCH /tasks/{taskId}` at most once a second and at the end), so `GET /tasks` lists it
   * with its progress. Default true; a server that refuses the task is imported into anyway.
   */
  reportTask?: boolean;
  /** Progress output (default: process.stderr). */
  out?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Injected for tests. */
  fetch?: typeof fetch;
  clock?: () => number;
}

/** Raised for failures that stop the whole import (auth, unknown site, unreachable server). */
export class ImportAborted extends Error {}

const INPUT_EXTENSIONS = ['.json', '.jsonl', '.ndjson', '.json.gz', '.jsonl.gz', '.ndjson.gz'];

/** Lists the input files of `input` (a file, or a directory walked recursively in name order). */
export async function listInputFiles(input: string): Promise<string[]> {
  const stat = await fsp.stat(input);
  if (stat.isFile()) return [input];
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const names = (await fsp.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of names) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) await walk(p);
      else if (d.isFile() && INPUT_EXTENSIONS.some((e) => d.name.endsWith(e))) out.push(p);
    }
  };
  await walk(input);
  return out;
}

/**
 * Reads the entries of one file. `onBytes` is told how many (decompressed) bytes were read,
 * for progress.
 */
export async function* readEntries(file: string, onBytes: (n: number) => void = () => {}): AsyncGenerator<ImportEntry> {
  const gz = file.endsWith('.gz');
  const raw = createReadStream(file);
  const text = gz ? raw.pipe(createGunzip()) : raw;
  // Decompressed bytes for .gz: the compressed stream is read far ahead of the parsed entries.
  text.on('data', (chunk: Buffer) => onBytes(chunk.length));
  if (gz) raw.on('error', (err) => text.emit('error', err));
  const name = path.basename(file);
  const isJsonl = /\.(jsonl|ndjson)(\.gz)?$/.test(file);
  if (isJsonl) {
    const lines = createInterface({ input: text, crlfDelay: Infinity });
    let n = 0;
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      try {
        yield { origin: `${name}:${n}`, doc: JSON.parse(line) };
      } catch (err) {
        yield { origin: `${name}:${n}`, parseError: `not valid JSON (${(err as Error).message})` };
      }
    }
    return;
  }
  const chunks: Buffer[] = [];
  for await (const c of text) chunks.push(c as Buffer);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    yield { origin: name, parseError: `not valid JSON (${(err as Error).message})` };
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield { origin: `${name}[${i}]`, doc: value[i] };
  } else {
    yield { origin: name, doc: value };
  }
}

/** Resolves a relative `url` against `baseUrl`; anything else is returned unchanged. */
export function withBaseUrl(doc: unknown, baseUrl: string | undefined): unknown {
  if (!baseUrl || typeof doc !== 'object' || doc === null || Array.isArray(doc)) return doc;
  const d = doc as Record<string, unknown>;
  if (typeof d.url !== 'string' || /^[a-z][a-z0-9+.-]*:/i.test(d.url)) return doc;
  try {
    return { ...d, url: new URL(d.url, baseUrl).href };
  } catch {
    return doc;
  }
}

interface PostResult {
  status: number;
  body: Record<string, unknown> | undefined;
  retryAfterMs?: number;
}

/**
 * Runs the import and returns its summary. Throws {@link ImportAborted} when the server refuses
 * the credentials or the site, or stays unreachable.
 */
export async function runImport(opts: ImportOptions): Promise<ImportSummary> {
  const batchSize = opts.batchSize ?? MAX_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
    throw new ImportAborted(`--batch-size must be an integer from 1 to ${MAX_BATCH} (got ${batchSize}).`);
  }
  if (opts.baseUrl !== undefined) {
    let ok = false;
    try {
      ok = /^https?:$/.test(new URL(opts.baseUrl).protocol);
    } catch {
      ok = false;
    }
    if (!ok) throw new ImportAborted(`--base-url must be an absolute http(s) URL such as https://example.com/docs/ (got ${JSON.stringify(opts.baseUrl)}).`);
  }
  const concurrency = Math.max(1, opts.concurrency ?? 2);
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? Date.now;
  const out = opts.out ?? process.stderr;
  const started = clock();

  const files = await listInputFiles(opts.input);
  if (files.length === 0) throw new ImportAborted(`No .json, .jsonl or .jsonl.gz files found in ${opts.input}.`);
  let totalBytes = 0;
  for (const f of files) totalBytes += await inputSize(f);

  const summary: ImportSummary = { read: 0, indexed: 0, rejected: [], elapsedMs: 0 };
  const task = opts.reportTask === false ? null : await ReindexTask.create(opts, doFetch, clock, path.basename(opts.input));
  if (task) {
    summary.taskId = task.id;
    out.write(`reindex task ${task.id} (GET /tasks/${task.id} shows its progress)\n`);
  }
  const progress = new Progress(out, totalBytes, clock, clock(), task);

  let replaceId: string | undefined;
  const endpoint = (refresh: boolean): string => {
    const u = new URL('/sites/pagesJson', opts.serverUrl);
    u.searchParams.set('site', opts.siteId);
    if (opts.ignoreUndefinedFilters) u.searchParams.set('ignoreUndefinedFilters', 'true');
    if (replaceId !== undefined) u.searchParams.set('replaceId', replaceId);
    else if (refresh) u.searchParams.set('refresh', 'true');
    return u.href;
  };

  // The replace's own calls: start, commit, abort. Not retried past a few connection errors.
  const replaceCall = async (method: string, route: string): Promise<Record<string, unknown>> => {
    const u = new URL(route, opts.serverUrl);
    u.searchParams.set('site', opts.siteId);
    if (replaceId !== undefined) u.searchParams.set('replaceId', replaceId);
    let res: Response | undefined;
    for (let attempt = 0; !res; attempt++) {
      try {
        res = await doFetch(u.href, { method, headers: { authorization: `Bearer ${opts.masterKey}` } });
      } catch (err) {
        if (attempt >= 4) throw new ImportAborted(`Cannot reach ${opts.serverUrl}: ${(err as Error).message}. Is the server running (make start)?`);
        await delay(250 * 2 ** attempt);
      }
    }
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status !== 200) throw new ImportAborted(`The server refused ${method} ${route} (${res.status} ${String(body.code ?? '')}): ${String(body.message ?? '')}`);
    return body;
  };

  const post = async (docs: unknown[], refresh: boolean): Promise<PostResult> => {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await doFetch(endpoint(refresh), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.masterKey}` },
          body: JSON.stringify(docs),
        });
      } catch (err) {
        if (attempt < 4) {
          await delay(250 * 2 ** attempt);
          continue;
        }
        throw new ImportAborted(`Cannot reach ${opts.serverUrl}: ${(err as Error).message}. Is the server running (make start)?`);
      }
      let body: Record<string, unknown> | undefined;
      try {
        body = (await res.json()) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      if ((res.status === 429 || res.status === 503) && attempt < 8) {
        const ra = Number(res.headers.get('retry-after'));
        await delay(Number.isFinite(ra) && ra > 0 ? Math.min(ra, 30) * 1000 : 500 * 2 ** Math.min(attempt, 5));
        continue;
      }
      return { status: res.status, body };
    }
  };

  const reasonOf = (r: PostResult): string => {
    const msg = typeof r.body?.message === 'string' ? r.body.message : `HTTP ${r.status}`;
    return msg;
  };

  const fatal = (r: PostResult): never => {
    throw new ImportAborted(`The server refused the import (${r.status} ${String(r.body?.code ?? '')}): ${reasonOf(r)}`);
  };

  // Posts a batch: null when accepted (and counted); stops the import when the key or route is
  // refused; otherwise the refusal, for the caller to isolate the bad entries.
  const attempt = async (batch: ImportEntry[], refresh: boolean): Promise<{ r: PostResult; docs: unknown[] } | null> => {
    const docs = batch.map((e) => withBaseUrl(e.doc, opts.baseUrl));
    const r = await post(docs, refresh);
    if (r.status === 200 || r.status === 202) {
      summary.indexed += typeof r.body?.indexed === 'number' ? r.body.indexed : batch.length;
      return null;
    }
    if (r.status === 401 || r.status === 403 || r.status === 404 || r.status === 405) fatal(r);
    return { r, docs };
  };

  // Sends entries and isolates failures; never throws for per-document problems.
  const send = async (batch: ImportEntry[], refresh: boolean): Promise<void> => {
    const refused = await attempt(batch, refresh);
    if (!refused) return;
    const { r, docs } = refused;
    const code = r.body?.code;
    if (batch.length === 1) {
      const url = urlOf(docs[0]);
      summary.rejected.push({ origin: batch[0]!.origin, ...(url ? { url } : {}), reason: reasonOf(r) });
      return;
    }
    if (code === 'invalid_document' && Array.isArray(r.body?.errors)) {
      // The server names the bad entries: reject exactly those, resend the rest together.
      const byIndex = new Map<number, string[]>();
      for (const e of r.body.errors as Array<{ index?: unknown; field?: unknown; message?: unknown }>) {
        if (typeof e.index !== 'number') continue;
        const list = byIndex.get(e.index) ?? [];
        list.push(`${String(e.field)} ${String(e.message)}`);
        byIndex.set(e.index, list);
      }
      if (byIndex.size > 0 && [...byIndex.keys()].every((i) => i >= 0 && i < batch.length)) {
        const good: ImportEntry[] = [];
        batch.forEach((entry, i) => {
          const problems = byIndex.get(i);
          if (problems) {
            const url = urlOf(docs[i]);
            summary.rejected.push({ origin: entry.origin, ...(url ? { url } : {}), reason: problems.join('; ') });
          } else good.push(entry);
        });
        if (good.length > 0) await sendOneByOneIfNeeded(good, refresh);
        return;
      }
    }
    if (r.status === 413) {
      // Too big together: halve until each part fits (a single oversized entry is rejected above).
      const mid = Math.ceil(batch.length / 2);
      await send(batch.slice(0, mid), false);
      await send(batch.slice(mid), refresh);
      return;
    }
    if (r.status >= 500 && r.status !== 501) fatal(r);
    for (let i = 0; i < batch.length; i++) await send([batch[i]!], refresh && i === batch.length - 1);
  };

  // After removing the named bad entries the rest should pass; if not, fall back to one by one.
  const sendOneByOneIfNeeded = async (batch: ImportEntry[], refresh: boolean): Promise<void> => {
    if (!(await attempt(batch, refresh))) return;
    for (let i = 0; i < batch.length; i++) await send([batch[i]!], refresh && i === batch.length - 1);
  };

  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let bytesRead = 0;
  const dispatch = async (batch: ImportEntry[], refresh: boolean): Promise<void> => {
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (failure) throw failure;
    // Progress counts input as done once the batch read up to here is answered.
    const mark = bytesRead;
    const p: Promise<void> = send(batch, refresh)
      .catch((err) => {
        failure ??= err;
      })
      .finally(() => {
        inFlight.delete(p);
        if (!failure) progress.done(mark, summary);
      });
    inFlight.add(p);
  };

  const feed = async (): Promise<void> => {
    let pending: ImportEntry[] = [];
    for (const file of files) {
      for await (const entry of readEntries(file, (n) => (bytesRead += n))) {
        summary.read++;
        if (entry.parseError !== undefined) {
          summary.rejected.push({ origin: entry.origin, reason: entry.parseError });
          continue;
        }
        pending.push(entry);
        if (pending.length === batchSize) {
          await dispatch(pending, false);
          pending = [];
        }
      }
    }
    // The final batch goes last, alone, so that refresh=true covers everything before it.
    while (inFlight.size > 0) await Promise.race(inFlight);
    if (failure) throw failure;
    if (pending.length > 0) await dispatch(pending, opts.refreshAtEnd ?? false);
    while (inFlight.size > 0) await Promise.race(inFlight);
    if (failure) throw failure;
  };
  try {
    if (opts.replace) {
      const begun = await replaceCall('POST', '/index/replace');
      replaceId = String(begun.replaceId);
    }
    if (replaceId === undefined) {
      await feed();
    } else {
      try {
        await feed();
      } catch (err) {
        await replaceCall('DELETE', '/index/replace').catch(() => undefined);
        throw err;
      }
      out.write(`swapping the new index in (${summary.indexed} pages staged)…\n`);
      const r = await replaceCall('POST', '/index/replace/commit');
      summary.replaced = { pages: Number(r.pages), removed: Number(r.removed), mirrored: Number(r.mirrored) };
    }
  } catch (err) {
    await task?.end(summary, 'failed', `Aborted: ${(err as Error).message}`.slice(0, 2000));
    throw err;
  }
  summary.elapsedMs = clock() - started;
  progress.finish(summary);
  await task?.end(summary, 'done', `${summary.indexed} indexed, ${summary.rejected.length} rejected`);
  return summary;
}

/**
 * Bytes {@link readEntries} will report for `file`: its size, or for `.gz` the uncompressed size
 * from the gzip trailer (ISIZE, exact below 4 GiB for single-member files).
 */
export async function inputSize(file: string): Promise<number> {
  const { size } = await fsp.stat(file);
  if (!file.endsWith('.gz') || size < 18) return size;
  const fh = await fsp.open(file, 'r');
  try {
    const buf = Buffer.alloc(4);
    await fh.read(buf, 0, 4, size - 4);
    return buf.readUInt32LE(0);
  } finally {
    await fh.close();
  }
}

/** Renders the final summary as lines of text (at most `maxReasons` rejection lines). */
export function formatSummary(s: ImportSummary, maxReasons = 20): string {
  const secs = s.elapsedMs / 1000;
  const rate = secs > 0 ? Math.round(s.indexed / secs) : s.indexed;
  const lines = [`Imported ${s.read} entries in ${secs.toFixed(1)} s: ${s.indexed} indexed, ${s.rejected.length} rejected (${rate} docs/s).`];
  for (const r of s.rejected.slice(0, maxReasons)) {
    lines.push(`  rejected ${r.origin}${r.url ? ` (${r.url})` : ''}: ${r.reason}`);
  }
  if (s.rejected.length > maxReasons) lines.push(`  … and ${s.rejected.length - maxReasons} more rejected entries`);
  if (s.replaced) {
    lines.push(`Replaced the index: ${s.replaced.pages} searchable pages, ${s.replaced.removed} pages not in the input removed, ${s.replaced.mirrored} writes made during the import kept.`);
  }
  return lines.join('\n');
}

/** The task progress figures of an import so far (the same words as `GET /tasks` uses). */
function figures(s: ImportSummary): string {
  return `found ${s.read}, fetched ${s.indexed + s.rejected.length}, indexed ${s.indexed}, failed ${s.rejected.length}`;
}

function urlOf(doc: unknown): string | undefined {
  const u = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>).url : undefined;
  return typeof u === 'string' ? u : undefined;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The import's reindex task on the server: created at the start, its counts (the task
 * progress figures: found = entries read, indexed, failed = rejected) sent at most once a
 * second in order, and its end. Reporting is best effort: a refused or failed report never
 * stops the import.
 */
class ReindexTask {
  private chain: Promise<void> = Promise.resolve();
  private lastSent = -Infinity;

  private constructor(
    readonly id: string,
    private readonly url: (suffix: string) => string,
    private readonly headers: Record<string, string>,
    private readonly doFetch: typeof fetch,
    private readonly clock: () => number,
  ) {}

  /** Creates the task, or null when the server does not keep one (an older server, a refusal). */
  static async create(opts: ImportOptions, doFetch: typeof fetch, clock: () => number, source: string): Promise<ReindexTask | null> {
    const url = (suffix: string): string => {
      const u = new URL(`/tasks${suffix}`, opts.serverUrl);
      u.searchParams.set('site', opts.siteId);
      return u.href;
    };
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${opts.masterKey}` };
    try {
      const res = await doFetch(url(''), { method: 'POST', headers, body: JSON.stringify({ type: 'reindex', source: source.slice(0, 500) }) });
      const body = (await res.json().catch(() => ({}))) as { taskId?: unknown };
      if (res.status !== 201 || typeof body.taskId !== 'string') return null;
      return new ReindexTask(body.taskId, url, headers, doFetch, clock);
    } catch {
      return null;
    }
  }

  private send(report: Record<string, unknown>): Promise<void> {
    this.chain = this.chain.then(async () => {
      try {
        const res = await this.doFetch(this.url(`/${this.id}`), { method: 'PATCH', headers: this.headers, body: JSON.stringify(report) });
        await res.body?.cancel();
      } catch {
        // Best effort: the import goes on without the report.
      }
    });
    return this.chain;
  }

  /** Sends the counts unless they were sent less than a second ago. */
  update(s: ImportSummary): void {
    const now = this.clock();
    if (now - this.lastSent < 1000) return;
    this.lastSent = now;
    void this.send({ found: s.read, indexed: s.indexed, failed: s.rejected.length });
  }

  /** Sends the final counts with the task's end state; resolves once every report is sent. */
  end(s: ImportSummary, state: 'done' | 'failed', message: string): Promise<void> {
    return this.send({ found: s.read, indexed: s.indexed, failed: s.rejected.length, state, message });
  }
}

/**
 * A progress bar on a TTY; a plain line per 10 % otherwise, and always a last line at the end.
 * Progress is the share of input bytes whose documents the server has answered. Each line ends
 * with the reindex task's figures (found: entries read; fetched: answered, indexed + rejected).
 */
class Progress {
  private doneBytes = 0;
  private lastDecile = 0;
  private lastDraw = -Infinity;
  private lastLine = '';
  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number },
    private readonly total: number,
    private readonly clock: () => number,
    private readonly started = clock(),
    private readonly task: ReindexTask | null = null,
  ) {}

  /** Input up to byte `mark` has been answered. */
  done(mark: number, s: ImportSummary): void {
    this.doneBytes = Math.max(this.doneBytes, mark);
    this.draw(s, false);
    this.task?.update(s);
  }

  private fraction(): number {
    return this.total > 0 ? Math.min(1, this.doneBytes / this.total) : 1;
  }

  private draw(s: ImportSummary, final: boolean): void {
    const f = this.fraction();
    if (this.out.isTTY) {
      const now = this.clock();
      if (!final && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      const width = Math.max(10, Math.min(40, (this.out.columns ?? 80) - 50));
      const filled = Math.round(f * width);
      const secs = (now - this.started) / 1000;
      const rate = secs > 0 ? Math.round(s.indexed / secs) : 0;
      this.out.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(f * 100)).padStart(3)}% ${s.indexed} indexed, ${s.rejected.length} rejected, ${rate}/s — ${figures(s)} `);
      if (final) this.out.write('\n');
      return;
    }
    const decile = Math.floor(f * 10);
    if (decile > this.lastDecile || final) {
      this.lastDecile = decile;
      const line = `${decile * 10}% done: ${s.indexed} indexed, ${s.rejected.length} rejected — ${figures(s)}\n`;
      if (line !== this.lastLine) this.out.write(line);
      this.lastLine = line;
    }
  }

  finish(s: ImportSummary): void {
    this.doneBytes = this.total;
    this.draw(s, true);
  }
}
