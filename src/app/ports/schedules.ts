import type { CursorValue } from '../../domain/lists/page-token.js';
import type { Page } from './lists.js';
import type { ScheduledScan, ScheduledRun } from '../../domain/schedules/scheduled-scan.js';
export type { ScheduledScan, RunNotificationState, ScheduledRun } from '../../domain/schedules/scheduled-scan.js';

export interface ScheduledScanRepository {
  insert(scheduledScan: ScheduledScan): void;
  update(scheduledScan: ScheduledScan): void;
  findById(accountId: string, id: string): ScheduledScan | undefined;
  delete(accountId: string, id: string): boolean;
  list(accountId: string, pageSize: number, after: readonly CursorValue[] | undefined): Page<ScheduledScan>;
  /** For the controller, which reconciles by id across accounts. */
  findByIdUnscoped(id: string): ScheduledScan | undefined;
  /** The one with this object name: a ScheduledScan custom resource's row (names are unique per account). */
  findByObjectName(accountId: string, objectName: string): ScheduledScan | undefined;
  /** Ids of the schedules that have a run left (next_run set), for the controller's start. */
  idsWithNextRun(): string[];
  /**
   * Records that a run happened: sets last_ran and next_run only when next_run
   * is still `expectedNextRun` (a compare-and-set, so two controllers never
   * record the same run twice); false when it changed meanwhile or the row is gone.
   */
  recordRun(id: string, expectedNextRun: string, lastRan: string, nextRun: string | null): boolean;
}

export interface ScheduledRunRepository {
  /** Runs `fn` in one immediate transaction: a run's record, its Scans and the schedule's new next_run commit together. */
  transaction<T>(fn: () => T): T;
  /** Inserts the run; false when a run of this schedule at this instant exists already. */
  insert(run: ScheduledRun): boolean;
  /** Runs whose notification is PENDING and due at `now`, oldest first. */
  pendingNotifications(now: string, limit: number): ScheduledRun[];
  /** Records the outcome of a notification attempt. */
  saveNotification(run: Pick<ScheduledRun, 'scheduledScanId' | 'runAt' | 'notification' | 'emailAttempts' | 'nextEmailAt' | 'lastError'>): void;
  runsOf(scheduledScanId: string): ScheduledRun[];
}
