/**
 * Public surface of the HTTP layer: the Koa application with every route, and the handler
 * that answers requests node:http could not parse with the same JSON error body.
 */
export { API_ROUTES, appRouter, createApp, openApiText } from './app.js';
export { FailureBody, openApiDocument, openApiPath, responseValidator, success } from './openapi.js';
export type { MediaAnswer, RouteAuth, RouteSpec } from './openapi.js';
export type { AppOptions } from './app.js';
export { answerClientErrors } from './client-error.js';
export { createMetrics, startMetricsServer, type Metrics, type MetricsServer } from './metrics.js';
