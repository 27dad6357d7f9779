/**
 * Result text as text: the server's highlighted fields are HTML-escaped text with `<mark>`
 * around matched words (highlightQueryTerms=true). They are split on those two tags and the
 * rest is decoded and inserted as text nodes, so nothing in a page's title or content can
 * become markup — whatever the server sends.
 */
import type { ComponentChildren } from 'preact';

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** Decodes the five entities the server's escaping produces; anything else stays as written. */
export function decodeEntities(s: string): string {
  return s.indexOf('&') < 0 ? s : s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
}

/** The pieces of a highlighted field: text, and whether it was inside `<mark>`. */
export function markedParts(s: string): Array<{ text: string; marked: boolean }> {
  const out: Array<{ text: string; marked: boolean }> = [];
  let marked = false;
  for (const piece of s.split(/(<mark>|<\/mark>)/)) {
    if (piece === '<mark>') marked = true;
    else if (piece === '</mark>') marked = false;
    else if (piece !== '') out.push({ text: decodeEntities(piece), marked });
  }
  return out;
}

/** Renders a highlighted field: text nodes and `<mark>` elements only. */
export function Marked({ text }: { text: string }): ComponentChildren {
  return markedParts(text).map((p, i) => (p.marked ? <mark key={i}>{p.text}</mark> : p.text));
}

/** Plain text of a highlighted field (for labels and events). */
export function plain(s: string): string {
  return markedParts(s)
    .map((p) => p.text)
    .join('');
}

/** The owner's markup (custom results, `html` / `suggestionHtml`): the one place markup is inserted. */
export function OwnerHtml({ html, class: cls }: { html: string; class?: string }) {
  return <div class={cls} dangerouslySetInnerHTML={{ __html: html }} />;
}
