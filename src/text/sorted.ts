/**
 * Binary search in sorted arrays: a vocabulary in UTF-16 code-unit order (the order of `<` on
 * strings), or the ascending row ids of a postings list.
 */

/**
 * The first index of `sorted` whose value is not below `target` (`sorted.length` when every
 * value is), in ascending `sorted`.
 *
 * @example lowerBound(['a', 'ab', 'b'], 'ab') // 1
 */
export function lowerBound(sorted: ArrayLike<string>, target: string): number;
export function lowerBound(sorted: ArrayLike<number>, target: number): number;
export function lowerBound(sorted: ArrayLike<string | number>, target: string | number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (sorted[m]! < target) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/**
 * The index of `target` in ascending `sorted`, or -1 when it is not there.
 *
 * @example indexOfSorted(Int32Array.of(2, 5, 9), 5) // 1
 */
export function indexOfSorted(sorted: ArrayLike<number>, target: number): number {
  const i = lowerBound(sorted, target);
  return i < sorted.length && sorted[i] === target ? i : -1;
}
