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

/** A slot taken (release it once the request is back), or when to ask again. */
export type Acquired = { ok: true; release: () => void } | { ok: false; retryAt: number };

/**
 * The request slots of every host, and the Crawl-delay each host's robots.txt asked for.
 *
 * @example
 * const slot = gate.tryAcquire('docs.example.org', { concurrency: 2, delayMs: 250 }, clock());
 * if (slot.ok) fetchPage().finally(slot.release); else wakeAt(slot.retryAt);
 */
export class HostGate {
  private readonly hosts = new Map<string, HostState>();
  private readonly crawlDelays = new Map<string, number>();

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

  /** The Crawl-delay (ms) robots.txt asked of `host`; 0 when none is known. */
  crawlDelay(host: string): number {
    return this.crawlDelays.get(host) ?? 0;
  }

  /**
   * Records the Crawl-delay of `host` read from its robots.txt at `now`. A changed delay also
   * applies to the request already admitted, by pushing the host's next start.
   */
  learnCrawlDelay(host: string, delayMs: number, now: number): void {
    if (this.crawlDelays.get(host) !== delayMs) this.extend(host, now + delayMs);
    this.crawlDelays.set(host, delayMs);
  }

  /** Requests in flight to `host` (tests, status). */
  active(host: string): number {
    return this.hosts.get(host)?.active ?? 0;
  }
}
