/**
 * Shapes of the public API answers the widget reads (`GET /sites`, `GET /sites/suggest`) and
 * of the options an owner passes to `sitesift.mount`.
 */

/** A data point of a result (seed 2.2). */
export interface DataPoint {
  key: string;
  value: string;
  show: boolean;
}

/** A result (seed 2.5). `name`/`content` carry `<mark>` and escaped text (highlightQueryTerms). */
export interface Result {
  name: string;
  image: string | null;
  link: string;
  type: string;
  content?: string;
  dataPoints: DataPoint[];
  /** `custom` results: the owner's markup. */
  html?: string;
  /** `custom` results in suggest answers: the owner's markup for the suggestion. */
  suggestionHtml?: string;
}

/** A filter offered by the server (`filterOptions=true`). */
export type ServerFilter =
  | { key: string; name: string; type: 'multiple'; values: Array<{ name: string; value: string; count: number }> }
  | { key: string; name: string; type: 'range'; min: number; max: number };

/** `GET /sites` answer. */
export interface SearchAnswer {
  query: string;
  suggests: Record<string, Result[]>;
  totalResults: number;
  totalResultsPerContentGroup: Record<string, number>;
  sortingOptions: string[];
  sorting: string;
  filterOptions?: ServerFilter[];
  activeFilterOptions?: unknown[];
  redirect?: string;
}

/** `GET /sites/suggest` answer. */
export interface SuggestAnswer {
  query: string;
  suggests: Record<string, Result[]>;
  totalResults: number;
  totalResultsPerContentGroup: Record<string, number>;
  querySuggestions?: Array<{ query: string }>;
}

/**
 * A filter in the owner's client configuration (seed 2.6, `results.filters`): multiple choice
 * `{key, name, values: [{name, value}]}` or range `{key, name, min, max}`.
 */
export type ClientFilter =
  | { key: string; name: string; values: Array<{ name: string; value: string }> }
  | { key: string; name: string; min: number; max: number };

/** Texts the widget shows; every one can be replaced through `texts`. */
export interface Texts {
  label: string;
  placeholder: string;
  submit: string;
  clear: string;
  suggestions: string;
  querySuggestions: string;
  all: string;
  other: string;
  resultsFor: (count: number, query: string) => string;
  noResults: (query: string) => string;
  tryInstead: string;
  more: string;
  sortBy: string;
  relevance: string;
  ascending: string;
  descending: string;
  filters: string;
  from: string;
  to: string;
  clearFilters: string;
  error: string;
  loading: string;
  close: string;
}

/** Options of `sitesift.mount(element, options)`. */
export interface MountOptions {
  /** The project's site ID (required). */
  site: string;
  /** Base URL of the sitesift server; default: where widget.js was loaded from. */
  endpoint?: string;
  /** Milliseconds between the last keystroke and the suggest request (default 120). */
  debounceMs?: number;
  /** Suggestions layer; `false` turns it off. */
  suggest?:
    | false
    | {
        /** Suggested results per content group, 1–2 (default 2). */
        limit?: number;
        /** Earlier searches offered as completions, 0–10 (default 3). */
        maxQuerySuggestions?: number;
      };
  results?: {
    /** Results per page (default 10, at most 100). */
    limit?: number;
    /** Filters to offer, in the seed's client structure; default: every filter the server returns. */
    filters?: ClientFilter[];
    /** Offer sorting by the server's sorting options (default true). */
    sorting?: boolean;
    /** Labels for sorting options (data-point keys) and content groups. */
    labels?: Record<string, string>;
  };
  /** Follow a result mapping's `redirect` on search (default true). */
  followRedirects?: boolean;
  /** Log searches and send select/abandon events (default true; the panel's preview turns it off). */
  analytics?: boolean;
  /** Called before navigating to a selected result; return false to stay on the page. */
  onSelect?: (detail: SelectDetail) => boolean | void;
  /** Replacement texts (any subset). */
  texts?: Partial<Texts>;
}

/** What a select event carries (also the `sitesift:select` DOM event's `detail`). */
export interface SelectDetail {
  query: string;
  link: string;
  position: number;
  source: 'suggest' | 'results';
}

/** What `sitesift.mount` returns. */
export interface WidgetHandle {
  /** Runs a search as if the visitor had typed `query` and pressed Enter. */
  search(query: string): void;
  /** Removes the widget from the element. */
  destroy(): void;
}
