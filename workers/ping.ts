/**
 * Health-check task (worker thread): echoes its payload with the worker's thread id, its
 * scheduling priority (nice value), its V8 young-generation cap and heap limit, so tests and `status` can
 * prove the pool runs code with the intended settings.
 */
import os from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { resourceLimits, threadId } from 'node:worker_threads';

export default async function ping(
  payload: Record<string, unknown>,
): Promise<{ pong: true; threadId: number; priority: number; youngGenerationMb: number; heapLimitMb: number; echo: unknown }> {
  const heapLimitMb = Math.round(getHeapStatistics().heap_size_limit / 1048576);
  return { pong: true, threadId, priority: os.getPriority(), youngGenerationMb: resourceLimits.maxYoungGenerationSizeMb ?? 0, heapLimitMb, echo: payload.echo ?? null };
}
