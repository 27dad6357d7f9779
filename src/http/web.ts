/**
 * The browser side, served by the server itself (main thread):
 *
 * - `GET /widget.js` — the search widget (one file, its CSS inside). `Cache-Control` of 5
 *   minutes plus a day of stale-while-revalidate, a weak `ETag` from the content hash, `304`
 *   on `If-None-Match`; `?v=<hash>` (the current hash) is cached for a year, immutable.
 * - `GET /panel` — the Control Panel's page, `GET /panel/panel.js` and `/panel/panel.css`.
 * - `GET /` — a demo page with the widget on the `default` project.
 *
 * The bundles are built by src/web/build.ts into `dist/web/` (`make build`); this module reads
 * `dist/web/manifest.json` and the files, keeps them and a gzip copy in memory, and reloads
 * them when the manifest changes. Every page and script carries a strict
 * Content-Security-Policy: scripts and styles only from this origin, no inline script, no
 * framing. Also registers the small Control Panel APIs of src/http/panel-api.ts.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../core/index.js';
import type { Services } from '../services.js';
import * as panelApi from './panel-api.js';
import type { RouteSpec } from './openapi.js';

const HTML = { media: 'text/html', description: 'An HTML page' };
const SCRIPT = { media: 'text/javascript', description: 'A script bundle' };

/** The routes of this module and of the Control Panel APIs, for the OpenAPI document (src/http/openapi.ts). */
export const ROUTES: RouteSpec[] = [
  { method: 'get', path: '/widget.js', summary: 'The search widget', auth: 'public', responses: { 200: SCRIPT } },
  { method: 'get', path: '/panel/:file', summary: 'A Control Panel asset: panel.js or panel.css', auth: 'public', responses: { 200: { media: ['text/javascript', 'text/css'], description: 'panel.js or panel.css' } } },
  { method: 'get', path: '/panel', summary: 'The Control Panel', auth: 'public', responses: { 200: HTML } },
  { method: 'get', path: '/', summary: 'The demo search page', auth: 'public', responses: { 200: HTML } },
  ...panelApi.ROUTES,
];

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** `dist/web` seen from src/http (tsx) and from dist/src/http (the build). */
const CANDIDATE_DIRS = [path.resolve(HERE, '../../dist/web'), path.resolve(HERE, '../../web')];

/** CSP of the panel and demo pages: same-origin scripts, styles and API calls only. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: http: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** CSP of script and stylesheet responses (nothing may run in their own context). */
export const ASSET_CSP = "default-src 'none'; frame-ancestors 'none'";

type AssetName = 'widget.js' | 'panel.js' | 'panel.css';

interface LoadedAsset {
  body: Buffer;
  gzip: Buffer;
  hash: string;
  type: string;
}

interface Loaded {
  mtimeMs: number;
  version: string;
  assets: Map<AssetName, LoadedAsset>;
}

const TYPES: Record<AssetName, string> = {
  'widget.js': 'text/javascript; charset=utf-8',
  'panel.js': 'text/javascript; charset=utf-8',
  'panel.css': 'text/css; charset=utf-8',
};

/** The built bundles, reloaded when `manifest.json` changes. */
class WebAssets {
  private loaded: Loaded | null = null;

  constructor(private readonly dirs: readonly string[]) {}

  private dir(): string | null {
    return this.dirs.find((d) => existsSync(path.join(d, 'manifest.json'))) ?? null;
  }

  get(): Loaded {
    const dir = this.dir();
    if (!dir) {
      throw new AppError('not_implemented', 'The widget and Control Panel are not built; run "make build" (it bundles src/web into dist/web).');
    }
    const manifestFile = path.join(dir, 'manifest.json');
    const mtimeMs = statSync(manifestFile).mtimeMs;
    if (this.loaded && this.loaded.mtimeMs === mtimeMs) return this.loaded;
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { version: string; assets: Record<AssetName, { file: string; hash: string }> };
    const assets = new Map<AssetName, LoadedAsset>();
    for (const name of Object.keys(TYPES) as AssetName[]) {
      const body = readFileSync(path.join(dir, manifest.assets[name].file));
      assets.set(name, { body, gzip: gzipSync(body, { level: 9 }), hash: manifest.assets[name].hash, type: TYPES[name] });
    }
    this.loaded = { mtimeMs, version: manifest.version, assets };
    return this.loaded;
  }

