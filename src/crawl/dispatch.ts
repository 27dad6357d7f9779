/**
 * Stage: dispatch (main thread). One scheduler over every project's queue hands ready tasks to
 * {@link TaskRunner} within the in-flight limits and the per-host politeness of
 * ./politeness.ts, and sleeps on a single timer until the next task can start.
 *
 * Invariants:
 * - At most `maxInFlight` fetches run at once, and at most 4× that many tasks are between
 *   dispatch and their index write.
 * - A task is dispatched at most once at a time (`inflight`); a host's slot is held from
 *   dispatch until its fetch is back.
 * - Passes never overlap: a wake during a pass runs another pass after it.
 */
import type { Settings } from '../core/index.js';
import type { CrawlContext } from './context.js';
import type { TaskRunner } from './fetching.js';
import type { HostGate } from './politeness.js';
import { hostOf } from '../fetch/index.js';

/** Hands ready tasks to the runner; see the module comment. */
export class Dispatcher {
  /** Tasks between dispatch and their end, by task id. */
  private readonly inflight = new Map<string, Promise<void>>();
  /** Tasks between dispatch and the end of their fetch (the pool's share of {@link inflight}). */
  private fetching = 0;
  /** Per project: whether its last pass met a task its host gate held back (unknown: yes). */
  private readonly gateBlocked = new Map<string, boolean>();
  private idleWaiters: Array<{ siteId: string | null; resolve: () => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private pumping = false;
  private pumpAgain = false;

  constructor(
    private readonly ctx: CrawlContext,
    private readonly gate: HostGate,
    private readonly runner: TaskRunner,
  ) {}

  /** Runs a scheduling pass soon (after enqueueing, after a finished fetch, when the clock moved). */
  wake(): void {
    if (this.ctx.stopped || !this.ctx.started) {
      this.checkIdle();
      return;
    }
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    queueMicrotask(() => this.pump());
  }

  /**
   * Resolves when the project (or every project) has no task ready now and none running —
   * tasks waiting for a later retry do not count.
   */
  idle(siteId?: string): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push({ siteId: siteId ?? null, resolve });
      this.wake();
    });
  }

  /** Stops the timer and waits up to `graceMs` for the tasks in flight. */
  async drain(graceMs: number): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pending = [...this.inflight.values()];
    if (pending.length) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(pending), new Promise((r) => (t = setTimeout(r, graceMs)))]);
      if (t) clearTimeout(t);
    }
  }

  /** Resolves every {@link idle} waiter (after stop). */
  releaseIdleWaiters(): void {
    for (const w of this.idleWaiters) w.resolve();
    this.idleWaiters = [];
  }

  private pump(): void {
    if (this.ctx.stopped || this.pumping) return;
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        this.pumpOnce();
      } while (this.pumpAgain && !this.ctx.stopped);
    } finally {
      this.pumping = false;
    }
    this.checkIdle();
  }

  private pumpOnce(): void {
    const { opts } = this.ctx;
    const now = opts.clock();
    const max = opts.maxInFlight ?? 16;
    let wakeAt = Infinity;
    for (const [siteId, queue] of this.ctx.queues.entries()) {
      if (this.fetching >= max || this.inflight.size >= max * 4) break;
      let settings: Settings;
      try {
        settings = opts.settingsOf(siteId);
      } catch {
        continue;
      }
      const s = settings.crawler;
      // Look ahead past tasks whose host is busy, but not through the whole queue; when the
      // last pass met no busy host, the next free slots' worth is enough (a pass runs after
      // every finished page, and reading many rows to start one task would dominate its cost).
      const free = max - this.fetching;
      const lookahead = (this.gateBlocked.get(siteId) ?? true) ? free * 4 + 16 : free + 4;
      let blocked = false;
      for (const task of queue.ready(now, lookahead)) {
        if (this.fetching >= max || this.inflight.size >= max * 4) break;
        if (this.inflight.has(task.id)) continue;
        const host = hostOf(task.url!);
        const delayMs = Math.max(s.requestDelayMs, s.respectRobotsTxt ? this.gate.crawlDelay(host) : 0);
        const slot = this.gate.tryAcquire(host, { concurrency: s.concurrencyPerHost, delayMs }, now);
        if (!slot.ok) {
          blocked = true;
          wakeAt = Math.min(wakeAt, slot.retryAt);
          continue;
        }
        queue.setRunning(task.id);
        // The host's slot and the fetch slot are for the request: freed once the fetch is back,
        // not after the index write, so slow commits (fsync on a busy disk) neither hold back
        // the next requests to the host nor leave the pool without work.
        this.fetching++;
        let fetchDone = false;
        const fetched = (): void => {
          if (fetchDone) return;
          fetchDone = true;
          this.fetching--;
          slot.release();
          this.wake();
        };
        const p = this.runner
          .run(siteId, queue, task, settings, fetched)
          .catch((err: unknown) => {
            this.ctx.log.error({ err, siteId, url: task.url }, 'crawl task crashed');
            try {
              queue.finish(task.id, 'failed', null, 'Internal error while crawling');
            } catch {
              // The queue was closed by stop(); the task runs again after a restart.
            }
          })
          .finally(() => {
            fetched();
            this.inflight.delete(task.id);
            this.ctx.cancelled.delete(task.id);
            this.wake();
          });
        this.inflight.set(task.id, p);
      }
      this.gateBlocked.set(siteId, blocked);
      const next = queue.nextWakeAt(now);
      if (next !== null) wakeAt = Math.min(wakeAt, next);
    }
    this.arm(wakeAt);
  }

  /** Sets the single timer to `at` unless it fires earlier already. */
  private arm(at: number): void {
    if (!Number.isFinite(at)) return;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.wake();
    }, Math.max(0, at - this.ctx.opts.clock()));
    this.timer.unref();
  }

  private checkIdle(): void {
    if (!this.idleWaiters.length) return;
    const now = this.ctx.opts.clock();
    const keep: typeof this.idleWaiters = [];
    for (const w of this.idleWaiters) {
      const busy = [...this.ctx.queues.entries()].some(
        ([id, queue]) => (w.siteId === null || w.siteId === id) && (queue.ready(now, 1).length > 0 || queue.anyRunning()),
      );
      if (busy && !this.ctx.stopped && this.ctx.started) keep.push(w);
      else w.resolve();
    }
    this.idleWaiters = keep;
  }
}
