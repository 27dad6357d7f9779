/**
 * Polls `check` until it holds, up to a minute (the machine may be busy): the task runs in
 * another component, so tests wait on the public API, bounded, instead of sleeping a fixed time.
 */
export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
