import { expect } from 'chai';
import type { Clock } from '../../src/domain/clock.js';
import { RateLimitedError } from '../../src/domain/errors.js';
import { RateLimiter } from '../../src/http/rate-limiter.js';

class FakeClock implements Clock {
  private millis = Date.parse('2026-01-01T00:00:00.000Z');
  now(): Date {
    return new Date(this.millis);
  }
  advance(milliseconds: number): void {
    this.millis += milliseconds;
  }
}

function bucketCount(limiter: RateLimiter): number {
  return (limiter as unknown as { buckets: Map<string, unknown> }).buckets.size;
}

function refusal(action: () => void): RateLimitedError {
  try {
    action();
  } catch (error) {
    if (error instanceof RateLimitedError) return error;
    throw error;
  }
  expect.fail('expected RateLimitedError');
}

function takeTimes(limiter: RateLimiter, key: string, times: number): void {
  for (let i = 0; i < times; i += 1) limiter.take(key);
}

describe('RateLimiter', () => {
  let clock: FakeClock;
  beforeEach(() => {
    clock = new FakeClock();
  });

  it('lets a burst through and refuses the next request with Retry-After of at least one second', () => {
    const limiter = new RateLimiter(1, 5, clock);
    takeTimes(limiter, 'key-a', 5);
    const error = refusal(() => limiter.take('key-a'));
    expect(error.kind).to.equal('rate_limited');
    expect(error.retryAfterSeconds).to.equal(1);
    expect(error.message).to.include('retry after 1 seconds');
  });

  it('says to wait at least one second even when a token is a few milliseconds away', () => {
    const limiter = new RateLimiter(100, 1, clock);
    limiter.take('key-a');
    clock.advance(5);
    expect(refusal(() => limiter.take('key-a')).retryAfterSeconds).to.equal(1);
  });

  it('says how many seconds until the next token when tokens refill slowly', () => {
    const limiter = new RateLimiter(1, 1, clock);
    limiter.take('key-a');
    clock.advance(200);
    expect(refusal(() => limiter.take('key-a')).retryAfterSeconds).to.equal(1);
  });

  it('refills tokens with time at the configured rate', () => {
    const limiter = new RateLimiter(2, 2, clock);
    takeTimes(limiter, 'key-a', 2);
    clock.advance(499);
    refusal(() => limiter.take('key-a'));
    clock.advance(1);
    expect(() => limiter.take('key-a')).to.not.throw();
    refusal(() => limiter.take('key-a'));
  });

  it('refills no further than the burst after a long idle time', () => {
    const limiter = new RateLimiter(10, 3, clock);
    takeTimes(limiter, 'key-a', 3);
    clock.advance(3_600_000);
    takeTimes(limiter, 'key-a', 3);
    refusal(() => limiter.take('key-a'));
  });

  it('keeps keys independent', () => {
    const limiter = new RateLimiter(1, 2, clock);
    takeTimes(limiter, 'key-a', 2);
    refusal(() => limiter.take('key-a'));
    expect(() => takeTimes(limiter, 'key-b', 2)).to.not.throw();
    refusal(() => limiter.take('key-b'));
  });

  it('does not refill a bucket while the request is refused', () => {
    const limiter = new RateLimiter(1, 1, clock);
    limiter.take('key-a');
    for (let i = 0; i < 5; i += 1) {
      clock.advance(100);
      refusal(() => limiter.take('key-a'));
    }
    clock.advance(500);
    expect(() => limiter.take('key-a')).to.not.throw();
  });

  it('forgets idle keys once more than 10,000 are held and their buckets are full again', () => {
    const limiter = new RateLimiter(1, 1, clock);
    for (let i = 0; i < 10_000; i += 1) limiter.take(`key-${i}`);
    expect(bucketCount(limiter)).to.equal(10_000);
    clock.advance(2_000);
    limiter.take('one-more');
    expect(bucketCount(limiter)).to.be.at.most(1);
  });

  it('stays bounded while new keys keep arriving over time', () => {
    const limiter = new RateLimiter(1, 1, clock);
    let largest = 0;
    for (let i = 0; i < 30_000; i += 1) {
      limiter.take(`key-${i}`);
      clock.advance(1);
      largest = Math.max(largest, bucketCount(limiter));
    }
    expect(largest).to.be.at.most(10_001);
    expect(bucketCount(limiter)).to.be.below(10_001);
  });

  // The sweep of full buckets must not drop the bucket of the key being charged (a new key's bucket is
  // full), or that key would start from a fresh bucket on every request and never be limited.
  it('still limits a key while more than 10,000 other keys hold partly used buckets', () => {
    const limiter = new RateLimiter(1, 2, clock);
    for (let i = 0; i < 10_000; i += 1) limiter.take(`busy-${i}`);
    takeTimes(limiter, 'newcomer', 2);
    refusal(() => limiter.take('newcomer'));
  });
});
