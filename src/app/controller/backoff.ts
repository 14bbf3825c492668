/**
 * The one exponential backoff of the controller runtime (issue 13): the work
 * queue's per-key retries, the informers' restarts and the custom-resource
 * writes all wait `baseMs * 2^failures`, capped at `maxMs`.
 */
export interface BackoffOptions {
  /** Delay after the first failure; each further failure doubles it. */
  baseMs: number;
  /** The delay never grows past this. */
  maxMs: number;
}

/** The wait after `previousFailures` failures (0 for the first retry). */
export function backoffDelay(previousFailures: number, { baseMs, maxMs }: BackoffOptions): number {
  return Math.min(maxMs, baseMs * 2 ** previousFailures);
}
