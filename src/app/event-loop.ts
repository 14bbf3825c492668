/**
 * A turn of the event loop: long work in the middle ring yields with it between short steps, so other requests are served.
 *
 * Two hops of setImmediate, not one: work that runs in an I/O callback (a request's first step, a file written) is in
 * the loop's poll phase, and an immediate scheduled there runs in the same iteration's check phase, before the loop
 * polls again; two steps of an upload ran back to back that way, 83 ms without a poll between them (bench/scale.ts).
 * The second hop always lands in a later iteration, after a poll for sockets and the timers.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
