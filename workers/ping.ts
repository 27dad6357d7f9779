/**
 * Health-check task (worker thread): echoes its payload with the worker's thread id and its
 * scheduling priority (nice value), so tests and `status` can prove the pool runs code.
 */
import os from 'node:os';
import { threadId } from 'node:worker_threads';

export default async function ping(payload: Record<string, unknown>): Promise<{ pong: true; threadId: number; priority: number; echo: unknown }> {
  return { pong: true, threadId, priority: os.getPriority(), echo: payload.echo ?? null };
}
