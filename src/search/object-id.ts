/**
 * A small number naming an object for as long as it lives (this thread only): cache keys need
 * to tell project indexes, settings objects and segment readers apart without holding them.
 */
const ids = new WeakMap<object, number>();
let next = 1;

export function objectId(o: object): number {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = next++));
  return id;
}
