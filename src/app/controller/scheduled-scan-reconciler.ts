/**
 * The ScheduledScan reconciler (DESIGN.md: one reconciler per Kind), the
 * same in both runtimes, built as the Scan reconciler: one key per
 * schedule, `namespace/objectName`, and one reconcile(key) that receives the
 * object through the runtime's face (Kubernetes: the custom resource, its
 * deletion, adoption and spec changes, scheduled-scan-face.ts; embedded:
 * none), converges the schedule, and projects the row once (the CR's status).
 *
 * Converging reads the stored next_run; before it, the key is requeued for
 * then; at or after it, the run's Scans are created for every scan type with
 * the Targets the filter selects at that moment. A run is recorded, its
 * Scans created and next_run advanced in one transaction guarded by a
 * compare-and-set on next_run and by deterministic names, so a restart or a
 * second process never runs a schedule twice, and runs missed while the
 * service was down happen once.
 */
import type { Account } from '../../domain/accounts/account.js';
import type { Clock } from '../../domain/clock.js';
import { InvalidRequestError } from '../../domain/errors.js';
import type { ScanType } from '../../domain/risks/finding.js';
import { dueRun, scanNameForRun, specOf, type DueRun } from '../../domain/schedules/scheduled-run.js';
import type { Target } from '../../domain/targets/target.js';
import type { AccountRepository, ScheduledRun, ScheduledRunRepository, ScheduledScan, ScheduledScanRepository, TargetRepository } from '../ports.js';
import type { ScansService } from '../scans-service.js';
import type { Timers } from './timer.js';
import type { QueueObserver, WorkQueue, ReconcileResult } from './work-queue.js';
import { noFace, objectKey, sooner, splitKey, type ReconcileFace } from './faces.js';
import type { CursorValue } from '../../domain/lists/page-token.js';
import { ControllerLoop } from './controller-loop.js';

export interface ScheduledScanReconcilerOptions {
  /** Told what the work queue does (metrics). */
  queueObserver?: QueueObserver;
  scheduledScans: ScheduledScanRepository;
  runs: ScheduledRunRepository;
  accounts: AccountRepository;
  targets: TargetRepository;
  scans: ScansService;
  /** The schedule's face in this runtime (Kubernetes: its custom resource, scheduled-scan-face.ts); none when not given. */
  face?: ReconcileFace<ScheduledScan>;
  clock: Clock;
  timers: Timers;
  onError: (scheduledScanId: string, error: unknown) => void;
  /** Told about each run, for the log. */
  onRun?: (run: ScheduledRun) => void;
  /**
   * A schedule whose next run is further away is looked at again after this
   * long anyway, so a wall-clock change or an edit by another process is
   * noticed without waiting for a far-off timer.
   */
  maxRequeueMs?: number;
  workers?: number;
}

const DEFAULT_MAX_REQUEUE_MS = 60 * 60 * 1000;

/** Thrown inside the run's transaction when its record exists already, to roll the Scans back. */
class RunAlreadyRecorded extends Error {}

export class ScheduledScanReconciler {
  readonly queue: WorkQueue;
  private readonly loop: ControllerLoop;
  private readonly face: ReconcileFace<ScheduledScan>;

