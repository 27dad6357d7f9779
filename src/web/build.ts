/**
 * Bundles the browser code (the search widget and the Control Panel) with esbuild into
 * `dist/web/`: `widget.js` (one IIFE with its CSS inside, as text the widget adopts into its
 * shadow root), `panel.js` and `panel.css`, and `manifest.json` naming each file's content
 * hash and sizes (the server's ETags and versioned URLs come from it).
 *
 * Run by `make build` / `make test` (make rebuilds only when a source changed) and by the
 * browser tests' helper when `dist/web` is older than its sources:
 *
 * ```sh
 * node --import tsx src/web/build.ts            # writes dist/web/
 * ```
 *
 * Files are written to a temporary name and renamed, so a server or a parallel build never
 * reads half a file.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';

/** Repository root (this file is src/web/build.ts). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Where the bundles go. */
export const WEB_DIST = path.join(ROOT, 'dist/web');
const WEB_SRC = path.join(ROOT, 'src/web');

/** One bundled file as the manifest describes it. */
export interface WebAsset {
  file: string;
  /** First 16 hex digits of the SHA-256 of the bytes: the ETag and the `?v=` of versioned URLs. */
  hash: string;
  bytes: number;
  gzipBytes: number;
}

/** `dist/web/manifest.json`. */
export interface WebManifest {
  version: string;
  builtAt: string;
  assets: Record<'widget.js' | 'panel.js' | 'panel.css', WebAsset>;
}

/** The widget's own stylesheet is bundled as a string (it goes into a shadow root, not the page). */
const cssAsText: Plugin = {
  name: 'widget-css-as-text',
  setup(b) {
    b.onLoad({ filter: /[\\/]widget[\\/][^\\/]+\.css$/ }, (args) => ({ contents: readFileSync(args.path, 'utf8'), loader: 'text' }));
  },
};

function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function writeAtomically(file: string, data: Buffer | string): void {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

function asset(file: string, bytes: Uint8Array): WebAsset {
  return {
    file,
    hash: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
    bytes: bytes.length,
    gzipBytes: gzipSync(bytes, { level: 9 }).length,
  };
}

/**
 * Bundles widget and panel into `outDir` (default `dist/web`) and returns the manifest.
 *
 * @example
 * ```ts
 * const m = await buildWeb();
 * console.log(m.assets['widget.js'].gzipBytes);
 * ```
 */
export async function buildWeb(outDir = WEB_DIST): Promise<WebManifest> {
  mkdirSync(outDir, { recursive: true });
  const version = packageVersion();
  const common = {
    bundle: true,
    minify: true,
    write: false,
    legalComments: 'none' as const,
    jsx: 'automatic' as const,
    jsxImportSource: 'preact',
    target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
    define: { __SITESIFT_VERSION__: JSON.stringify(version) },
    plugins: [cssAsText],
    logLevel: 'warning' as const,
    absWorkingDir: ROOT,
  };
  const [widget, panel] = await Promise.all([
    build({ ...common, entryPoints: [path.join(WEB_SRC, 'widget/index.ts')], format: 'iife', outfile: path.join(outDir, 'widget.js') }),
    build({ ...common, entryPoints: [path.join(WEB_SRC, 'panel/index.tsx')], format: 'iife', outfile: path.join(outDir, 'panel.js') }),
  ]);
  const files = new Map<string, Uint8Array>();
  for (const out of [...(widget.outputFiles ?? []), ...(panel.outputFiles ?? [])]) files.set(path.basename(out.path), out.contents);
  const assets = {} as WebManifest['assets'];
  for (const name of ['widget.js', 'panel.js', 'panel.css'] as const) {
    const bytes = files.get(name);
    if (!bytes) throw new Error(`esbuild produced no ${name}`);
    writeAtomically(path.join(outDir, name), Buffer.from(bytes));
    assets[name] = asset(name, bytes);
  }
  const manifest: WebManifest = { version, builtAt: new Date().toISOString(), assets };
  writeAtomically(path.join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Builds unless `dist/web/manifest.json` is newer than every file under `src/web` (what the
 * Makefile's rule does, for callers that run without make, such as a single test file).
 */
export async function ensureWebBuild(): Promise<WebManifest> {
  const manifestFile = path.join(WEB_DIST, 'manifest.json');
  let built = 0;
  try {
    built = statSync(manifestFile).mtimeMs;
  } catch {
    built = 0;
  }
  if (built > newestSource(WEB_SRC)) return JSON.parse(readFileSync(manifestFile, 'utf8')) as WebManifest;
  return buildWeb();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const m = await buildWeb();
  for (const a of Object.values(m.assets)) console.log(`dist/web/${a.file}  ${a.bytes} bytes, ${a.gzipBytes} gzip`);
}
