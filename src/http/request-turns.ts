import type { RequestHandler } from 'express';

/**
 * Starts at most one request per turn of the event loop. When the loop is
 * busy, its poll phase hands Node every request that arrived meanwhile, and
 * their synchronous SQLite work ran back to back in that one turn: ten
 * clients on 90 ms lists held the loop for about a second, and /healthz
 * (mounted before this, never queued) waited behind all of them
 * (bench/scale.ts). Here each waits for a turn of its own, so the loop polls
 * between any two: /healthz, new connections and other accounts' requests
 * are answered within one request's synchronous work, not ten.
 */
export function oneRequestPerTurn(): RequestHandler {
  const waiting: Array<() => void> = [];
  const startNext = () => {
    try {
      waiting.shift()!();
    } finally {
      if (waiting.length > 0) setImmediate(startNext);
    }
  };
  return (_req, _res, next) => {
    if (waiting.push(next) === 1) setImmediate(startNext);
  };
}
