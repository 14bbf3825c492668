/**
 * A turn of the event loop: long work yields with it between short steps, so
 * that other requests are served.
 *
 * The loop goes on with one yielded step per iteration, across all the work
 * that yields, first come first served, with a poll for sockets and the
 * timers between any two. With each piece of work on its own setImmediate,
 * every step queued by the time the loop reached its check phase ran there
 * back to back: a scan PDF's layout and a deleted scan's recompute, each
 * 30-45 ms a step, held the loop 109 ms together (bench/scale.ts).
 *
 * Two hops before the first step: work that runs in an I/O callback (a
 * request's first step, a file written) is in the loop's poll phase, and an
 * immediate scheduled there runs in the same iteration's check phase, before
 * the loop polls again; two steps of an upload ran back to back that way,
 * 83 ms without a poll between them.
 */
const waiting: Array<() => void> = [];
let releasing = false;

/**
 * What the loop's check phase ran, shared with the requests started in turns
 * (src/http/request-turns.ts). A step goes first in a check phase (it was
 * queued in the one before), and the requests that arrived meanwhile start
 * after it: a request's start and a step, each up to 40 ms, held the loop
 * together with ten clients on the slowest lists (bench/scale.ts). A step
 * past the requests' slice puts them off to the next iteration, which runs
 * no step, so neither kind of work waits more than one iteration for the
 * other.
 */
export const loopShare = {
  /** When the last step was let go on (performance.now()). */
  stepReleasedAt: Number.NEGATIVE_INFINITY,
  /** Requests were put off for a step: the next iteration is theirs. */
  requestsPutOff: false,
};

export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!releasing) {
      releasing = true;
      setImmediate(() => setImmediate(releaseOne));
    }
  });
}

/**
 * In the check phase: lets the first waiting step go on (in the microtasks
 * that run once this callback returns), and leaves the next to the next
 * iteration (an immediate scheduled here runs only after the loop has polled).
 */
function releaseOne(): void {
  if (loopShare.requestsPutOff) {
    loopShare.requestsPutOff = false;
    setImmediate(releaseOne);
    return;
  }
  loopShare.stepReleasedAt = performance.now();
  waiting.shift()!();
  if (waiting.length > 0) setImmediate(releaseOne);
  else releasing = false;
}
