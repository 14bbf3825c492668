import type { CursorValue } from '../../domain/lists/page-token.js';
import type { ScanType } from '../../domain/risks/finding.js';
import type { Scan } from '../../domain/scans/scan.js';
import type { ScheduleKind } from '../../domain/schedules/schedule.js';
import type { EmailNotification } from '../../domain/schedules/scheduled-scan-resource.js';
import type { Page } from './lists.js';

export interface ScheduledScan {
  id: string;
  accountId: string;
  /** The object name: the custom resource's on Kubernetes; the stem of the names of the Scans its runs create. */
  objectName: string;
  name: string | null;
  schedule: ScheduleKind;
  scanTypes: ScanType[];
  filterTargetIds: string[];
  filterTags: string[];
  emailNotification: EmailNotification;
  emailTo: string[];
  /** The first run (ONCE to MONTHLY) or the earliest moment a run may happen (QUARTERLY, CUSTOM). */
  startTime: string;
  scheduleDates: string[] | null;
  timeZone: string | null;
  disabled: boolean;
  /** Null when no run is left (disabled, ONCE already ran, CUSTOM dates used up). */
  nextRun: string | null;
  lastRan: string | null;
  createdAt: string;
}

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

export type RunNotificationState = 'PENDING' | 'SENT' | 'NOT_NEEDED' | 'FAILED';

/** One run of a ScheduledScan: the Scans it created and the e-mail it owes once they are all finished. */
export interface ScheduledRun {
  scheduledScanId: string;
  /** The scheduled instant this run stands for (the key, with the schedule's id). */
  runAt: string;
  accountId: string;
  /** The schedule's name, or its object name when it has none, as it was at run time. */
  scheduleName: string;
  startedAt: string;
  scanIds: string[];
  /** Scan types that created no Scan, and why (no target selected, the plan does not include the type). */
  skipped: Array<{ scanType: ScanType; reason: string }>;
  emailNotification: EmailNotification;
  emailTo: string[];
  notification: RunNotificationState;
  emailAttempts: number;
  nextEmailAt: string;
  lastError: string | null;
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
