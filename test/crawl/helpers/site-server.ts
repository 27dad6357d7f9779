/**
 * A real HTTP server on 127.0.0.1 serving test/fixtures/crawl/site (plus `/old` → 301 to
 * `/a.html`). Counts requests per path so tests can assert what was fetched.
 */
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';

const ROOT = fileURLToPath(new URL('../../fixtures/crawl/site/', import.meta.url));
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.txt': 'text/plain; charset=utf-8', '.xml': 'application/xml' };

export interface SiteServer {
  url: string;
  hits: Map<string, number>;
  /** Extra routes: path → handler (wins over files). */
  routes: Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>;
  close(): Promise<void>;
}

export async function startSiteServer(): Promise<SiteServer> {
  const hits = new Map<string, number>();
  const routes = new Map<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>();
  const server = http.createServer(async (req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const custom = routes.get(p);
    if (custom) return custom(req, res);
    if (p === '/old') {
      res.writeHead(301, { location: '/a.html' });
      return res.end();
    }
    const file = path.join(ROOT, p.endsWith('/') ? p + 'index.html' : p);
    if (!file.startsWith(ROOT)) {
      res.writeHead(400);
      return res.end();
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not found</h1>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    routes,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
