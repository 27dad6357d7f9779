/**
 * Linear-time regular expressions for Control Panel URL rules (blacklist, whitelist, noIndex,
 * result-group urlPattern). Settings come from project owners; RE2 semantics (re2-wasm) make
 * a catastrophic pattern harmless. Compiled patterns are cached; any thread.
 */
import { createRequire } from 'node:module';
import type { RE2 } from 're2-wasm';

// Loaded on first use (synchronously: a CommonJS module that instantiates its WebAssembly
// synchronously): a pool thread that extracts pages for a project without URL-pattern rules
// never pays the ~50 ms to load and compile it.
let RE2Class: typeof RE2 | null = null;
function re2(): typeof RE2 {
  return (RE2Class ??= (createRequire(import.meta.url)('re2-wasm') as { RE2: typeof RE2 }).RE2);
}

const cache = new Map<string, RE2 | null>();

/** Compiles `pattern` once (RE2, search semantics); null when RE2 rejects it. */
export function compilePattern(pattern: string): RE2 | null {
  let re = cache.get(pattern);
  if (re === undefined) {
    try {
      re = new (re2())(pattern, 'u');
    } catch {
      re = null;
    }
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}

/** Whether `url` matches the pattern anywhere (search semantics). Invalid patterns never match. */
export function matchesPattern(pattern: string, url: string): boolean {
  const re = compilePattern(pattern);
  if (!re) return false;
  re.lastIndex = 0;
  return re.test(url);
}

/** Index of the first pattern that matches, or -1. */
export function firstMatch(patterns: readonly string[], url: string): number {
  return patterns.findIndex((p) => matchesPattern(p, url));
}
