/** Time is injected everywhere (DESIGN.md style): tests move it, nothing sleeps. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