  asset(name: AssetName): LoadedAsset {
    return this.get().assets.get(name)!;
  }
}

/** True when an `If-None-Match` header lists `etag` (weak comparison, `*` matches). */
export function etagMatches(header: string, etag: string): boolean {
  if (header === '') return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => {
    const s = t.trim();
    return s === '*' || s.replace(/^W\//, '') === bare;
  });
}

function sendAsset(ctx: Context, a: LoadedAsset, version: string): void {
  const etag = `W/"${a.hash}"`;
  const versioned = ctx.query.v === a.hash;
  ctx.set('Cache-Control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300, stale-while-revalidate=86400');
  ctx.set('ETag', etag);
  ctx.set('Vary', 'Accept-Encoding');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', ASSET_CSP);
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  ctx.set('X-Sitesift-Version', `${version}+${a.hash}`);
  if (etagMatches(ctx.get('If-None-Match'), etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = a.type;
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = a.gzip;
  } else {
    ctx.body = a.body;
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function sendPage(ctx: Context, html: string): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

/** The panel's page: one stylesheet, one deferred script, no inline code. */
function panelHtml(assets: WebAssets): string {
  const css = assets.asset('panel.css');
  const js = assets.asset('panel.js');
  return page(
    'sitesift Control Panel',
    `<link rel="stylesheet" href="/panel/panel.css?v=${css.hash}">\n<script src="/panel/panel.js?v=${js.hash}" defer></script>`,
    `<div id="app"></div>\n<noscript>The Control Panel needs JavaScript.</noscript>`,
  );
}

/** The demo page at `/`: the widget on the `default` project, mounted by the two documented lines. */
function demoHtml(assets: WebAssets, hasDefault: boolean, origin: string): string {
  const css = assets.asset('panel.css');
  const js = assets.asset('widget.js');
  const widget = hasDefault
    ? `<div data-sitesift="default" data-placeholder="Search the default project…"></div>`
    : `<p class="demo-note">There is no <code>default</code> project on this server. Create one with <code>sitesift project create default</code> and index a few pages, or open the <a href="/panel">Control Panel</a>.</p>`;
  return page(
    'sitesift — search demo',
    `<link rel="stylesheet" href="/panel/panel.css?v=${css.hash}">\n<script src="/widget.js?v=${js.hash}" defer></script>`,
    `<main class="demo">
<h1>sitesift</h1>
<p>The search widget on the <code>default</code> project. Type to see suggestions, press Enter for results.</p>
${widget}
<h2>On your own site</h2>
<pre><code>&lt;script src="${escapeHtml(origin)}/widget.js" defer&gt;&lt;/script&gt;
&lt;div data-sitesift="SITE_ID"&gt;&lt;/div&gt;</code></pre>
<p>Manage projects, keys, settings, crawls and reports in the <a href="/panel">Control Panel</a>.</p>
</main>`,
  );
}

/**
 * Registers `GET /`, `/widget.js`, `/panel` and the panel's assets, plus the Control Panel
 * APIs (src/http/panel-api.ts). `dirs` overrides where the bundles are looked for (tests).
 */
export function register(router: Router, services: Services, dirs: readonly string[] = CANDIDATE_DIRS): void {
  const assets = new WebAssets(dirs);

  router.get('/widget.js', (ctx) => {
    const loaded = assets.get();
    sendAsset(ctx, loaded.assets.get('widget.js')!, loaded.version);
  });

  router.get('/panel/:file', (ctx) => {
    const file = ctx.params.file;
    if (file !== 'panel.js' && file !== 'panel.css') throw new AppError('not_found', `No Control Panel file "${file}".`);
    const loaded = assets.get();
    sendAsset(ctx, loaded.assets.get(file)!, loaded.version);
  });

  router.get('/panel', (ctx) => sendPage(ctx, panelHtml(assets)));

  router.get('/', (ctx) => {
    sendPage(ctx, demoHtml(assets, services.projects.hasProject('default'), `${ctx.protocol}://${ctx.host}`));
  });

  panelApi.register(router, services);
}
