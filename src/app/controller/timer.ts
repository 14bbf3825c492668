/**
 * Time for the controller runtime, injected so tests move it instead of
 * sleeping (DESIGN.md, style). `systemTimers` is the production clock;
 * `FakeTimers` fires due callbacks in time order when a test advances it.
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

interface FakeTimer {
  id: number;
  dueAt: number;
  fire: () => void;
}

/** Test time: nothing fires until `advance`, and then strictly in due-time order. */
export class FakeTimers implements Timers {
  private nowMs: number;
  private nextId = 1;
  private readonly scheduled = new Map<number, FakeTimer>();

  constructor(startMs: number = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimeout(fire: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    this.scheduled.set(id, { id, dueAt: this.nowMs + Math.max(0, delayMs), fire });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.scheduled.delete(handle as number);
  }

  /** How many timers are scheduled and not yet fired or cleared. */
  get pending(): number {
    return this.scheduled.size;
  }

  /**
   * Moves time forward, firing each due timer with `now()` at its due time.
   * A timer that a callback schedules inside the window fires in the same call.
   */
  advance(ms: number): void {
    const until = this.nowMs + ms;
    for (let timer = this.nextDue(until); timer; timer = this.nextDue(until)) {
      this.scheduled.delete(timer.id);
      this.nowMs = timer.dueAt;
      timer.fire();
    }
    this.nowMs = until;
  }

  /** Earliest timer due by `until`; ties go to the one scheduled first, as with real timers. */
  private nextDue(until: number): FakeTimer | undefined {
    let earliest: FakeTimer | undefined;
    for (const timer of this.scheduled.values()) {
      if (timer.dueAt > until) continue;
      if (!earliest || timer.dueAt < earliest.dueAt || (timer.dueAt === earliest.dueAt && timer.id < earliest.id)) earliest = timer;
    }
    return earliest;
  }
}
