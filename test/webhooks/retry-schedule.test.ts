import { expect } from 'chai';
import { MAX_DELIVERY_ATTEMPTS, TOTAL_RETRY_SPAN_MS, nextAttemptAt, retryDelayMs } from '../../src/domain/webhooks/retry-schedule.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

describe('webhook retry schedule', () => {
  // The wait after attempt n fails: 10 s, then 5 minutes more each time (SPEC.md, Delivery rules 3).
  const waits: Array<[attempt: number, waitMs: number]> = [
    [1, 10 * SECOND],
    [2, 5 * MINUTE + 10 * SECOND],
    [3, 10 * MINUTE + 10 * SECOND],
    [4, 15 * MINUTE + 10 * SECOND],
    [5, 20 * MINUTE + 10 * SECOND],
    [6, 25 * MINUTE + 10 * SECOND],
    [7, 30 * MINUTE + 10 * SECOND],
    [8, 35 * MINUTE + 10 * SECOND],
    [9, 40 * MINUTE + 10 * SECOND],
  ];
  const failedAt = new Date('2024-03-01T12:00:00.000Z');

  for (const [attempt, waitMs] of waits) {
    it(`retries ${waitMs / SECOND} s after attempt ${attempt} fails`, () => {
      expect(retryDelayMs(attempt)).to.equal(waitMs);
      expect(nextAttemptAt(failedAt, attempt)?.toISOString()).to.equal(new Date(failedAt.getTime() + waitMs).toISOString());
    });
  }

  it('gives up after the 10th attempt', () => {
    expect(MAX_DELIVERY_ATTEMPTS).to.equal(10);
    expect(nextAttemptAt(failedAt, 10)).to.equal(undefined);
    expect(nextAttemptAt(failedAt, 11)).to.equal(undefined);
  });

  it('makes exactly 10 attempts when every one fails', () => {
    let attempts = 1;
    let at: Date | undefined = failedAt;
    while ((at = nextAttemptAt(at, attempts)) !== undefined) attempts += 1;
    expect(attempts).to.equal(10);
  });

  it('spans 3 h 1 min 30 s of waiting from the first failure to the last attempt', () => {
    expect(TOTAL_RETRY_SPAN_MS).to.equal(3 * 60 * MINUTE + MINUTE + 30 * SECOND);
    expect(TOTAL_RETRY_SPAN_MS).to.equal(waits.reduce((sum, [, wait]) => sum + wait, 0));
  });

  it('refuses attempt numbers below 1 or fractional', () => {
    expect(() => retryDelayMs(0)).to.throw(RangeError);
    expect(() => nextAttemptAt(failedAt, 1.5)).to.throw(RangeError);
  });
});
