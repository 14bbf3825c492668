import type { RequestHandler } from 'express';
import { loopShare } from '../app/event-loop.js';

/** How long the requests one turn of the event loop starts may run before the rest wait for the next turn. */
export const TURN_SLICE_MS = 10;

/**
 * Starts the requests that arrive in one turn of the event loop in later
 * turns, as many per turn as fit in `sliceMs` of the turn's time (always
 * one). When the loop is busy, its poll phase hands Node every request that
 * arrived meanwhile, and their synchronous SQLite work ran back to back in
 * that one turn: ten clients on 90 ms lists held the loop for about a
 * second, and /healthz (mounted before this, never queued) waited behind
 * all of them (bench/scale.ts). Here a heavy request ends its turn, so the
 * loop polls, and answers /healthz, between any two of them; cheap ones
 * still go many to a turn (one each cost a list of targets 15% of its
 * throughput, bench/targets-list.ts).
 */
export function requestTurns(sliceMs = TURN_SLICE_MS): RequestHandler {
  const waiting: Array<() => void> = [];
  // The requests' immediates for the next check phase, until the first of them runs. Node runs a callback's microtasks
  // before the next immediate, so each one measures what the requests before it took, their work after an await
  // included: started from a loop in one callback, ten requests whose SQLite work came after their first await ran
  // back to back, 520 ms.
  let open: { sliceStart: number | undefined; openedAt: number } | undefined;
  const enqueue = (): void => {
    open ??= { sliceStart: undefined, openedAt: performance.now() };
    const batch = open;
    setImmediate(() => {
      if (open === batch) open = undefined; // its phase has begun: requests arriving from now on go to the next
      const now = performance.now();
      if (batch.sliceStart === undefined) {
        // A step of long work let go on in this check phase (after the batch was opened: before its requests) that ran past the
        // slice puts them off to the next iteration, where no step runs (loopShare); otherwise the first of a turn always starts.
        if (loopShare.stepReleasedAt > batch.openedAt && now - loopShare.stepReleasedAt >= sliceMs) {
          loopShare.requestsPutOff = true;
          enqueue();
          return;
        }
        loopShare.requestsPutOff = false;
        batch.sliceStart = now;
        waiting.shift()?.();
      } else if (now - batch.sliceStart < sliceMs) waiting.shift()?.();
      else enqueue(); // the slice is spent: queued from this check phase, it runs in the next
    });
  };
  return (_req, _res, next) => {
    waiting.push(next);
    enqueue();
  };
}
