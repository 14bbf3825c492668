/**
 * One run of a ScheduledScan (DESIGN.md 5 and 9): which instant it stands
 * for, the deterministic names of the Scans it creates, and what its e-mail
 * reports once they have all finished.
 */
import type { EmailNotification } from './scheduled-scan-resource.js';
import { nextRunAfter, runToPerformNow, type ScheduleSpec } from './schedule.js';
import { THREAT_LEVELS, type ScanType, type ThreatLevel } from '../risks/finding.js';

/** The schedule fields of a ScheduledScan, as the schedule functions take them. */
export interface ScheduleFields {
  schedule: ScheduleSpec['kind'];
  startTime: string;
  scheduleDates: string[] | null;
  timeZone: string | null;
  disabled: boolean;
}

export function specOf(fields: ScheduleFields): ScheduleSpec {
  return {
    kind: fields.schedule,
    startTime: fields.startTime,
    ...(fields.scheduleDates === null ? {} : { scheduleDates: fields.scheduleDates }),
    ...(fields.timeZone === null ? {} : { timeZone: fields.timeZone }),
    disabled: fields.disabled,
  };
}

export interface DueRun {
  /** The scheduled instant performed now: the latest one due, so runs missed while down collapse into one. */
  runAt: Date;
  /** The run after it, or undefined when none is left (ONCE, CUSTOM dates used up). */
  nextRun: Date | undefined;
}

/**
 * The run to perform at `now` for a schedule whose stored next run is
 * `storedNextRun`, or undefined when it is not due yet.
 */
export function dueRun(spec: ScheduleSpec, storedNextRun: Date, now: Date, lastRan?: Date): DueRun | undefined {
  if (storedNextRun.getTime() > now.getTime()) return undefined;
  const latest = runToPerformNow(spec, now, lastRan);
  // A start_time stored as the next run (SPEC.md's 5-minute rule) is a run of its own even when the schedule's grid has a later one.
  const runAt = latest === undefined || latest.getTime() < storedNextRun.getTime() ? storedNextRun : latest;
  return { runAt, nextRun: nextRunAfter(spec, now, runAt) };
}

/** The longest object name the Scans of a run may have (a DNS subdomain allows 253; Job names derived from it need room). */
const MAX_SCAN_NAME = 200;

/**
 * `<scheduledscan>-<unix seconds>-<type>` for the first Scan of a type, with
 * `-<n>` after it for the further chunks of a split: the same run always
 * yields the same names, so creating them twice fails instead of scanning twice.
 */
export function scanNameForRun(objectName: string, runAt: Date, type: ScanType, index: number): string {
  const suffix = `-${Math.floor(runAt.getTime() / 1000)}-${type.toLowerCase().replaceAll('_', '-')}${index === 0 ? '' : `-${index + 1}`}`;
  const stem = objectName.slice(0, MAX_SCAN_NAME - suffix.length).replace(/[-.]+$/, '');
  return `${stem}${suffix}`;
}

export interface RunRisk {
  id: string;
  title: string;
  threatLevel: ThreatLevel;
  scanType: ScanType;
}

export interface TargetChanges {
  target: string;
  label: string;
  newRisks: RunRisk[];
  closedRisks: RunRisk[];
}

export type ThreatCounts = Record<ThreatLevel, number>;

export interface RunSummary {
  targets: TargetChanges[];
  newCounts: ThreatCounts;
  closedCounts: ThreatCounts;
  scans: Array<{ id: string; type: ScanType; state: string }>;
  skipped: Array<{ scanType: ScanType; reason: string }>;
}

export function emptyCounts(): ThreatCounts {
  return Object.fromEntries(THREAT_LEVELS.map((level) => [level, 0])) as ThreatCounts;
}

const LEVEL_ORDER = new Map(THREAT_LEVELS.map((level, index) => [level, index]));

/** Risks sorted by threat level (CRITICAL first), then title. */
export function byThreat(a: RunRisk, b: RunRisk): number {
  return LEVEL_ORDER.get(a.threatLevel)! - LEVEL_ORDER.get(b.threatLevel)! || a.title.localeCompare(b.title);
}

export function countByThreat(risks: readonly RunRisk[]): ThreatCounts {
  const counts = emptyCounts();
  for (const risk of risks) counts[risk.threatLevel] += 1;
  return counts;
}

export function hasChanges(summary: RunSummary): boolean {
  return summary.targets.some((target) => target.newRisks.length > 0 || target.closedRisks.length > 0);
}

/** SPEC.md email_notification: NEVER sends nothing, ALWAYS a summary, ON_CHANGES only when the run opened or closed risks. */
export function shouldSendEmail(notification: EmailNotification, recipients: readonly string[], summary: RunSummary): boolean {
  if (recipients.length === 0) return false;
  switch (notification) {
    case 'NEVER':
      return false;
    case 'ALWAYS':
      return true;
    case 'ON_CHANGES':
      return hasChanges(summary);
  }
}

/** Waits between e-mail attempts: 1, 5, 15, 30 minutes, then hourly, for at most MAX_EMAIL_ATTEMPTS sends. */
const EMAIL_RETRY_MINUTES = [1, 5, 15, 30, 60, 60, 60];
export const MAX_EMAIL_ATTEMPTS = EMAIL_RETRY_MINUTES.length + 1;

/** When to try again after `attempts` failed sends, or undefined when the run gives up. */
export function nextEmailAttemptAt(failedAt: Date, attempts: number): Date | undefined {
  const minutes = EMAIL_RETRY_MINUTES[attempts - 1];
  return minutes === undefined ? undefined : new Date(failedAt.getTime() + minutes * 60_000);
}
