/**
 * The one error-code table of sitesift (SPEC §3). Every failure a client can see is an
 * {@link AppError}; the error middleware in `src/http/app.ts` renders it as
 * `{"status":"failure","code","message","field"?,"errors"?}` with the status from {@link ERROR_STATUS}.
 * Malformed HTTP that never becomes a request (`bad_request`, `headers_too_large`,
 * `request_timeout`) gets the same body from src/http/client-error.ts.
 */
export const ERROR_STATUS = {
  invalid_parameter: 400,
  invalid_json: 400,
  invalid_document: 400,
  batch_too_large: 400,
  bad_request: 400,
  missing_token: 401,
  invalid_token: 401,
  forbidden: 403,
  unknown_site: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  not_implemented: 501,
  overloaded: 503,
  not_ready: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One per-entry problem of a batch (`errors[]` in the body). */
export interface EntryError {
  index: number;
  field: string;
  message: string;
}

/** A failure meant for the client: `expose` is always true; unknown errors become `internal`. */
export class AppError extends Error {
  readonly status: number;
  readonly expose = true;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    readonly errors?: EntryError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** Shorthand for a 400 `invalid_parameter` naming `field`. */
export function badParam(field: string, message: string): AppError {
  return new AppError('invalid_parameter', message, field);
}
