/**
 * Validation of `POST /sites/queries/log` bodies (seed 4.8, SPEC §8). Pure; main thread.
 * Accepts JSON values or form strings (numbers as decimal text).
 */
import { Type } from '@sinclair/typebox';
import { badParam } from '../core/index.js';
import { normaliseQuery } from './normalize.js';

export const QUERY_EVENT_ACTIONS = ['search', 'select', 'abandon'] as const;
export type QueryEventAction = (typeof QUERY_EVENT_ACTIONS)[number];

/** Largest accepted `timeToAction` (milliseconds): one hour. */
export const MAX_TIME_TO_ACTION_MS = 3_600_000;
/** Largest accepted `position` (1-based rank of the selected result). */
export const MAX_POSITION = 10_000;
/** Largest accepted `link` length. */
export const MAX_LINK_CHARS = 2048;

/**
 * The body of `POST /sites/queries/log` (JSON, form or sendBeacon text): the schema the
 * OpenAPI document publishes. Form fields arrive as strings, so {@link parseQueryEvent} reads
 * the numbers from either form.
 */
export const QueryEventInput = Type.Object({
  site: Type.Optional(Type.String({ description: "The project's siteId (or the `site` query parameter)." })),
  query: Type.String({ minLength: 1 }),
  action: Type.Union(QUERY_EVENT_ACTIONS.map((a) => Type.Literal(a)), { description: 'Any case.' }),
  timeToAction: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_TIME_TO_ACTION_MS }), Type.String()], { description: 'Milliseconds from the search to the action.' })),
  link: Type.Optional(Type.String({ maxLength: MAX_LINK_CHARS, description: 'The selected result (an absolute http(s) URL).' })),
  position: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_POSITION }), Type.String()], { description: '1-based rank of the selected result.' })),
});

/**
 * A suggestion/result event as the service records it.
 * - `search`: the visitor submitted the typed query as a search from the suggestion box;
 * - `select`: the visitor picked a suggested result (`link`, `position`) or query suggestion;
 * - `abandon`: the visitor left the suggestion box without choosing anything.
 * Events are reported (select rate); they do not count as logged searches, because the search
 * itself is logged by `GET /sites`.
 */
export interface QueryEvent {
  /** Raw query text; normalised by the service. */
  query: string;
  action: QueryEventAction;
  /** Milliseconds from the first keystroke (or the results being shown) to the action. */
  timeToAction?: number;
  /** http(s) URL of the selected result. */
  link?: string;
  /** 1-based position of the selected result. */
  position?: number;
}

function optionalInt(body: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const v = body[field];
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw badParam(field, `${field} must be an integer from ${min} to ${max}.`);
  }
  return n;
}

/**
 * Validates an event body (the `site` field is checked by the route and ignored here).
 * Throws `AppError('invalid_parameter')` naming the first bad field.
 *
 * @example parseQueryEvent({ query: 'pg dump', action: 'select', link: 'https://x.org/a', position: '2' })
 */
export function parseQueryEvent(body: Record<string, unknown>): QueryEvent {
  const query = body.query;
  if (typeof query !== 'string' || normaliseQuery(query) === '') {
    throw badParam('query', 'query is required and must be a non-empty string.');
  }
  const action = body.action;
  if (typeof action !== 'string' || !(QUERY_EVENT_ACTIONS as readonly string[]).includes(action)) {
    throw badParam('action', 'action is required and must be one of search, select, abandon.');
  }
  const event: QueryEvent = { query, action: action as QueryEventAction };
  const timeToAction = optionalInt(body, 'timeToAction', 0, MAX_TIME_TO_ACTION_MS);
  if (timeToAction !== undefined) event.timeToAction = timeToAction;
  const position = optionalInt(body, 'position', 1, MAX_POSITION);
  if (position !== undefined) event.position = position;
  const link = body.link;
  if (link !== undefined && link !== null && link !== '') {
    if (typeof link !== 'string' || link.length > MAX_LINK_CHARS) {
      throw badParam('link', `link must be an http(s) URL of at most ${MAX_LINK_CHARS} characters.`);
    }
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      throw badParam('link', 'link must be an absolute http(s) URL.');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw badParam('link', 'link must be an absolute http(s) URL.');
    }
    event.link = link;
  }
  return event;
}
