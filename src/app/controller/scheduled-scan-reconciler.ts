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
import type { ReconcileFace } from './faces.js';
import { ObjectLoop } from './object-loop.js';
import type { CursorValue } from '../../domain/lists/page-token.js';

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
  private readonly objects: ObjectLoop<ScheduledScan>;

  constructor(private readonly options: ScheduledScanReconcilerOptions) {
    const { scheduledScans, accounts } = options;
    this.objects = new ObjectLoop<ScheduledScan>({
      records: {
        findByName: (account, name) => scheduledScans.findByObjectName(account.id, name),
        reread: (row) => scheduledScans.findByIdUnscoped(row.id),
        locate: (row) => ({ accountId: row.accountId, name: row.objectName }),
        // Every schedule with a run left, so a run missed while stopped is due at once; every one where faces need them.
        listed: (all) => (all ? everySchedule(accounts, scheduledScans) : schedulesWithNextRun(scheduledScans)),
      },
      accounts,
      ...(options.face === undefined ? {} : { face: options.face }),
      converge: async (row) => this.converge(row),
      timers: options.timers,
      onError: options.onError,
      workers: options.workers ?? 2,
      ...(options.queueObserver === undefined ? {} : { queueObserver: options.queueObserver }),
    });
    this.queue = this.objects.queue;
  }

  start(): void {
    this.objects.start();
  }

  async stop(): Promise<void> {
    await this.objects.stop();
  }

  /** A schedule written or deleted outside this reconciler (the API); `spec` when its configuration may have changed. */
  enqueue(row: ScheduledScan, spec = true): void {
    const key = this.objects.enqueue(row);
    if (key !== undefined) this.objects.face.rowWritten?.(key, spec);
  }

  keyOf(row: ScheduledScan): string | undefined {
    return this.objects.keyOf(row);
  }

  reconcile(key: string): Promise<ReconcileResult> {
    return this.objects.reconcile(key);
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

function* schedulesWithNextRun(scheduledScans: ScheduledScanRepository): Iterable<ScheduledScan> {
  for (const id of scheduledScans.idsWithNextRun()) {
    const row = scheduledScans.findByIdUnscoped(id);
    if (row !== undefined) yield row;
  }
}

/** Every schedule of every account, a page at a time. */
function* everySchedule(accounts: Pick<AccountRepository, 'list'>, scheduledScans: ScheduledScanRepository): Iterable<ScheduledScan> {
  for (const account of accounts.list()) {
    let after: CursorValue[] | undefined;
    do {
      const page = scheduledScans.list(account.id, 500, after);
      yield* page.items;
      after = page.nextCursor;
    } while (after !== undefined);
  }
}
