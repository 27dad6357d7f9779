/**
 * widget.js: defines `window.sitesift` and mounts the widget into every
 * `<div data-sitesift="SITE_ID">` once the document is parsed.
 *
 * Options from attributes: `data-placeholder`, `data-label`, `data-endpoint`,
 * `data-results-limit`, and `data-options` (a JSON object with any option of
 * `sitesift.mount`, for example `{"results":{"filters":[…]}}`).
 */
import { mount } from './mount';
import type { MountOptions, WidgetHandle } from './types';

declare const __SITESIFT_VERSION__: string;

/** Where this script was loaded from: the server the widget talks to by default. */
const script = document.currentScript as HTMLScriptElement | null;
const scriptBase = script && script.src ? new URL('.', script.src).toString() : new URL('/', location.href).toString();

function optionsOf(el: HTMLElement): MountOptions | null {
  const site = el.getAttribute('data-sitesift');
  if (!site) return null;
  let extra: Partial<MountOptions> = {};
  const json = el.getAttribute('data-options');
  if (json) {
    try {
      extra = JSON.parse(json) as Partial<MountOptions>;
    } catch {
      console.error('sitesift: data-options is not valid JSON', el);
    }
  }
  const texts = { ...extra.texts };
  const placeholder = el.getAttribute('data-placeholder');
  const label = el.getAttribute('data-label');
  if (placeholder) texts.placeholder = placeholder;
  if (label) texts.label = label;
  const opts: MountOptions = { ...extra, site, texts };
  const endpoint = el.getAttribute('data-endpoint');
  if (endpoint) opts.endpoint = endpoint;
  const limit = Number(el.getAttribute('data-results-limit'));
  if (limit > 0) opts.results = { ...opts.results, limit };
  return opts;
}

/** Mounts every `[data-sitesift]` element not mounted yet. */
function mountAll(root: ParentNode = document): WidgetHandle[] {
  const out: WidgetHandle[] = [];
  root.querySelectorAll<HTMLElement>('[data-sitesift]').forEach((el) => {
    const opts = optionsOf(el);
    if (opts) out.push(mount(el, opts, scriptBase));
  });
  return out;
}

const api = {
  version: __SITESIFT_VERSION__,
  mount: (element: Element, options: MountOptions) => mount(element, options, scriptBase),
  mountAll,
};

declare global {
  interface Window {
    sitesift?: typeof api;
  }
}

if (!window.sitesift) {
  window.sitesift = api;
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => mountAll());
  else mountAll();
}
