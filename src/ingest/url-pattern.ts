/**
 * `urlPattern` of `DELETE /index/documents` (SPEC §4): a regular expression with RE2 semantics,
 * run by the linear-time RE2 engine (re2-wasm) so that no pattern — `(a+)+$` included — can
 * make removal hang. Matching is a search over the whole URL (like `RegExp.prototype.test`):
 * anchor with `^…$` to match the URL exactly. Case-sensitive unless the pattern says `(?i)`.
 *
 * Main thread. Each compiled matcher holds WebAssembly memory: call `dispose()` when done.
 */
import { RE2 } from 're2-wasm';
import { badParam } from '../errors.js';

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
 * Compiles `pattern` (named `field` in errors) with RE2 semantics. Throws a 400
 * `invalid_parameter` naming the field for an empty, too long or invalid pattern (RE2 has no
 * backreferences or lookaround; the message says so when that is the cause).
 */
export function compileUrlPattern(pattern: string, field = 'urlPattern'): UrlMatcher {
  if (pattern.length === 0) throw badParam(field, `${field} must be a non-empty regular expression.`);
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw badParam(field, `${field} must be at most ${MAX_PATTERN_LENGTH} characters (got ${pattern.length}).`);
  }
  let re: RE2;
  try {
    // 'u' is mandatory for re2-wasm; no 'g', so test() keeps no lastIndex state between URLs.
    re = new RE2(pattern, 'u');
  } catch (err) {
    const detail = err instanceof Error ? err.message.replace(/^Invalid regular expression: \/.*\/u: /s, '') : String(err);
    throw badParam(
      field,
      `${field} is not a valid regular expression (RE2 syntax, no backreferences or lookaround): ${detail}.`,
    );
  }
  return {
    test: (url) => re.test(url),
    dispose: () => {
      // The embind wrapper is private in the typings but owns wasm heap that only delete() frees.
      const wrapper = (re as unknown as { wrapper?: { delete?: () => void } }).wrapper;
      wrapper?.delete?.();
    },
  };
}
