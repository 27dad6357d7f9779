/**
 * Linear-time regular expressions for project settings and API parameters (blacklist,
 * whitelist, noIndex, result-group urlPattern, regex result-mapping triggers, the `urlPattern`
 * of `DELETE /index/documents`). Patterns come from project owners; RE2 semantics (re2-wasm)
 * make a catastrophic pattern harmless. One compile function serves validation and matching,
 * so a pattern accepted by {@link patternError} is exactly one that runs. Any thread.
 *
 * Memory: re2-wasm runs in a WebAssembly heap of a fixed 16 MiB per thread that cannot grow,
 * and running out aborts the thread. Its `RE2` class leaks a little of that heap on every
 * compile (and the whole engine object when the pattern is invalid), so this module talks to
 * the engine's wrapper directly and frees every object it creates; the compiled-pattern cache
 * is bounded by pattern characters and frees what it evicts.
 */
import { createRequire } from 'node:module';

interface WrappedRE2 {
  ok(): boolean;
  error(): string;
  match(input: string, start: number, getCapturingGroups: boolean): { index: number };
  delete(): void;
}
type WrappedRE2Constructor = new (pattern: string, ignoreCase: boolean, multiline: boolean, dotAll: boolean) => WrappedRE2;

// Loaded on first use (synchronously: a CommonJS module that instantiates its WebAssembly
// synchronously): a pool thread that extracts pages for a project without URL-pattern rules
// never pays the ~50 ms to load and compile it.
let Wrapped: WrappedRE2Constructor | null = null;
function engine(): WrappedRE2Constructor {
  return (Wrapped ??= (createRequire(import.meta.url)('re2-wasm/build/wasm/re2.js') as { WrappedRE2: WrappedRE2Constructor }).WrappedRE2);
}

/**
 * The syntax translation re2-wasm's `RE2` class applies with the `u` flag (and no `m`), so
 * patterns keep the meaning they had through that class: JavaScript escapes `\uXXXX`, `\u{…}`
 * and `\cX` become RE2's `\x{…}`, `(?<name>` becomes `(?P<name>`, an unescaped `/` is escaped.
 * Adapted from re2-wasm 1.0.2 (Apache-2.0), itself a port of node-re2's translation.
 */
function translate(pattern: string): string {
  if (pattern === '') return '(?:)';
  const HEX = '0123456789ABCDEF';
  const isHex = (c: string | undefined): boolean => c !== undefined && HEX.includes(c.toUpperCase());
  const out: string[] = [];
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1]!;
      if (next === 'c' && i + 2 < pattern.length) {
        const alpha = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.indexOf(pattern[i + 2]!) + 1;
        out.push('\\x', HEX[Math.floor(alpha / 16)]!, HEX[alpha % 16]!);
        i += 3;
      } else if (next === 'u' && isHex(pattern[i + 2])) {
        out.push('\\x{', pattern[i + 2]!);
        i += 3;
        for (let j = 0; j < 3 && isHex(pattern[i]); i++, j++) out.push(pattern[i]!);
        out.push('}');
      } else if (next === 'u' && pattern[i + 2] === '{') {
        out.push('\\x');
        i += 2;
      } else {
        out.push('\\', next);
        i += 2;
      }
    } else if (c === '/') {
      out.push('\\/');
      i += 1;
    } else if (pattern.startsWith('(?<', i) && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') {
      out.push('(?P<');
      i += 3;
    } else {
      out.push(c);
      i += 1;
    }
  }
  return out.join('');
}

