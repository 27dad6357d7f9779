/**
 * `sitesift.mount(element, options)`: renders the widget into an open shadow root of
 * `element`, so the host page's CSS cannot reach inside (and the widget's cannot leak out).
 * The stylesheet is adopted as a constructed stylesheet where the browser supports it — no
 * `<style>` element, so a page with a strict `style-src` Content-Security-Policy works too.
 */
import { h, render } from 'preact';
import css from './widget.css';
import type { MountOptions, WidgetHandle } from './types';
import { Widget } from './Widget';

let sheet: CSSStyleSheet | null = null;
let counter = 0;
const mounted = new WeakMap<Element, WidgetHandle>();

function adoptStyles(root: ShadowRoot): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
    }
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement('style');
  style.textContent = css;
  root.appendChild(style);
}

/**
 * Mounts the widget into `element` and returns a handle. `base` is the sitesift server's URL
 * (default: where widget.js came from). Mounting an element twice returns the first handle.
 *
 * @example
 * ```js
 * sitesift.mount(document.querySelector('#search'), { site: 'docs', results: { limit: 20 } });
 * ```
 */
export function mount(element: Element, options: MountOptions, defaultBase: string): WidgetHandle {
  if (!(element instanceof Element)) throw new TypeError('sitesift.mount: the first argument must be an element');
  if (!options || typeof options.site !== 'string' || options.site === '') throw new TypeError('sitesift.mount: options.site (your site ID) is required');
  const existing = mounted.get(element);
  if (existing) return existing;
  const base = new URL(options.endpoint ? options.endpoint.replace(/\/?$/, '/') : defaultBase, document.baseURI);
  const shadow = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
  adoptStyles(shadow);
  const container = document.createElement('div');
  container.className = 'ss-host';
  shadow.appendChild(container);
  const uid = `ss${++counter}`;
  let api: { search(q: string): void } | null = null;
  const emit = (type: string, detail: unknown) => element.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  render(h(Widget, { opts: options, base, uid, emit, register: (a) => (api = a) }), container);
  const handle: WidgetHandle = {
    search: (q: string) => api?.search(q),
    destroy: () => {
      render(null, container);
      container.remove();
      mounted.delete(element);
    },
  };
  mounted.set(element, handle);
  return handle;
}
