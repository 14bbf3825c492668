/**
 * When a failed webhook delivery is tried again (SPEC.md, Delivery rules 3):
 * at most 10 attempts per event and endpoint; the wait before each retry grows
 * by 5 minutes, starting at 10 seconds.
 *
 *   after attempt  1 fails: wait  0 min 10 s     after attempt 6 fails: wait 25 min 10 s
 *   after attempt  2 fails: wait  5 min 10 s     after attempt 7 fails: wait 30 min 10 s
 *   after attempt  3 fails: wait 10 min 10 s     after attempt 8 fails: wait 35 min 10 s
 *   after attempt  4 fails: wait 15 min 10 s     after attempt 9 fails: wait 40 min 10 s
 *   after attempt  5 fails: wait 20 min 10 s     after attempt 10 fails: give up
 *
 * Ten attempts have nine waits: 9 x 10 s + (0+1+...+8) x 5 min = 1 min 30 s +
 * 180 min = 3 h 1 min 30 s from the first failure to the tenth attempt (plus
 * the attempts' own durations, at most 5 s each), SPEC's "roughly 3 hours".
 * Pure: the caller passes the time the attempt failed.
 */

export const MAX_DELIVERY_ATTEMPTS = 10;
const FIRST_RETRY_DELAY_MS = 10_000;
const RETRY_DELAY_STEP_MS = 5 * 60_000;

/** The wait after attempt `attemptNumber` (1-based) fails, or undefined when it was the last allowed attempt. */
export function retryDelayMs(attemptNumber: number): number | undefined {
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1) {
    throw new RangeError(`delivery attempt numbers start at 1 (got ${attemptNumber})`);
  }
  if (attemptNumber >= MAX_DELIVERY_ATTEMPTS) return undefined;
  return FIRST_RETRY_DELAY_MS + (attemptNumber - 1) * RETRY_DELAY_STEP_MS;
}

/**
 * When to make the next attempt after attempt `attemptNumber` failed at
 * `failedAt`; undefined after the 10th attempt, meaning: give up.
 */
export function nextAttemptAt(failedAt: Date, attemptNumber: number): Date | undefined {
  const delay = retryDelayMs(attemptNumber);
  return delay === undefined ? undefined : new Date(failedAt.getTime() + delay);
}

/** Sum of all waits between the first and the last attempt: 3 h 1 min 30 s (10 890 000 ms). */
export const TOTAL_RETRY_SPAN_MS: number = Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, index) => retryDelayMs(index + 1)!).reduce(
  (sum, delay) => sum + delay,
  0,
);
