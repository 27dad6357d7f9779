/**
 * What every stage of one project's segment store shares: the project's identity and folders,
 * the worker pool, the logger, the crash-test hook, and whether the store is closed.
 *
 * Main thread. Invariant: `closed` goes from false to true once (SegmentStore.close) and never
 * back; after it no stage starts work, and work in flight stops at its next check.
 */
import path from 'node:path';
import { AppError, type EmbedderSpec } from '../core/index.js';
import type { PausePoint, TaskPool } from './tasks.js';

/** The few logger methods the store uses; compatible with console and most loggers. */
export interface IndexLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export class StoreContext {
  readonly siteId: string;
  /** The project folder `<dataDir>/projects/<siteId>`. */
  readonly dir: string;
  /** `<dir>/segments`: sealed segment files and builds in flight. */
  readonly segDir: string;
  readonly pool: TaskPool;
  readonly log: IndexLogger | undefined;
  /** Project default language, read at each build and merge. */
  readonly defaultLanguage: () => string;
  /** The project's embedder, read at each build and merge (null: none). */
  readonly embedder: () => EmbedderSpec | null;
  readonly pauseIn: PausePoint | undefined;
  closed = false;

  constructor(opts: { siteId: string; dir: string; pool: TaskPool; log?: IndexLogger; defaultLanguage?: string | (() => string); embedder?: () => EmbedderSpec | null; pauseIn?: PausePoint }) {
    this.siteId = opts.siteId;
    this.dir = opts.dir;
    this.segDir = path.join(opts.dir, 'segments');
    this.pool = opts.pool;
    this.log = opts.log;
    const lang = opts.defaultLanguage ?? 'en';
    this.defaultLanguage = typeof lang === 'function' ? lang : () => lang;
    this.embedder = opts.embedder ?? (() => null);
    this.pauseIn = opts.pauseIn;
  }

  /** The error of a call on a closed store, or of work the close interrupted (`during`). */
  closedError(during?: string): AppError {
    return new AppError('internal', during ? `Index ${this.siteId} closed during ${during}.` : `Index ${this.siteId} is closed.`);
  }
}
