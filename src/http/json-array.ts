/**
 * Parses a large JSON array body element by element (main thread).
 *
 * Why: `JSON.parse` of a whole body needs the body as ONE string — 0.6 MB for a batch of 100
 * pages. V8 puts a string that size in its large-object space, which only a full GC frees, so
 * during a bulk import the main thread's heap filled with dead body strings between full GCs
 * (V8 lets it grow to ≈ 4× the live heap: 230–330 MB at the end of a 100k import). Parsed element by element, each string is one document's JSON (a few KB) and
 * dies young; a scavenge frees it.
 *
 * The result is the value `JSON.parse` would give for the whole body: the elements are cut at
 * the array's own commas (outside strings, at nesting depth 1), and each cut is parsed alone.
 * Anything the scan cannot vouch for — not an array, an empty element, text after the closing
 * bracket, an element that does not parse — answers `undefined`, and the caller parses the
 * whole body the usual way (so errors and their messages are those of `JSON.parse`).
 */

/** Bodies below this size are parsed whole (their string is not a large object). */
export const SPLIT_MIN_BYTES = 64 * 1024;

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** JSON's four whitespace bytes (the only ones `JSON.parse` skips). */
function isWs(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/**
 * The elements of the JSON array in `bytes[start…]` (UTF-8), each parsed alone, or undefined
 * when the bytes are not a plain array this scan can split (the caller parses them whole).
 * `start` is past any byte-order mark.
 */
export function parseJsonArrayInParts(bytes: Buffer, start = 0): unknown[] | undefined {
  const n = bytes.length;
  let i = start;
  while (i < n && isWs(bytes[i]!)) i++;
  if (i >= n || bytes[i] !== OPEN_BRACKET) return undefined;
  i++;
  const out: unknown[] = [];
  let depth = 1;
  let elemStart = i;
  let inString = false;
  for (; i < n; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
      continue;
    }
    if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACKET || b === OPEN_BRACE) depth++;
    else if (b === CLOSE_BRACE) depth--;
    else if (b === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) break;
    } else if (b === COMMA && depth === 1) {
      if (!pushElement(bytes, elemStart, i, out)) return undefined;
      elemStart = i + 1;
    }
    if (depth < 1) return undefined;
  }
  if (i >= n) return undefined; // no closing bracket
  // `[]` (only whitespace inside) is the empty array; otherwise the last element.
  let k = elemStart;
  while (k < i && isWs(bytes[k]!)) k++;
  if (k < i) {
    if (!pushElement(bytes, elemStart, i, out)) return undefined;
  } else if (out.length > 0) {
    return undefined; // trailing comma
  }
  for (i++; i < n; i++) if (!isWs(bytes[i]!)) return undefined;
  return out;
}

/** Parses `bytes[from, to)` as one element into `out`; false when it does not parse. */
function pushElement(bytes: Buffer, from: number, to: number, out: unknown[]): boolean {
  try {
    out.push(JSON.parse(bytes.toString('utf8', from, to)));
    return true;
  } catch {
    return false;
  }
}
