/**
 * The Control Panel rules of a project applied to one parsed HTML page: result groups, data
 * points (CSS selector, meta tag or JSON-LD path) and the filter values derived from them (a
 * document gets its result group by URL pattern only). Pure;
 * runs in the pool worker, over the cheerio view of the page's tree that the HTML extractor
 * creates only when a rule needs selectors.
 *
 * Invariants: an invalid selector matches nothing and never fails the page; a data point whose
 * value does not fit its declared type is left out rather than stored wrong.
 */
import type * as cheerio from 'cheerio/slim';
import type { AnyNode } from 'domhandler';
import type { DataPoint, DataPointRule, FilterValue, ResultGroupRule, Settings } from '../../core/index.js';
import { matchesPattern } from '../../text/index.js';
import { collapse } from './whitespace.js';

/** Control Panel rules applied to URL-only pages; absent (null) for a JSON page's appended content. */
export type PageRules = Pick<Settings, 'contentExtraction' | 'dataPoints' | 'resultGroups' | 'filters'>;

/** The page's cheerio view, created on first call (most pages never need one). */
export type LazyCheerio = () => cheerio.CheerioAPI;

/**
 * Runs a selector; null when it is invalid (an invalid Control Panel selector matches nothing).
 *
 * @example safeSelect($, 'h1.title')?.first().text()
 */
export function safeSelect($: cheerio.CheerioAPI, sel: string): cheerio.Cheerio<AnyNode> | null {
  try {
    return $(sel);
  } catch {
    return null;
  }
}

/**
 * Coerces a raw data point string to its declared type; null when it does not fit (the data
 * point is then left out rather than stored wrong).
 *
 * @example coerceDataPoint('1.299,50 €', 'number') // '1299.5'
 */
export function coerceDataPoint(raw: string, type: DataPointRule['type']): string | null {
  const v = collapse(raw);
  if (!v) return null;
  switch (type) {
    case 'text':
      return v;
    case 'number': {
      // "1.299,00 €" and "$1,299.00" both occur; take the last separator as the decimal one.
      const m = v.match(/-?[\d.,\s]*\d/);
      if (!m) return null;
      let n = m[0].replace(/\s/g, '');
      const lastDot = n.lastIndexOf('.');
      const lastComma = n.lastIndexOf(',');
      if (lastComma > lastDot) n = n.replace(/\./g, '').replace(',', '.');
      else n = n.replace(/,/g, '');
      const num = Number(n);
      return Number.isFinite(num) ? String(num) : null;
    }
    case 'date': {
      const t = Date.parse(v);
      return Number.isFinite(t) ? new Date(t).toISOString() : null;
    }
    case 'boolean': {
      if (/^(true|yes|1|on)$/i.test(v)) return 'true';
      if (/^(false|no|0|off)$/i.test(v)) return 'false';
      return null;
    }
  }
}

/**
 * The result group of a page: the first group whose URL pattern matches or whose selector
 * matches an element; '' when none does. Selectors are only run (and cheerio only loaded) when
 * no earlier group matched by URL. A document (PDF, office formats, text) has no markup: pass
 * null and only URL patterns decide.
 *
 * @example resolveGroup(null, 'https://example.com/manuals/a.pdf', [{ name: 'Manuals', urlPattern: '/manuals/' }]) // 'Manuals'
 */
export function resolveGroup($$: LazyCheerio | null, url: string, groups: ResultGroupRule[]): string {
  for (const g of groups) {
    if (g.urlPattern && matchesPattern(g.urlPattern, url)) return g.name;
    if ($$ && g.selector && (safeSelect($$(), g.selector)?.length ?? 0) > 0) return g.name;
  }
  return '';
}

/**
 * The data points of a page and the filter values derived from them. Data points are read from
 * the whole page (they may live in a header or footer that is not content). A filter takes its
 * data point's first value (range) or all its values split at `,`, `;` and `|` (multiple).
 */
export function readDataPoints($$: LazyCheerio, rules: PageRules): { dataPoints: DataPoint[]; filters: FilterValue[] } {
  const dataPoints: DataPoint[] = [];
  const filters: FilterValue[] = [];
  let ldCache: unknown[] | null = null;
  const ld = (): unknown[] => (ldCache ??= jsonLdObjects($$()));
  const valuesByKey = new Map<string, string[]>();
  for (const dp of rules.dataPoints) {
    let values: string[];
    try {
      values = dataPointValues($$(), dp, ld);
    } catch {
      values = [];
    }
    if (values.length === 0) continue;
    valuesByKey.set(dp.key, values);
    dataPoints.push({ key: dp.key, value: values[0], show: dp.show });
  }
  for (const f of rules.filters) {
    const values = f.dataPoint ? valuesByKey.get(f.dataPoint) : undefined;
    if (!values?.length) continue;
    if (f.type === 'range') {
      const n = Number(values[0]);
      if (Number.isFinite(n)) filters.push({ key: f.id, value: n });
    } else {
      filters.push({ key: f.id, value: [...new Set(values.flatMap((v) => v.split(/\s*[,;|]\s*/)).filter(Boolean))] });
    }
  }
  return { dataPoints, filters };
}

function dataPointValues($: cheerio.CheerioAPI, rule: DataPointRule, ld: () => unknown[]): string[] {
  const raw: string[] = [];
  if (rule.selector) {
    $(rule.selector).each((_i, el) => {
      const v = rule.attribute ? $(el).attr(rule.attribute) : $(el).text();
      if (v !== undefined) raw.push(v);
    });
  } else if (rule.meta) {
    const name = rule.meta;
    $('meta').each((_i, el) => {
      const e = $(el);
      if (e.attr('name') === name || e.attr('property') === name || e.attr('itemprop') === name) {
        const v = e.attr(rule.attribute ?? 'content');
        if (v !== undefined) raw.push(v);
      }
    });
  } else if (rule.jsonLd) {
    const path = rule.jsonLd.split('.').filter(Boolean);
    for (const obj of ld()) {
      for (const v of lookupPath(obj, path)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') raw.push(String(v));
      }
      if (raw.length) break;
    }
  }
  return raw.map((r) => coerceDataPoint(r, rule.type)).filter((v): v is string => v !== null);
}

/** Every value at `path` below `obj`, arrays on the way flattened. */
function lookupPath(obj: unknown, path: string[]): unknown[] {
  if (path.length === 0) return [obj];
  if (Array.isArray(obj)) return obj.flatMap((o) => lookupPath(o, path));
  if (obj && typeof obj === 'object') {
    const v = (obj as Record<string, unknown>)[path[0]];
    return v === undefined ? [] : lookupPath(v, path.slice(1));
  }
  return [];
}

/** The objects of the page's JSON-LD scripts, arrays and `@graph` members flattened. */
function jsonLdObjects($: cheerio.CheerioAPI): unknown[] {
  const out: unknown[] = [];
  const push = (d: unknown): void => {
    if (Array.isArray(d)) d.forEach(push);
    else if (d && typeof d === 'object') {
      out.push(d);
      const g = (d as Record<string, unknown>)['@graph'];
      if (Array.isArray(g)) g.forEach(push);
    }
  };
  $('script[type="application/ld+json"]').each((_i, el) => {
    try {
      push(JSON.parse($(el).text()) as unknown);
    } catch {
      // Broken JSON-LD is common in the wild; it just yields no data points.
    }
  });
  return out;
}
