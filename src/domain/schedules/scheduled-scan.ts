/**
 * A ScheduledScan and its runs, as stored. Moved from src/app/ports/schedules.ts; the
 * port keeps only the repository interfaces (and re-exports these).
 */
import type { ScanType } from '../risks/finding.js';
import type { ScheduleKind } from './schedule.js';
import type { EmailNotification } from './scheduled-scan-resource.js';

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
