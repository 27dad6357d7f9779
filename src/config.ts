/** Placeholder: the platform owner replaces this with the validated config loader (SPEC §1). */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  masterKey: string | null;
  role: 'primary' | 'search';
  workers: number;
  snapshot: string | null;
  crawlerAllowPrivate: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Milliseconds between a write's acknowledgement and its visibility (default 1000). */
  refreshMs: number;
  /** Largest accepted request body in bytes. */
  maxBodyBytes: number;
  primaryUrl: string | null;
}
