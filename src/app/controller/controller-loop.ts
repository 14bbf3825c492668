/**
 * One controller runtime for every reconciler (issue 13), after
 * cert-manager's pkg/controller: a work queue keyed by the object's key, a
 * number of workers, one error backoff, and a start that enqueues every key
 * the reconciler lists (the level-triggered full pass) before the workers
 * run. A reconciler only says how to list its keys and how to reconcile one.
 */
import type { Timers } from './timer.js';
import { WorkQueue, type BackoffOptions, type QueueObserver, type Reconcile } from './work-queue.js';

export interface ControllerLoopOptions {
  timers: Timers;
  reconcile: Reconcile;
  /** Every key worth a pass: at start, and whenever `resync` is called (an informer's full list). */
  listKeys: () => Iterable<string>;
  onError: (key: string, error: unknown) => void;
  workers?: number;
  backoff?: Partial<BackoffOptions>;
  observer?: QueueObserver;
}

export class ControllerLoop {
  readonly queue: WorkQueue;
  private running: Promise<void> | undefined;

  constructor(private readonly options: ControllerLoopOptions) {
    this.queue = new WorkQueue({
      timers: options.timers,
      onError: options.onError,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.observer === undefined ? {} : { observer: options.observer }),
    });
  }

  start(): void {
    if (this.running !== undefined) return;
    this.resync();
    this.running = this.queue.run(this.options.workers ?? 2, this.options.reconcile);
  }

  /** A key an event or a write names: ahead of the keys of a full pass still waiting. */
  enqueue(key: string): void {
    this.queue.addFirst(key);
  }

  /** A full pass: every key listed is reconciled again, so a missed event or a failed write heals. */
  resync(): void {
    for (const key of this.options.listKeys()) this.queue.add(key);
  }

  async stop(): Promise<void> {
    await this.queue.shutDown();
    await this.running;
    this.running = undefined;
  }
}
