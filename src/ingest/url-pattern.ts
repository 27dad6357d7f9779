/**
 * `urlPattern` of `DELETE /index/documents` (SPEC §4): a regular expression with RE2 semantics,
 * run by the linear-time RE2 engine (re2-wasm) so that no pattern — `(a+)+$` included — can
 * make removal hang. Matching is a search over the whole URL (like `RegExp.prototype.test`):
 * anchor with `^…$` to match the URL exactly. Case-sensitive unless the pattern says `(?i)`.
 *
 * Main thread. Each compiled matcher holds WebAssembly memory: call `dispose()` when done.
 */
import { compileOwned } from '../text/index.js';
import { badParam } from '../core/index.js';

/** Longest accepted pattern; RE2 compiles in linear time but memory grows with the pattern. */
export const MAX_PATTERN_LENGTH = 2048;

/** A compiled URL pattern. */
export interface UrlMatcher {
  /** Whether the pattern matches anywhere in `url`. */
  test(url: string): boolean;
  /** Frees the engine's WebAssembly memory; `test` must not be called afterwards. */
  dispose(): void;
}

/**
 * Compiles `pattern` (named `field` in errors) with RE2 semantics, exactly as settings patterns
 * are compiled (src/text/patterns.ts). Throws a 400 `invalid_parameter` naming the field for an
 * empty, too long or invalid pattern; the message says what RE2 does not support when that is
 * the cause (lookaround, backreferences, …).
 */
export function compileUrlPattern(pattern: string, field = 'urlPattern'): UrlMatcher {
  if (pattern.length === 0) throw badParam(field, `${field} must be a non-empty regular expression.`);
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw badParam(field, `${field} must be at most ${MAX_PATTERN_LENGTH} characters (got ${pattern.length}).`);
  }
  const compiled = compileOwned(pattern);
  if ('error' in compiled) throw badParam(field, `${field} is not a valid RE2 regular expression: ${compiled.error}.`);
  return compiled;
}
