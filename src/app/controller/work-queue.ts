/**
 * The controllers' work queue, after client-go's rate-limited delaying queue
 * as sample-controller uses it (DESIGN.md decision 4: reconcile by key).
 *
 * - A key is queued at most once, however many events name it.
 * - A key is never handed to two workers at once: adding it while it is in
 *   flight marks it dirty, and `done` queues it again, so the reconcile that
 *   follows sees the change the in-flight one may have missed.
 * - Timed requeues (`addAfter`) keep the earliest time per key.
 * - Error backoff (`addRateLimited`) is per key and exponential, counted apart
 *   from timed requeues so polling a workload never inflates it.
 */
import type { TimerHandle, Timers } from './timer.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';

export type ReconcileResult = void | { requeueAfterMs: number };
export type Reconcile = (key: string) => Promise<ReconcileResult>;

export type { BackoffOptions } from './backoff.js';

/** Told what the queue does, for metrics (observability/metrics.ts makes one per controller). */
export interface QueueObserver {
  /** A key was queued (a key already waiting is not counted again). */
  added(): void;
  /** A key was requeued with error backoff. */
  retried(): void;
  /** One reconcile ended, after `seconds`, with or without an error. */
  reconciled(seconds: number, ok: boolean): void;
}

export interface WorkQueueOptions {
  timers: Timers;
  /** Told of every failed reconcile; the queue itself logs nothing. */
  onError: (key: string, error: unknown) => void;
  backoff?: Partial<BackoffOptions>;
  observer?: QueueObserver;
}

const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 100, maxMs: 5 * 60_000 };

interface DelayedAdd {
  readyAt: number;
  handle: TimerHandle;
}

export class WorkQueue {
  private readonly timers: Timers;
  private readonly onError: (key: string, error: unknown) => void;
  private readonly backoff: BackoffOptions;
  private readonly observer: QueueObserver | undefined;

  /** Ready keys in arrival order. */
  private readonly ready: string[] = [];
  /** Keys that need a reconcile: every ready key, plus in-flight keys added again. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, DelayedAdd>();
  private readonly failureCounts = new Map<string, number>();
  private readonly idleWorkers: Array<(key: string | undefined) => void> = [];
  private readonly drainWaiters: Array<() => void> = [];
  private shuttingDown = false;
  private retryCount = 0;

  constructor(options: WorkQueueOptions) {
    this.timers = options.timers;
    this.onError = options.onError;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.observer = options.observer;
  }

  /** Keys waiting for a worker (queue depth). */
  get depth(): number {
    return this.ready.length;
  }

  /** Keys a worker holds right now. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a timed or backoff requeue. */
  get waiting(): number {
    return this.delayed.size;
  }

  /** Requeues caused by failures since the queue was made. */
  get retries(): number {
    return this.retryCount;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.observer?.added();
    if (this.processing.has(key)) return;
    this.ready.push(key);
    this.handToIdleWorkers();
  }

  /**
   * Adds the key ahead of every waiting key, or moves it there when it
   * waits already: what an event names goes before a full pass's keys, so
   * a Scan applied while 20,000 finished ones are passed over starts at once.
   */
  addFirst(key: string): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) {
      const at = this.ready.indexOf(key);
      if (at > 0) {
        this.ready.splice(at, 1);
        this.ready.unshift(key);
      }
      return;
    }
    this.dirty.add(key);
    this.observer?.added();
    if (this.processing.has(key)) return;
    this.ready.unshift(key);
    this.handToIdleWorkers();
  }

  /** Adds the key once `delayMs` has passed; a pending earlier time for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    // NaN and negative delays mean "now" rather than a timer that never fires or fires at once anyway.
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.timers.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.readyAt <= readyAt) return;
    if (pending) this.timers.clearTimeout(pending.handle);
    const handle = this.timers.setTimeout(() => this.addWhenDue(key), delayMs);
    this.delayed.set(key, { readyAt, handle });
  }

  /** Adds the key after its exponential backoff, and counts one more failure for it. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    const failures = this.failures(key);
    this.failureCounts.set(key, failures + 1);
    this.retryCount += 1;
    this.addAfter(key, this.backoffMs(failures));
  }

  /** The key reconciled cleanly: its next failure starts again from the base delay. */
  forget(key: string): void {
    this.failureCounts.delete(key);
  }

  failures(key: string): number {
    return this.failureCounts.get(key) ?? 0;
  }

  /** The next ready key, once there is one; undefined when the queue shuts down. Pair with `done`. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.ready.length > 0) return Promise.resolve(this.takeReady());
    return new Promise((resolve) => this.idleWorkers.push(resolve));
  }

  /** The worker is finished with the key; if it was added meanwhile it is queued again. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.ready.push(key);
      this.handToIdleWorkers();
    }
    if (this.shuttingDown && this.processing.size === 0) this.releaseDrainWaiters();
  }

  /**
   * Starts `workers` loops that reconcile keys until shutdown; resolves when
   * they have all stopped. A reconcile that resolves forgets the key's
   * failures (and requeues it if asked); one that throws is reported and
   * retried with backoff.
   */
  run(workers: number, reconcile: Reconcile): Promise<void> {
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`workers must be a positive integer, got ${workers}`);
    const loops = Array.from({ length: workers }, () => this.workUntilShutdown(reconcile));
    return Promise.all(loops).then(() => undefined);
  }

  /**
   * Stops handing out keys, cancels timed requeues, ignores later adds and
   * resolves once every in-flight key is done. Keys still queued are dropped:
   * reconcile re-reads state, so the next start lists and converges them.
   */
  shutDown(): Promise<void> {
    if (!this.shuttingDown) this.beginShutdown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private beginShutdown(): void {
    this.shuttingDown = true;
    for (const { handle } of this.delayed.values()) this.timers.clearTimeout(handle);
    this.delayed.clear();
    this.ready.length = 0;
    this.dirty.clear();
    for (const stopWorker of this.idleWorkers.splice(0)) stopWorker(undefined);
  }

  private async workUntilShutdown(reconcile: Reconcile): Promise<void> {
    for (let key = await this.get(); key !== undefined; key = await this.get()) {
      await this.reconcileOnce(key, reconcile);
    }
  }

  private async reconcileOnce(key: string, reconcile: Reconcile): Promise<void> {
    const started = this.timers.now();
    try {
      const result = await reconcile(key);
      this.observer?.reconciled((this.timers.now() - started) / 1000, true);
      this.forget(key);
      if (result) this.addAfter(key, result.requeueAfterMs);
    } catch (error) {
      this.observer?.reconciled((this.timers.now() - started) / 1000, false);
      this.report(key, error);
      this.addRateLimited(key);
      this.observer?.retried();
    } finally {
      this.done(key);
    }
  }

  private report(key: string, error: unknown): void {
    try {
      this.onError(key, error);
    } catch {
      // A reporter that throws must not stop the worker loop, and the queue has nowhere else to say so.
    }
  }

  private addWhenDue(key: string): void {
    this.delayed.delete(key);
    this.add(key);
  }

  private backoffMs(previousFailures: number): number {
    return backoffDelay(previousFailures, this.backoff);
  }

  private takeReady(): string {
    const key = this.ready.shift()!;
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  private handToIdleWorkers(): void {
    while (this.idleWorkers.length > 0 && this.ready.length > 0) {
      this.idleWorkers.shift()!(this.takeReady());
    }
  }

  private releaseDrainWaiters(): void {
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }
}
