import type { RequestHandler } from 'express';

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
  const startSome = () => {
    const started = performance.now();
    try {
      do waiting.shift()!();
      while (waiting.length > 0 && performance.now() - started < sliceMs);
    } finally {
      if (waiting.length > 0) setImmediate(startSome);
    }
  };
  return (_req, _res, next) => {
    if (waiting.push(next) === 1) setImmediate(startSome);
  };
}
