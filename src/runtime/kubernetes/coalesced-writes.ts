/**
 * Writes to the cluster per key (one object), serialised and coalesced: while
 * a write for a key is in flight, later requests for it are merged and sent
 * as one, so a burst of changes costs one request. Both mirrors (Scan and
 * ScheduledScan custom resources) write through it.
 *
 * A write starts on a microtask, never inside the caller's stack: the store's
 * transactions are synchronous, so a write reads the store only once the
 * transaction that asked for it has committed or rolled back.
 */
import type { TimerHandle, Timers } from '../../app/controller/timer.js';
import { backoffDelay } from '../../app/controller/backoff.js';

export interface CoalescedWritesOptions<T> {
  write: (key: string, request: T) => Promise<void>;
  /** Told about every failed write; the write is retried when `retry` is set, else by the key's next request. */
  onError: (key: string, error: unknown) => void;
  /** Two requests for a key that is not written yet become one; by default the later wins. */
  merge?: (queued: T, next: T) => T;
  /** Sends a failed request again after an exponential backoff, unless a newer one came meanwhile. */
  retry?: { timers: Timers; baseMs: number; maxMs: number };
}

export class CoalescedWrites<T> {
  private readonly pending = new Map<string, T>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, number>();
  private readonly retries = new Map<string, { handle: TimerHandle; request: T }>();
  private stopped = false;

  constructor(private readonly options: CoalescedWritesOptions<T>) {}

  /** Asks for a write; returns at once. */
  request(key: string, request: T): void {
    const waiting = this.cancelRetry(key);
    this.queue(key, waiting === undefined ? request : this.merged(waiting, request));
    if (!this.writing.has(key)) this.writing.set(key, Promise.resolve().then(() => this.drain(key)));
  }

  /** Resolves once nothing is queued or in flight for the key (a retry waiting for its timer does not count). */
  async settled(key: string): Promise<void> {
    while (this.writing.has(key)) await this.writing.get(key);
  }

  /** Resolves once every requested write has been attempted (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.writing.size > 0) await Promise.all(this.writing.values());
  }

  /** Cancels the retries still waiting, and schedules none from now on; in-flight writes finish (flush waits for them). */
  stop(): void {
    this.stopped = true;
    for (const key of [...this.retries.keys()]) this.cancelRetry(key);
  }

  private queue(key: string, request: T): void {
    const queued = this.pending.get(key);
    this.pending.set(key, queued === undefined ? request : this.merged(queued, request));
  }

  private merged(earlier: T, later: T): T {
    return this.options.merge === undefined ? later : this.options.merge(earlier, later);
  }

  private async drain(key: string): Promise<void> {
    try {
      for (let request = this.take(key); request !== undefined; request = this.take(key)) await this.attempt(key, request);
    } finally {
      this.writing.delete(key);
    }
  }

  private async attempt(key: string, request: T): Promise<void> {
    try {
      await this.options.write(key, request);
      this.failures.delete(key);
    } catch (error) {
      this.options.onError(key, error);
      this.scheduleRetry(key, request);
    }
  }

  /** A newer request already queued goes out with the failed one folded in; otherwise the failed one waits for its backoff. */
  private scheduleRetry(key: string, request: T): void {
    const retry = this.options.retry;
    if (retry === undefined || this.stopped) return;
    const queued = this.pending.get(key);
    if (queued !== undefined) {
      this.pending.set(key, this.merged(request, queued));
      return;
    }
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const delay = backoffDelay(failures, retry);
    const handle = retry.timers.setTimeout(() => {
      this.retries.delete(key);
      this.request(key, request);
    }, delay);
    this.retries.set(key, { handle, request });
  }

  /** Stops the key's waiting retry and hands back its request, to be sent with the next one. */
  private cancelRetry(key: string): T | undefined {
    const waiting = this.retries.get(key);
    if (waiting === undefined) return undefined;
    this.options.retry?.timers.clearTimeout(waiting.handle);
    this.retries.delete(key);
    return waiting.request;
  }

  private take(key: string): T | undefined {
    const request = this.pending.get(key);
    this.pending.delete(key);
    return request;
  }
}
