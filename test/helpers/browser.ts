/**
 * Browser test helpers (test process): Debian's chromium driven by playwright-core — never a
 * downloaded browser — with a fresh profile per launch, and small local web servers for host
 * pages (an owner's site embedding the widget) and crawl fixtures.
 *
 * - {@link launchBrowser}: builds dist/web if a source changed, launches chromium headless;
 *   closes it (and removes the profile) at the end of `t`.
 * - {@link startPages}: an HTTP server on 127.0.0.1 serving fixed pages; its `url` uses the
 *   name `localhost`, so a host page and the sitesift server (127.0.0.1) are different origins.
 * - {@link waitFor}: polls a condition on the public API, bounded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/web/build.js';

/** Where Debian installs chromium (`.ci/run` installs it when missing). */
export const CHROMIUM = process.env.SITESIFT_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a closed network: no background fetches, no first-run work, no GPU. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface Browser {
  context: BrowserContext;
  /** A new tab; `viewport` defaults to 1280×800. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Launches chromium with a fresh user-data dir. With `t`, closes it at the end of the test.
 *
 * @example
 * ```ts
 * const browser = await launchBrowser(t);
 * const page = await browser.newPage();
 * await page.goto(server.url + '/panel');
 * ```
 */
export async function launchBrowser(t?: Teardown): Promise<Browser> {
  await ensureWebBuild();
  const profile = mkdtempSync(path.join(os.tmpdir(), 'sitesift-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    timeout: 60_000,
  });
  context.setDefaultTimeout(20_000);
  let closed = false;
  const browser: Browser = {
    context,
    async newPage(viewport) {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      if (closed) return;
      closed = true;
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
  t?.teardown(() => browser.close());
  return browser;
}

export interface Pages {
  /** `http://localhost:<port>` */
  url: string;
  /** path → page; add or replace entries at any time. */
  pages: Map<string, { type?: string; body: string; status?: number; headers?: Record<string, string>; delayMs?: number }>;
  /** Requests received, in order (method and path). */
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

/** Serves `pages` on 127.0.0.1 (addressed as localhost). Unknown paths are 404s. */
export async function startPages(initial: Record<string, string> = {}, t?: Teardown): Promise<Pages> {
  const pages: Pages['pages'] = new Map(Object.entries(initial).map(([p, body]) => [p, { body }]));
  const requests: Pages['requests'] = [];
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method ?? 'GET', path: p });
    const entry = pages.get(p);
    if (!entry) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Not found</title><h1>Not found</h1>');
      return;
    }
    const send = () => {
      res.writeHead(entry.status ?? 200, { 'content-type': entry.type ?? 'text/html; charset=utf-8', ...entry.headers });
      res.end(entry.body);
    };
    if (entry.delayMs) setTimeout(send, entry.delayMs);
    else send();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const out: Pages = {
    url: `http://localhost:${port}`,
    pages,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  t?.teardown(() => out.close());
  return out;
}

/** A host page that embeds the widget with the two documented lines (plus `extraHead`). */
export function hostPage(serverUrl: string, site: string, opts: { extraHead?: string; attrs?: string; body?: string } = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>An owner's page</title>
<script src="${serverUrl}/widget.js" defer></script>
${opts.extraHead ?? ''}
</head><body>
<main><h1>An owner's page</h1>
<div id="search" data-sitesift="${site}" ${opts.attrs ?? ''}></div>
${opts.body ?? ''}
</main></body></html>`;
}

/** Polls `check` every 50 ms until it holds (at most `ms`, default 20 s). */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
