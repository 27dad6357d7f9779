/**
 * Keeps Node's `process.nextTick` on its fast path for the life of the process. Imported first by
 * the process entries (`src/cli.ts`, `src/main.ts`) for its side effect: {@link pinTickObjectShape}.
 *
 * Why: `process.nextTick` builds each queued tick as an object literal whose first keys are
 * computed (`{ [async_id_symbol]: id, [trigger_async_id_symbol]: trigger, callback, args }`).
 * V8 records, per key of that literal, the one object map it saw there; optimized code then
 * builds the object inline. V8 holds those maps weakly: a full GC that runs while no tick object
 * is alive frees them, the next tick object gets new maps, the recorded ones no longer match and
 * the three later keys turn megamorphic for good, so from then on every `nextTick` makes three
 * runtime calls. node:http queues several ticks per request, and a server that lost the coin
 * flip (whether such a GC happened at such a moment) answered a stored suggest in ~3 us more
 * main-thread time per request (docs/ANALYTICS.md, "Session 12"). Holding one tick object keeps
 * its map chain, and so the recorded maps, alive.
 */
import { createHook } from 'node:async_hooks';

let pinned: object | undefined;

const noop = (): void => {};

/**
 * Queues one no-op tick and keeps the tick object Node built for it, from an async-hooks `init`
 * callback enabled for that one call only. Idempotent; true when an object is held.
 */
export function pinTickObjectShape(): boolean {
  if (pinned !== undefined) return true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && pinned === undefined) pinned = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
  return pinned !== undefined;
}

pinTickObjectShape();
