/**
 * Scheduled backups made by `vigil serve` itself (VIGIL_BACKUP_SCHEDULE,
 * VIGIL_BACKUP_KEEP): when they run and which ones are kept. Pure. The
 * schedule is a ScheduledScan's (schedules/schedule.ts, the same semantics
 * and daylight-saving rules): no cron library is installed, and one
 * schedule language is easier to learn than two.
 *
 * VIGIL_BACKUP_SCHEDULE is `KIND START [TIME_ZONE]`: DAILY, WEEKLY or
 * MONTHLY, an ISO 8601 start with an offset whose wall-clock time repeats,
 * and an optional IANA time zone, e.g. `DAILY 2026-01-01T02:00:00Z` or
 * `WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin`.
 */
import { InvalidRequestError } from '../errors.js';
import { assertValidSchedule, nextRunAfter, type ScheduleSpec } from '../schedules/schedule.js';

const BACKUP_SCHEDULE_KINDS = ['DAILY', 'WEEKLY', 'MONTHLY'] as const;
export const DEFAULT_BACKUP_SCHEDULE = 'DAILY 2026-01-01T02:00:00Z';

const EXAMPLE = `for example '${DEFAULT_BACKUP_SCHEDULE}' or 'WEEKLY 2026-01-04T03:30:00+01:00 Europe/Berlin'`;

/** Reads `KIND START [TIME_ZONE]`; throws InvalidRequestError with one sentence saying what to write. */
export function parseBackupSchedule(text: string): ScheduleSpec {
  const [kind, startTime, timeZone, ...rest] = text.trim().split(/\s+/);
  if (!(BACKUP_SCHEDULE_KINDS as readonly string[]).includes(kind ?? '') || startTime === undefined || rest.length > 0) {
    throw new InvalidRequestError(`VIGIL_BACKUP_SCHEDULE must be DAILY, WEEKLY or MONTHLY, a start time and an optional time zone, ${EXAMPLE}`);
  }
  const spec: ScheduleSpec = { kind: kind as ScheduleSpec['kind'], startTime, ...(timeZone === undefined ? {} : { timeZone }), disabled: false };
  try {
    assertValidSchedule(spec);
  } catch (error) {
    throw new InvalidRequestError(`VIGIL_BACKUP_SCHEDULE: ${(error as Error).message.replace(/\.$/, '')}, ${EXAMPLE}`);
  }
  return spec;
}

/** The backup after `now`: a schedule that repeats always has one. */
export function nextBackupAfter(spec: ScheduleSpec, now: Date): Date {
  return nextRunAfter(spec, now)!;
}

/** A backup's folder: its time, sortable and free of ':' (which some file systems and tools refuse). */
export function backupFolderName(at: Date): string {
  return `vigil-${at.toISOString().replace(/:/g, '-')}`;
}

const FOLDER = /^vigil-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$/;

/** The backups among `folders` beyond the newest `keep`, oldest first; folders that are not backups are never named. */
export function backupsBeyond(folders: readonly string[], keep: number): string[] {
  const backups = folders.filter((folder) => FOLDER.test(folder)).sort();
  return backups.slice(0, Math.max(0, backups.length - keep));
}