/** What RE2 lacks, in words a project owner can act on, for the engine's error message. */
function explain(re2Message: string, pattern: string): string {
  const m = /^(.*?): (.*)$/s.exec(re2Message);
  const [kind, fragment] = m ? [m[1]!, m[2]!] : [re2Message, ''];
  if (kind === 'invalid perl operator') {
    if (fragment.startsWith('(?=') || fragment.startsWith('(?!')) return `RE2 does not support lookahead ("${fragment}")`;
    if (fragment.startsWith('(?<')) return `RE2 does not support lookbehind ("${fragment}")`;
    if (fragment.startsWith('(?>')) return `RE2 does not support atomic groups ("${fragment}")`;
    if (fragment === '(?P' && /\(\?P[=>]/.test(pattern)) return 'RE2 does not support backreferences or recursion ("(?P=" or "(?P>")';
    if (fragment.startsWith('(?R') || /^\(\?[+-]?\d/.test(fragment)) return `RE2 does not support recursion ("${fragment}")`;
    if (fragment.startsWith('(?#')) return `RE2 does not support inline comments ("${fragment}")`;
    if (fragment.startsWith('(?(')) return `RE2 does not support conditionals ("${fragment}")`;
    return `RE2 does not support the group syntax "${fragment}" (flags it knows: (?i) (?m) (?s) (?U))`;
  }
  if (kind === 'invalid escape sequence' && /^\\([1-9]|k)/.test(fragment)) return `RE2 does not support backreferences ("${fragment}")`;
  if (kind === 'bad repetition operator' && /[*+?}]\+$/.test(fragment)) return `RE2 does not support possessive quantifiers ("${fragment}")`;
  if (kind === 'invalid repetition size') return `RE2 allows at most 1000 repetitions ("${fragment}")`;
  return `RE2 cannot compile it: ${re2Message}`;
}

/** A compiled pattern: test() searches anywhere in the input; free() releases engine memory. */
export interface CompiledPattern {
  /** Whether the pattern matches anywhere in `input`. */
  test(input: string): boolean;
  /** Kept for callers written against RegExp/RE2; always 0 (no global or sticky state). */
  lastIndex: number;
}

interface Owned extends CompiledPattern {
  free(): void;
}

/** Compiles with the engine and flags every matcher uses; never leaves an engine object behind on error. */
function compile(pattern: string): Owned | { error: string } {
  const w = new (engine())(translate(pattern), false, false, false);
  if (!w.ok()) {
    const error = explain(w.error(), pattern);
    w.delete();
    return { error };
  }
  let freed = false;
  return {
    lastIndex: 0,
    test: (input: string) => w.match(input, 0, false).index >= 0,
    free: () => {
      if (!freed) w.delete();
      freed = true;
    },
  };
}

/**
 * Why RE2 (as every matcher here runs it) refuses `pattern`, or null when it compiles. The
 * reason names what RE2 does not support (lookaround, backreferences, …).
 *
 * @example
 * patternError('^/blog/')        // null
 * patternError('^(?=.*secret)')  // 'RE2 does not support lookahead ("(?=")'
 */
export function patternError(pattern: string): string | null {
  const r = compile(pattern);
  if ('error' in r) return r.error;
  r.free();
  return null;
}

/**
 * A pattern compiled for the caller's own use (not cached): call `dispose()` when done, or the
 * engine's fixed heap shrinks for good. Throws nothing: an invalid pattern returns its reason.
 */
export function compileOwned(pattern: string): { test(input: string): boolean; dispose(): void } | { error: string } {
  const r = compile(pattern);
  if ('error' in r) return r;
  return { test: r.test, dispose: r.free };
}

// Pattern characters held in the cache, a proxy for engine heap: a 1,500-character literal
// compiles to roughly 30 KB, and the heap is 16 MiB for everything in the thread.
const CACHE_MAX_CHARS = 200_000;
const cache = new Map<string, Owned | null>();
let cachedChars = 0;

/**
 * Compiles `pattern` once (RE2, search semantics; cached, bounded, least recently used first
 * out); null when RE2 rejects it. Use the result at once: a later call may evict and free it.
 */
export function compilePattern(pattern: string): CompiledPattern | null {
  let re = cache.get(pattern);
  if (re !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, re);
    return re;
  }
  const r = compile(pattern);
  re = 'error' in r ? null : r;
  cache.set(pattern, re);
  cachedChars += pattern.length;
  for (const [p, old] of cache) {
    if (cachedChars <= CACHE_MAX_CHARS || p === pattern) break;
    old?.free();
    cache.delete(p);
    cachedChars -= p.length;
  }
  return re;
}

/** Whether `url` matches the pattern anywhere (search semantics). Invalid patterns never match. */
export function matchesPattern(pattern: string, url: string): boolean {
  const re = compilePattern(pattern);
  return re ? re.test(url) : false;
}

/** Index of the first pattern that matches, or -1. */
export function firstMatch(patterns: readonly string[], url: string): number {
  return patterns.findIndex((p) => matchesPattern(p, url));
}
