/**
 * Sitemap and recrawl schedules: one per project from settings, re-armed when settings change,
 * dropped when the schedule is cleared or the project deleted; ticks run the job (fake scheduler).
 */
import t from 'tap';
import { startSitemapImportJob } from '../../jobs/sitemap-import.js';
import { startRecrawlJob } from '../../jobs/recrawl.js';
import type { Scheduler, ScheduleProjects } from '../../src/crawl/index.js';
import type { Settings } from '../../src/core/index.js';
import { testSettings } from '../crawl/helpers/memory-index.js';

function fakeProjects(initial: Record<string, Settings>) {
  const settings = new Map(Object.entries(initial));
  const listeners: Array<(siteId: string, s: Settings, p: Settings) => void> = [];
  const deletes: Array<(siteId: string) => unknown> = [];
  const projects: ScheduleProjects = {
    listProjects: () => [...settings.keys()].map((siteId) => ({ siteId })),
    getSettings: (siteId) => {
      const s = settings.get(siteId);
      if (!s) throw new Error('unknown');
      return s;
    },
    onSettingsChange: (l) => {
      listeners.push(l);
      return () => listeners.splice(listeners.indexOf(l), 1);
    },
    onDelete: (h) => void deletes.push(h),
  };
  return {
    projects,
    update(siteId: string, s: Settings) {
      const prev = settings.get(siteId)!;
      settings.set(siteId, s);
      for (const l of listeners) l(siteId, s, prev);
    },
    remove(siteId: string) {
      settings.delete(siteId);
      for (const d of deletes) d(siteId);
    },
  };
}

function fakeScheduler() {
  const live = new Map<string, { expression: string; tick: () => void }>();
  let n = 0;
  const scheduler: Scheduler = (expression, tick, name) => {
    const id = `${name}#${n++}`;
    live.set(id, { expression, tick });
    return { stop: () => void live.delete(id) };
  };
  const of = (prefix: string) => [...live.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => v);
  return { scheduler, of };
}

t.test('sitemap schedules follow settings without a restart', async (t) => {
  const fp = fakeProjects({
    a: testSettings({ sitemapUrls: ['https://a.example/sitemap.xml'], sitemapSchedule: '0 3 * * *' }),
    b: testSettings({}), // no sitemap URLs → no schedule
  });
  const fs = fakeScheduler();
  const imported: string[] = [];
  const job = startSitemapImportJob({ crawl: { importSitemaps: async (siteId) => void imported.push(siteId) as never }, projects: fp.projects, scheduler: fs.scheduler });
  t.teardown(() => job.stop());
  t.same(fs.of('sitemap-import:a').map((x) => x.expression), ['0 3 * * *']);
  t.same(fs.of('sitemap-import:b'), []);
  fs.of('sitemap-import:a')[0].tick();
  await new Promise((r) => setImmediate(r));
  t.same(imported, ['a'], 'a tick runs the import');

  fp.update('a', testSettings({ sitemapUrls: ['https://a.example/sitemap.xml'], sitemapSchedule: '*/15 * * * *' }));
  t.same(fs.of('sitemap-import:a').map((x) => x.expression), ['*/15 * * * *'], 're-armed with the new expression, old one stopped');
  fp.update('b', testSettings({ sitemapUrls: ['https://b.example/sitemap.xml'], sitemapSchedule: '0 * * * *' }));
  t.same(fs.of('sitemap-import:b').map((x) => x.expression), ['0 * * * *'], 'new schedule for b');
  fp.update('a', testSettings({ sitemapUrls: [] }));
  t.same(fs.of('sitemap-import:a'), [], 'dropped when the sitemap URLs go');
  fp.remove('b');
  t.same(fs.of('sitemap-import:b'), [], 'dropped with the project');
});

t.test('recrawl schedule: null means never; invalid expressions are reported, not scheduled', async (t) => {
  const fp = fakeProjects({ a: testSettings({ rootUrls: ['https://a.example/'], recrawlSchedule: null }) });
  const fs = fakeScheduler();
  const crawled: string[] = [];
  const errors: string[] = [];
  const job = startRecrawlJob({
    crawl: { startSiteCrawl: async (siteId) => void crawled.push(siteId) as never },
    projects: fp.projects,
    scheduler: fs.scheduler,
    onError: (_s, e) => errors.push(String(e)),
  });
  t.teardown(() => job.stop());
  t.same(fs.of('recrawl:a'), []);
  fp.update('a', testSettings({ rootUrls: ['https://a.example/'], recrawlSchedule: '0 4 * * 0' }));
  t.equal(job.expressionFor('a'), '0 4 * * 0');
  fs.of('recrawl:a')[0].tick();
  await new Promise((r) => setImmediate(r));
  t.same(crawled, ['a']);
  fp.update('a', testSettings({ rootUrls: ['https://a.example/'], recrawlSchedule: 'not cron' }));
  t.equal(job.expressionFor('a'), null);
  t.match(errors[0], /invalid cron expression/);
});