  constructor(private readonly options: ScheduledScanReconcilerOptions) {
    this.face = options.face ?? noFace();
    // Every schedule with a run left is listed at start, so a run missed while stopped is due at once (and every face).
    this.loop = new ControllerLoop({
      timers: options.timers,
      onError: options.onError,
      reconcile: (key) => this.reconcile(key),
      listKeys: () => this.everyKey(),
      workers: options.workers ?? 2,
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
    this.queue = this.loop.queue;
    this.face.watch({ enqueue: (key) => this.loop.enqueue(key), resync: () => this.loop.resync() });
  }

  start(): void {
    this.loop.start();
  }

  /** A schedule written or deleted outside this reconciler (the API); `spec` when its configuration may have changed. */
  enqueue(row: Pick<ScheduledScan, 'accountId' | 'objectName'>, spec = true): void {
    const key = this.keyOf(row);
    if (key === undefined) return;
    this.face.rowWritten?.(key, spec);
    this.loop.enqueue(key);
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  keyOf(row: Pick<ScheduledScan, 'accountId' | 'objectName'>): string | undefined {
    const namespace = this.options.accounts.findById(row.accountId)?.namespace;
    return namespace === undefined ? undefined : objectKey(namespace, row.objectName);
  }

  private *everyKey(): Iterable<string> {
    yield* this.face.keys();
    if (!this.face.everyRow) {
      for (const id of this.options.scheduledScans.idsWithNextRun()) {
        const row = this.options.scheduledScans.findByIdUnscoped(id);
        const key = row && this.keyOf(row);
        if (key !== undefined) yield key;
      }
      return;
    }
    for (const account of this.options.accounts.list()) {
      let after: CursorValue[] | undefined;
      do {
        const page = this.options.scheduledScans.list(account.id, 500, after);
        for (const row of page.items) yield objectKey(account.namespace, row.objectName);
        after = page.nextCursor;
      } while (after !== undefined);
    }
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const account = this.options.accounts.findByNamespace(namespace);
    const row = account === undefined ? undefined : this.options.scheduledScans.findByObjectName(account.id, name);
    const received = await this.face.receive(key, account, row);
    if ('done' in received) return received.done;
    const converged = this.converge(received.row);
    const latest = this.options.scheduledScans.findByIdUnscoped(received.row.id);
    if (latest === undefined) return converged;
    return sooner(converged, await received.project(latest));
  }

  /** The schedule's run when it is due; else when to look again. */
  private converge(scheduledScan: ScheduledScan): ReconcileResult {
    if (scheduledScan.nextRun === null) return;
    const now = this.options.clock.now();
    const storedNextRun = new Date(scheduledScan.nextRun);
    const due = dueRun(specOf(scheduledScan), storedNextRun, now, scheduledScan.lastRan === null ? undefined : new Date(scheduledScan.lastRan));
    if (due === undefined) return { requeueAfterMs: this.waitFor(storedNextRun, now) };
    const run = this.perform(scheduledScan, due);
    if (run !== undefined) this.options.onRun?.(run);
    // Read again: the run moved next_run on, or another controller did.
    return { requeueAfterMs: 0 };
  }

  private waitFor(nextRun: Date, now: Date): number {
    return Math.min(nextRun.getTime() - now.getTime(), this.options.maxRequeueMs ?? DEFAULT_MAX_REQUEUE_MS);
  }

  /** Creates the run's Scans and records it; undefined when another controller recorded this run first. */
  private perform(scheduledScan: ScheduledScan, due: DueRun): ScheduledRun | undefined {
    const { runs, scheduledScans, accounts } = this.options;
    const now = this.options.clock.now().toISOString();
    try {
      return runs.transaction(() => {
        if (!scheduledScans.recordRun(scheduledScan.id, scheduledScan.nextRun!, due.runAt.toISOString(), due.nextRun?.toISOString() ?? null)) return undefined;
        const account = accounts.findById(scheduledScan.accountId);
        if (account === undefined) return undefined;
        const { scanIds, skipped } = this.createScans(account, scheduledScan, due.runAt);
        const run: ScheduledRun = {
          scheduledScanId: scheduledScan.id,
          runAt: due.runAt.toISOString(),
          accountId: account.id,
          scheduleName: scheduledScan.name ?? scheduledScan.objectName,
          startedAt: now,
          scanIds,
          skipped,
          emailNotification: scheduledScan.emailNotification,
          emailTo: scheduledScan.emailTo,
          // NEVER, or nobody to tell: nothing is owed, whatever the Scans find.
          notification: scheduledScan.emailNotification === 'NEVER' || scheduledScan.emailTo.length === 0 ? 'NOT_NEEDED' : 'PENDING',
          emailAttempts: 0,
          nextEmailAt: now,
          lastError: null,
        };
        if (!runs.insert(run)) throw new RunAlreadyRecorded();
        return run;
      });
    } catch (error) {
      if (error instanceof RunAlreadyRecorded) return undefined;
      throw error;
    }
  }

  /**
   * One start per scan type with the Targets selected now (target_ids and
   * tags together), split by the type's limit as any Scan. A type the filter
   * or the plan leaves nothing to do for is skipped with the reason.
   */
  private createScans(account: Account, scheduledScan: ScheduledScan, runAt: Date) {
    const selected = this.selectTargets(account, scheduledScan);
    const scanIds: string[] = [];
    const skipped: ScheduledRun['skipped'] = [];
    for (const type of scheduledScan.scanTypes) {
      if (selected.length === 0) {
        skipped.push({ scanType: type, reason: 'the filter_set selects no target' });
        continue;
      }
      try {
        const scans = this.options.scans.start(account, { type, target_ids: selected.map((target) => target.id) }, scheduledScan.id, (index) =>
          scanNameForRun(scheduledScan.objectName, runAt, type as ScanType, index),
        );
        scanIds.push(...scans.map((scan) => scan.id));
      } catch (error) {
        if (!(error instanceof InvalidRequestError)) throw error;
        skipped.push({ scanType: type, reason: error.message });
      }
    }
    return { scanIds, skipped };
  }

  private selectTargets(account: Account, scheduledScan: ScheduledScan): Target[] {
    const { targets } = this.options;
    const byId = scheduledScan.filterTargetIds.length === 0 ? [] : targets.findByIds(account.id, scheduledScan.filterTargetIds);
    const byTag = scheduledScan.filterTags.length === 0 ? [] : targets.findByTags(account.id, scheduledScan.filterTags);
    return [...new Map([...byId, ...byTag].map((target) => [target.id, target])).values()];
  }
}
