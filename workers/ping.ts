/**
 * Health-check task (worker thread): echoes its payload with the worker's thread id, so tests
 * and `status` can prove the pool runs code.
 */
import { threadId } from 'node:worker_threads';

export default async function ping(payload: Record<string, unknown>): Promise<{ pong: true; threadId: number; echo: unknown }> {
  return { pong: true, threadId, echo: payload.echo ?? null };
}
