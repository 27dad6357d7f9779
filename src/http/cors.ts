/**
 * The CORS headers of the public search routes (SPEC §2), set by the app's CORS middleware
 * (src/http/app.ts). Main thread.
 */

/**
 * The CORS header of every answer of a public route but a preflight (SPEC §2: "send
 * `Access-Control-Allow-Origin: *` and answer `OPTIONS` preflights"). A browser reads the
 * allowed methods, headers and max age from the preflight only; on the actual response it
 * checks the origin, so the other three headers are sent on preflights only.
 */
export const RESPONSE_CORS_HEADERS: readonly string[] = ['Access-Control-Allow-Origin', '*'];

/**
 * The preflight answer's headers (`OPTIONS`) as a flat `[name, value, name, value, …]` list:
 * any origin, `method` and OPTIONS, the requested headers (else `Content-Type`), one day of
 * preflight caching.
 */
export function corsHeaders(method: string, requestedHeaders: string | undefined): string[] {
  return [
    ...RESPONSE_CORS_HEADERS,
    'Access-Control-Allow-Methods', `${method}, OPTIONS`,
    'Access-Control-Allow-Headers', requestedHeaders || 'Content-Type',
    'Access-Control-Max-Age', '86400',
  ];
}
