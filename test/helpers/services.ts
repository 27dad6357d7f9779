/**
 * Sources for the search services (src/search/service.ts, suggest.ts) over a test snapshot,
 * without a store: a project index that counts its pins, and an executor that searches on
 * this thread and records how many pins were held while it ran.
 */
import type { IndexSnapshot, ProjectIndex } from '../../src/index/index.js';
import { LocalSearchExecutor, type SearchExecutor, type SearchSources } from '../../src/search/index.js';
import type { Settings } from '../../src/core/index.js';

export interface CountingSources extends SearchSources {
  /** Snapshots acquired and not yet released. */
  readonly pins: number;
  /** Snapshots acquired so far. */
  readonly acquired: number;
  /** Searches the executor ran. */
  readonly runs: number;
  /** `pins` while each search ran, in order. */
  readonly pinsDuringRuns: number[];
  /** The settings `getSettings` returns from now on (a new object is a new settings version). */
  settings: Settings;
  /** When set, the executor rejects with it. */
  failWith: Error | null;
}

/** Sources for project `default` over `snap` (the snapshot itself is never released). */
export function countingSources(snap: IndexSnapshot, settings: Settings): CountingSources {
  const local = new LocalSearchExecutor();
  const index = {
    siteId: 'default',
    acquire(): IndexSnapshot {
      src.pins++;
      src.acquired++;
      let released = false;
      return {
        ...snap,
        release() {
          if (released) throw new Error('released twice');
          released = true;
          src.pins--;
        },
      };
    },
  } as unknown as ProjectIndex;
  const executor: SearchExecutor = {
    threads: 0,
    memory: async () => [],
    warm: async () => false,
    close: async () => {},
    run: async (owner, s, st, params) => {
      src.runs++;
      src.pinsDuringRuns.push(src.pins);
      if (src.failWith) throw src.failWith;
      return local.run(owner, s, st, params);
    },
  };
  const src = {
    pins: 0,
    acquired: 0,
    runs: 0,
    pinsDuringRuns: [] as number[],
    settings,
    failWith: null as Error | null,
    projects: {
      getSettings(siteId: string): Settings {
        if (siteId !== 'default') throw new Error(`no project ${siteId}`);
        return src.settings;
      },
    },
    indexes: { get: async (_siteId: string) => index },
    executor,
  };
  return src;
}
