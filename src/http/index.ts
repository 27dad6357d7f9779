/**
 * Public surface of the HTTP layer: the Koa application with every route, and the handler
 * that answers requests node:http could not parse with the same JSON error body.
 */
export { createApp } from './app.js';
export type { AppOptions } from './app.js';
export { answerClientErrors } from './client-error.js';
export { createMetrics, startMetricsServer, type Metrics, type MetricsServer } from './metrics.js';
