/**
 * The ScheduledScan custom resource (crds/scheduledscan.yaml) as TypeScript
 * types and zod schemas. The API server validates with the CRD's
 * openAPIV3Schema and CEL rules; the embedded runtime with these schemas, with
 * the CEL rules' messages word for word. test/unit/scheduledscan-crd.test.ts
 * walks both schemas and fails when they drift.
 */
import { parseResource } from '../resources/parse.js';
import { z } from 'zod';
import { SCAN_TYPES } from '../risks/finding.js';
import { ConditionSchema, ScanMetadataSchema } from '../scans/scan-resource.js';
import { calendarQuarterOf, isValidTimeZone, SCHEDULE_KINDS, SCHEDULE_LIMITS, type ScheduleSpec } from './schedule.js';

export const SCHEDULED_SCAN_GROUP = 'vigil.dev';
export const SCHEDULED_SCAN_VERSION = 'v1alpha1';
export const SCHEDULED_SCAN_PLURAL = 'scheduledscans';
export const SCHEDULED_SCAN_KIND = 'ScheduledScan';
export const SCHEDULED_SCAN_API_VERSION = `${SCHEDULED_SCAN_GROUP}/${SCHEDULED_SCAN_VERSION}`;

export const EMAIL_NOTIFICATIONS = ['NEVER', 'ON_CHANGES', 'ALWAYS'] as const;
export type EmailNotification = (typeof EMAIL_NOTIFICATIONS)[number];

/** Bounds shared with the CRD; CEL cost estimation needs every list and string bounded. */
export const SCHEDULED_SCAN_LIMITS = {
  maxFilterItems: 100,
  maxFilterItemLength: 255,
  maxEmailTo: 5,
  maxEmailLength: 254,
  maxScheduleDates: SCHEDULE_LIMITS.maxCustomDates,
  minNameLength: 1,
  maxNameLength: 100,
  maxTimeZoneLength: 64,
  maxLastRunScans: 100,
  maxIdLength: 255,
} as const;

/** The CRD's x-kubernetes-validations messages, word for word, plus the rules only zod can check. */
export const SCHEDULED_SCAN_SPEC_MESSAGES = {
  filterSet: 'spec.filterSet must list at least one target id or tag',
  customDates: 'schedule CUSTOM needs spec.scheduleDates with 1 to 100 date-times',
  quarterlyDates: 'schedule QUARTERLY needs spec.scheduleDates with exactly 4 date-times, one in each calendar quarter',
  timeZone: 'spec.timeZone must be an IANA time zone such as Europe/Berlin or UTC',
  scanTypesOnce: 'spec.scanTypes must list each scan type once',
  unknownSchedule: `spec.schedule must be one of ${SCHEDULE_KINDS.join(', ')}`,
  unknownScanType: `each spec.scanTypes item must be one of ${SCAN_TYPES.join(', ')}`,
  unknownEmailNotification: `spec.emailNotification must be one of ${EMAIL_NOTIFICATIONS.join(', ')}`,
} as const;

const DateTimeString = z.iso.datetime({ offset: true });
const Count = z.int().min(0);
const L = SCHEDULED_SCAN_LIMITS;
const M = SCHEDULED_SCAN_SPEC_MESSAGES;

const filterItems = (field: string) =>
  z
    .array(
      z
        .string()
        .min(1, `each spec.filterSet.${field} item must not be empty`)
        .max(L.maxFilterItemLength, `each spec.filterSet.${field} item must be at most ${L.maxFilterItemLength} characters`),
    )
    .max(L.maxFilterItems, `spec.filterSet.${field} may list at most ${L.maxFilterItems} items`);

const FilterSetSchema = z
  .object({ targetIds: filterItems('targetIds').optional(), tags: filterItems('tags').optional() })
  .refine((filter) => (filter.targetIds?.length ?? 0) + (filter.tags?.length ?? 0) > 0, M.filterSet);

/** How many finished Scans of a schedule keep their resources, as CronJob's job history limits. */
export const SCANS_HISTORY_LIMITS = { successful: 3, failed: 1, max: 1000 } as const;

function historyLimit(field: string) {
  return z
    .int(`spec.${field} must be a whole number`)
    .min(0, `spec.${field} must be 0 or more`)
    .max(SCANS_HISTORY_LIMITS.max, `spec.${field} must be at most ${SCANS_HISTORY_LIMITS.max}`)
    .optional();
}

