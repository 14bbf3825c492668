/** A turn of the event loop: long work in the middle ring yields with it between short steps, so other requests are served. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
