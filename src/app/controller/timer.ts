/**
 * Time for the controller runtime, injected so tests move it instead of
 * sleeping (DESIGN.md, style). `systemTimers` is the production clock;
 * tests use `FakeTimers` (test/support/fake-timers.ts), which fires due
 * callbacks in time order when a test advances it.
 */
import { systemClock, type Clock } from '../../domain/clock.js';

/** Opaque: only the Timers that returned a handle can cancel it. */
export type TimerHandle = unknown;

export interface Timers {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fire: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * Node fires a timeout longer than 2^31-1 ms (about 24.8 days) at once, and a
 * monthly schedule's next run is further away than that, so long delays are
 * waited out in steps of at most this length.
 */
export const LONGEST_NODE_TIMEOUT_MS = 2 ** 31 - 1;

interface ChainedTimeout {
  current: NodeJS.Timeout | undefined;
}

/** Real timers; `now()` reads the injected Clock so the queue and the rest of the service agree on time. */
export function systemTimers(clock: Clock = systemClock): Timers {
  return {
    now: () => clock.now().getTime(),
    setTimeout: (fire, delayMs) => {
      const chained: ChainedTimeout = { current: undefined };
      armChained(chained, fire, Math.max(0, delayMs));
      return chained;
    },
    clearTimeout: (handle) => {
      const chained = handle as ChainedTimeout;
      if (chained.current !== undefined) clearTimeout(chained.current);
      chained.current = undefined;
    },
  };
}

function armChained(chained: ChainedTimeout, fire: () => void, remainingMs: number): void {
  const stepMs = Math.min(remainingMs, LONGEST_NODE_TIMEOUT_MS);
  chained.current = setTimeout(() => {
    if (remainingMs > stepMs) armChained(chained, fire, remainingMs - stepMs);
    else {
      chained.current = undefined;
      fire();
    }
  }, stepMs);
}
