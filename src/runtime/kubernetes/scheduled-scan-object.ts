/**
 * A stored ScheduledScan and its custom resource (crds/scheduledscan.yaml),
 * each in terms of the other: the spec that shows a row, the request a spec
 * makes of ScheduledScansService, whether a spec already says what the row
 * holds, and the status that shows a row. Pure: the ScheduledScan face
 * (scheduled-scan-face.ts), which the one ScheduledScan reconciler drives,
 * does the I/O.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ScheduledScan } from '../../app/ports.js';
import type { ScheduledScanInput } from '../../app/scheduled-scans-service.js';
import type { Condition } from '../../domain/scans/scan.js';
import { setConditions, type ConditionChange } from '../../domain/conditions/condition.js';
import type { ScheduledScanSpec, ScheduledScanStatus } from '../../domain/schedules/scheduled-scan-resource.js';

export { SCHEDULED_SCAN_ID_LABEL } from './reconciler-kit.js';

const usesDates = (schedule: ScheduledScanSpec['schedule']) => schedule === 'CUSTOM' || schedule === 'QUARTERLY';

/** The spec that shows a stored scheduled scan; empty lists and unset fields are left out, as a manifest would. */
export function scheduledScanSpecOf(row: ScheduledScan): ScheduledScanSpec {
  return {
    schedule: row.schedule,
    scanTypes: row.scanTypes,
    filterSet: {
      ...(row.filterTargetIds.length === 0 ? {} : { targetIds: row.filterTargetIds }),
      ...(row.filterTags.length === 0 ? {} : { tags: row.filterTags }),
    },
    emailNotification: row.emailNotification,
    ...(row.emailTo.length === 0 ? {} : { emailTo: row.emailTo }),
    startTime: row.startTime,
    ...(row.scheduleDates === null ? {} : { scheduleDates: row.scheduleDates }),
    ...(row.name === null ? {} : { name: row.name }),
    ...(row.timeZone === null ? {} : { timeZone: row.timeZone }),
    disabled: row.disabled,
  };
}

/**
 * The create or update request a spec stands for. A spec is the whole
 * configuration, so what it leaves out is cleared (no e-mail recipients, not
 * disabled), except startTime: without it the schedule keeps the start it has
 * (for a new one, now).
 */
export function scheduledScanInputOf(spec: ScheduledScanSpec): ScheduledScanInput {
  return {
    schedule: spec.schedule,
    scan_types: spec.scanTypes,
    filter_set: { target_ids: spec.filterSet.targetIds, tags: spec.filterSet.tags },
    email_notification: spec.emailNotification,
    start_time: spec.startTime,
    schedule_dates: spec.scheduleDates,
    email_to: spec.emailTo ?? [],
    name: spec.name,
    time_zone: spec.timeZone,
    disabled: spec.disabled ?? false,
  };
}

/** The configuration a spec means, in one form: sets sorted, tags lower-cased as stored, times as instants. */
function meaningOf(spec: ScheduledScanSpec, startTimeWhenAbsent: string) {
  const set = (items: readonly string[] | undefined) => [...new Set(items ?? [])].sort();
  return {
    schedule: spec.schedule,
    scanTypes: set(spec.scanTypes),
    targetIds: set(spec.filterSet.targetIds),
    tags: set(spec.filterSet.tags?.map((tag) => tag.toLowerCase())),
    emailNotification: spec.emailNotification,
    emailTo: set(spec.emailTo),
    startTime: Date.parse(spec.startTime ?? startTimeWhenAbsent),
    scheduleDates: usesDates(spec.schedule) ? (spec.scheduleDates ?? []).map((date) => Date.parse(date)) : [],
    name: spec.name ?? null,
    timeZone: spec.timeZone ?? null,
    disabled: spec.disabled ?? false,
  };
}

/** True when applying the spec would leave the row's configuration as it is: nothing to update, nothing to rewrite. */
export function specMatchesRow(spec: ScheduledScanSpec, row: ScheduledScan): boolean {
  return isDeepStrictEqual(meaningOf(spec, row.startTime), meaningOf(scheduledScanSpecOf(row), row.startTime));
}

/** Why Vigil does not follow the CR's current spec; the schedule keeps its stored configuration. */
export interface Refusal {
  reason: string;
  message: string;
}

/** The status merge patch for a row: nextRun and lastRan are null (removed) when unset. */
export type ScheduledScanStatusPatch = Omit<ScheduledScanStatus, 'nextRun' | 'lastRan'> & { nextRun: string | null; lastRan: string | null };

export interface StatusContext {
  refusal: Refusal | undefined;
  /** The CR generation whose spec the row holds (or that was refused). */
  observedGeneration: number | undefined;
  /** The conditions last written, whose transition times hold while their status does. */
  previous: readonly Condition[];
  now: Date;
}

function acceptedCondition(refusal: Refusal | undefined): ConditionChange {
  if (refusal !== undefined) return { type: 'Accepted', status: 'False', ...refusal };
  return { type: 'Accepted', status: 'True', reason: 'SpecAccepted', message: 'Vigil runs this schedule as its spec says' };
}

function scheduledCondition(row: ScheduledScan): ConditionChange {
  if (row.nextRun !== null) return { type: 'Scheduled', status: 'True', reason: 'NextRunSet', message: `the next run is at ${row.nextRun}` };
  if (row.disabled) return { type: 'Scheduled', status: 'False', reason: 'Disabled', message: 'spec.disabled is true: nothing runs until it is false' };
  const why = row.schedule === 'ONCE' ? 'the ONCE schedule has run' : 'every date of the schedule has passed';
  return { type: 'Scheduled', status: 'False', reason: 'NoRunLeft', message: `no run is left: ${why}` };
}

export function scheduledScanStatusOf(row: ScheduledScan, context: StatusContext): ScheduledScanStatusPatch {
  const generation = context.observedGeneration === undefined ? {} : { observedGeneration: context.observedGeneration };
  const previous = context.previous.filter((condition) => condition.type === 'Accepted' || condition.type === 'Scheduled');
  const conditions = setConditions(previous, [acceptedCondition(context.refusal), scheduledCondition(row)], context.now, context.observedGeneration);
  return { scheduledScanId: row.id, nextRun: row.nextRun, lastRan: row.lastRan, conditions, ...generation };
}
