/**
 * Secrets inside project settings: today the HTTP embedder's API key
 * (`search.semantic.http.apiKey`). The key has to be sent as it is, so it cannot be stored as a
 * hash like API tokens; it lives in system.db with the settings (the file that holds the token
 * hashes, backed up the same way) and leaves the server only to the embedder it belongs to:
 *
 * - settings answers show {@link MASKED_SECRET} in its place ({@link maskSecrets});
 * - a `PUT` or `PATCH` that sends the mask back keeps the stored key ({@link keepSecrets}), so a
 *   `GET` answer can be edited and sent back without losing it;
 * - snapshots carry it only when they carry API keys (`export --keys`, {@link withoutSecrets}).
 *
 * Pure functions, any thread.
 */
import type { Settings } from '../core/index.js';

/** What settings answers show instead of a stored secret. */
export const MASKED_SECRET = '********';

/**
 * `settings` as answered to clients: a stored API key replaced by {@link MASKED_SECRET} (null
 * stays null, so a client sees whether one is set).
 *
 * @example maskSecrets(settings).search.semantic?.http.apiKey // '********' or null
 */
export function maskSecrets(settings: Settings): Settings {
  const sem = settings.search.semantic;
  if (!sem || sem.http.apiKey === null) return settings;
  return { ...settings, search: { ...settings.search, semantic: { ...sem, http: { ...sem.http, apiKey: MASKED_SECRET } } } };
}

/** `settings` without its secrets (the API key null), for snapshots exported without keys. */
export function withoutSecrets(settings: Settings): Settings {
  const sem = settings.search.semantic;
  if (!sem || sem.http.apiKey === null) return settings;
  return { ...settings, search: { ...settings.search, semantic: { ...sem, http: { ...sem.http, apiKey: null } } } };
}

/**
 * A `PUT` body or `PATCH` patch with a masked API key put back to the stored one; anything
 * else unchanged (a new key replaces the stored one, `null` removes it).
 *
 * @example keepSecrets({ search: { semantic: { http: { apiKey: '********' } } } }, stored) // the stored key kept
 */
export function keepSecrets(input: unknown, stored: Settings): unknown {
  const http = at(input, ['search', 'semantic', 'http']);
  if (!http || http.apiKey !== MASKED_SECRET) return input;
  const search = at(input, ['search'])!;
  const semantic = at(input, ['semantic'], search)!;
  const key = stored.search.semantic?.http.apiKey ?? null;
  return { ...(input as object), search: { ...search, semantic: { ...semantic, http: { ...http, apiKey: key } } } };
}

function at(v: unknown, path: string[], from: unknown = v): Record<string, unknown> | null {
  let cur = from;
  for (const k of path) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return null;
    cur = (cur as Record<string, unknown>)[k];
  }
  return typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Record<string, unknown>) : null;
}
