/**
 * The HTTP embedder: vectors from a service speaking the widely used `/v1/embeddings` request
 * shape (`POST {model, input: [texts]}` → `{data: [{index, embedding}]}`), as OpenAI, Ollama,
 * vLLM and text-embeddings-inference answer it. Texts go in batches; each request has a
 * timeout and failed requests (network errors, 408, 429, 5xx) are retried with backoff. Vectors
 * come back scaled to unit length, so cosine similarity is a dot product.
 *
 * Runs wherever an embedding is needed: the main thread (query vectors) and pool threads
 * (re-embedding segments). The URL is a project owner's setting (often a local model server),
 * so it is not subject to the crawler's address guard.
 */
import type { HttpEmbedderSettings } from '../core/index.js';

/** An embedder that failed for good (after its retries): the message names the URL and the cause. */
export class EmbedderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbedderError';
  }
}

/** Injectable for tests. */
export interface HttpEmbedderDeps {
  fetch?: typeof fetch;
  /** Waits between attempts (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
}

/** Characters of a text sent to the service (models truncate anyway; this bounds request sizes). */
export const HTTP_EMBED_MAX_CHARS = 4000;

const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * Unit vectors of `texts`, in order, `settings.batchSize` texts per request.
 * Throws {@link EmbedderError} when a batch still fails after `settings.retries` retries or the
 * service answers vectors of the wrong length.
 *
 * @example
 * const [v] = await embedHttp({ url: 'http://127.0.0.1:11434/v1/embeddings', model: 'nomic-embed-text',
 *   dimensions: 768, apiKey: null, batchSize: 32, timeoutMs: 10000, retries: 2 }, ['make my queries faster']);
 */
export async function embedHttp(settings: HttpEmbedderSettings, texts: string[], deps: HttpEmbedderDeps = {}): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += settings.batchSize) {
    const batch = texts.slice(i, i + settings.batchSize).map((t) => (t.length > HTTP_EMBED_MAX_CHARS ? t.slice(0, HTTP_EMBED_MAX_CHARS) : t) || ' ');
    out.push(...(await embedBatch(settings, batch, deps)));
  }
  return out;
}

async function embedBatch(s: HttpEmbedderSettings, input: string[], deps: HttpEmbedderDeps): Promise<Float32Array[]> {
  const doFetch = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`;
  const body = JSON.stringify({ model: s.model, input });
  let last = '';
  for (let attempt = 0; attempt <= s.retries; attempt++) {
    if (attempt > 0) await sleep(Math.min(5000, 250 * 2 ** (attempt - 1)));
    let res: Response;
    try {
      res = await doFetch(s.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(s.timeoutMs) });
    } catch (err) {
      const e = err as Error;
      last = e.name === 'TimeoutError' ? `no answer within ${s.timeoutMs} ms` : `${e.message}${(e as { cause?: Error }).cause ? ` (${(e as { cause?: Error }).cause!.message})` : ''}`;
      continue;
    }
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).slice(0, 200);
      last = `HTTP ${res.status}${text ? `: ${text}` : ''}`;
      if (RETRYABLE.has(res.status)) continue;
      break;
    }
    let json: { data?: Array<{ index?: number; embedding?: unknown }> };
    try {
      json = (await res.json()) as typeof json;
    } catch {
      last = 'the answer is not JSON';
      continue;
    }
    const data = Array.isArray(json.data) ? json.data : null;
    if (!data || data.length !== input.length) throw new EmbedderError(`embedder ${s.url}: expected ${input.length} embeddings, got ${data ? data.length : 'no data array'}`);
    const vecs = new Array<Float32Array>(input.length);
    data.forEach((d, j) => {
      const emb = d.embedding;
      if (!Array.isArray(emb) || emb.length !== s.dimensions) {
        throw new EmbedderError(`embedder ${s.url}: expected vectors of ${s.dimensions} dimensions, got ${Array.isArray(emb) ? emb.length : typeof emb}`);
      }
      vecs[typeof d.index === 'number' ? d.index : j] = unit(emb as number[]);
    });
    return vecs;
  }
  throw new EmbedderError(`embedder ${s.url} failed after ${s.retries + 1} attempt(s): ${last}`);
}

function unit(v: number[]): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / n;
  return out;
}
