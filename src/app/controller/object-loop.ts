/**
 * The pass every Kind's reconciler makes (DESIGN.md: one reconciler per
 * Kind): one work queue key per object, `namespace/name`, and one
 * reconcile(key) that reads the record, receives the object through the
 * runtime's face, converges it (the Kind's own step), and projects the row
 * once as it is after that. The Scan and ScheduledScan reconcilers each
 * hold one, with their records and their converge step.
 */
import type { Account } from '../../domain/accounts/account.js';
import type { AccountRepository } from '../ports.js';
import { ControllerLoop } from './controller-loop.js';
import { noFace, objectKey, sooner, splitKey, type ReconcileFace } from './faces.js';
import type { Timers } from './timer.js';
import type { QueueObserver, ReconcileResult, WorkQueue } from './work-queue.js';

/** How a Kind's records are found: by the object's name in its account, and again by id after the converge step. */
export interface KindRecords<Row> {
  findByName(account: Account, name: string): Row | undefined;
  reread(row: Row): Row | undefined;
  /** The object's name and account. */
  locate(row: Row): { accountId: string; name: string };
  /** The records a full pass visits: every one (`all`, the faces need them) or those with work left. */
  listed(all: boolean): Iterable<Row>;
}

export interface ObjectLoopOptions<Row> {
  records: KindRecords<Row>;
  accounts: Pick<AccountRepository, 'findByNamespace' | 'findById'>;
  face?: ReconcileFace<Row>;
  converge: (row: Row) => Promise<ReconcileResult>;
  timers: Timers;
  onError: (key: string, error: unknown) => void;
  workers: number;
  queueObserver?: QueueObserver;
}

export class ObjectLoop<Row> {
  readonly queue: WorkQueue;
  readonly face: ReconcileFace<Row>;
  private readonly loop: ControllerLoop;

  constructor(private readonly options: ObjectLoopOptions<Row>) {
    this.face = options.face ?? noFace();
    // Every face and every record with work left (what a previous process left included) is listed at start.
    this.loop = new ControllerLoop({
      timers: options.timers,
      onError: options.onError,
      reconcile: (key) => this.reconcile(key),
      listKeys: () => this.everyKey(),
      workers: options.workers,
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
    this.queue = this.loop.queue;
    // Registered with the face: its informer's events and full lists name what changed.
    this.face.watch({ enqueue: (key) => this.loop.enqueue(key), resync: () => this.loop.resync() });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** The key of a record: its account's namespace and its object name; undefined once its account is gone. */
  keyOf(row: Row): string | undefined {
    return this.keyAt(this.options.records.locate(row));
  }

  /** A record written or deleted outside the reconciler: its key ahead of a full pass's. */
  enqueue(row: Row): string | undefined {
    return this.enqueueAt(this.options.records.locate(row));
  }

  /** enqueue() for a record known by its account and name only (one deleted, read without its whole contents). */
  enqueueAt(located: { accountId: string; name: string }): string | undefined {
    const key = this.keyAt(located);
    if (key !== undefined) this.loop.enqueue(key);
    return key;
  }

  private keyAt({ accountId, name }: { accountId: string; name: string }): string | undefined {
    const namespace = this.options.accounts.findById(accountId)?.namespace;
    return namespace === undefined ? undefined : objectKey(namespace, name);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const account = this.options.accounts.findByNamespace(namespace);
    const row = account === undefined ? undefined : this.options.records.findByName(account, name);
    const received = await this.face.receive(key, account, row);
    if ('done' in received) return received.done;
    const converged = await this.options.converge(received.row);
    // Projected once, as the row is now: whatever this pass wrote, or another writer meanwhile.
    const latest = this.options.records.reread(received.row);
    if (latest === undefined) return converged;
    return sooner(converged, await received.project(latest));
  }

  private *everyKey(): Iterable<string> {
    yield* this.face.keys();
    for (const row of this.options.records.listed(this.face.everyRow)) {
      const key = this.keyOf(row);
      if (key !== undefined) yield key;
    }
  }
}
