/**
 * Per-host politeness across every worker (main thread): at most `concurrencyPerHost` requests
 * in flight to one host, and request starts at least `max(requestDelayMs, Crawl-delay)` apart.
 *
 * The gate never sleeps: {@link HostGate.tryAcquire} answers now or says when to ask again, so
 * the crawl scheduler owns its single timer and tests drive time with an injected clock.
 */

/** Politeness limits of one host. */
export interface HostLimits {
  concurrency: number;
  delayMs: number;
}

interface HostState {
  active: number;
  nextStartAt: number;
}

export type Acquired = { ok: true; release: () => void } | { ok: false; retryAt: number };

export class HostGate {
  private readonly hosts = new Map<string, HostState>();

  /**
   * Takes a slot for `host` at time `now` when the limits allow, else returns the earliest time
   * a retry can succeed (`Infinity` when only a release can free a slot).
   */
  tryAcquire(host: string, limits: HostLimits, now: number): Acquired {
    let st = this.hosts.get(host);
    if (!st) {
      st = { active: 0, nextStartAt: 0 };
      this.hosts.set(host, st);
    }
    if (st.active >= Math.max(1, limits.concurrency)) return { ok: false, retryAt: Infinity };
    if (now < st.nextStartAt) return { ok: false, retryAt: st.nextStartAt };
    st.active++;
    st.nextStartAt = now + Math.max(0, limits.delayMs);
    let released = false;
    const state = st;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        state.active--;
      },
    };
  }

  /**
   * Pushes the next allowed start for `host` to at least `at` (a Crawl-delay learnt from
   * robots.txt after the current request was already admitted with a shorter delay).
   */
  extend(host: string, at: number): void {
    const st = this.hosts.get(host);
    if (st && st.nextStartAt < at) st.nextStartAt = at;
  }

  /** Requests in flight to `host` (tests, status). */
  active(host: string): number {
    return this.hosts.get(host)?.active ?? 0;
  }
}
