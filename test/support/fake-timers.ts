/**
 * Test time for the controller runtime: nothing fires until `advance`, and
 * then strictly in due-time order (moved from src/app/controller/timer.ts).
 */
import type { TimerHandle, Timers } from '../../src/app/controller/timer.js';

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
