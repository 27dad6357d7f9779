/**
 * Per-project cron schedules that follow settings changes without a restart (main thread).
 * Used by `jobs/sitemap-import.ts` (crawler.sitemapSchedule) and `jobs/recrawl.ts`
 * (crawler.recrawlSchedule): each keeps one schedule per project whose settings ask for one,
 * replaces it when the expression changes, and drops it when the project goes away.
 */
import cron from 'node-cron';
import type { Settings } from '../core/index.js';

/** Registers `tick` on a cron expression; returns a stopper. node-cron by default; tests inject. */
export type Scheduler = (expression: string, tick: () => void, name: string) => { stop(): void | Promise<void> };

/** The production {@link Scheduler}: node-cron in UTC, a tick skipped while the previous one runs. */
export const cronScheduler: Scheduler = (expression, tick, name) =>
  cron.schedule(expression, tick, { name, noOverlap: true, timezone: 'Etc/UTC' });

/** The project registry surface the schedules need. */
export interface ScheduleProjects {
  listProjects(): Array<{ siteId: string }>;
  getSettings(siteId: string): Settings;
  onSettingsChange(listener: (siteId: string, settings: Settings, previous: Settings) => void): () => void;
  onDelete(hook: (siteId: string) => void | Promise<void>): void;
}

export interface ProjectSchedulesOptions {
  /** Job name (logs, node-cron task names). */
  name: string;
  projects: ScheduleProjects;
  /** The cron expression this job wants for a project, or null for none. */
  expressionOf: (settings: Settings) => string | null;
  run: (siteId: string) => Promise<unknown>;
  onError?: (siteId: string, err: unknown) => void;
  scheduler?: Scheduler;
}

/** What a per-project crawl job takes besides the crawler action it runs (jobs/recrawl.ts, jobs/sitemap-import.ts). */
export type ProjectJobDeps = Pick<ProjectSchedulesOptions, 'projects' | 'onError' | 'scheduler'>;

/**
 * The live schedules of one job over every project.
 *
 * @example
 * const job = new ProjectSchedules({ name: 'recrawl', projects, expressionOf: (s) => s.crawler.recrawlSchedule, run: (siteId) => crawl.startSiteCrawl(siteId) });
 * await job.stop(); // at shutdown
 */
export class ProjectSchedules {
  private readonly active = new Map<string, { expression: string; handle: { stop(): void | Promise<void> } }>();
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(private readonly opts: ProjectSchedulesOptions) {
    for (const p of opts.projects.listProjects()) this.refresh(p.siteId);
    this.unsubscribe = opts.projects.onSettingsChange((siteId) => this.refresh(siteId));
    opts.projects.onDelete((siteId) => this.remove(siteId));
  }

  /** Re-reads a project's settings and (re)arms or drops its schedule. */
  refresh(siteId: string): void {
    if (this.stopped) return;
    let expression: string | null = null;
    try {
      expression = this.opts.expressionOf(this.opts.projects.getSettings(siteId));
    } catch {
      expression = null; // project gone
    }
    if (expression !== null && !cron.validate(expression)) {
      this.opts.onError?.(siteId, new Error(`invalid cron expression ${JSON.stringify(expression)}`));
      expression = null;
    }
    const cur = this.active.get(siteId);
    if (cur && cur.expression === expression) return;
    if (cur) {
      void cur.handle.stop();
      this.active.delete(siteId);
    }
    if (expression === null) return;
    const handle = (this.opts.scheduler ?? cronScheduler)(expression, () => void this.runNow(siteId), `${this.opts.name}:${siteId}`);
    this.active.set(siteId, { expression, handle });
  }

  /** Runs the job for a project now; a tick while the previous run is busy joins it. */
  runNow(siteId: string): Promise<unknown> {
    let p = this.running.get(siteId);
    if (!p) {
      p = this.opts
        .run(siteId)
        .catch((err: unknown) => this.opts.onError?.(siteId, err))
        .finally(() => this.running.delete(siteId));
      this.running.set(siteId, p);
    }
    return p;
  }

  /** The expression scheduled for a project, or null (tests, status). */
  expressionFor(siteId: string): string | null {
    return this.active.get(siteId)?.expression ?? null;
  }

  private remove(siteId: string): void {
    const cur = this.active.get(siteId);
    if (cur) void cur.handle.stop();
    this.active.delete(siteId);
  }

  /** Stops every schedule and waits for the runs in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    await Promise.all([...this.active.values()].map((a) => a.handle.stop()));
    this.active.clear();
    await Promise.allSettled([...this.running.values()]);
  }
}
