/**
 * The Control Panel's API client. The key lives in sessionStorage (gone when the tab closes)
 * and travels only in the `Authorization: Bearer` header — never in a URL, never in a cookie,
 * so a request forged by another site carries no credentials (CSRF is impossible by
 * construction). Only the documented admin and project routes are called, plus
 * `GET /admin/whoami` and `GET /sites/tasks` (src/http/panel-api.ts).
 */

const STORAGE_KEY = 'sitesift.panel.session';

/** Who is signed in. */
export interface Session {
  key: string;
  kind: 'master' | 'project';
  /** The project of a project key. */
  siteId?: string;
}

/** A failure body of the API (`{"status":"failure","code","message","field"?,"errors"?}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly errors?: Array<{ index?: number; field: string; message: string }>,
  ) {
    super(message);
  }
}

export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(STORAGE_KEY);
}

type Query = Record<string, string | number | boolean | null | undefined>;

/** Calls the API with the session's key; throws {@link ApiError} for failure answers. */
export async function call<T = Record<string, unknown>>(key: string, method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== null && v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, Accept: 'application/json' };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(url.toString(), { method, headers, body, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'network', 'The server could not be reached.');
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = {};
  }
  if (!res.ok) {
    throw new ApiError(
      res.status,
      String(json.code ?? 'http_' + res.status),
      String(json.message ?? `HTTP ${res.status}`),
      typeof json.field === 'string' ? json.field : undefined,
      Array.isArray(json.errors) ? (json.errors as ApiError['errors']) : undefined,
    );
  }
  return json as T;
}

/** Bound to one session and (for project routes) one project. */
export class Api {
  constructor(
    readonly session: Session,
    readonly siteId: string,
  ) {}

  /** A `{base_url}` project route; the master key names the project in `site`. */
  project<T = Record<string, unknown>>(method: string, path: string, query: Query = {}, body?: unknown): Promise<T> {
    const q = this.session.kind === 'master' ? { ...query, site: this.siteId } : query;
    return call<T>(this.session.key, method, path, { query: q, body });
  }

  /** An `/admin/projects/{siteId}/…` route. */
  admin<T = Record<string, unknown>>(method: string, rest: string, body?: unknown): Promise<T> {
    return call<T>(this.session.key, method, `/admin/projects/${encodeURIComponent(this.siteId)}${rest}`, { body });
  }
}
