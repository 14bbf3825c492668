import { z } from 'zod';
import { EMAIL_NOTIFICATIONS, SCHEDULED_SCAN_LIMITS } from '../../domain/schedules/scheduled-scan-resource.js';
import { SCHEDULE_KINDS, SCHEDULE_LIMITS } from '../../domain/schedules/schedule.js';
import { DateTime, Id } from './common.js';
import { RunnableScanType } from './scans.js';

export const SCHEDULE_DESCRIPTION = [
  'When the scheduled scan runs. start_time is an instant; its wall-clock time in time_zone (default UTC) is what repeats, so 09:00 Europe/Berlin stays 09:00 local across daylight saving changes.',
  'ONCE: runs once, at start_time (at once when start_time is omitted).',
  'DAILY: runs at start_time, then every day at the same local time.',
  'WEEKLY: runs at start_time, then every 7 days on the same weekday and local time.',
  'MONTHLY: runs at start_time, then every month on the same day of month, clamped to shorter months without drifting (Jan 31 -> Feb 28/29 -> Mar 31).',
  'QUARTERLY: repeats the month, day and time of its four schedule_dates (one per calendar quarter) every year, each from its own date on (Feb 29 falls on Feb 28 in other years); start_time is the earliest moment a run may happen, not a run of its own.',
  'CUSTOM: runs on its schedule_dates (1 to 100) only; start_time is the earliest moment a run may happen.',
  'A local time that does not exist (spring-forward gap) moves forward by the gap; one that exists twice (autumn overlap) runs once, at its first occurrence. Missed runs collapse into one run.',
  "Each run creates one Scan per scan type (split by the type's target limit) for the Targets filter_set selects at that moment, with scheduled_by set; disabled stops runs and keeps the configuration.",
].join(' ');

export const Schedule = z.enum(SCHEDULE_KINDS).meta({ id: 'Schedule', description: SCHEDULE_DESCRIPTION });

export const EmailNotification = z.enum(EMAIL_NOTIFICATIONS).meta({
  id: 'EmailNotification',
  description:
    'Sent to email_to once every Scan of a run is finished. NEVER: no e-mail. ON_CHANGES: only when the run opened or closed risks. ALWAYS: a summary after every run. The mail (plain text and HTML) lists per target the new and closed risks by threat level and links to the dashboard; a failed send is retried.',
});

const StringList = z.array(z.string().min(1).max(SCHEDULED_SCAN_LIMITS.maxFilterItemLength)).max(SCHEDULED_SCAN_LIMITS.maxFilterItems);

export const FilterSet = z
  .object({
    target_ids: StringList.optional().meta({ description: 'Targets selected by id.' }),
    tags: StringList.optional().meta({ description: 'Targets selected by tag; evaluated at each run, so later-tagged targets are included.' }),
  })
  .meta({ id: 'FilterSet', description: 'Target selection: target_ids and/or tags; at least one of them must be a non-empty array.' });

const requestFields = {
  schedule: Schedule,
  filter_set: FilterSet,
  email_notification: EmailNotification,
  start_time: DateTime.optional(),
  schedule_dates: z
    .array(DateTime)
    .max(SCHEDULE_LIMITS.maxCustomDates)
    .optional()
    .meta({ description: 'Required when schedule is CUSTOM (1 to 100 date-times) or QUARTERLY (exactly 4, one in each calendar quarter); ignored otherwise.' }),
  email_to: z
    .array(z.string())
    .optional()
    .meta({ description: `At most ${SCHEDULED_SCAN_LIMITS.maxEmailTo} e-mail addresses.` }),
  name: z
    .string()
    .optional()
    .meta({ description: `${SCHEDULED_SCAN_LIMITS.minNameLength} to ${SCHEDULED_SCAN_LIMITS.maxNameLength} characters.` }),
  time_zone: z
    .string()
    .max(SCHEDULED_SCAN_LIMITS.maxTimeZoneLength)
    .optional()
    .meta({ description: 'IANA time zone whose wall-clock time repeats; UTC when absent.' }),
  disabled: z.boolean().optional().meta({ description: 'A disabled schedule is kept but does not run; next_run is null.' }),
};

export const ScheduledScanCreate = z
  .object({
    ...requestFields,
    scan_types: z.array(RunnableScanType).min(1),
    start_time: DateTime.optional().meta({ description: 'The first run; when omitted, runs immediately.' }),
  })
  .meta({ id: 'ScheduledScanCreate' });

export const ScheduledScanUpdate = z
  .object({
    ...requestFields,
    scan_types: z.array(RunnableScanType).min(1).optional().meta({ description: 'Omitted: kept.' }),
    start_time: DateTime.optional().meta({
      description: 'Omitted: kept. When present and no more than 5 minutes in the past, it is the next run; otherwise the next run is recalculated from now.',
    }),
    email_to: requestFields.email_to.meta({ description: `At most ${SCHEDULED_SCAN_LIMITS.maxEmailTo} e-mail addresses. Omitted: kept.` }),
    disabled: requestFields.disabled.meta({ description: 'Omitted: kept. A disabled schedule does not run; next_run is null.' }),
    name: requestFields.name.meta({ description: 'Omitted: the name is cleared.' }),
  })
  .meta({ id: 'ScheduledScanUpdate', description: 'Replaces the configuration. next_run is recalculated on every update.' });

export const ScheduledScan = z
  .object({
    id: Id,
    name: z.string().nullable(),
    schedule: Schedule,
    scan_types: z.array(RunnableScanType),
    targets_filter: z.object({ target_ids: z.array(z.string()), tags: z.array(z.string()) }),
    last_ran: DateTime.nullable(),
    next_run: DateTime.nullable().meta({ description: 'Null when no run is left: disabled, ONCE already ran, or CUSTOM dates used up.' }),
    created_at: DateTime,
    disabled: z.boolean(),
    email_notification: EmailNotification,
    email_to: z.array(z.string()),
    start_time: DateTime,
    schedule_dates: z.array(DateTime).nullable(),
    time_zone: z.string().nullable(),
  })
  .meta({ id: 'ScheduledScan' });