const ScheduledScanSpecFields = z.object({
  schedule: z.enum(SCHEDULE_KINDS, { error: M.unknownSchedule }),
  scanTypes: z
    .array(z.enum(SCAN_TYPES, { error: M.unknownScanType }))
    .min(1, 'spec.scanTypes must list at least one scan type')
    .max(SCAN_TYPES.length, `spec.scanTypes may list at most ${SCAN_TYPES.length} scan types`),
  filterSet: FilterSetSchema,
  emailNotification: z.enum(EMAIL_NOTIFICATIONS, { error: M.unknownEmailNotification }),
  emailTo: z
    .array(z.email('each spec.emailTo item must be an e-mail address').max(L.maxEmailLength))
    .max(L.maxEmailTo, `spec.emailTo may list at most ${L.maxEmailTo} addresses`)
    .optional(),
  startTime: DateTimeString.optional(),
  scheduleDates: z.array(DateTimeString).max(L.maxScheduleDates, M.customDates).optional(),
  name: z
    .string()
    .min(L.minNameLength, 'spec.name must not be empty; leave it out for no name')
    .max(L.maxNameLength, `spec.name must be at most ${L.maxNameLength} characters`)
    .optional(),
  timeZone: z.string().min(1, M.timeZone).max(L.maxTimeZoneLength, M.timeZone).optional(),
  disabled: z.boolean().optional(),
  successfulScansHistoryLimit: historyLimit('successfulScansHistoryLimit'),
  failedScansHistoryLimit: historyLimit('failedScansHistoryLimit'),
});

/** The API server prunes null fields of a structural schema before validating; so does the embedded runtime. */
function dropNullFields(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null));
}

export const ScheduledScanSpecSchema = z.preprocess(
  dropNullFields,
  ScheduledScanSpecFields.superRefine((spec, ctx) => {
    if (new Set(spec.scanTypes).size !== spec.scanTypes.length) ctx.addIssue({ code: 'custom', message: M.scanTypesOnce, path: ['scanTypes'] });
    const zoneValid = spec.timeZone === undefined || isValidTimeZone(spec.timeZone);
    if (!zoneValid) ctx.addIssue({ code: 'custom', message: M.timeZone, path: ['timeZone'] });
    const dates = spec.scheduleDates ?? [];
    if (spec.schedule === 'CUSTOM' && dates.length < 1) ctx.addIssue({ code: 'custom', message: M.customDates, path: ['scheduleDates'] });
    if (spec.schedule === 'QUARTERLY') {
      const zone = zoneValid ? (spec.timeZone ?? 'UTC') : 'UTC';
      const quarters = new Set(dates.filter((date) => !Number.isNaN(Date.parse(date))).map((date) => calendarQuarterOf(date, zone)));
      if (dates.length !== 4 || quarters.size !== 4) ctx.addIssue({ code: 'custom', message: M.quarterlyDates, path: ['scheduleDates'] });
    }
  }),
);

const ScheduledScanStatusSchema = z.object({
  scheduledScanId: z.string().max(L.maxIdLength).optional(),
  nextRun: DateTimeString.optional(),
  lastRan: DateTimeString.optional(),
  lastRunScans: z.array(z.string().max(L.maxIdLength)).max(L.maxLastRunScans).optional(),
  conditions: z
    .array(ConditionSchema)
    .refine(
      (conditions) => new Set(conditions.map((condition) => condition.type)).size === conditions.length,
      'each condition type may appear once (listType map keyed by type)',
    )
    .optional(),
  observedGeneration: Count.optional(),
});

export const ScheduledScanResourceSchema = z.object({
  apiVersion: z.literal(SCHEDULED_SCAN_API_VERSION),
  kind: z.literal(SCHEDULED_SCAN_KIND),
  metadata: ScanMetadataSchema,
  spec: ScheduledScanSpecSchema,
  status: ScheduledScanStatusSchema.optional(),
});

export type FilterSet = z.infer<typeof FilterSetSchema>;
export type ScheduledScanSpec = z.infer<typeof ScheduledScanSpecSchema>;
export type ScheduledScanStatus = z.infer<typeof ScheduledScanStatusSchema>;
export type ScheduledScanResource = z.infer<typeof ScheduledScanResourceSchema>;

/** Validates a spec as the API server would; throws InvalidRequestError saying what to change. */
export function parseScheduledScanSpec(input: unknown): ScheduledScanSpec {
  return parseResource(ScheduledScanSpecSchema, input, 'spec');
}

/** Validates a whole ScheduledScan object (a manifest, or one read back from the embedded store). */
export function parseScheduledScanResource(input: unknown): ScheduledScanResource {
  return parseResource(ScheduledScanResourceSchema, input, '');
}

/**
 * The schedule a spec describes. `createdAt` stands in for an absent startTime
 * ("when omitted, runs immediately"): pass the resource's creation time so the
 * schedule stays the same on every reconcile.
 */
export function scheduleOf(spec: ScheduledScanSpec, createdAt: Date): ScheduleSpec {
  return {
    kind: spec.schedule,
    startTime: spec.startTime ?? createdAt.toISOString(),
    ...(spec.scheduleDates === undefined ? {} : { scheduleDates: spec.scheduleDates }),
    ...(spec.timeZone === undefined ? {} : { timeZone: spec.timeZone }),
    disabled: spec.disabled ?? false,
  };
}
