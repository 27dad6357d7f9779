/**
 * The CORS headers of the public search routes (SPEC §2), shared by the Koa chain
 * (src/http/app.ts) and the lean suggest path (src/http/suggest.ts), which must send the same
 * headers in the same order. Main thread.
 */

/**
 * The headers as a flat `[name, value, name, value, …]` list (the form `writeHead` takes):
 * any origin, `method` and OPTIONS, the requested headers (else `Content-Type`), one day of
 * preflight caching.
 */
export function corsHeaders(method: string, requestedHeaders: string | undefined): string[] {
  return [
    'Access-Control-Allow-Origin', '*',
    'Access-Control-Allow-Methods', `${method}, OPTIONS`,
    'Access-Control-Allow-Headers', requestedHeaders || 'Content-Type',
    'Access-Control-Max-Age', '86400',
  ];
}
