/**
 * Query parsing (main thread, pure): splits a raw query into words that must match, quoted
 * phrases and excluded words. `*` alone browses everything.
 */
import { words } from '../text/index.js';

/** One word of the query that documents must match (after expansion). */
export interface QueryWord {
  word: string;
  /** Last word of a query typed as you go: also matches as a prefix. */
  prefix: boolean;
  /** Words inside phrases match exactly (no typo, prefix or stem expansion). */
  exactOnly: boolean;
  /** Index of the phrase this word belongs to, or -1. */
  phrase: number;
  /** The whole token joined when it was an identifier or hyphenated word (`pg_proc` → `pgproc`). */
  compound?: string;
  /** This word joined with the next plain word (`create view` → `createview`). */
  joinNext?: string;
}

/** A query split into what must match, what must not, and whether it browses everything. */
export interface ParsedQuery {
  raw: string;
  browse: boolean;
  words: QueryWord[];
  phrases: string[][];
  excludes: string[];
  excludedPhrases: string[][];
}

/**
 * Parses `raw`. Grammar: `"a phrase"` matches contiguously; `-word` and `-"a phrase"` exclude;
 * anything else is split into words (`e-mail` → `e`, `mail`). The last plain word, when the
 * query does not end with a space or a quote, also matches as a prefix. An unterminated quote
 * runs to the end of the query.
 *
 * `-word` right after a plain word in `stopWords` is a word, not an exclusion: a hyphen after a
 * conjunction continues a shortened compound (German `Datensicherung und -wiederherstellung`,
 * Dutch `gemeentehuis en -raad`), and nobody excludes a word after `and` or `the`.
 *
 * @example parseQuery('table -index').excludes // ['index']
 * @example parseQuery('Sicherung und -wiederherstellung', new Set(['und'])).excludes // []
 */
export function parseQuery(raw: string, stopWords?: ReadonlySet<string>): ParsedQuery {
  const q: ParsedQuery = { raw, browse: raw.trim() === '*', words: [], phrases: [], excludes: [], excludedPhrases: [] };
  if (q.browse) return q;
  let i = 0;
  const s = raw;
  let lastPlainEnd = -1;
  // The last word of the previous token when that token was plain (not quoted, not excluded).
  let prevPlain: QueryWord | null = null;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    let negate = false;
    if (c === '-' && i + 1 < s.length && !/\s/.test(s[i + 1]!)) {
      negate = !(prevPlain && s[i + 1] !== '"' && stopWords?.has(prevPlain.word));
      i++;
    }
    prevPlain = null;
    if (s[i] === '"') {
      const close = s.indexOf('"', i + 1);
      const body = close === -1 ? s.slice(i + 1) : s.slice(i + 1, close);
      i = close === -1 ? s.length : close + 1;
      const ws = words(body);
      if (ws.length === 0) continue;
      if (negate) {
        if (ws.length === 1) q.excludes.push(ws[0]!);
        else q.excludedPhrases.push(ws);
      } else if (ws.length === 1) {
        q.words.push({ word: ws[0]!, prefix: false, exactOnly: true, phrase: -1 });
      } else {
        const idx = q.phrases.length;
        q.phrases.push(ws);
        for (const w of ws) q.words.push({ word: w, prefix: false, exactOnly: true, phrase: idx });
      }
      continue;
    }
    let j = i;
    while (j < s.length && !/\s/.test(s[j]!) && s[j] !== '"') j++;
    const ws = words(s.slice(i, j));
    if (negate) q.excludes.push(...ws);
    else {
      const compound = ws.length > 1 ? ws.join('') : undefined;
      for (const w of ws) q.words.push({ word: w, prefix: false, exactOnly: false, phrase: -1, ...(compound ? { compound } : {}) });
      if (ws.length) {
        lastPlainEnd = j;
        prevPlain = q.words[q.words.length - 1]!;
      }
    }
    i = j;
  }
  for (let k = 0; k + 1 < q.words.length; k++) {
    const a = q.words[k]!;
    const b = q.words[k + 1]!;
    if (!a.exactOnly && !b.exactOnly && !a.compound && !b.compound) a.joinNext = a.word + b.word;
  }
  // Search as you type: the last word is a prefix unless the user already typed past it.
  const last = q.words[q.words.length - 1];
  if (last && !last.exactOnly && lastPlainEnd === s.length) last.prefix = true;
  return q;
}

/** The normalised form of a query for logs and mappings: folded words joined by one space. */
export function normaliseQuery(raw: string): string {
  return raw.trim() === '*' ? '*' : words(raw).join(' ');
}
