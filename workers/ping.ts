/**
 * Health-check task (worker thread): echoes its payload with the worker's thread id, its
 * scheduling priority (nice value) and its V8 young-generation cap, so tests and `status` can
 * prove the pool runs code with the intended settings.
 */
import os from 'node:os';
import { resourceLimits, threadId } from 'node:worker_threads';

export default async function ping(payload: Record<string, unknown>): Promise<{ pong: true; threadId: number; priority: number; youngGenerationMb: number; echo: unknown }> {
  return { pong: true, threadId, priority: os.getPriority(), youngGenerationMb: resourceLimits.maxYoungGenerationSizeMb ?? 0, echo: payload.echo ?? null };
}
