/**
 * White-space normalisation of extracted text, shared by the HTML and document extractors and
 * the Control Panel rules. Pure; any thread.
 */

/**
 * Collapses every white-space run (new lines included) to one space and trims: for one-line
 * values such as titles, headings, metadata and data points.
 *
 * @example collapse('  Gäste \n willkommen ') // 'Gäste willkommen'
 */
export function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * Normalises multi-line text: every new line (a block boundary or one in the source) ends a
 * line; other white-space runs become one space; lines are trimmed and empty ones dropped.
 * Two regular-expression passes over the whole text rather than a split and a pass per line,
 * because this runs over every page's full text.
 *
 * @example linesOf('  a \t b \n\n  c ') // 'a b\nc'
 */
export function linesOf(text: string): string {
  return text
    .replace(/\s*\n\s*/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .trim();
}
