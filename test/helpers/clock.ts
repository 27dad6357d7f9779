/**
 * A controllable clock for services that take `clock: () => number` (ms since the epoch).
 * Tests advance time explicitly instead of sleeping.
 *
 * @example const clock = fakeClock('2026-01-01T00:00:00Z'); registry = ProjectRegistry.open(dir, { clock: clock.now }); clock.advance(60_000);
 */
export interface FakeClock {
  /** Current time in ms; pass `clock.now` where a `() => number` is expected. */
  now: () => number;
  advance(ms: number): number;
  set(at: number | string): number;
}

export function fakeClock(start: number | string = '2026-01-01T00:00:00Z'): FakeClock {
  let t = typeof start === 'string' ? Date.parse(start) : start;
  return {
    now: () => t,
    advance: (ms) => (t += ms),
    set: (at) => (t = typeof at === 'string' ? Date.parse(at) : at),
  };
}
