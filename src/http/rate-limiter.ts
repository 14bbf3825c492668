/**
 * Token buckets per API key: `perSecond` tokens refill each second up to
 * `burst`. In memory, because one service process serves the API; buckets of
 * idle keys are dropped so memory stays bounded.
 */
import type { Clock } from '../domain/clock.js';
import { RateLimitedError, UnauthenticatedError } from '../domain/errors.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Above this many buckets, full ones are swept, at most once a second. */
const SWEEP_ABOVE = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private nextSweepAt = 0;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {}

  /** Takes one token for the key or throws RateLimitedError with the seconds until one is available. */
  take(key: string): void {
    this.available(key).tokens -= 1;
  }

  /** Takes a token when one is left; at the limit it does nothing, since the next check() refuses anyway. */
  takeQuietly(key: string): void {
    const bucket = this.refilled(key, this.clock.now().getTime());
    if (bucket.tokens >= 1) bucket.tokens -= 1;
  }

  /** Throws as take() would, without taking a token: for limits that count only failures. */
  check(key: string): void {
    this.available(key);
  }

  /**
   * Runs a credential check that only its failures throttle (wrong API keys,
   * wrong upload tokens): past the limit the key gets 429 before the
   * credential is even looked at, and only an UnauthenticatedError takes a token.
   */
  guardFailures<T>(key: string, attempt: () => T): T {
    this.check(key);
    try {
      return attempt();
    } catch (error) {
      if (error instanceof UnauthenticatedError) this.takeQuietly(key);
      throw error;
    }
  }

  private available(key: string): Bucket {
    const now = this.clock.now().getTime();
    const bucket = this.refilled(key, now);
    if (bucket.tokens < 1) {
      throw new RateLimitedError(Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)));
    }
    return bucket;
  }

  private refilled(key: string, now: number): Bucket {
    if (this.buckets.size >= SWEEP_ABOVE && now >= this.nextSweepAt) this.dropFullBuckets(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updatedAt: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    return bucket;
  }

  /** A bucket that would be full again holds no information: forget it. Runs before the current key's bucket is touched. */
  private dropFullBuckets(now: number): void {
    this.nextSweepAt = now + 1000;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }
}
