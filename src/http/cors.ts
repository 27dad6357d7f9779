/**
 * The CORS headers of the public search routes (SPEC §2), shared by the Koa chain
 * (src/http/app.ts) and the lean paths (src/http/lean.ts), which must send the same headers in
 * the same order. Main thread.
 */

/**
 * The CORS header of every answer of a public route but a preflight (SPEC §2: "send
 * `Access-Control-Allow-Origin: *` and answer `OPTIONS` preflights"). A browser reads the
 * allowed methods, headers and max age from the preflight only; on the actual response it
 * checks the origin. Until session 11 every answer carried all four headers (and echoed the
 * request's `Access-Control-Request-Headers`): three headers and ≈ 130 bytes per response that
 * no client reads, which node:http validated and wrote on every cached suggest and search.
 */
export const RESPONSE_CORS_HEADERS: readonly string[] = ['Access-Control-Allow-Origin', '*'];

/**
 * The preflight answer's headers (`OPTIONS`) as a flat `[name, value, name, value, …]` list
 * (the form `writeHead` takes): any origin, `method` and OPTIONS, the requested headers (else
 * `Content-Type`), one day of preflight caching.
 */
export function corsHeaders(method: string, requestedHeaders: string | undefined): string[] {
  return [
    ...RESPONSE_CORS_HEADERS,
    'Access-Control-Allow-Methods', `${method}, OPTIONS`,
    'Access-Control-Allow-Headers', requestedHeaders || 'Content-Type',
    'Access-Control-Max-Age', '86400',
  ];
}
