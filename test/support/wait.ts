/**
 * Polls until a condition holds, for end-to-end tests that follow real
 * processes. Only the outcome is asserted; the bound is a safety net.
 */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, boundMs = 60_000): Promise<T> {
  const giveUpAt = Date.now() + boundMs;
  let last: T = await read();
  while (!done(last)) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  return last;
}

/**
 * Polls a synchronous probe every 50 ms until it returns a value, or gives
 * `undefined` after `boundMs`, for the caller to assert on with its own words.
 */
export async function probeUntil<T>(probe: () => T | undefined, boundMs = 20_000): Promise<T | undefined> {
  const giveUpAt = Date.now() + boundMs;
  for (;;) {
    const value = probe();
    if (value !== undefined || Date.now() > giveUpAt) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
